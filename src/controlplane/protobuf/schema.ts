/**
 * Protobuf messages decoded into their JSON object form, driven by small tables: for each field number the
 * JSON name and the kind of value (a scalar, a nested table, or one of the Kubernetes special types such as
 * `Time`, `Quantity` or `IntOrString`), and whether it is repeated, a map, a pointer, or embedded inline.
 *
 * The JSON form follows what the Kubernetes Go types marshal to:
 *  - fields absent from the wire are absent from the object; so are zero values of non-pointer fields
 *    (empty strings, 0, false), as `omitempty` drops them. Pointer fields (`keep`) keep their zero values,
 *    since the Go marshaller writes them only when they are set (`replicas: 0`, `immutable: false`);
 *  - nested messages are kept even when empty (`spec: {}`), except the zero `Time`, which is null in JSON;
 *  - `bytes` become base64 strings; `Time` an RFC 3339 string in UTC with whole seconds, `MicroTime` with
 *    microseconds; `Quantity` its string; `IntOrString` a number or a string; `RawExtension` and
 *    `FieldsV1` the JSON document they carry;
 *  - fields a table does not list are skipped, as the generated Go code skips unknown fields.
 */
import { jsonDepthError } from '../depth.ts';
import { ProtobufError, ProtoReader, WireType } from './wire.ts';

export type ScalarKind =
  | 'string'
  | 'bytes'
  | 'int32'
  | 'int64'
  | 'bool'
  | 'double'
  | 'time'
  | 'microTime'
  | 'quantity'
  | 'intOrString'
  | 'rawExtension'
  | 'fieldsV1';

export type ValueKind = ScalarKind | MessageTable;

export interface FieldSpec {
  /** The JSON name. */
  readonly name: string;
  readonly kind: ValueKind;
  /** A repeated field (a JSON array). */
  readonly repeated?: boolean;
  /** A `map<string, kind>` (a JSON object). */
  readonly map?: boolean;
  /** A pointer in the Go type: present means set, so zero values are kept. */
  readonly keep?: boolean;
  /** A scalar without `omitempty` in the Go type: its zero value is written when it is unset. */
  readonly always?: boolean;
  /** An embedded struct whose fields the JSON form inlines into the parent object. */
  readonly inline?: boolean;
  /** A message the server's schema leaves free-form: present on the wire, it is refused by name. */
  readonly opaque?: boolean;
}

export interface MessageTable {
  /** A name for messages about this table (the protobuf message name). */
  readonly name: string;
  readonly fields: Readonly<Record<number, FieldSpec>>;
  /** The JSON form is this one field's value rather than an object (e.g. `ExtraValue` → its `items`). */
  readonly unwrap?: string;
}

export type FieldOptions = Pick<FieldSpec, 'keep' | 'inline'>;

// ---------------------------------------------------------------------------------------------
// Table builders

export const message = (name: string, fields: Record<number, FieldSpec>, unwrap?: string): MessageTable =>
  unwrap === undefined ? { name, fields } : { name, fields, unwrap };

export const field = (name: string, kind: ValueKind, options: FieldOptions = {}): FieldSpec => ({
  name,
  kind,
  ...options,
});

/** A repeated field of scalars or messages. */
export const list = (name: string, kind: ValueKind): FieldSpec => ({ name, kind, repeated: true });

/** A `map<string, kind>`. */
export const mapOf = (name: string, kind: ValueKind): FieldSpec => ({ name, kind, map: true });

/** An optional (pointer) field: zero values are kept. */
export const ptr = (name: string, kind: ValueKind): FieldSpec => ({ name, kind, keep: true });

/** An embedded struct whose fields are inlined in the parent's JSON. */
export const inline = (table: MessageTable): FieldSpec => ({ name: table.name, kind: table, inline: true });

// ---------------------------------------------------------------------------------------------
// Decoding

type JsonObject = Record<string, unknown>;

/** Decodes a whole message by its table. */
export function decodeMessage(bytes: Uint8Array, table: MessageTable): unknown {
  return finish(readMessage(new ProtoReader(bytes), table, {}, table.name), table);
}

function finish(object: JsonObject, table: MessageTable): unknown {
  return table.unwrap === undefined ? object : (object[table.unwrap] ?? []);
}

