/**
 * A native (exponential-bucket) histogram with labels, following client_golang's rules, that also keeps classic
 * buckets. It registers into a prom-client Registry like any metric: `get()` gives the classic samples
 * (`_bucket`, `_sum`, `_count`) that the text formats show, and each series' `_count` sample also carries its
 * exponential buckets under `native`, which only the protobuf exposition writes.
 *
 * Bucket `i` at schema `s` covers (base^(i-1), base^i] with base = 2^(2^-s); observations whose absolute value is
 * at most the zero threshold go to the zero bucket. When a series holds more than `maxBuckets` populated buckets,
 * its schema drops by one (each pair of buckets merges into one) until it fits, down to schema -4.
 */
import { register as globalRegistry, type Metric, type Registry, type RegistryContentType } from './prom-client.ts';
import type { NativeBuckets } from './protobuf.ts';

export const MIN_SCHEMA = -4;
export const MAX_SCHEMA = 8;
/** client_golang's default zero threshold, 2^-128. */
export const DEFAULT_ZERO_THRESHOLD = 2 ** -128;
/** The spec's limit of native histogram buckets (§8). */
export const DEFAULT_MAX_BUCKETS = 160;
/** prom-client's and client_golang's default classic buckets. */
export const DEFAULT_CLASSIC_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const frexpView = new DataView(new ArrayBuffer(8));

/** Splits a finite non-zero `v` into `frac * 2^exp` with |frac| in [0.5, 1), exactly, as C's frexp. */
export function frexp(v: number): [frac: number, exp: number] {
  if (v === 0 || !Number.isFinite(v)) return [v, 0];
  let shift = 0;
  frexpView.setFloat64(0, v);
  if (((frexpView.getUint16(0) >> 4) & 0x7ff) === 0) {
    shift = 64; // subnormal: scale into the normal range first
    frexpView.setFloat64(0, v * 2 ** 64);
  }
  const high = frexpView.getUint16(0);
  const biased = (high >> 4) & 0x7ff;
  frexpView.setUint16(0, (high & 0x800f) | (1022 << 4)); // keep sign and mantissa, exponent of 2^-1
  return [frexpView.getFloat64(0), biased - 1022 - shift];
}

const boundsBySchema = new Map<number, number[]>();

/**
 * For schema > 0: the 2^schema bucket bounds within [0.5, 1), i.e. 2^(j·2^-schema) / 2. Computed here, they can
 * differ by an ulp or two from client_golang's literal table (whose upper half is rounded low), so a value exactly
 * on such a boundary may land one bucket off from where client_golang would put it.
 */
function fractionBounds(schema: number): number[] {
  let bounds = boundsBySchema.get(schema);
  if (!bounds) {
    const n = 2 ** schema;
    bounds = Array.from({ length: n }, (_, j) => 2 ** (j / n) / 2);
    boundsBySchema.set(schema, bounds);
  }
  return bounds;
}

/** The index of the smallest element >= x (the length when there is none). */
function lowerBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The bucket index of a positive value (+Inf included): ceil(log_base(v)), computed from the exact binary
 * exponent as client_golang does so powers of the base land on their own bucket's upper bound.
 */
export function bucketIndex(v: number, schema: number): number {
  if (v === Number.POSITIVE_INFINITY) return bucketIndex(Number.MAX_VALUE, schema) + 1;
  const [frac, exp] = frexp(v);
  if (schema > 0) {
    const bounds = fractionBounds(schema);
    return lowerBound(bounds, frac) + (exp - 1) * bounds.length;
  }
  const key = frac === 0.5 ? exp - 1 : exp;
  const width = 2 ** -schema;
  return Math.floor((key + width - 1) / width);
}

/** The buckets at the next lower schema: bucket k merges into ceil(k/2). */
export function halveResolution(buckets: ReadonlyMap<number, number>): Map<number, number> {
  const merged = new Map<number, number>();
  for (const [k, count] of buckets) {
    const key = Math.ceil(k / 2) || 0; // `|| 0` turns -0 into 0
    merged.set(key, (merged.get(key) ?? 0) + count);
  }
  return merged;
}

