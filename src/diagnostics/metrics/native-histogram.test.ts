import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  bucketIndex,
  DEFAULT_ZERO_THRESHOLD,
  frexp,
  type HistogramSample,
  halveResolution,
  type NativeHistogram,
  nativeHistogram,
} from './native-histogram.ts';
import type { NativeBuckets } from './protobuf.ts';

function make(options: Partial<Parameters<typeof nativeHistogram>[0]> = {}) {
  return nativeHistogram({ name: 'h', help: 'help', registers: [], labelNames: ['op'], ...options });
}

async function samples(h: NativeHistogram<string>): Promise<HistogramSample[]> {
  return (await h.get()).values;
}

async function nativeOf(h: NativeHistogram<string>, op?: string): Promise<NativeBuckets> {
  const count = (await samples(h)).find((s) => s.metricName === 'h_count' && s.labels.op === op);
  return count!.native!;
}

function total(n: NativeBuckets): number {
  return [...n.positive, ...n.negative].reduce((sum, [, c]) => sum + c, n.zeroCount);
}

describe('frexp', () => {
  it.each([
    [1, 0.5, 1],
    [0.5, 0.5, 0],
    [3, 0.75, 2],
    [-3, -0.75, 2],
    [1024, 0.5, 11],
    [Number.MAX_VALUE, Number.MAX_VALUE / 2 ** 1023 / 2, 1024],
    [5e-324, 0.5, -1073],
    [2 ** -1050 * 3, 0.75, -1048],
  ])('frexp(%d) = [%d, %i]', (v, frac, exp) => {
    expect(frexp(v)).toEqual([frac, exp]);
    const head = Math.min(exp, 1000); // 2^1024 overflows: scale in two steps
    expect(frac * 2 ** head * 2 ** (exp - head)).toBe(v);
  });
});

describe('bucketIndex', () => {
  it.each([
    // schema 0: base 2
    [0, 1, 0],
    [0, 2, 1],
    [0, 3, 2],
    [0, 4, 2],
    [0, 0.5, -1],
    [0, 0.75, 0],
    [0, 1.0000001, 1],
    // schema 1: base √2 ≈ 1.414
    [1, 1, 0],
    [1, 1.4, 1],
    [1, 1.5, 2],
    [1, 2, 2],
    [1, 0.5, -2],
    // schema 2: base 2^¼ ≈ 1.189
    [2, 1.1, 1],
    [2, 1.2, 2],
    [2, 1.5, 3],
    [2, 2, 4],
    // schema 3: base 2^⅛ ≈ 1.0905
    [3, 1, 0],
    [3, 1.05, 1],
    [3, 1.1, 2],
    [3, 2, 8],
    [3, 10, 27],
    [3, 0.5, -8],
    [3, 0.001, -79],
    // negative schemas: base 4 and base 2^16
    [-1, 4, 1],
    [-1, 5, 2],
    [-1, 1, 0],
    [-1, 0.25, -1],
    [-1, 0.2, -1],
    [-4, 65_536, 1],
    [-4, 65_537, 2],
    [-4, 1, 0],
    // the extremes
    [0, Number.MAX_VALUE, 1024],
    [0, Number.POSITIVE_INFINITY, 1025],
    [0, 5e-324, -1074],
  ])('schema %i: %d → %i', (schema, v, index) => {
    expect(bucketIndex(v, schema)).toBe(index);
  });

  it('agrees with ceil(log_base(v)) away from bucket boundaries', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    for (const schema of [-4, -2, -1, 0, 1, 2, 3, 5, 8]) {
      for (let i = 0; i < 2000; i++) {
        const v = 2 ** (random() * 80 - 40);
        const exact = Math.log2(v) * 2 ** schema;
        if (Math.abs(exact - Math.round(exact)) < 1e-9) continue; // too close to a boundary for float logs
        expect(bucketIndex(v, schema), `schema ${schema}, v ${v}`).toBe(Math.ceil(exact) || 0); // `|| 0`: ceil(-0.5) is -0
      }
    }
  });
});

describe('halveResolution', () => {
  it('merges bucket k into ceil(k/2)', () => {
    expect(
      halveResolution(
        new Map([
          [1, 1],
          [2, 1],
          [3, 1],
          [4, 1],
        ]),
      ),
    ).toEqual(
      new Map([
        [1, 2],
        [2, 2],
      ]),
    );
    const merged = halveResolution(
      new Map([
        [0, 1],
        [-1, 1],
        [-2, 1],
        [-3, 1],
      ]),
    );
    expect(merged).toEqual(
      new Map([
        [0, 2],
        [-1, 2],
      ]),
    );
    expect([...merged.keys()].some((k) => Object.is(k, -0))).toBe(false);
  });
});

