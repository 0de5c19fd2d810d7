import {
  Counter,
  Gauge,
  Histogram,
  type OpenMetricsContentType,
  Registry,
  type RegistryContentType,
  Summary,
} from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CONTENT_TYPES, negotiate, renderMetrics, toMetricFamilies } from './exposition.ts';
import { nativeHistogram } from './native-histogram.ts';
import { encodeDelimited } from './protobuf.ts';
import { decodeMetricFamilies, expandBuckets } from './protobuf-decode.ts';

const PROTO = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';

describe('negotiate', () => {
  it.each([
    [undefined, 'text'],
    ['', 'text'],
    ['text/plain', 'text'],
    ['text/plain; version=0.0.4', 'text'],
    ['*/*', 'text'],
    ['application/json', 'text'],
    ['application/openmetrics-text', 'openmetrics'],
    ['application/openmetrics-text; version=1.0.0; charset=utf-8', 'openmetrics'],
    ['application/openmetrics-text; version=0.0.1', 'openmetrics'],
    ['application/openmetrics-text; version=2.0.0', 'text'],
    ['Application/OpenMetrics-Text', 'openmetrics'],
    [PROTO, 'protobuf'],
    ['application/vnd.google.protobuf', 'protobuf'],
    ['application/vnd.google.protobuf; proto="io.prometheus.client.MetricFamily"; encoding="delimited"', 'protobuf'],
    ['application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text', 'text'],
    ['application/vnd.google.protobuf;proto=other.Message;encoding=delimited', 'text'],
    // weights
    ['text/plain;q=0.5, application/openmetrics-text;q=0.9', 'openmetrics'],
    ['application/openmetrics-text;q=0, text/plain', 'text'],
    ['text/plain, application/openmetrics-text', 'text'],
    ['application/openmetrics-text;q=0.5, application/json, ' + PROTO + ';q=0.7', 'protobuf'],
    ['application/json;q=1, application/openmetrics-text;q=0.1', 'openmetrics'],
    // what Prometheus 2.42 sends without and with --enable-feature=native-histograms
    [
      'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
      'openmetrics',
    ],
    [
      `${PROTO},application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1`,
      'protobuf',
    ],
  ] as const)('%s → %s', (accept, format) => {
    expect(negotiate(accept)).toBe(format);
  });
});

/** A registry with one metric of each kind, including a native histogram. */
function fixture() {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({ name: 'requests_total', help: 'Requests "served".', labelNames: ['code'], registers });
  const events = new Counter({ name: 'events', help: 'Events without the suffix.', registers });
  const temperature = new Gauge({ name: 'temperature', help: 'Line\\one\nline two.', labelNames: ['room'], registers });
  const classic = new Histogram({
    name: 'classic_seconds',
    help: 'A classic histogram.',
    buckets: [0.1, 1],
    registers,
  });
  const summary = new Summary({ name: 'latency_seconds', help: 'A summary.', percentiles: [0.5], registers });
  const native = nativeHistogram({
    name: 'native_seconds',
    help: 'A native histogram.',
    labelNames: ['verb'],
    classicBuckets: [0.5, 2],
    schema: 0,
    registers,
  });
  requests.inc({ code: '200' }, 3);
  events.inc();
  temperature.set({ room: 'a "quoted" \\ back\nslash' }, 21.5);
  classic.observe(0.05);
  classic.observe(5);
  summary.observe(2);
  for (const v of [0.25, 1, 3, 3]) native.observe({ verb: 'GET' }, v);
  return registry;
}

