/**
 * Objects in their JSON form encoded as protobuf messages by the same tables the decoder reads, so that
 * decoding what was encoded gives the object back. Fields are written in field-number order, map entries
 * in key order, repeated scalars unpacked (the reference's `generated.proto` files are proto2); absent and
 * null fields are not written, except a scalar marked always written (`!` in `numbers.ts`), whose zero is.
 *
 * Everything goes into one writer; the path of a value (`Pod.spec.nodeName`) is put together only when it
 * cannot be encoded, from the levels its error passes through.
 */
import { type FieldSpec, type MessageTable, type ValueKind, zeroOf } from './schema.ts';
import { ProtobufError, WireType } from './wire.ts';
import { ProtoWriter } from './writer.ts';

type JsonObject = Record<string, unknown>;

/** A value that cannot be encoded; `path` grows (outermost last) as the error leaves each level. */
class PathError extends Error {
  readonly path: string[] = [];
}

/** Encodes a JSON object as the message of `table`. */
export function encodeMessage(value: JsonObject, table: MessageTable): Uint8Array {
  const w = new ProtoWriter();
  writeMessage(w, value, table);
  return w.finish();
}

/** Writes a JSON object as the fields of the message of `table`; the error of a value names its path. */
export function writeMessage(w: ProtoWriter, value: JsonObject, table: MessageTable): void {
  try {
    writeFields(w, value, table);
  } catch (err) {
    if (!(err instanceof PathError)) throw err;
    throw new ProtobufError(`${table.name}${err.path.reverse().join('')}: ${err.message}`);
  }
}

/** The fields of a table in field-number order, computed once per table. */
const ordered = new WeakMap<MessageTable, readonly (readonly [number, FieldSpec])[]>();

function fieldsOf(table: MessageTable): readonly (readonly [number, FieldSpec])[] {
  let fields = ordered.get(table);
  if (!fields) {
    fields = Object.keys(table.fields)
      .map(Number)
      .sort((a, b) => a - b)
      .map((n) => [n, table.fields[n]] as const);
    ordered.set(table, fields);
  }
  return fields;
}

function writeFields(w: ProtoWriter, value: JsonObject, table: MessageTable): void {
  for (const [number, spec] of fieldsOf(table)) {
    if (spec.inline) {
      // An embedded message with nothing in it is left out.
      const start = w.position;
      const mark = w.begin(number);
      writeFields(w, value, spec.kind as MessageTable);
      if (w.position === mark + 1) w.truncate(start);
      else w.end(mark);
      continue;
    }
    // A `!` field is written unset too, as its zero (a zero Time is null: left out).
    const field = value[spec.name] ?? (spec.always ? zeroOf(spec.kind) : undefined);
    if (field === undefined || field === null) continue;
    try {
      if (spec.opaque) throw new PathError('this server cannot encode it as protobuf');
      writeField(w, number, spec, field);
    } catch (err) {
      if (err instanceof PathError) err.path.push(`.${spec.name}`);
      throw err;
    }
  }
}

function writeField(w: ProtoWriter, number: number, spec: FieldSpec, field: unknown): void {
  if (spec.map) {
    const map = expectObject(field);
    for (const key of Object.keys(map).sort()) {
      try {
        const mark = w.begin(number);
        w.tag(1, WireType.LENGTH_DELIMITED);
        w.string(key);
        if (map[key] !== null) writeValue(w, 2, spec.kind, map[key]);
        w.end(mark);
      } catch (err) {
        if (err instanceof PathError) err.path.push(`[${key}]`);
        throw err;
      }
    }
  } else if (spec.repeated) {
    if (!Array.isArray(field)) throw new PathError('expected a list');
    for (let i = 0; i < field.length; i++) {
      try {
        writeValue(w, number, spec.kind, field[i]);
      } catch (err) {
        if (err instanceof PathError) err.path.push(`[${i}]`);
        throw err;
      }
    }
  } else {
    writeValue(w, number, spec.kind, field);
  }
}