describe('NativeHistogram', () => {
  it('keeps classic buckets, sum and count for the text formats', async () => {
    const h = make({ classicBuckets: [1, 2, 5] });
    for (const v of [0.5, 1, 1.5, 3, 100]) h.observe({ op: 'a' }, v);
    expect(await samples(h)).toEqual([
      { metricName: 'h_bucket', labels: { op: 'a', le: 1 }, value: 2 },
      { metricName: 'h_bucket', labels: { op: 'a', le: 2 }, value: 3 },
      { metricName: 'h_bucket', labels: { op: 'a', le: 5 }, value: 4 },
      { metricName: 'h_bucket', labels: { op: 'a', le: '+Inf' }, value: 5 },
      { metricName: 'h_sum', labels: { op: 'a' }, value: 106 },
      { metricName: 'h_count', labels: { op: 'a' }, value: 5, native: expect.any(Object) },
    ]);
  });

  it('puts values into exponential buckets at the configured schema', async () => {
    const h = make({ schema: 0 });
    for (const v of [1, 2, 3, 3, 0.5]) h.observe({ op: 'a' }, v);
    expect(await nativeOf(h, 'a')).toEqual({
      schema: 0,
      zeroThreshold: DEFAULT_ZERO_THRESHOLD,
      zeroCount: 0,
      positive: [
        [-1, 1],
        [0, 1],
        [1, 1],
        [2, 2],
      ],
      negative: [],
    });
  });

  it('counts values within the zero threshold in the zero bucket', async () => {
    const h = make();
    for (const v of [0, -0, 1e-40, -1e-40, DEFAULT_ZERO_THRESHOLD, 1e-30]) h.observe({}, v);
    const n = await nativeOf(h);
    expect(n.zeroCount).toBe(5);
    expect(n.positive).toHaveLength(1);

    const wide = make({ zeroThreshold: 0.5, schema: 0 });
    for (const v of [0.5, -0.5, 0.25, 0.6]) wide.observe({}, v);
    expect(await nativeOf(wide)).toMatchObject({ zeroThreshold: 0.5, zeroCount: 3, positive: [[0, 1]] });
  });

  it('keeps negative values in negative buckets by their absolute value', async () => {
    const h = make({ schema: 0, classicBuckets: [0] });
    for (const v of [-1, -3, -3, 2]) h.observe({}, v);
    expect(await nativeOf(h)).toMatchObject({
      negative: [
        [0, 1],
        [2, 2],
      ],
      positive: [[1, 1]],
    });
    expect((await samples(h))[0]).toMatchObject({ labels: { le: 0 }, value: 3 });
  });

  it('counts NaN in count and +Inf only, and +Inf in the bucket above the largest float', async () => {
    const h = make({ schema: 0, classicBuckets: [1] });
    h.observe({}, Number.NaN);
    h.observe({}, Number.POSITIVE_INFINITY);
    const values = await samples(h);
    expect(values.map((s) => s.value)).toEqual([0, 2, Number.NaN, 2]);
    expect(values[3].native).toMatchObject({ positive: [[1025, 1]], zeroCount: 0 });
  });

  it(`reduces the schema to stay within maxBuckets, conserving the count`, async () => {
    const h = make({ schema: 3 });
    const direct = make({ schema: 3, maxBuckets: 100_000 });
    const values = Array.from({ length: 5000 }, (_, i) => (i % 2 ? 1 : -1) * 2 ** ((i % 997) / 10 - 50));
    for (const v of values) h.observe({}, v);
    const n = await nativeOf(h);
    expect(n.positive.length + n.negative.length).toBeLessThanOrEqual(160);
    expect(n.schema).toBeLessThan(3);
    expect(total(n)).toBe(5000);
    // Merging buckets is the same as having bucketed at the lower schema from the start.
    const lower = make({ schema: n.schema, maxBuckets: 100_000 });
    for (const v of values) lower.observe({}, v);
    expect(await nativeOf(lower)).toEqual(n);
    for (const v of values) direct.observe({}, v);
    expect((await nativeOf(direct)).schema).toBe(3);
  });

  it('honours a small maxBuckets and stops at schema -4', async () => {
    const h = make({ schema: 8, maxBuckets: 4 });
    for (let e = -20; e <= 20; e++) h.observe({}, 2 ** e);
    const n = await nativeOf(h);
    expect(n.schema).toBe(-4);
    expect(n.positive.length).toBeLessThanOrEqual(4);
    expect(total(n)).toBe(41);

    const tiny = make({ schema: 0, maxBuckets: 1 });
    for (const v of [2 ** -300, 1, 2 ** 300]) tiny.observe({}, v);
    expect((await nativeOf(tiny)).schema).toBe(-4); // cannot fit, so it stops at the lowest resolution
  });

  it('keeps one series per label set and validates label names', async () => {
    const h = make();
    h.observe({ op: 'a' }, 1);
    h.observe({ op: 'b' }, 1);
    h.observe({ op: 'a' }, 1);
    expect((await nativeOf(h, 'a')).positive).toEqual([[0, 2]]);
    expect((await nativeOf(h, 'b')).positive).toEqual([[0, 1]]);
    expect(() => h.observe({ nope: 'x' } as never, 1)).toThrow(/not among the label names/);
    h.remove({ op: 'a' });
    expect((await samples(h)).filter((s) => s.metricName === 'h_count').map((s) => s.labels.op)).toEqual(['b']);
    h.reset();
    expect(await samples(h)).toEqual([]);
  });

  it('registers into a prom-client registry, whose own text rendering shows the classic buckets', async () => {
    const registry = new Registry();
    const h = nativeHistogram({
      name: 'req_seconds',
      help: 'Request time.',
      classicBuckets: [1],
      registers: [registry],
    });
    h.observe({}, 0.5);
    expect(registry.getSingleMetric('req_seconds')).toBe(h);
    expect(await registry.metrics()).toContain('req_seconds_bucket{le="1"} 1\nreq_seconds_bucket{le="+Inf"} 1');
    expect(() => nativeHistogram({ name: 'req_seconds', help: 'again', registers: [registry] })).toThrow(
      /already been registered/,
    );
    registry.resetMetrics();
    expect((await h.get()).values).toEqual([]);
  });

  it.each([
    [{ schema: 9 }, /schema/],
    [{ schema: 1.5 }, /schema/],
    [{ maxBuckets: 0 }, /maxBuckets/],
    [{ zeroThreshold: -1 }, /zeroThreshold/],
    [{ classicBuckets: [2, 1] }, /strictly increasing/],
    [{ name: 'bad-name' }, /invalid metric name/],
    [{ labelNames: ['le'] }, /invalid label name/],
    [{ help: '' }, /help/],
  ])('rejects the configuration %o', (options, error) => {
    expect(() => make(options as never)).toThrow(error);
  });
});
