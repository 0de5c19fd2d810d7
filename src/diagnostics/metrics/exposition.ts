/**
 * Renders a prom-client Registry in the format the scraper's `Accept` asks for: Prometheus text 0.0.4 (the
 * default), OpenMetrics 1.0.0, or delimited protobuf. All three are rendered here, so no shared registry state
 * changes per request (prom-client's own OpenMetrics rendering renames counters in place). Protobuf is built from
 * `getMetricsAsJSON()`. In the text formats, histograms (prom-client's and native ones) are written straight from
 * their per-series state: one sample object per bucket would cost more than the text itself; other metrics from
 * their samples (`getForPromString()` where the metric has one, as prom-client's own text). Native histogram
 * buckets go out only in protobuf and only with the `NativeHistograms` gate on.
 */

import { type ClassicSeries, type HistogramSample, NativeHistogram, type NativeSeries } from './native-histogram.ts';
import { Histogram as PromHistogram, type Registry, type RegistryContentType } from './prom-client.ts';
import {
  encodeDelimited,
  type FamilyType,
  type Histogram,
  type Metric,
  type MetricFamily,
  type NativeBuckets,
} from './protobuf.ts';

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

interface SampleJSON extends Partial<Omit<HistogramSample, 'value' | 'labels'>> {
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
      ? encodeDelimited(await protobufFamilies(registry, options.nativeHistograms))
      : await renderText(registry, format === 'openmetrics');
  return { contentType: CONTENT_TYPES[format], body };
}

