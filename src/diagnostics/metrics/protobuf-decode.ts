/**
 * A generic protobuf reader for tests: it splits a message into (field number, wire type, value) and names the
 * fields from a table transcribed from client_model's metrics.proto. It shares no code with the encoder, so a
 * round trip checks the wire bytes, not the encoder against itself. Output keys are the .proto field names.
 */

type Scalar = 'uint' | 'sint' | 'double' | 'string';
interface FieldSpec {
  name: string;
  kind: Scalar | Schema;
  repeated?: boolean;
}
type Schema = { [field: number]: FieldSpec };

const LABEL_PAIR: Schema = { 1: { name: 'name', kind: 'string' }, 2: { name: 'value', kind: 'string' } };
const VALUE: Schema = { 1: { name: 'value', kind: 'double' } };
const QUANTILE: Schema = { 1: { name: 'quantile', kind: 'double' }, 2: { name: 'value', kind: 'double' } };
const SUMMARY: Schema = {
  1: { name: 'sample_count', kind: 'uint' },
  2: { name: 'sample_sum', kind: 'double' },
  3: { name: 'quantile', kind: QUANTILE, repeated: true },
};
const BUCKET: Schema = {
  1: { name: 'cumulative_count', kind: 'uint' },
  2: { name: 'upper_bound', kind: 'double' },
  4: { name: 'cumulative_count_float', kind: 'double' },
};
const SPAN: Schema = { 1: { name: 'offset', kind: 'sint' }, 2: { name: 'length', kind: 'uint' } };
const HISTOGRAM: Schema = {
  1: { name: 'sample_count', kind: 'uint' },
  2: { name: 'sample_sum', kind: 'double' },
  3: { name: 'bucket', kind: BUCKET, repeated: true },
  4: { name: 'sample_count_float', kind: 'double' },
  5: { name: 'schema', kind: 'sint' },
  6: { name: 'zero_threshold', kind: 'double' },
  7: { name: 'zero_count', kind: 'uint' },
  8: { name: 'zero_count_float', kind: 'double' },
  9: { name: 'negative_span', kind: SPAN, repeated: true },
  10: { name: 'negative_delta', kind: 'sint', repeated: true },
  11: { name: 'negative_count', kind: 'double', repeated: true },
  12: { name: 'positive_span', kind: SPAN, repeated: true },
  13: { name: 'positive_delta', kind: 'sint', repeated: true },
  14: { name: 'positive_count', kind: 'double', repeated: true },
};
const METRIC: Schema = {
  1: { name: 'label', kind: LABEL_PAIR, repeated: true },
  2: { name: 'gauge', kind: VALUE },
  3: { name: 'counter', kind: VALUE },
  4: { name: 'summary', kind: SUMMARY },
  5: { name: 'untyped', kind: VALUE },
  6: { name: 'timestamp_ms', kind: 'uint' },
  7: { name: 'histogram', kind: HISTOGRAM },
};
const METRIC_FAMILY: Schema = {
  1: { name: 'name', kind: 'string' },
  2: { name: 'help', kind: 'string' },
  3: { name: 'type', kind: 'uint' },
  4: { name: 'metric', kind: METRIC, repeated: true },
};

/** A decoded message: plain, schema-shaped objects. */
export type Decoded = Record<string, any>;

class Reader {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (this.pos >= this.bytes.length) throw new Error('truncated varint');
      const b = this.bytes[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
      if (shift > 63n) throw new Error('varint longer than 10 bytes');
    }
  }

  take(n: number): Uint8Array {
    if (this.pos + n > this.bytes.length) throw new Error('truncated field');
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function toNumber(n: bigint): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${n} is unsafe`);
  return Number(n);
}

function unzigzag(n: bigint): bigint {
  return (n >> 1n) ^ -(n & 1n);
}

function readDouble(bytes: Uint8Array): number {
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getFloat64(0, true);
}

/** One scalar from a varint or an 8-byte field. */
function scalar(kind: Scalar, wire: number, r: Reader): number {
  if (kind === 'double') {
    if (wire !== 1) throw new Error(`double with wire type ${wire}`);
    return readDouble(r.take(8));
  }
  if (wire !== 0) throw new Error(`${kind} with wire type ${wire}`);
  const v = r.varint();
  return toNumber(kind === 'sint' ? unzigzag(v) : v);
}

/** Decodes one message by `schema`; unknown fields land in `_unknown` as field numbers. */
export function decodeMessage(bytes: Uint8Array, schema: Schema): Decoded {
  const out: Decoded = {};
  const r = new Reader(bytes);
  while (!r.done) {
    const key = toNumber(r.varint());
    const field = Math.floor(key / 8);
    const wire = key % 8;
    const spec = schema[field];
    if (!spec) {
      skip(r, wire);
      out._unknown = [...(out._unknown ?? []), field];
      continue;
    }
    const values: unknown[] = [];
    if (typeof spec.kind === 'object') {
      if (wire !== 2) throw new Error(`message field ${spec.name} with wire type ${wire}`);
      values.push(decodeMessage(r.take(toNumber(r.varint())), spec.kind));
    } else if (spec.kind === 'string') {
      if (wire !== 2) throw new Error(`string field ${spec.name} with wire type ${wire}`);
      values.push(new TextDecoder('utf-8', { fatal: true }).decode(r.take(toNumber(r.varint()))));
    } else if (wire === 2 && spec.repeated) {
      const packed = new Reader(r.take(toNumber(r.varint())));
      while (!packed.done) values.push(scalar(spec.kind, spec.kind === 'double' ? 1 : 0, packed));
    } else {
      values.push(scalar(spec.kind, wire, r));
    }
    if (spec.repeated) out[spec.name] = [...(out[spec.name] ?? []), ...values];
    else out[spec.name] = values[0];
  }
  return out;
}

function skip(r: Reader, wire: number): void {
  if (wire === 0) r.varint();
  else if (wire === 1) r.take(8);
  else if (wire === 2) r.take(toNumber(r.varint()));
  else if (wire === 5) r.take(4);
  else throw new Error(`unsupported wire type ${wire}`);
}

/** Splits varint-length-delimited frames and decodes each as a MetricFamily. */
export function decodeMetricFamilies(bytes: Uint8Array): Decoded[] {
  const r = new Reader(bytes);
  const families: Decoded[] = [];
  while (!r.done) families.push(decodeMessage(r.take(toNumber(r.varint())), METRIC_FAMILY));
  return families;
}

/** Expands spans and deltas back into `[index, count]` pairs (zero-count fillers included). */
export function expandBuckets(spans: Decoded[] = [], deltas: number[] = []): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let index = 0;
  let count = 0;
  let d = 0;
  for (const span of spans) {
    index += span.offset ?? 0; // the first span's offset is its start, later ones the gap after the previous
    for (let k = 0; k < (span.length ?? 0); k++) {
      count += deltas[d++];
      out.push([index, count]);
      index++;
    }
  }
  if (d !== deltas.length) throw new Error(`spans cover ${d} buckets but there are ${deltas.length} deltas`);
  return out;
}
