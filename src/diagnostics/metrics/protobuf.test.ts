import { describe, expect, it } from 'vitest';
import { encodeDelimited, type MetricFamily, spansAndDeltas } from './protobuf.ts';
import { decodeMessage, decodeMetricFamilies, expandBuckets } from './protobuf-decode.ts';

function roundTrip(families: MetricFamily[]) {
  return decodeMetricFamilies(encodeDelimited(families));
}

describe('encodeDelimited', () => {
  it('writes the bytes metrics.proto prescribes for a one-sample counter', () => {
    const bytes = encodeDelimited([{ name: 'a', help: '', type: 'counter', metrics: [{ labels: [], value: 1 }] }]);
    // frame length 18; name (1, LEN) "a"; type (3, VARINT) 0; metric (4, LEN) { counter (3, LEN) { value (1, I64) 1.0 } }
    const one = [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f];
    expect([...bytes]).toEqual([18, 0x0a, 1, 0x61, 0x18, 0, 0x22, 11, 0x1a, 9, 0x09, ...one]);
  });

  it('writes nothing for no families and one frame per family', () => {
    expect(encodeDelimited([]).length).toBe(0);
    const names = ['x', 'y', 'z'].map((name) => ({ name, help: 'h', type: 'gauge' as const, metrics: [] }));
    expect(roundTrip(names).map((f) => f.name)).toEqual(['x', 'y', 'z']);
  });

  it.each([
    ['gauge', 1, 'gauge'],
    ['counter', 0, 'counter'],
    ['untyped', 3, 'untyped'],
  ] as const)('encodes a %s as type %i with its value message', (type, number, field) => {
    const [f] = roundTrip([{ name: 'm', help: 'help text', type, metrics: [{ labels: [['k', 'v']], value: 2.5 }] }]);
    expect(f).toEqual({
      name: 'm',
      help: 'help text',
      type: number,
      metric: [{ label: [{ name: 'k', value: 'v' }], [field]: { value: 2.5 } }],
    });
  });

  it.each([
    0,
    -0,
    1.5,
    -2.25,
    5e-324,
    Number.MAX_VALUE,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    Number.NaN,
  ])('keeps the double %d exactly', (v) => {
    const [f] = roundTrip([{ name: 'g', help: '', type: 'gauge', metrics: [{ labels: [], value: v }] }]);
    expect(Object.is(f.metric[0].gauge.value, v)).toBe(true);
  });

  it.each([0, 1, 127, 128, 300, 16_383, 16_384, 2 ** 31, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER])(
    'keeps the uint64 %d through its varint',
    (n) => {
      const [f] = roundTrip([
        {
          name: 'h',
          help: '',
          type: 'histogram',
          metrics: [{ labels: [], histogram: { count: n, sum: 0, buckets: [[1, n]] } }],
        },
      ]);
      expect(f.metric[0].histogram.sample_count).toBe(n);
      expect(f.metric[0].histogram.bucket[0].cumulative_count).toBe(n);
    },
  );

  it.each(['', 'plain', 'ünïcödé', '日本語', 'emoji 🚀', 'quote " and \\ and \n', 'x'.repeat(200), 'y'.repeat(20_000)])(
    'keeps the UTF-8 label value %#',
    (value) => {
      const [f] = roundTrip([
        { name: 'g', help: value, type: 'gauge', metrics: [{ labels: [['l', value]], value: 1 }] },
      ]);
      expect(f.help ?? '').toBe(value);
      expect(f.metric[0].label[0].value).toBe(value);
    },
  );

  it('patches nested lengths of one, two and three bytes', () => {
    const metrics = Array.from({ length: 3000 }, (_, i) => ({
      labels: [['i', String(i)]] as Array<[string, string]>,
      value: i,
    }));
    const [f] = roundTrip([{ name: 'big', help: '', type: 'gauge', metrics }]);
    expect(f.metric).toHaveLength(3000);
    expect(f.metric[2999]).toEqual({ label: [{ name: 'i', value: '2999' }], gauge: { value: 2999 } });
  });

  it('encodes a summary with its quantiles', () => {
    const [f] = roundTrip([
      {
        name: 's',
        help: '',
        type: 'summary',
        metrics: [
          {
            labels: [],
            summary: {
              count: 4,
              sum: 10,
              quantiles: [
                [0.5, 2],
                [0.99, 4],
              ],
            },
          },
        ],
      },
    ]);
    expect(f.type).toBe(2);
    expect(f.metric[0].summary).toEqual({
      sample_count: 4,
      sample_sum: 10,
      quantile: [
        { quantile: 0.5, value: 2 },
        { quantile: 0.99, value: 4 },
      ],
    });
  });

  it('encodes a classic histogram without native fields', () => {
    const [f] = roundTrip([
      {
        name: 'h',
        help: '',
        type: 'histogram',
        metrics: [
          {
            labels: [],
            histogram: {
              count: 3,
              sum: 4.5,
              buckets: [
                [1, 1],
                [2, 3],
              ],
            },
          },
        ],
      },
    ]);
    expect(f.type).toBe(4);
    expect(f.metric[0].histogram).toEqual({
      sample_count: 3,
      sample_sum: 4.5,
      bucket: [
        { cumulative_count: 1, upper_bound: 1 },
        { cumulative_count: 3, upper_bound: 2 },
      ],
    });
  });

  it('encodes native buckets beside the classic ones, zigzagging schema, offsets and deltas', () => {
    const native = {
      schema: -2,
      zeroThreshold: 2 ** -128,
      zeroCount: 2,
      positive: [
        [-3, 5],
        [-2, 1],
        [7, 9],
      ] as Array<[number, number]>,
      negative: [[0, 4]] as Array<[number, number]>,
    };
    const [f] = roundTrip([
      {
        name: 'h',
        help: '',
        type: 'histogram',
        metrics: [{ labels: [], histogram: { count: 21, sum: 1, buckets: [[1, 10]], native } }],
      },
    ]);
    const h = f.metric[0].histogram;
    expect(h).toMatchObject({ sample_count: 21, schema: -2, zero_threshold: 2 ** -128, zero_count: 2 });
    expect(h.bucket).toEqual([{ cumulative_count: 10, upper_bound: 1 }]);
    expect(h.positive_span).toEqual([
      { offset: -3, length: 2 },
      { offset: 8, length: 1 },
    ]);
    expect(h.positive_delta).toEqual([5, -4, 8]);
    expect(expandBuckets(h.positive_span, h.positive_delta)).toEqual(native.positive);
    expect(expandBuckets(h.negative_span, h.negative_delta)).toEqual(native.negative);
    expect(h._unknown).toBeUndefined();
  });

  it('marks an empty native histogram without zero bucket width by an empty span, as client_golang', () => {
    const native = { schema: 0, zeroThreshold: 0, zeroCount: 0, positive: [], negative: [] };
    const [f] = roundTrip([
      {
        name: 'h',
        help: '',
        type: 'histogram',
        metrics: [{ labels: [], histogram: { count: 0, sum: 0, buckets: [], native } }],
      },
    ]);
    expect(f.metric[0].histogram.positive_span).toEqual([{ offset: 0, length: 0 }]);
    expect(f.metric[0].histogram.schema).toBe(0);
  });

  it('rejects counts that a varint cannot carry exactly', () => {
    const bad = (count: number) => () =>
      encodeDelimited([
        {
          name: 'h',
          help: '',
          type: 'histogram',
          metrics: [{ labels: [], histogram: { count, sum: 0, buckets: [] } }],
        },
      ]);
    expect(bad(-1)).toThrow(RangeError);
    expect(bad(1.5)).toThrow(RangeError);
    expect(bad(2 ** 53)).toThrow(RangeError);
  });
});