interface Collectable {
  get(): Promise<FamilyJSON> | FamilyJSON;
  getForPromString?(): Promise<FamilyJSON> | FamilyJSON;
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

function familyHeader(name: string, help: string, type: string, openMetrics: boolean): string {
  return `# HELP ${name} ${escapeHelp(help, openMetrics)}\n# TYPE ${name} ${type}\n`;
}

/** One family's text from its samples (counters' `_total` samples in OpenMetrics). */
function familyText(f: FamilyJSON, openMetrics: boolean): string {
  const counter = f.type === 'counter';
  const family = openMetrics && counter ? f.name.replace(/_total$/, '') : f.name;
  const type = ['counter', 'gauge', 'histogram', 'summary'].includes(f.type)
    ? f.type
    : openMetrics
      ? 'unknown'
      : 'untyped';
  let out = familyHeader(family, f.help, type, openMetrics);
  // The rendered shared labels of the series the last sample belonged to.
  let shared: Labels | undefined;
  let sharedText = '';
  for (const s of f.values ?? []) {
    const name = openMetrics && counter ? `${family}_total` : (s.metricName ?? f.name);
    if (s.sharedLabels !== shared) {
      shared = s.sharedLabels;
      sharedText = labelPairsText(shared);
    }
    const own = labelPairsText(s.labels);
    // The series' labels first, so `le` comes last as in client_golang.
    const pairs = own && sharedText ? `${sharedText},${own}` : sharedText || own;
    out += `${name}${pairs ? `{${pairs}}` : ''} ${formatNumber(s.value)}`;
    if (openMetrics && s.exemplar) {
      const { labelSet, value, timestamp } = s.exemplar;
      out += ` # ${labelString(labelSet) || '{}'} ${formatNumber(value)}`;
      if (timestamp !== undefined) out += ` ${formatNumber(timestamp)}`;
    }
    out += '\n';
  }
  return out;
}

/** A histogram as its classic series, read from the metric's state rather than from sample objects. */
interface ClassicHistogram {
  name: string;
  help: string;
  /** Finite upper bounds, increasing; +Inf is implied. */
  bounds: readonly number[];
  series: Iterable<ClassicSeries>;
}

/**
 * The part of prom-client's Histogram read here: its per-series state. prom-client has no public accessor for
 * it (its own `getForPromString()` builds an object per bucket); the test comparing with prom-client's own
 * text guards these fields.
 */
interface PromHistogramState {
  name: string;
  help: string;
  upperBounds: number[];
  hashMap: Record<string, { labels: Labels; bucketValues: Record<string, number>; sum: number; count: number }>;
  enableExemplars: boolean;
  collect?: () => unknown;
}

/** `metric` as a classic histogram when it is one we can read directly (not one with exemplars to show). */
async function classicHistogram(metric: unknown, openMetrics: boolean): Promise<ClassicHistogram | undefined> {
  if (metric instanceof NativeHistogram) {
    const { name, help, classicBuckets: bounds } = metric;
    return { name, help, bounds, series: metric.allSeries() };
  }
  if (!(metric instanceof PromHistogram)) return undefined;
  const h = metric as unknown as PromHistogramState;
  if (openMetrics && h.enableExemplars) return undefined;
  if (h.collect) await h.collect();
  const bounds = h.upperBounds;
  const keys = bounds.map(String);
  const series = Object.values(h.hashMap).map(({ labels, bucketValues, sum, count }) => ({
    labels,
    sum,
    count,
    classic: keys.map((k) => bucketValues[k]),
  }));
  return { name: h.name, help: h.help, bounds, series };
}

/** A classic histogram's text: per series its cumulative buckets (`le` last, as client_golang), sum and count. */
function histogramText({ name, help, bounds, series }: ClassicHistogram, openMetrics: boolean): string {
  const les = bounds.map((b) => `le="${formatNumber(b)}"} `);
  let out = familyHeader(name, help, 'histogram', openMetrics);
  for (const { labels, classic, sum, count } of series) {
    const pairs = labelPairsText(labels);
    const bucket = pairs ? `${name}_bucket{${pairs},` : `${name}_bucket{`;
    const own = pairs ? `{${pairs}} ` : ' ';
    let cumulative = 0;
    for (let i = 0; i < les.length; i++) {
      cumulative += classic[i];
      out += `${bucket}${les[i]}${formatNumber(cumulative)}\n`;
    }
    out += `${bucket}le="+Inf"} ${formatNumber(count)}\n`;
    out += `${name}_sum${own}${formatNumber(sum)}\n${name}_count${own}${formatNumber(count)}\n`;
  }
  return out;
}

async function metricText(metric: Collectable, openMetrics: boolean): Promise<string> {
  const histogram = await classicHistogram(metric, openMetrics);
  if (histogram) return histogramText(histogram, openMetrics);
  return familyText(await (metric.getForPromString ?? metric.get).call(metric), openMetrics);
}

/**
 * Whether the registry has default labels. Such a registry goes through `getMetricsAsJSON()`, which adds them
 * (prom-client has no getter for them: the field is read as its own text rendering reads it; the default-labels
 * test guards this).
 */
function hasDefaultLabels(registry: Registry<RegistryContentType>): boolean {
  const defaults = (registry as unknown as { _defaultLabels?: object })._defaultLabels;
  return defaults !== undefined && Object.keys(defaults).length > 0;
}

/** Prometheus text 0.0.4 or, with `openMetrics`, OpenMetrics 1.0.0 (`# EOF`). */
async function renderText(registry: Registry<RegistryContentType>, openMetrics: boolean): Promise<string> {
  const families = hasDefaultLabels(registry)
    ? ((await registry.getMetricsAsJSON()) as unknown as FamilyJSON[]).map((f) => familyText(f, openMetrics))
    : await Promise.all(
        (registry.getMetricsAsArray() as unknown as Collectable[]).map((m) => metricText(m, openMetrics)),
      );
  return `${families.join('')}${openMetrics ? '# EOF\n' : ''}`;
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

function histogramMetric(bounds: readonly number[], s: ClassicSeries, native?: NativeBuckets): Metric {
  const buckets: Array<[number, number]> = [];
  let cumulative = 0;
  for (let i = 0; i < bounds.length; i++) {
    cumulative += s.classic[i];
    buckets.push([bounds[i], cumulative]);
  }
  const histogram: Histogram = { count: s.count, sum: s.sum, buckets };
  if (native) histogram.native = native;
  return { labels: labelPairs(s.labels), histogram };
}

/** A histogram's protobuf metrics straight from its state; undefined for other metrics. */
async function histogramMetrics(metric: Collectable, nativeHistograms: boolean): Promise<Metric[] | undefined> {
  if (metric instanceof NativeHistogram) {
    const native = (s: NativeSeries) => (nativeHistograms ? metric.nativeBuckets(s) : undefined);
    return [...metric.allSeries()].map((s) => histogramMetric(metric.classicBuckets, s, native(s)));
  }
  const h = await classicHistogram(metric, false);
  return h && [...h.series].map((s) => histogramMetric(h.bounds, s));
}

async function metricFamilies(metric: Collectable, nativeHistograms: boolean): Promise<MetricFamily[]> {
  const { name, help } = metric as unknown as { name: string; help: string };
  const histograms = await histogramMetrics(metric, nativeHistograms);
  if (!histograms) return toMetricFamilies([(await metric.get()) as FamilyJSON], nativeHistograms);
  return histograms.length ? [{ name, help, type: 'histogram', metrics: histograms }] : [];
}

async function protobufFamilies(
  registry: Registry<RegistryContentType>,
  nativeHistograms: boolean,
): Promise<MetricFamily[]> {
  if (hasDefaultLabels(registry))
    return toMetricFamilies((await registry.getMetricsAsJSON()) as unknown as FamilyJSON[], nativeHistograms);
  const metrics = registry.getMetricsAsArray() as unknown as Collectable[];
  return (await Promise.all(metrics.map((m) => metricFamilies(m, nativeHistograms)))).flat();
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
