/**
 * Kubernetes protobuf, read as the JSON it stands for: a watch stream of `application/vnd.kubernetes.protobuf`
 * becomes the same events, objects and key order as kube-apiserver's JSON of them. Why: kube-apiserver lists 20k
 * pods (kwok's, with their status) as protobuf for 0.44–0.67 s of CPU and as JSON for 0.88–1.6 s, on cores this
 * process shares with it; and a watch-list of them, their managedFields dropped, reads here in 0.84× the time
 * (0.78–0.97) the JSON watch decoder takes.
 *
 * The message tables (messages.json) come from the Go types of the pinned release (tools/k8s/protobuf): each field's
 * number, JSON name, type, and whether Go's JSON leaves it out when empty. A field the tables lack (a newer server's)
 * is an UnknownProtobufField: the caller reads that kind as JSON instead, so nothing is dropped unseen.
 */
// Malformed input is a ProtobufError: truncated, a length past its message, a wire type its field does not have.
// (Nesting is the tables': no message of theirs holds itself, which the command that writes them checks.)
import { MAGIC, ProtobufError } from '../../api/protobuf.ts';
import messages from './messages.json' with { type: 'json' };

export { ProtobufError };

/** A field or kind the tables do not know: the server is newer than them. */
export class UnknownProtobufField extends ProtobufError {
  override name = 'UnknownProtobufField';
}

/** The largest event accepted: kube-apiserver stores objects of up to ~1.5 MiB. */
const MAX_FRAME_BYTES = 64 << 20;

/** The value types of the tables: the scalars first (`type < Type.Message`). */
enum Type {
  String,
  Int,
  Bool,
  Message,
  Time,
  Quantity,
  IntOrString,
  FieldsV1,
}

interface Field {
  /** The JSON name; '' for an embedded struct, whose fields are the parent's. */
  key: string;
  /** Its place among the message's fields (Go's declaration order, JSON's order). */
  index: number;
  type: Type;
  message?: Message;
  list: boolean;
  map: boolean;
  pointer: boolean;
  /** Tagged omitempty: JSON leaves the field out when nil or empty (a pointer, a list, a map, a scalar). */
  omitEmpty: boolean;
  /**
   * Go's JSON leaves the field out when zero ('', 0, false; null, a zero time): a scalar by value tagged
   * omitempty (which never leaves out a struct), or a time tagged omitzero.
   */
  omitsZero: boolean;
  /** ObjectMeta's managedFields, which a caller may drop (see droppingManagedFields). */
  managedFields: boolean;
}

interface Message {
  name: string;
  fields: Field[];
  /** By field number. */
  byNumber: Field[];
}

interface TableField {
  number: number;
  json?: string;
  type: string;
  shape?: string;
  pointer?: boolean;
  omitEmpty?: boolean;
  omitZero?: boolean;
}

const SPECIAL: Record<string, Type> = {
  string: Type.String,
  int: Type.Int,
  bool: Type.Bool,
  time: Type.Time,
  quantity: Type.Quantity,
  intOrString: Type.IntOrString,
  fieldsV1: Type.FieldsV1,
};

/** The tables, linked: each message field points at its message. */
function link(tables: Record<string, TableField[]>): Map<string, Message> {
  const linked = new Map<string, Message>();
  for (const name of Object.keys(tables)) linked.set(name, { name, fields: [], byNumber: [] });
  for (const [name, fields] of Object.entries(tables)) {
    const message = linked.get(name)!;
    for (const f of fields) {
      const field: Field = {
        key: f.json ?? '',
        index: message.fields.length,
        type: SPECIAL[f.type] ?? Type.Message,
        message: linked.get(f.type),
        list: f.shape === 'list',
        map: f.shape === 'map',
        pointer: f.pointer === true,
        omitEmpty: f.omitEmpty === true,
        omitsZero: false,
        managedFields: name === 'meta/v1.ObjectMeta' && f.json === 'managedFields',
      };
      if (field.type === Type.Message && !field.message) throw new Error(`protobuf tables: ${name}: no ${f.type}`);
      const byValue = !field.pointer && !field.list && !field.map;
      field.omitsZero = byValue && ((field.omitEmpty && field.type < Type.Message) || f.omitZero === true);
      message.fields.push(field);
      message.byNumber[f.number] = field;
    }
  }
  return linked;
}

const MESSAGES = link(messages.messages);
const KINDS = new Map(Object.entries(messages.kinds).map(([kind, name]) => [kind, MESSAGES.get(name)!]));