export type LabelValues<L extends string> = Partial<Record<L, string | number>>;

export interface NativeHistogramConfig<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  /** Upper bounds of the classic buckets shown by the text formats; +Inf is implied. */
  classicBuckets?: readonly number[];
  /** Starting resolution, -4..8; default 3 (8 buckets per power of two). */
  schema?: number;
  /** Most populated buckets (positive and negative together) per series before the schema is reduced. */
  maxBuckets?: number;
  /** Observations with |v| at most this go to the zero bucket. */
  zeroThreshold?: number;
  /** Default: prom-client's global registry, as prom-client's own metrics. */
  registers?: Registry<RegistryContentType>[];
}

/** A sample as prom-client's `get()` gives it; the `_count` sample of a series carries its native buckets. */
export interface HistogramSample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
  native?: NativeBuckets;
}

export interface HistogramFamily {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: HistogramSample[];
}

/** One series of a histogram as its classic buckets: what the text formats show. */
export interface ClassicSeries {
  /** Labels whose value is undefined are not shown. */
  labels: Record<string, string | number | undefined>;
  count: number;
  sum: number;
  /** Per classic bound, non-cumulative, in the bounds' order (a slot after the last bound is not read). */
  classic: ArrayLike<number>;
}

/** A series' full state. */
export interface NativeSeries extends ClassicSeries {
  labels: Record<string, string>;
  /** The last slot is the +Inf bucket. */
  classic: number[];
  schema: number;
  zeroCount: number;
  positive: Map<number, number>;
  negative: Map<number, number>;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export class NativeHistogram<L extends string = string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames: readonly L[];
  readonly classicBuckets: readonly number[];
  readonly schema: number;
  readonly maxBuckets: number;
  readonly zeroThreshold: number;
  private series = new Map<string, NativeSeries>();