/** Reads fields into `out` until the reader's end (nested messages: merged, as protobuf merges repeats). */
function readMessage(r: ProtoReader, table: MessageTable, out: JsonObject, path: string): JsonObject {
  while (!r.done()) {
    const { field: number, wireType } = r.tag();
    const spec = Object.hasOwn(table.fields, number) ? table.fields[number] : undefined;
    if (spec === undefined) {
      r.skip(wireType, number);
      continue;
    }
    const at = `${path}.${spec.name}`;
    if (spec.opaque) throw new ProtobufError(`${at}: this server cannot decode it from protobuf; send it as JSON`);
    if (spec.map) readMapEntry(r, wireType, spec, out, at);
    else if (spec.repeated) readRepeated(r, wireType, spec, out, at);
    else readSingle(r, wireType, spec, out, at);
  }
  return out;
}

function readSingle(r: ProtoReader, wireType: number, spec: FieldSpec, out: JsonObject, at: string): void {
  const kind = spec.kind;
  if (typeof kind === 'object') {
    expectWireType(wireType, WireType.LENGTH_DELIMITED, at);
    const sub = r.sub();
    if (spec.inline) {
      readMessage(sub, kind, out, at);
      return;
    }
    if (kind.unwrap !== undefined) {
      out[spec.name] = finish(readMessage(sub, kind, {}, at), kind);
      return;
    }
    const existing = out[spec.name];
    const target = typeof existing === 'object' && existing !== null && !Array.isArray(existing) ? existing : {};
    out[spec.name] = readMessage(sub, kind, target as JsonObject, at);
    return;
  }
  const value = readScalar(r, wireType, kind, at);
  if (value === undefined || (!spec.keep && isPlain(kind) && isZero(value))) delete out[spec.name];
  else out[spec.name] = value;
}

function readRepeated(r: ProtoReader, wireType: number, spec: FieldSpec, out: JsonObject, at: string): void {
  if (!Array.isArray(out[spec.name])) out[spec.name] = [];
  const items = out[spec.name] as unknown[];
  const kind = spec.kind;
  if (wireType === WireType.LENGTH_DELIMITED && isPackable(kind)) {
    // Packed numbers: a run of varints in one payload.
    const sub = r.sub();
    while (!sub.done()) items.push(readScalar(sub, WireType.VARINT, kind, at));
    return;
  }
  if (typeof kind === 'object') {
    expectWireType(wireType, WireType.LENGTH_DELIMITED, at);
    items.push(finish(readMessage(r.sub(), kind, {}, `${at}[${items.length}]`), kind));
    return;
  }
  const value = readScalar(r, wireType, kind, at);
  items.push(value ?? zeroOf(kind));
}

function readMapEntry(r: ProtoReader, wireType: number, spec: FieldSpec, out: JsonObject, at: string): void {
  expectWireType(wireType, WireType.LENGTH_DELIMITED, at);
  const entry = r.sub();
  let key = '';
  let value: unknown;
  while (!entry.done()) {
    const t = entry.tag();
    if (t.field === 1) {
      expectWireType(t.wireType, WireType.LENGTH_DELIMITED, `${at} key`);
      key = entry.string();
    } else if (t.field === 2) {
      const kind = spec.kind;
      if (typeof kind === 'object') {
        expectWireType(t.wireType, WireType.LENGTH_DELIMITED, `${at}[${key}]`);
        value = finish(readMessage(entry.sub(), kind, {}, `${at}[${key}]`), kind);
      } else {
        value = readScalar(entry, t.wireType, kind, `${at}[${key}]`);
      }
    } else {
      entry.skip(t.wireType, t.field);
    }
  }
  if (typeof out[spec.name] !== 'object' || out[spec.name] === null) out[spec.name] = {};
  const map = out[spec.name] as JsonObject;
  map[key] = value ?? zeroOf(spec.kind);
}

/** A scalar or special-type value; undefined for a value that is null in JSON (the zero Time, empty raw). */
function readScalar(r: ProtoReader, wireType: number, kind: ScalarKind, at: string): unknown {
  switch (kind) {
    case 'int32':
      expectWireType(wireType, WireType.VARINT, at);
      return r.int32();
    case 'int64':
      expectWireType(wireType, WireType.VARINT, at);
      return r.int64();
    case 'bool':
      expectWireType(wireType, WireType.VARINT, at);
      return r.bool();
    case 'string':
      expectWireType(wireType, WireType.LENGTH_DELIMITED, at);
      return r.string();
    case 'bytes':
      expectWireType(wireType, WireType.LENGTH_DELIMITED, at);
      return Buffer.from(r.bytes()).toString('base64');
    case 'double':
      expectWireType(wireType, WireType.FIXED64, at);
      return r.double();
  }
  expectWireType(wireType, WireType.LENGTH_DELIMITED, at);
  const sub = r.sub();
  switch (kind) {
    case 'time':
    case 'microTime':
      return readTime(sub, kind === 'microTime', at);
    case 'quantity':
      return readQuantity(sub, at);
    case 'intOrString':
      return readIntOrString(sub, at);
    case 'rawExtension':
    case 'fieldsV1':
      return readRawJson(sub, at);
  }
}