/** Whether objects of `apiVersion` and `kind` can be read from protobuf. */
export function readsProtobuf(apiVersion: string, kind: string): boolean {
  return KINDS.has(`${apiVersion}/${kind}`);
}

// The reading position: one decode at a time (none calls out), so module state rather than an object per call.
let bytes: Utf8Bytes;
let pos = 0;
let dropManagedFields = false;
/** Set while the object's own metadata is read, when the caller drops its managedFields. */
let droppingManagedFields = false;
/**
 * The decoded values of the messages open, one slot per field, each message's above its parent's (`top` is the
 * first free one): they make the object once the message ends, its keys in Go's order, not in the wire's.
 */
const slots: unknown[] = [];
let top = 0;

/**
 * Buffer's own utf8Slice, which `toString('utf8', start, end)` calls after checking its arguments: those checks cost
 * more than decoding a short string.
 */
type Utf8Bytes = Buffer & { utf8Slice(start: number, end: number): string };

/** A varint as a number: int32 and int64 alike (two's complement over 64 bits; past 2^53, the nearest double). */
function varint(end: number): number {
  if (pos >= end) truncated();
  let byte = bytes[pos++];
  if (byte < 0x80) return byte;
  let lo = byte & 0x7f;
  for (let shift = 7; shift < 28; shift += 7) {
    if (pos >= end) truncated();
    byte = bytes[pos++];
    lo |= (byte & 0x7f) << shift;
    if (byte < 0x80) return lo;
  }
  // Bits 28 and up: the 5th byte's low 4 end the low word, the rest make the high word.
  let hi = 0;
  for (let shift = 28; shift < 70; shift += 7) {
    if (pos >= end) truncated();
    byte = bytes[pos++];
    if (shift === 28) {
      lo |= (byte & 0x0f) << 28;
      hi = (byte & 0x7f) >> 4;
    } else hi |= (byte & 0x7f) << (shift - 32);
    if (byte < 0x80) return (hi | 0) * 4294967296 + (lo >>> 0);
  }
  throw new ProtobufError(`varint longer than 10 bytes at offset ${pos}`);
}

function truncated(): never {
  throw new ProtobufError(`truncated at offset ${pos}`);
}

/** The end of a length-delimited value starting here, checked against its message's end. */
function delimited(end: number): number {
  const length = varint(end);
  if (length < 0 || length > end - pos) truncated();
  return pos + length;
}

function string(end: number): string {
  const stop = delimited(end);
  const text = bytes.utf8Slice(pos, stop);
  pos = stop;
  return text;
}

/** Wire types: 0 a varint, 2 length-delimited. */
const wireOf = (type: Type) => (type === Type.Int || type === Type.Bool ? 0 : 2);

function skip(wire: number, end: number): void {
  if (wire === 0) varint(end);
  else if (wire === 2) pos = delimited(end);
  else if (wire === 1 || wire === 5) pos += wire === 1 ? 8 : 4;
  else throw new ProtobufError(`wire type ${wire} at offset ${pos}`);
  if (pos > end) truncated();
}

/** A message's fields up to `end`, as the object Go's JSON makes of them. */
function decodeMessage(message: Message, end: number, into: Record<string, unknown> = {}, root = false) {
  const base = top;
  top += message.fields.length;
  while (pos < end) {
    const tag = varint(end);
    const field = message.byNumber[tag >>> 3];
    const wire = tag & 7;
    if (field === undefined) throw new UnknownProtobufField(`${message.name}: no field ${tag >>> 3}`);
    if (wire !== (field.map ? 2 : wireOf(field.type))) {
      throw new ProtobufError(`${message.name}.${field.key}: wire type ${wire}`);
    }
    if (field.managedFields && droppingManagedFields) {
      skip(wire, end);
      continue;
    }
    const at = base + field.index;
    if (field.map) {
      if (slots[at] === undefined) slots[at] = {};
      const entries = slots[at] as Record<string, unknown>;
      const entryEnd = delimited(end);
      let key = '';
      let value: unknown;
      while (pos < entryEnd) {
        const entryTag = varint(entryEnd);
        if (entryTag === 0x0a) key = string(entryEnd);
        else if (entryTag >>> 3 === 2 && (entryTag & 7) === wireOf(field.type)) value = read(field, entryEnd);
        else throw new ProtobufError(`${message.name}.${field.key}: map entry tag ${entryTag}`);
      }
      entries[key] = value ?? zero(field);
    } else if (root && field.key === 'metadata') {
      // The object's own managedFields, not those of a template inside it (an ephemeral volume's claim).
      droppingManagedFields = dropManagedFields;
      slots[at] = read(field, end);
      droppingManagedFields = false;
    } else if (!field.list) slots[at] = read(field, end);
    else if (slots[at] === undefined) slots[at] = [read(field, end)];
    else (slots[at] as unknown[]).push(read(field, end));
  }
  for (const field of message.fields) {
    const value = slots[base + field.index];
    slots[base + field.index] = undefined;
    if (field.key === '') Object.assign(into, value ?? zero(field));
    else if (value !== undefined) {
      if (!(field.omitsZero && (value === '' || value === 0 || value === false || value === null))) {
        into[field.key] = value;
      }
    } else if (field.pointer || field.list || field.map) {
      if (!field.omitEmpty) into[field.key] = null;
    } else if (!field.omitsZero) into[field.key] = zero(field);
  }
  top = base;
  return into;
}

