/**
 * Renders a prom-client Registry in the format the scraper's `Accept` asks for: Prometheus text 0.0.4 (the
 * default), OpenMetrics 1.0.0, or delimited protobuf. All three are rendered here, so no shared registry state
 * changes per request (prom-client's own OpenMetrics rendering renames counters in place). Protobuf is built from
 * `getMetricsAsJSON()`; the text formats from each metric's `getForPromString()` where it has one, as prom-client's
 * own text does: a histogram's samples then share one labels object per series instead of a copy per bucket, and
 * the series' labels are rendered once. Native histogram
 * buckets go out only in protobuf and only with the `NativeHistograms` gate on.
 */
import type { Registry, RegistryContentType } from 'prom-client';
import type { HistogramSample } from './native-histogram.ts';
import { encodeDelimited, type FamilyType, type Histogram, type Metric, type MetricFamily } from './protobuf.ts';

export type ExpositionFormat = 'text' | 'openmetrics' | 'protobuf';

export const CONTENT_TYPES: Record<ExpositionFormat, string> = {
  text: 'text/plain; version=0.0.4; charset=utf-8',
  openmetrics: 'application/openmetrics-text; version=1.0.0; charset=utf-8',
  protobuf: 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited',
};

const PROTO_MESSAGE = 'io.prometheus.client.MetricFamily';
const OPENMETRICS_VERSIONS = ['1.0.0', '0.0.1'];

interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

/** `key=value` media type parameters, keys lower-cased, quotes taken off values. */
function parseParams(parts: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const p of parts) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    params[p.slice(0, eq).trim().toLowerCase()] = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return params;
}

/** The media ranges of an Accept header, most preferred first; those weighted q=0 (refused) are dropped. */
function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of accept.split(',')) {
    const [type, ...rest] = part.split(';').map((s) => s.trim());
    if (!type) continue;
    const params = parseParams(rest);
    const q = params.q === undefined ? 1 : Number(params.q);
    if (Number.isFinite(q) && q > 0) ranges.push({ type: type.toLowerCase(), params, q });
  }
  return ranges.sort((a, b) => b.q - a.q); // stable: equal weights keep the header's order
}

function formatOf(range: MediaRange): ExpositionFormat | undefined {
  const { type, params } = range;
  if (type === 'application/vnd.google.protobuf') {
    const proto = params.proto ?? PROTO_MESSAGE;
    const encoding = params.encoding ?? 'delimited';
    return proto === PROTO_MESSAGE && encoding === 'delimited' ? 'protobuf' : undefined;
  }
  if (type === 'application/openmetrics-text') {
    return params.version === undefined || OPENMETRICS_VERSIONS.includes(params.version) ? 'openmetrics' : undefined;
  }
  if (type === 'text/plain' || type === 'text/*' || type === '*/*') return 'text';
  return undefined;
}

/** The most preferred format we serve; text when the header is missing or names nothing we serve. */
export function negotiate(accept: string | undefined): ExpositionFormat {
  for (const range of parseAccept(accept ?? '')) {
    const format = formatOf(range);
    if (format) return format;
  }
  return 'text';
}

/** One family as `getMetricsAsJSON()` gives it. */
interface FamilyJSON {
  name: string;
  help: string;
  type: string;
  values?: SampleJSON[];
}

type Labels = Record<string, string | number | undefined>;

interface SampleJSON extends Partial<Omit<HistogramSample, 'value' | 'labels' | 'sharedLabels'>> {
  value: number;
  labels?: Labels;
  /** The series' labels, one object for all of its samples (`getForPromString()`); `labels` has the rest. */
  sharedLabels?: Labels;
  exemplar?: { labelSet: Record<string, string | number>; value: number; timestamp?: number } | null;
}

export interface RenderOptions {
  /** The `NativeHistograms` feature gate. */
  nativeHistograms: boolean;
}