describe('renderMetrics', () => {
  it('renders Prometheus text 0.0.4 by default, with classic buckets only', async () => {
    const { contentType, body } = await renderMetrics(fixture(), undefined, { nativeHistograms: true });
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(typeof body).toBe('string');
    const text = body as string;
    expect(text).toContain(
      '# HELP requests_total Requests "served".\n# TYPE requests_total counter\nrequests_total{code="200"} 3\n',
    );
    expect(text).toContain('# TYPE events counter\nevents 1\n');
    expect(text).toContain('# HELP temperature Line\\\\one\\nline two.\n');
    expect(text).toContain('temperature{room="a \\"quoted\\" \\\\ back\\nslash"} 21.5\n');
    expect(text).toContain(
      [
        '# TYPE native_seconds histogram',
        'native_seconds_bucket{verb="GET",le="0.5"} 1',
        'native_seconds_bucket{verb="GET",le="2"} 2',
        'native_seconds_bucket{verb="GET",le="+Inf"} 4',
        'native_seconds_sum{verb="GET"} 7.25',
        'native_seconds_count{verb="GET"} 4',
      ].join('\n'),
    );
    expect(text).toContain('latency_seconds{quantile="0.5"} 2\n');
    expect(text).not.toContain('EOF');
    expect(text.endsWith('\n')).toBe(true);
  });

  it("renders a labelled prom-client histogram's series labels first and le last, as client_golang", async () => {
    const registry = new Registry();
    const h = new Histogram({
      name: 'req_seconds',
      help: 'Requests.',
      labelNames: ['verb', 'host'],
      buckets: [1],
      registers: [registry],
    });
    h.observe({ verb: 'GET', host: 'a"b' }, 0.5);
    h.observe({ verb: 'PUT', host: 'c' }, 2);
    const { body } = await renderMetrics(registry, undefined, { nativeHistograms: false });
    expect(body).toBe(
      [
        '# HELP req_seconds Requests.',
        '# TYPE req_seconds histogram',
        'req_seconds_bucket{verb="GET",host="a\\"b",le="1"} 1',
        'req_seconds_bucket{verb="GET",host="a\\"b",le="+Inf"} 1',
        'req_seconds_sum{verb="GET",host="a\\"b"} 0.5',
        'req_seconds_count{verb="GET",host="a\\"b"} 1',
        'req_seconds_bucket{verb="PUT",host="c",le="1"} 0',
        'req_seconds_bucket{verb="PUT",host="c",le="+Inf"} 1',
        'req_seconds_sum{verb="PUT",host="c"} 2',
        'req_seconds_count{verb="PUT",host="c"} 1',
        '',
      ].join('\n'),
    );
  });

  it('renders OpenMetrics 1.0.0 when asked: counter families without _total, quotes escaped in HELP, # EOF', async () => {
    const { contentType, body } = await renderMetrics(fixture(), 'application/openmetrics-text', {
      nativeHistograms: true,
    });
    expect(contentType).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    const text = body as string;
    expect(text).toContain(
      '# HELP requests Requests \\"served\\".\n# TYPE requests counter\nrequests_total{code="200"} 3\n',
    );
    expect(text).toContain('# TYPE events counter\nevents_total 1\n');
    expect(text).toContain('native_seconds_bucket{verb="GET",le="+Inf"} 4\n');
    expect(text.endsWith('\n# EOF\n')).toBe(true);
    expect(text.match(/# EOF/g)).toHaveLength(1);
  });

  it('renders delimited protobuf with classic and, when the gate is on, native buckets', async () => {
    const on = await renderMetrics(fixture(), PROTO, { nativeHistograms: true });
    expect(on.contentType).toBe(CONTENT_TYPES.protobuf);
    expect(Buffer.isBuffer(on.body)).toBe(true);
    const families = Object.fromEntries(decodeMetricFamilies(on.body as Buffer).map((f) => [f.name, f]));
    expect(Object.keys(families).sort()).toEqual([
      'classic_seconds',
      'events',
      'latency_seconds',
      'native_seconds',
      'requests_total',
      'temperature',
    ]);
    expect(families.requests_total).toMatchObject({
      type: 0,
      metric: [{ label: [{ name: 'code', value: '200' }], counter: { value: 3 } }],
    });
    expect(families.temperature.metric[0].gauge.value).toBe(21.5);
    expect(families.latency_seconds.metric[0].summary).toEqual({
      sample_count: 1,
      sample_sum: 2,
      quantile: [{ quantile: 0.5, value: 2 }],
    });
    expect(families.classic_seconds.metric[0].histogram).toEqual({
      sample_count: 2,
      sample_sum: 5.05,
      bucket: [
        { cumulative_count: 1, upper_bound: 0.1 },
        { cumulative_count: 1, upper_bound: 1 },
      ],
    });
    const native = families.native_seconds.metric[0];
    expect(native.label).toEqual([{ name: 'verb', value: 'GET' }]);
    expect(native.histogram).toMatchObject({ sample_count: 4, sample_sum: 7.25, schema: 0, zero_count: 0 });
    expect(native.histogram.bucket).toEqual([
      { cumulative_count: 1, upper_bound: 0.5 },
      { cumulative_count: 2, upper_bound: 2 },
    ]);
    expect(expandBuckets(native.histogram.positive_span, native.histogram.positive_delta)).toEqual([
      [-2, 1],
      [-1, 0],
      [0, 1],
      [1, 0],
      [2, 2],
    ]);

    const off = await renderMetrics(fixture(), PROTO, { nativeHistograms: false });
    const offNative = decodeMetricFamilies(off.body as Buffer).find((f) => f.name === 'native_seconds')!;
    expect(offNative.metric[0].histogram).toEqual({
      ...native.histogram,
      schema: undefined,
      zero_threshold: undefined,
      zero_count: undefined,
      positive_span: undefined,
      positive_delta: undefined,
    });
  });

  it('carries registry default labels into every format, native histograms included', async () => {
    const registry = fixture();
    registry.setDefaultLabels({ component: 'cm' });
    const text = (await renderMetrics(registry, 'text/plain', { nativeHistograms: true })).body as string;
    expect(text).toContain('native_seconds_count{verb="GET",component="cm"} 4');
    const families = decodeMetricFamilies(
      (await renderMetrics(registry, PROTO, { nativeHistograms: true })).body as Buffer,
    );
    const native = families.find((f) => f.name === 'native_seconds')!;
    expect(native.metric[0].label).toEqual([
      { name: 'verb', value: 'GET' },
      { name: 'component', value: 'cm' },
    ]);
    expect(native.metric[0].histogram.schema).toBe(0);
  });

  it('leaves the registry alone: concurrent renders in different formats each get their own format', async () => {
    const registry = fixture();
    const before = registry.contentType;
    const [om, text, proto] = await Promise.all([
      renderMetrics(registry, 'application/openmetrics-text', { nativeHistograms: true }),
      renderMetrics(registry, 'text/plain', { nativeHistograms: true }),
      renderMetrics(registry, PROTO, { nativeHistograms: true }),
    ]);
    expect(registry.contentType).toBe(before);
    expect(om.body).toContain('requests_total{code="200"} 3\n# HELP');
    expect(text.body).toContain('# TYPE requests_total counter');
    expect(decodeMetricFamilies(proto.body as Buffer).some((f) => f.name === 'requests_total')).toBe(true);
    // Rendering OpenMetrics first must not rename the counter for later text scrapes.
    const again = (await renderMetrics(registry, undefined, { nativeHistograms: true })).body as string;
    expect(again).toContain('# TYPE requests_total counter');
  });

  it('renders special values and leaves families without samples out of protobuf only', async () => {
    const registry = new Registry();
    const g = new Gauge({ name: 'g', help: 'h', labelNames: ['k'], registers: [registry] });
    new Gauge({ name: 'empty', help: 'no samples', labelNames: ['x'], registers: [registry] }); // labelled: no sample until set
    g.set({ k: 'nan' }, Number.NaN);
    g.set({ k: 'inf' }, Number.POSITIVE_INFINITY);
    g.set({ k: 'ninf' }, Number.NEGATIVE_INFINITY);
    g.set({ k: 'tiny' }, 1e-7);
    const text = (await renderMetrics(registry, undefined, { nativeHistograms: false })).body as string;
    expect(text).toContain('g{k="nan"} NaN\ng{k="inf"} +Inf\ng{k="ninf"} -Inf\ng{k="tiny"} 1e-7\n');
    expect(text).toContain('# TYPE empty gauge\n');
    const families = decodeMetricFamilies(
      (await renderMetrics(registry, PROTO, { nativeHistograms: false })).body as Buffer,
    );
    expect(families.map((f) => f.name)).toEqual(['g']);
    expect(Number.isNaN(families[0].metric[0].gauge.value)).toBe(true);
  });

  it('renders an empty registry as empty text and a bare # EOF', async () => {
    const registry = new Registry();
    expect((await renderMetrics(registry, undefined, { nativeHistograms: false })).body).toBe('');
    expect((await renderMetrics(registry, 'application/openmetrics-text', { nativeHistograms: false })).body).toBe(
      '# EOF\n',
    );
    expect((await renderMetrics(registry, PROTO, { nativeHistograms: false })).body).toEqual(Buffer.alloc(0));
  });

  it('writes exemplars in OpenMetrics only', async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE); // prom-client allows exemplars on such registries only
    const c = new Counter({ name: 'hits_total', help: 'Hits.', enableExemplars: true, registers: [registry] });
    c.inc({ value: 1, exemplarLabels: { trace_id: 'abc' } });
    const om = (await renderMetrics(registry, 'application/openmetrics-text', { nativeHistograms: false }))
      .body as string;
    expect(om).toMatch(/^hits_total 1 # \{trace_id="abc"\} 1 \d+(\.\d+)?$/m);
    const text = (await renderMetrics(registry, 'text/plain', { nativeHistograms: false })).body as string;
    expect(text).toContain('hits_total 1\n');
  });

  it("writes a histogram's exemplars in OpenMetrics, its series labels first and le last", async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    // <string>: prom-client's typings would limit exemplar label names to the metric's label names.
    const h = new Histogram<string>({
      name: 'op_seconds',
      help: 'Ops.',
      labelNames: ['verb'],
      buckets: [1],
      enableExemplars: true,
      registers: [registry],
    });
    h.observe({ labels: { verb: 'GET' }, value: 0.5, exemplarLabels: { trace_id: 'abc' } });
    const om = (await renderMetrics(registry, 'application/openmetrics-text', { nativeHistograms: false }))
      .body as string;
    expect(om).toMatch(/^op_seconds_bucket\{verb="GET",le="1"\} 1 # \{trace_id="abc"\} 0\.5 \d+(\.\d+)?$/m);
    expect(om).toContain('op_seconds_sum{verb="GET"} 0.5\nop_seconds_count{verb="GET"} 1\n# EOF\n');
    const text = (await renderMetrics(registry, 'text/plain', { nativeHistograms: false })).body as string;
    expect(text).toContain('op_seconds_bucket{verb="GET",le="1"} 1\nop_seconds_bucket{verb="GET",le="+Inf"} 1\n');
  });
});

describe('text rendering of histograms from their state', () => {
  /** Histograms with and without labels, escaped labels and help, one without series; extreme values; others. */
  function varied(): Registry<RegistryContentType> {
    const registry = new Registry<RegistryContentType>();
    const registers = [registry];
    const labelled = new Histogram({
      name: 'op_seconds',
      help: 'Ops \\ back\nslash.', // no quotes: prom-client does not escape them in OpenMetrics HELP
      labelNames: ['verb', 'path'],
      buckets: [0.001, 0.5, 1, 2.5, 1e6],
      registers,
    });
    const bare = new Histogram({ name: 'bare_seconds', help: 'No labels.', registers });
    new Histogram({ name: 'unused_seconds', help: 'Never observed.', labelNames: ['x'], registers });
    const gauge = new Gauge({ name: 'level', help: 'A gauge.', labelNames: ['k'], registers });
    new Counter({ name: 'ops_total', help: 'A counter.', registers }).inc(7);
    for (const [i, v] of [0.0005, 0.7, 3, 1e300, 1e-300, -2, 0.5].entries()) {
      labelled.observe({ verb: i % 2 ? 'GET' : 'PUT', path: 'a\\b\n"c"' }, v);
      labelled.observe({ path: '/x', verb: 'LIST' }, v * 2); // labels in another order
      bare.observe(v);
    }
    gauge.set({ k: 'v' }, Number.NEGATIVE_INFINITY);
    return registry;
  }

  it.each([
    ['text 0.0.4', CONTENT_TYPES.text, Registry.PROMETHEUS_CONTENT_TYPE],
    ['OpenMetrics', CONTENT_TYPES.openmetrics, Registry.OPENMETRICS_CONTENT_TYPE],
  ] as const)('equals prom-client’s own %s of the same registry', async (_, accept, contentType) => {
    const registry = varied();
    const ours = (await renderMetrics(registry, accept, { nativeHistograms: false })).body as string;
    registry.setContentType(contentType);
    const theirs = await registry.metrics();
    // prom-client puts `le` first in a labelled histogram's buckets (we put it last, as client_golang) and
    // separates families by a blank line.
    const normalised = theirs.replace(/\{le="([^"]*)",(.*)\} /g, '{$2,le="$1"} ').replace(/\n\n/g, '\n');
    expect(ours).toBe(normalised.endsWith('\n') ? normalised : `${normalised}\n`);
  });

  it.each([true, false])(
    'encodes protobuf as from prom-client’s JSON samples (native histograms gate %s)',
    async (nativeHistograms) => {
      const registry = varied();
      const native = nativeHistogram({ name: 'n', help: 'N.', labelNames: ['k'], schema: 1, registers: [registry] });
      for (const v of [0.0005, 0.7, 3, 0, -2, 1e-300]) native.observe({ k: 'a"b' }, v);
      const { body } = await renderMetrics(registry, PROTO, { nativeHistograms });
      const families = toMetricFamilies((await registry.getMetricsAsJSON()) as never, nativeHistograms);
      expect(body).toEqual(encodeDelimited(families));
    },
  );

  it('renders a native histogram’s classic series as prom-client renders the same observations', async () => {
    const bounds = [0.001, 0.5, 1, 2.5];
    const ours = new Registry();
    const theirs = new Registry();
    const config = { name: 'n_seconds', help: 'N.', labelNames: ['k'] };
    const native = nativeHistogram({ ...config, classicBuckets: bounds, registers: [ours] });
    const classic = new Histogram({ ...config, buckets: bounds, registers: [theirs] });
    for (const v of [0.0005, 0.7, 3, 1, -2, 1e-300]) {
      native.observe({ k: 'a"b' }, v);
      classic.observe({ k: 'a"b' }, v);
    }
    const text = (r: Registry) => renderMetrics(r, undefined, { nativeHistograms: true }).then((x) => x.body);
    expect(await text(ours)).toBe(await text(theirs));
  });
});