/** One value of `field` at the position. */
function read(field: Field, end: number): unknown {
  switch (field.type) {
    case Type.String:
      return string(end);
    case Type.Int:
      return varint(end);
    case Type.Bool:
      return varint(end) !== 0;
    case Type.Message: {
      const stop = delimited(end);
      return decodeMessage(field.message!, stop);
    }
    case Type.Time:
      return time(delimited(end));
    case Type.Quantity: {
      const stop = delimited(end);
      let text = '0';
      while (pos < stop) {
        if (varint(stop) !== 0x0a) throw new ProtobufError(`quantity at offset ${pos}`);
        text = string(stop);
      }
      return text;
    }
    case Type.IntOrString: {
      const stop = delimited(end);
      let isString = false;
      let int = 0;
      let text = '';
      while (pos < stop) {
        const tag = varint(stop);
        if (tag === 0x08) isString = varint(stop) === 1;
        else if (tag === 0x10) int = varint(stop) | 0;
        else if (tag === 0x1a) text = string(stop);
        else throw new ProtobufError(`intOrString tag ${tag} at offset ${pos}`);
      }
      return isString ? text : int;
    }
    case Type.FieldsV1: {
      const stop = delimited(end);
      let raw: unknown = null;
      while (pos < stop) {
        if (varint(stop) !== 0x0a) throw new ProtobufError(`fieldsV1 at offset ${pos}`);
        raw = JSON.parse(string(stop));
      }
      return raw;
    }
  }
}

/** The zero value Go's JSON writes for a field protobuf left out. */
function zero(field: Field): unknown {
  switch (field.type) {
    case Type.String:
      return '';
    case Type.Int:
    case Type.IntOrString:
      return 0;
    case Type.Bool:
      return false;
    case Type.Quantity:
      return '0';
    case Type.Message:
      return decodeMessage(field.message!, pos);
    default:
      return null;
  }
}

/** RFC 3339 to the second, as metav1.Time's JSON; null for the zero time (an empty message). */
function time(end: number): string | null {
  if (pos === end) return null;
  let seconds = 0;
  while (pos < end) {
    const tag = varint(end);
    // Field 2, the nanoseconds: JSON has none.
    if (tag === 0x08) seconds = varint(end);
    else if (tag === 0x10) varint(end);
    else throw new ProtobufError(`time tag ${tag} at offset ${pos}`);
  }
  let text = recentTimes.get(seconds);
  if (text === undefined) {
    const date = new Date(seconds * 1000);
    const year = date.getUTCFullYear();
    if (!(year >= 0 && year <= 9999)) throw new ProtobufError(`time ${seconds} s: year ${year} has no JSON form`);
    text = `${date.toISOString().slice(0, 19)}Z`;
    if (recentTimes.size >= 1024) recentTimes.clear();
    recentTimes.set(seconds, text);
  }
  return text;
}
/** Objects written together share their times: formatted once. */
const recentTimes = new Map<number, string>();