export async function renderMetrics(
  registry: Registry<RegistryContentType>,
  accept: string | undefined,
  options: RenderOptions,
): Promise<{ contentType: string; body: string | Buffer }> {
  const format = negotiate(accept);
  const body =
    format === 'protobuf'
      ? encodeDelimited(
          toMetricFamilies((await registry.getMetricsAsJSON()) as unknown as FamilyJSON[], options.nativeHistograms),
        )
      : renderText(await textFamilies(registry), format === 'openmetrics');
  return { contentType: CONTENT_TYPES[format], body };
}

interface Collectable {
  get(): Promise<FamilyJSON> | FamilyJSON;
  getForPromString?(): Promise<FamilyJSON> | FamilyJSON;
}

/**
 * Every metric's samples for the text formats, with shared series labels where the metric offers them. A
 * registry with default labels goes through `getMetricsAsJSON()`, which adds them (prom-client has no getter
 * for them: the field is read as its own text rendering reads it; the default-labels test guards this).
 */
async function textFamilies(registry: Registry<RegistryContentType>): Promise<FamilyJSON[]> {
  const defaults = (registry as unknown as { _defaultLabels?: object })._defaultLabels;
  if (defaults && Object.keys(defaults).length > 0)
    return (await registry.getMetricsAsJSON()) as unknown as FamilyJSON[];
  return Promise.all(
    (registry.getMetricsAsArray() as unknown as Collectable[]).map((m) => (m.getForPromString ?? m.get).call(m)),
  );
}

