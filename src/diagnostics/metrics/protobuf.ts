/**
 * A hand-written encoder of `io.prometheus.client.MetricFamily` (client_model's metrics.proto, proto2) in the
 * delimited framing Prometheus scrapes: every family is prefixed by its length as a varint.
 *
 * Field numbers come from metrics.proto. Repeated scalars are written unpacked, as proto2 fields without
 * `[packed=true]` are; parsers accept both forms.
 */

/** `MetricType` of metrics.proto. */
export const METRIC_TYPE = { counter: 0, gauge: 1, summary: 2, untyped: 3, histogram: 4 } as const;
export type FamilyType = keyof typeof METRIC_TYPE;

export interface MetricFamily {
  name: string;
  help: string;
  type: FamilyType;
  metrics: Metric[];
}

export interface Metric {
  labels: Array<[name: string, value: string]>;
  /** The value of a counter, gauge or untyped metric. */
  value?: number;
  summary?: Summary;
  histogram?: Histogram;
}

export interface Summary {
  count: number;
  sum: number;
  quantiles: Array<[quantile: number, value: number]>;
}

export interface Histogram {
  count: number;
  sum: number;
  /** Classic buckets, increasing upper bounds, cumulative counts; the +Inf bucket may be left out. */
  buckets: Array<[upperBound: number, cumulativeCount: number]>;
  native?: NativeBuckets;
}

/** The exponential buckets of a native histogram: populated `[index, count]` pairs in increasing index order. */
export interface NativeBuckets {
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  positive: Array<[index: number, count: number]>;
  negative: Array<[index: number, count: number]>;
}

export interface Span {
  offset: number;
  length: number;
}

/**
 * Spans and deltas of populated buckets, as client_golang writes them: a gap of one or two empty buckets is
 * filled with zero counts (cheaper than a new span); a longer gap starts a new span whose offset is the gap.
 */
export function spansAndDeltas(buckets: ReadonlyArray<readonly [number, number]>): { spans: Span[]; deltas: number[] } {
  const spans: Span[] = [];
  const deltas: number[] = [];
  let next = 0;
  let previous = 0;
  const append = (count: number) => {
    deltas.push(count - previous);
    previous = count;
    spans[spans.length - 1].length++;
  };
  for (const [index, count] of buckets) {
    const gap = index - next;
    if (spans.length === 0 || gap > 2) {
      spans.push({ offset: gap, length: 0 });
    } else {
      for (let i = 0; i < gap; i++) append(0);
    }
    append(count);
    next = index + 1;
  }
  return { spans, deltas };
}

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
/** A length placeholder of five varint bytes fits any message below 2^35 bytes. */
const RESERVED = 5;

/** Writes an unsigned varint of any safe integer at `pos` (arithmetic, not 32-bit bit operations); returns the end. */
function putVarint(buf: Buffer, pos: number, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`varint out of range: ${n}`);
  while (n >= 0x80) {
    buf[pos++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  buf[pos++] = n;
  return pos;
}

/** Appends protobuf fields to a growing buffer; nested messages are written in place and their length patched. */
class Writer {
  private buf = Buffer.allocUnsafe(4096);
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  varint(n: number): void {
    this.ensure(10);
    this.pos = putVarint(this.buf, this.pos, n);
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  uint(field: number, n: number): void {
    this.tag(field, VARINT);
    this.varint(n);
  }

  /** sint32/sint64: zigzag, so small negative numbers stay short. */
  sint(field: number, n: number): void {
    this.tag(field, VARINT);
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  double(field: number, v: number): void {
    this.tag(field, FIXED64);
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(v, this.pos);
  }

  string(field: number, s: string): void {
    this.tag(field, LEN);
    const n = Buffer.byteLength(s);
    this.varint(n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  message(field: number, body: () => void): void {
    this.tag(field, LEN);
    this.lengthPrefixed(body);
  }

  /** Writes `body`, preceded by its byte length as a varint. */
  lengthPrefixed(body: () => void): void {
    this.ensure(RESERVED);
    const at = this.pos;
    this.pos += RESERVED;
    body();
    const length = this.pos - at - RESERVED;
    const end = this.pos;
    const start = putVarint(this.buf, at, length);
    const gap = at + RESERVED - start;
    if (gap > 0) this.buf.copyWithin(start, at + RESERVED, end);
    this.pos = end - gap;
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** Encodes the families in the delimited framing (`encoding=delimited`). */
export function encodeDelimited(families: readonly MetricFamily[]): Buffer {
  const w = new Writer();
  for (const family of families) w.lengthPrefixed(() => writeFamily(w, family));
  return w.finish();
}

function writeFamily(w: Writer, f: MetricFamily): void {
  w.string(1, f.name);
  if (f.help) w.string(2, f.help);
  w.uint(3, METRIC_TYPE[f.type]);
  for (const m of f.metrics) w.message(4, () => writeMetric(w, f.type, m));
}

function writeMetric(w: Writer, type: FamilyType, m: Metric): void {
  for (const [name, value] of m.labels) {
    w.message(1, () => {
      w.string(1, name);
      w.string(2, value);
    });
  }
  switch (type) {
    case 'gauge':
      w.message(2, () => w.double(1, m.value ?? 0));
      break;
    case 'counter':
      w.message(3, () => w.double(1, m.value ?? 0));
      break;
    case 'untyped':
      w.message(5, () => w.double(1, m.value ?? 0));
      break;
    case 'summary':
      if (m.summary) w.message(4, () => writeSummary(w, m.summary!));
      break;
    case 'histogram':
      if (m.histogram) w.message(7, () => writeHistogram(w, m.histogram!));
      break;
  }
}

function writeSummary(w: Writer, s: Summary): void {
  w.uint(1, s.count);
  w.double(2, s.sum);
  for (const [quantile, value] of s.quantiles) {
    w.message(3, () => {
      w.double(1, quantile);
      w.double(2, value);
    });
  }
}

function writeHistogram(w: Writer, h: Histogram): void {
  w.uint(1, h.count);
  w.double(2, h.sum);
  for (const [upperBound, cumulative] of h.buckets) {
    w.message(3, () => {
      w.uint(1, cumulative);
      w.double(2, upperBound);
    });
  }
  const n = h.native;
  if (!n) return;
  w.sint(5, n.schema);
  w.double(6, n.zeroThreshold);
  w.uint(7, n.zeroCount);
  const negative = spansAndDeltas(n.negative);
  const positive = spansAndDeltas(n.positive);
  // No buckets and no zero bucket width would read as a classic histogram: client_golang adds an empty span.
  if (positive.spans.length === 0 && negative.spans.length === 0 && n.zeroThreshold === 0) {
    positive.spans.push({ offset: 0, length: 0 });
  }
  writeSpans(w, 9, 10, negative);
  writeSpans(w, 12, 13, positive);
}

function writeSpans(w: Writer, spanField: number, deltaField: number, s: { spans: Span[]; deltas: number[] }): void {
  for (const span of s.spans) {
    w.message(spanField, () => {
      w.sint(1, span.offset);
      w.uint(2, span.length);
    });
  }
  for (const delta of s.deltas) w.sint(deltaField, delta);
}