describe('spansAndDeltas', () => {
  it.each([
    ['no buckets', [], [], []],
    ['one bucket at 0', [[0, 1]], [{ offset: 0, length: 1 }], [1]],
    [
      'a run starting below 0',
      [
        [-3, 2],
        [-2, 5],
      ],
      [{ offset: -3, length: 2 }],
      [2, 3],
    ],
    [
      'a gap of one, filled',
      [
        [0, 1],
        [2, 1],
      ],
      [{ offset: 0, length: 3 }],
      [1, -1, 1],
    ],
    [
      'a gap of two, filled',
      [
        [0, 1],
        [3, 4],
      ],
      [{ offset: 0, length: 4 }],
      [1, -1, 0, 4],
    ],
    [
      'a gap of three, a new span',
      [
        [0, 1],
        [4, 1],
      ],
      [
        { offset: 0, length: 1 },
        { offset: 3, length: 1 },
      ],
      [1, 0],
    ],
    ['a far first bucket', [[100, 7]], [{ offset: 100, length: 1 }], [7]],
  ] as const)('%s', (_, buckets, spans, deltas) => {
    expect(spansAndDeltas(buckets)).toEqual({ spans, deltas });
  });
});

describe('the test decoder', () => {
  it('also reads packed repeated fields and reports unknown ones', () => {
    // Histogram { positive_delta (13) packed [1, -1, 2] ; field 99 varint 5 }
    const bytes = new Uint8Array([0x6a, 3, 2, 1, 4, 0x98, 0x06, 5]);
    expect(decodeMessage(bytes, { 13: { name: 'positive_delta', kind: 'sint', repeated: true } })).toEqual({
      positive_delta: [1, -1, 2],
      _unknown: [99],
    });
  });

  it('refuses truncated input', () => {
    const bytes = encodeDelimited([{ name: 'a', help: '', type: 'counter', metrics: [{ labels: [], value: 1 }] }]);
    expect(() => decodeMetricFamilies(bytes.subarray(0, bytes.length - 1))).toThrow(/truncated/);
  });
});