export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/** A number from a label value, in the text formats' spelling of the infinities too. */
function parseNumber(v: string | number | undefined): number {
  if (v === '+Inf') return Number.POSITIVE_INFINITY;
  if (v === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number(v);
}

const NEEDS_ESCAPE = /[\\\n"]/;

function escapeLabelValue(v: string): string {
  if (!NEEDS_ESCAPE.test(v)) return v;
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** HELP escapes backslash and newline; OpenMetrics also escapes double quotes. */
function escapeHelp(help: string, openMetrics: boolean): string {
  const s = help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return openMetrics ? s.replace(/"/g, '\\"') : s;
}

function labelValue(value: string | number): string {
  return typeof value === 'number' ? formatNumber(value) : value;
}

/** `name="value"` pairs joined by commas. */
function labelPairsText(labels: Labels | undefined): string {
  let out = '';
  for (const name in labels) {
    const value = labels[name];
    if (value === undefined) continue;
    out += `${out ? ',' : ''}${name}="${escapeLabelValue(labelValue(value))}"`;
  }
  return out;
}

function labelString(labels: Labels | undefined): string {
  const pairs = labelPairsText(labels);
  return pairs ? `{${pairs}}` : '';
}

/** Prometheus text 0.0.4 or, with `openMetrics`, OpenMetrics 1.0.0 (counters' `_total` samples, `# EOF`). */
export function renderText(families: readonly FamilyJSON[], openMetrics: boolean): string {
  const lines: string[] = [];
  // The rendered shared labels of the series the last sample belonged to.
  let shared: Labels | undefined;
  let sharedText = '';
  for (const f of families) {
    const counter = f.type === 'counter';
    const family = openMetrics && counter ? f.name.replace(/_total$/, '') : f.name;
    const type = ['counter', 'gauge', 'histogram', 'summary'].includes(f.type)
      ? f.type
      : openMetrics
        ? 'unknown'
        : 'untyped';
    lines.push(`# HELP ${family} ${escapeHelp(f.help, openMetrics)}`, `# TYPE ${family} ${type}`);
    for (const s of f.values ?? []) {
      const name = openMetrics && counter ? `${family}_total` : (s.metricName ?? f.name);
      if (s.sharedLabels !== shared) {
        shared = s.sharedLabels;
        sharedText = labelPairsText(shared);
      }
      const own = labelPairsText(s.labels);
      // The series' labels first, so `le` comes last as in client_golang.
      const pairs = own && sharedText ? `${sharedText},${own}` : sharedText || own;
      let line = `${name}${pairs ? `{${pairs}}` : ''} ${formatNumber(s.value)}`;
      if (openMetrics && s.exemplar) {
        const { labelSet, value, timestamp } = s.exemplar;
        line += ` # ${labelString(labelSet) || '{}'} ${formatNumber(value)}`;
        if (timestamp !== undefined) line += ` ${formatNumber(timestamp)}`;
      }
      lines.push(line);
    }
  }
  if (openMetrics) lines.push('# EOF');
  return lines.length ? `${lines.join('\n')}\n` : '';
}

type LabelPairs = Array<[string, string]>;

function labelPairs(labels: SampleJSON['labels'], without?: string): LabelPairs {
  const pairs: LabelPairs = [];
  for (const name in labels) {
    const value = labels[name];
    if (name !== without && value !== undefined) pairs.push([name, labelValue(value)]);
  }
  return pairs;
}

/** Whether `labels`, without `skip`, are `pairs` in the same order (a cheap check for the common case). */
function samePairs(labels: SampleJSON['labels'], pairs: LabelPairs, skip: string): boolean {
  let i = 0;
  for (const name in labels) {
    const value = labels[name];
    if (name === skip || value === undefined) continue;
    const pair = pairs[i++];
    if (!pair || pair[0] !== name || pair[1] !== labelValue(value)) return false;
  }
  return i === pairs.length;
}

interface SeriesSamples {
  labels: LabelPairs;
  samples: SampleJSON[];
}

/** Groups a family's samples into series by their labels without `le` (histograms) or `quantile` (summaries). */
function groupSeries(f: FamilyJSON, splitLabel: string): Map<string, SeriesSamples> {
  const series = new Map<string, SeriesSamples>();
  let current: SeriesSamples | undefined;
  for (const s of f.values ?? []) {
    // A series' samples usually come in a row: look the series up only when the labels change.
    if (!current || !samePairs(s.labels, current.labels, splitLabel)) {
      const labels = labelPairs(s.labels, splitLabel);
      const key = labels
        .map(([name, value]) => `${name}\u0000${value}`)
        .sort()
        .join('\u0001');
      current = series.get(key);
      if (!current) {
        current = { labels, samples: [] };
        series.set(key, current);
      }
    }
    current.samples.push(s);
  }
  return series;
}

/** Converts prom-client's JSON to protobuf families; families without samples are left out. */
export function toMetricFamilies(families: readonly FamilyJSON[], nativeHistograms: boolean): MetricFamily[] {
  const out: MetricFamily[] = [];
  for (const f of families) {
    const type: FamilyType =
      f.type === 'counter' || f.type === 'gauge' || f.type === 'summary' || f.type === 'histogram' ? f.type : 'untyped';
    let metrics: Metric[];
    if (type === 'histogram') {
      metrics = [...groupSeries(f, 'le').values()].map(({ labels, samples }) => ({
        labels,
        histogram: histogramOf(f.name, samples, nativeHistograms),
      }));
    } else if (type === 'summary') {
      metrics = [...groupSeries(f, 'quantile').values()].map(({ labels, samples }) => {
        const summary = { count: 0, sum: 0, quantiles: [] as Array<[number, number]> };
        for (const s of samples) {
          if (s.metricName === `${f.name}_count`) summary.count = s.value;
          else if (s.metricName === `${f.name}_sum`) summary.sum = s.value;
          else summary.quantiles.push([parseNumber(s.labels?.quantile), s.value]);
        }
        return { labels, summary };
      });
    } else {
      metrics = (f.values ?? []).map((s) => ({ labels: labelPairs(s.labels), value: s.value }));
    }
    if (metrics.length) out.push({ name: f.name, help: f.help, type, metrics });
  }
  return out;
}

function histogramOf(name: string, samples: SampleJSON[], nativeHistograms: boolean): Histogram {
  const h: Histogram = { count: 0, sum: 0, buckets: [] };
  const [count, sum, bucket] = [`${name}_count`, `${name}_sum`, `${name}_bucket`];
  for (const s of samples) {
    if (s.metricName === count) {
      h.count = s.value;
      if (nativeHistograms && s.native) h.native = s.native;
    } else if (s.metricName === sum) {
      h.sum = s.value;
    } else if (s.metricName === bucket) {
      const le = parseNumber(s.labels?.le);
      if (le !== Number.POSITIVE_INFINITY) h.buckets.push([le, s.value]);
    }
  }
  return h;
}