/** The object in an envelope (`k8s\0`, then runtime.Unknown: its type, its message), `kind` and `apiVersion` first. */
function decodeEnvelope(end: number): Record<string, unknown> {
  if (end - pos < MAGIC.length || !MAGIC.every((b, i) => bytes[pos + i] === b)) {
    throw new ProtobufError('not a Kubernetes protobuf object');
  }
  pos += MAGIC.length;
  let apiVersion = '';
  let kind = '';
  let object: [number, number] | undefined;
  while (pos < end) {
    const tag = varint(end);
    const stop = delimited(end);
    if (tag === 0x0a) {
      while (pos < stop) {
        const typeTag = varint(stop);
        if (typeTag === 0x0a) apiVersion = string(stop);
        else if (typeTag === 0x12) kind = string(stop);
        else skip(typeTag & 7, stop);
      }
    } else if (tag === 0x12) object = [pos, stop];
    else if (tag === 0x1a || tag === 0x22) {
      // contentEncoding, contentType: empty for a protobuf object
      if (stop > pos) throw new ProtobufError('an envelope of another content type');
    } else throw new UnknownProtobufField(`runtime.Unknown: no field ${tag >>> 3}`);
    pos = stop;
  }
  const message = KINDS.get(`${apiVersion}/${kind}`);
  if (!message) throw new UnknownProtobufField(`no protobuf tables for ${apiVersion} ${kind}`);
  if (!object) throw new ProtobufError(`${kind} without its object`);
  const after = pos;
  pos = object[0];
  const decoded = decodeMessage(message, object[1], { kind, apiVersion }, true);
  pos = after;
  return decoded;
}

/** `decode` over all of `data`, the reading state reset after it whatever happens. */
function reading<R>(data: Buffer, withoutManagedFields: boolean, decode: () => R): R {
  bytes = data as Utf8Bytes;
  pos = 0;
  dropManagedFields = withoutManagedFields;
  try {
    return decode();
  } finally {
    bytes = EMPTY;
    droppingManagedFields = false;
    // After a failure, what the open messages held.
    if (top > 0) slots.fill(undefined, 0, top);
    top = 0;
  }
}
const EMPTY = Buffer.alloc(0) as Utf8Bytes;

/** One object in its envelope (an answer's body: a Status), managedFields included. */
export function decodeObject(data: Buffer): Record<string, unknown> {
  return reading(data, false, () => decodeEnvelope(data.length));
}

/** One watch event (metav1.WatchEvent: its type, then its object in an envelope) from `frame`. */
export function decodeWatchEvent(frame: Buffer, withoutManagedFields: boolean): Record<string, unknown> {
  return reading(frame, withoutManagedFields, () => {
    let type = '';
    let object: Record<string, unknown> | undefined;
    while (pos < frame.length) {
      const tag = varint(frame.length);
      if (tag === 0x0a) type = string(frame.length);
      else if (tag === 0x12) {
        const stop = delimited(frame.length);
        if (varint(stop) !== 0x0a) throw new ProtobufError('watch event object without its bytes');
        object = decodeEnvelope(delimited(stop));
        pos = stop;
      } else throw new UnknownProtobufField(`WatchEvent: no field ${tag >>> 3}`);
    }
    return { type, object };
  });
}

/**
 * A protobuf watch stream from chunks cut anywhere: each frame (its length in 4 bytes, big-endian, then the event)
 * becomes an event as soon as its last byte arrives.
 */
export class ProtobufWatchDecoder<V> {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** What the first pending frame needs to be whole: its length's 4 bytes, then those it says. */
  private needed = 4;

  constructor(
    private readonly onEvent: (event: V) => void,
    private readonly withoutManagedFields: boolean,
  ) {}

  write(chunk: Buffer): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // Joined only once a frame is whole: a large event arriving in many chunks is copied once.
    if (this.pendingBytes < this.needed) return;
    const data = this.pending.length === 1 ? chunk : Buffer.concat(this.pending, this.pendingBytes);
    let start = 0;
    this.needed = 4;
    while (data.length - start >= 4) {
      const length = data.readUInt32BE(start);
      if (length > MAX_FRAME_BYTES) throw new ProtobufError(`watch event of ${length} bytes`);
      if (data.length - start - 4 < length) {
        this.needed = 4 + length;
        break;
      }
      const frame = data.subarray(start + 4, start + 4 + length);
      start += 4 + length;
      this.onEvent(decodeWatchEvent(frame, this.withoutManagedFields) as V);
    }
    const rest = data.subarray(start);
    this.pending = rest.length ? [rest] : [];
    this.pendingBytes = rest.length;
  }

  /** The stream ended: a frame cut short is an error. */
  end(): void {
    if (this.pendingBytes > 0)
      throw new ProtobufError(`watch stream ended inside an event (${this.pendingBytes} bytes)`);
  }
}