  constructor(config: NativeHistogramConfig<L>) {
    const { name, help, labelNames = [], schema = 3, maxBuckets = DEFAULT_MAX_BUCKETS } = config;
    const { zeroThreshold = DEFAULT_ZERO_THRESHOLD, registers = [globalRegistry] } = config;
    const classicBuckets = (config.classicBuckets ?? DEFAULT_CLASSIC_BUCKETS).filter((b) => b !== Infinity);
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name "${name}"`);
    if (!help) throw new Error(`metric ${name} needs help text`);
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label) || label.startsWith('__') || label === 'le') {
        throw new Error(`invalid label name "${label}" for histogram ${name}`);
      }
    }
    if (!Number.isInteger(schema) || schema < MIN_SCHEMA || schema > MAX_SCHEMA) {
      throw new Error(`schema must be an integer from ${MIN_SCHEMA} to ${MAX_SCHEMA}, got ${schema}`);
    }
    if (!Number.isInteger(maxBuckets) || maxBuckets < 1) throw new Error(`maxBuckets must be >= 1, got ${maxBuckets}`);
    if (!(zeroThreshold >= 0 && Number.isFinite(zeroThreshold))) {
      throw new Error(`zeroThreshold must be finite and >= 0, got ${zeroThreshold}`);
    }
    classicBuckets.forEach((b, i) => {
      if (!Number.isFinite(b) || (i > 0 && b <= classicBuckets[i - 1])) {
        throw new Error(`classic buckets of ${name} must be finite and strictly increasing`);
      }
    });
    this.name = name;
    this.help = help;
    this.labelNames = [...labelNames];
    this.classicBuckets = classicBuckets;
    this.schema = schema;
    this.maxBuckets = maxBuckets;
    this.zeroThreshold = zeroThreshold;
    for (const registry of registers) registry.registerMetric(this as unknown as Metric);
  }

  observe(labels: LabelValues<L>, value: number): void {
    if (typeof value !== 'number') throw new TypeError(`value of ${this.name} must be a number, got ${typeof value}`);
    const s = this.seriesFor(labels);
    s.count++;
    s.sum += value;
    if (Number.isNaN(value)) {
      s.classic[this.classicBuckets.length]++; // counted (in +Inf), as client_golang does, but in no native bucket
      return;
    }
    s.classic[lowerBound(this.classicBuckets, value)]++;
    if (Math.abs(value) <= this.zeroThreshold) {
      s.zeroCount++;
      return;
    }
    const buckets = value > 0 ? s.positive : s.negative;
    const key = bucketIndex(Math.abs(value), s.schema);
    buckets.set(key, (buckets.get(key) ?? 0) + 1);
    while (s.positive.size + s.negative.size > this.maxBuckets && s.schema > MIN_SCHEMA) {
      s.positive = halveResolution(s.positive);
      s.negative = halveResolution(s.negative);
      s.schema--;
    }
  }

  /** Forgets one series. */
  remove(labels: LabelValues<L>): void {
    this.series.delete(this.key(this.validLabels(labels)));
  }

  /** Forgets all series (prom-client's `registry.resetMetrics()` calls this). */
  reset(): void {
    this.series.clear();
  }

  /** prom-client's collection interface: classic samples; `_count` also carries the native buckets. */
  async get(): Promise<HistogramFamily> {
    const values: HistogramSample[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      const sample = (metricName: string, value: number, labels: HistogramSample['labels']) => ({
        metricName,
        value,
        labels: { ...s.labels, ...labels },
      });
      let cumulative = 0;
      this.classicBuckets.forEach((le, i) => {
        cumulative += s.classic[i];
        values.push(sample(bucketName, cumulative, { le }));
      });
      values.push(sample(bucketName, s.count, { le: '+Inf' }));
      values.push(sample(`${this.name}_sum`, s.sum, {}));
      values.push({ ...sample(`${this.name}_count`, s.count, {}), native: this.nativeBuckets(s) });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The series, for the expositions to render without building samples. */
  allSeries(): Iterable<NativeSeries> {
    return this.series.values();
  }

  /** The exponential buckets of one of `allSeries()`. */
  nativeBuckets(s: NativeSeries): NativeBuckets {
    return nativeOf(s, this.zeroThreshold);
  }

  private validLabels(labels: LabelValues<L>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(labels)) {
      if (!(this.labelNames as readonly string[]).includes(name)) {
        throw new Error(`label "${name}" is not among the label names of ${this.name}: ${this.labelNames.join(', ')}`);
      }
      if (value !== undefined) out[name] = String(value);
    }
    return out;
  }

  private key(labels: Record<string, string>): string {
    return JSON.stringify(this.labelNames.map((n) => labels[n] ?? null));
  }

  private seriesFor(raw: LabelValues<L>): NativeSeries {
    const labels = this.validLabels(raw);
    const key = this.key(labels);
    let s = this.series.get(key);
    if (!s) {
      s = {
        labels,
        count: 0,
        sum: 0,
        classic: new Array(this.classicBuckets.length + 1).fill(0),
        schema: this.schema,
        zeroCount: 0,
        positive: new Map(),
        negative: new Map(),
      };
      this.series.set(key, s);
    }
    return s;
  }
}

function sorted(buckets: Map<number, number>): Array<[number, number]> {
  return [...buckets].sort((a, b) => a[0] - b[0]);
}

function nativeOf(s: NativeSeries, zeroThreshold: number): NativeBuckets {
  return {
    schema: s.schema,
    zeroThreshold,
    zeroCount: s.zeroCount,
    positive: sorted(s.positive),
    negative: sorted(s.negative),
  };
}

/** Makes a native histogram and registers it (see NativeHistogramConfig for the defaults). */
export function nativeHistogram<L extends string>(config: NativeHistogramConfig<L>): NativeHistogram<L> {
  return new NativeHistogram(config);
}