function writeValue(w: ProtoWriter, number: number, kind: ValueKind, value: unknown): void {
  if (typeof kind === 'object') {
    const object = kind.unwrap === undefined ? expectObject(value) : { [kind.unwrap]: value };
    const mark = w.begin(number);
    writeFields(w, object, kind);
    w.end(mark);
    return;
  }
  switch (kind) {
    case 'string':
      w.tag(number, WireType.LENGTH_DELIMITED);
      w.string(expectType(value, 'string'));
      return;
    case 'bytes':
      w.tag(number, WireType.LENGTH_DELIMITED);
      w.bytes(Buffer.from(expectType(value, 'string'), 'base64'));
      return;
    case 'int32':
    case 'int64':
      w.tag(number, WireType.VARINT);
      w.varint(Math.trunc(expectType(value, 'number')));
      return;
    case 'bool':
      w.tag(number, WireType.VARINT);
      w.varint(expectType(value, 'boolean') ? 1 : 0);
      return;
    case 'double':
      w.tag(number, WireType.FIXED64);
      w.double(expectType(value, 'number'));
      return;
    case 'time':
    case 'microTime': {
      const text = expectType(value, 'string');
      const mark = w.begin(number);
      w.tag(1, WireType.VARINT);
      w.varint(seconds(text));
      w.tag(2, WireType.VARINT);
      w.varint(kind === 'microTime' ? nanos(text) : 0);
      w.end(mark);
      return;
    }
    case 'quantity': {
      const mark = w.begin(number);
      w.tag(1, WireType.LENGTH_DELIMITED);
      w.string(String(value));
      w.end(mark);
      return;
    }
    case 'intOrString': {
      const isString = typeof value === 'string';
      const mark = w.begin(number);
      w.tag(1, WireType.VARINT);
      w.varint(isString ? 1 : 0);
      w.tag(2, WireType.VARINT);
      w.varint(isString ? 0 : Math.trunc(expectType(value, 'number')));
      w.tag(3, WireType.LENGTH_DELIMITED);
      w.string(isString ? value : '');
      w.end(mark);
      return;
    }
    case 'rawExtension':
    case 'fieldsV1': {
      const mark = w.begin(number);
      w.tag(1, WireType.LENGTH_DELIMITED);
      w.string(JSON.stringify(value));
      w.end(mark);
      return;
    }
  }
}

/** `YYYY-MM-DDTHH:MM:SSZ`, the form the server writes its times in, read without Date.parse. */
const WHOLE_SECONDS = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z$/;

/** The whole seconds of an RFC 3339 time. */
function seconds(text: string): number {
  const m = WHOLE_SECONDS.exec(text);
  // Fields out of range are left to Date.parse, which refuses them.
  const inRange = m && +m[2] >= 1 && +m[2] <= 12 && +m[3] >= 1 && +m[4] <= 23 && +m[5] <= 59 && +m[6] <= 59;
  let ms = inRange ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : Date.parse(text);
  if (inRange && new Date(ms).getUTCDate() !== +m[3]) ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new PathError(`not an RFC 3339 time: ${JSON.stringify(text)}`);
  return Math.floor(ms / 1000);
}

/** The nanoseconds of an RFC 3339 time's fraction. */
function nanos(text: string): number {
  const fraction = /\.(\d+)/.exec(text)?.[1];
  return fraction ? Number(`${fraction}000000000`.slice(0, 9)) : 0;
}

function expectObject(value: unknown): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PathError('expected an object');
  return value as JsonObject;
}

function expectType<T extends 'string' | 'number' | 'boolean'>(
  value: unknown,
  type: T,
): T extends 'string' ? string : T extends 'number' ? number : boolean {
  if (typeof value !== type) throw new PathError(`expected a ${type}, not ${JSON.stringify(value)}`);
  return value as never;
}
