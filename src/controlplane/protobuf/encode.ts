/**
 * Objects in their JSON form encoded as protobuf messages by the same tables the decoder reads, so that
 * decoding what was encoded gives the object back. Fields are written in field-number order, map entries
 * in key order, repeated scalars unpacked (the reference's `generated.proto` files are proto2); absent and
 * null fields are not written.
 */
import type { FieldSpec, MessageTable, ValueKind } from './schema.ts';
import { ProtobufError, WireType } from './wire.ts';
import { ProtoWriter } from './writer.ts';

type JsonObject = Record<string, unknown>;

/** Encodes a JSON object as the message of `table`. */
export function encodeMessage(value: JsonObject, table: MessageTable): Uint8Array {
  const w = new ProtoWriter();
  writeFields(w, value, table, table.name);
  return w.finish();
}

function writeFields(w: ProtoWriter, value: JsonObject, table: MessageTable, path: string): void {
  const numbers = Object.keys(table.fields)
    .map(Number)
    .sort((a, b) => a - b);
  for (const number of numbers) {
    const spec = table.fields[number];
    if (spec.inline) {
      const inner = encodeMessage(value, spec.kind as MessageTable);
      if (inner.length > 0) {
        w.tag(number, WireType.LENGTH_DELIMITED);
        w.bytes(inner);
      }
      continue;
    }
    const field = value[spec.name];
    if (field === undefined || field === null) continue;
    const at = `${path}.${spec.name}`;
    if (spec.opaque) throw new ProtobufError(`${at}: this server cannot encode it as protobuf`);
    writeField(w, number, spec, field, at);
  }
}

function writeField(w: ProtoWriter, number: number, spec: FieldSpec, field: unknown, at: string): void {
  if (spec.map) {
    const map = expectObject(field, at);
    for (const key of Object.keys(map).sort()) {
      w.message(number, (entry) => {
        entry.tag(1, WireType.LENGTH_DELIMITED);
        entry.string(key);
        if (map[key] !== null) writeValue(entry, 2, spec.kind, map[key], `${at}[${key}]`);
      });
    }
  } else if (spec.repeated) {
    if (!Array.isArray(field)) throw new ProtobufError(`${at}: expected a list`);
    for (const [i, item] of field.entries()) writeValue(w, number, spec.kind, item, `${at}[${i}]`);
  } else {
    writeValue(w, number, spec.kind, field, at);
  }
}

function writeValue(w: ProtoWriter, number: number, kind: ValueKind, value: unknown, at: string): void {
  if (typeof kind === 'object') {
    const object = kind.unwrap === undefined ? expectObject(value, at) : { [kind.unwrap]: value };
    w.message(number, (inner) => writeFields(inner, object, kind, at));
    return;
  }
  switch (kind) {
    case 'string':
      w.tag(number, WireType.LENGTH_DELIMITED);
      w.string(expectType(value, 'string', at));
      return;
    case 'bytes':
      w.tag(number, WireType.LENGTH_DELIMITED);
      w.bytes(Buffer.from(expectType(value, 'string', at), 'base64'));
      return;
    case 'int32':
    case 'int64':
      w.tag(number, WireType.VARINT);
      w.varint(Math.trunc(expectType(value, 'number', at)));
      return;
    case 'bool':
      w.tag(number, WireType.VARINT);
      w.varint(expectType(value, 'boolean', at) ? 1 : 0);
      return;
    case 'double':
      w.tag(number, WireType.FIXED64);
      w.double(expectType(value, 'number', at));
      return;
    case 'time':
    case 'microTime': {
      const { seconds, nanos } = parseTime(expectType(value, 'string', at), at);
      w.message(number, (t) => {
        t.tag(1, WireType.VARINT);
        t.varint(seconds);
        t.tag(2, WireType.VARINT);
        t.varint(kind === 'microTime' ? nanos : 0);
      });
      return;
    }
    case 'quantity':
      w.message(number, (q) => {
        q.tag(1, WireType.LENGTH_DELIMITED);
        q.string(String(value));
      });
      return;
    case 'intOrString':
      w.message(number, (v) => {
        const isString = typeof value === 'string';
        v.tag(1, WireType.VARINT);
        v.varint(isString ? 1 : 0);
        v.tag(2, WireType.VARINT);
        v.varint(isString ? 0 : Math.trunc(expectType(value, 'number', at)));
        v.tag(3, WireType.LENGTH_DELIMITED);
        v.string(isString ? value : '');
      });
      return;
    case 'rawExtension':
    case 'fieldsV1':
      w.message(number, (raw) => {
        raw.tag(1, WireType.LENGTH_DELIMITED);
        raw.string(JSON.stringify(value));
      });
      return;
  }
}

/** Whole seconds and nanoseconds of an RFC 3339 time (fractions kept to the nanosecond). */
function parseTime(text: string, at: string): { seconds: number; nanos: number } {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new ProtobufError(`${at}: not an RFC 3339 time: ${JSON.stringify(text)}`);
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  return { seconds: Math.floor(ms / 1000), nanos: Number((fraction + '000000000').slice(0, 9)) };
}

function expectObject(value: unknown, at: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProtobufError(`${at}: expected an object`);
  }
  return value as JsonObject;
}

function expectType<T extends 'string' | 'number' | 'boolean'>(
  value: unknown,
  type: T,
  at: string,
): T extends 'string' ? string : T extends 'number' ? number : boolean {
  if (typeof value !== type) throw new ProtobufError(`${at}: expected a ${type}, not ${JSON.stringify(value)}`);
  return value as never;
}