/** `Timestamp {seconds = 1, nanos = 2}`; an empty message is the zero time (null). */
function readTime(r: ProtoReader, micro: boolean, at: string): string | undefined {
  if (r.done()) return undefined;
  let seconds = 0;
  let nanos = 0;
  while (!r.done()) {
    const t = r.tag();
    if (t.field === 1) {
      expectWireType(t.wireType, WireType.VARINT, `${at}.seconds`);
      seconds = r.int64();
    } else if (t.field === 2) {
      expectWireType(t.wireType, WireType.VARINT, `${at}.nanos`);
      nanos = r.int32();
    } else {
      r.skip(t.wireType, t.field);
    }
  }
  return formatTime(seconds, micro ? nanos : 0, micro);
}

/** RFC 3339 in UTC: `2026-01-02T03:04:05Z`, or with microseconds `2026-01-02T03:04:05.123456Z`. */
export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) throw new ProtobufError(`time out of range: ${seconds} seconds`);
  const whole = date.toISOString().slice(0, 19);
  if (!micro) return `${whole}Z`;
  return `${whole}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

/** `Quantity {string = 1}`. */
function readQuantity(r: ProtoReader, at: string): string {
  let value = '0';
  while (!r.done()) {
    const t = r.tag();
    if (t.field === 1) {
      expectWireType(t.wireType, WireType.LENGTH_DELIMITED, at);
      value = r.string();
    } else {
      r.skip(t.wireType, t.field);
    }
  }
  return value;
}

/** `IntOrString {type = 1 (0: int, 1: string), intVal = 2, strVal = 3}`. */
function readIntOrString(r: ProtoReader, at: string): number | string {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (!r.done()) {
    const t = r.tag();
    if (t.field === 1) {
      expectWireType(t.wireType, WireType.VARINT, `${at}.type`);
      type = r.int64();
    } else if (t.field === 2) {
      expectWireType(t.wireType, WireType.VARINT, `${at}.intVal`);
      intVal = r.int32();
    } else if (t.field === 3) {
      expectWireType(t.wireType, WireType.LENGTH_DELIMITED, `${at}.strVal`);
      strVal = r.string();
    } else {
      r.skip(t.wireType, t.field);
    }
  }
  return type === 1 ? strVal : intVal;
}

/** `RawExtension {raw = 1}` and `FieldsV1 {Raw = 1}`: JSON bytes, given back parsed. */
function readRawJson(r: ProtoReader, at: string): unknown {
  let raw: Uint8Array | undefined;
  while (!r.done()) {
    const t = r.tag();
    if (t.field === 1) {
      expectWireType(t.wireType, WireType.LENGTH_DELIMITED, at);
      raw = r.bytes();
    } else {
      r.skip(t.wireType, t.field);
    }
  }
  if (raw === undefined || raw.length === 0) return undefined;
  const text = Buffer.from(raw).toString('utf8');
  const tooDeep = jsonDepthError(text);
  if (tooDeep) throw new ProtobufError(`${at}: embedded raw data: ${tooDeep}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new ProtobufError(`${at}: embedded raw data is not JSON`);
  }
}

function expectWireType(actual: number, expected: number, at: string): void {
  if (actual !== expected) throw new ProtobufError(`${at}: wrong wire type ${actual} (expected ${expected})`);
}

function isPackable(kind: ValueKind): kind is 'int32' | 'int64' | 'bool' {
  return kind === 'int32' || kind === 'int64' || kind === 'bool';
}

/** Plain scalars, whose zero values `omitempty` drops (the special types are structs in Go). */
function isPlain(kind: ScalarKind): boolean {
  return (
    kind === 'string' ||
    kind === 'bytes' ||
    kind === 'int32' ||
    kind === 'int64' ||
    kind === 'bool' ||
    kind === 'double'
  );
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false;
}

/** The JSON form of a value's zero: null for the zero Time and an empty raw value, which are not written. */
export function zeroOf(kind: ValueKind): unknown {
  if (typeof kind === 'object') return kind.unwrap === undefined ? {} : [];
  switch (kind) {
    case 'int32':
    case 'int64':
    case 'double':
      return 0;
    case 'bool':
      return false;
    case 'quantity':
      return '0';
    case 'time':
    case 'microTime':
    case 'rawExtension':
    case 'fieldsV1':
      return null;
    default:
      return '';
  }
}
