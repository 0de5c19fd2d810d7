/**
 * The Kubernetes protobuf envelope (`application/vnd.kubernetes.protobuf`): the four magic bytes `k8s\0`,
 * then a `runtime.Unknown` message {typeMeta {apiVersion = 1, kind = 2} = 1, raw = 2, contentEncoding = 3,
 * contentType = 4} whose `raw` is the object encoded as its kind's message. Decoding gives the object's
 * JSON form with `apiVersion` and `kind` from the envelope.
 */

import { isProtobufMediaType, MAGIC, PROTOBUF_MEDIA_TYPE, ProtobufError } from '../../api/protobuf.ts';
import { jsonDepthError } from '../depth.ts';
import { encodeMessage, writeMessage } from './encode.ts';
import { decodeMessage, type MessageTable } from './schema.ts';
import { listTableForKind, tableForKind } from './tables.ts';
import { ProtoReader, WireType } from './wire.ts';
import { ProtoWriter } from './writer.ts';

export { isProtobufMediaType, MAGIC, PROTOBUF_MEDIA_TYPE };

export interface Unknown {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

/** Reads the envelope: checks the magic and decodes the `runtime.Unknown` after it. */
export function readEnvelope(bytes: Uint8Array): Unknown {
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new ProtobufError('protobuf body does not start with the "k8s\\0" prefix');
  }
  const r = new ProtoReader(bytes, MAGIC.length);
  const unknown: Unknown = { apiVersion: '', kind: '', raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
  while (!r.done()) {
    const { field, wireType } = r.tag();
    if (field >= 1 && field <= 4 && wireType !== WireType.LENGTH_DELIMITED) {
      throw new ProtobufError(`runtime.Unknown field ${field}: wrong wire type ${wireType}`);
    }
    if (field === 1) readTypeMeta(r.sub(), unknown);
    else if (field === 2) unknown.raw = r.bytes();
    else if (field === 3) unknown.contentEncoding = r.string();
    else if (field === 4) unknown.contentType = r.string();
    else r.skip(wireType, field);
  }
  return unknown;
}

function readTypeMeta(r: ProtoReader, out: Unknown): void {
  while (!r.done()) {
    const { field, wireType } = r.tag();
    if ((field === 1 || field === 2) && wireType !== WireType.LENGTH_DELIMITED) {
      throw new ProtobufError(`runtime.TypeMeta field ${field}: wrong wire type ${wireType}`);
    }
    if (field === 1) out.apiVersion = r.string();
    else if (field === 2) out.kind = r.string();
    else r.skip(wireType, field);
  }
}

/**
 * Decodes a Kubernetes protobuf body into the object's JSON form. `raw` is decoded by the table of the
 * envelope's kind; the envelope's apiVersion and kind are set on the result. Fails for a kind without a
 * table, for a content encoding (compression) and for malformed input.
 */
export function decodeKubernetesProtobuf(bytes: Uint8Array): Record<string, unknown> {
  const unknown = readEnvelope(bytes);
  if (!unknown.kind) throw new ProtobufError('protobuf envelope has no kind');
  if (unknown.contentEncoding) {
    throw new ProtobufError(`protobuf content encoding "${unknown.contentEncoding}" is not supported`);
  }
  const rawType = unknown.contentType.split(';', 1)[0].trim().toLowerCase();
  let body: unknown;
  if (rawType === 'application/json') {
    const text = Buffer.from(unknown.raw).toString('utf8');
    const tooDeep = jsonDepthError(text);
    if (tooDeep) throw new ProtobufError(`raw JSON of ${unknown.kind}: ${tooDeep}`);
    try {
      body = JSON.parse(text);
    } catch (e) {
      throw new ProtobufError(`raw JSON of ${unknown.kind}: ${(e as Error).message}`);
    }
  } else if (rawType === '' || rawType === PROTOBUF_MEDIA_TYPE) {
    const table = tableFor(unknown.kind, unknown.apiVersion);
    if (!table) {
      throw new ProtobufError(
        `kind ${unknown.apiVersion ? `${unknown.apiVersion}, ` : ''}Kind=${unknown.kind} cannot be decoded from protobuf; send it as application/json`,
      );
    }
    body = decodeMessage(unknown.raw, table);
  } else {
    throw new ProtobufError(`protobuf envelope content type "${unknown.contentType}" is not supported`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ProtobufError(`${unknown.kind}: the decoded object is not an object`);
  }
  const fields = body as Record<string, unknown>;
  delete fields.apiVersion;
  delete fields.kind;
  return { ...(unknown.apiVersion ? { apiVersion: unknown.apiVersion } : {}), kind: unknown.kind, ...fields };
}

/**
 * The bytes of a protobuf body handed over as a string. The server keeps non-text bodies as a binary
 * (latin1) string, one character per byte; a body that went through UTF-8 decoding has lost bytes
 * (characters above U+00FF show it) and is refused rather than misread.
 */
export function protobufBytes(body: string | Uint8Array): Uint8Array {
  if (typeof body !== 'string') return body;
  for (let i = 0; i < body.length; i++) {
    if (body.charCodeAt(i) > 0xff) {
      throw new ProtobufError(
        'protobuf body was decoded as UTF-8 text and its bytes cannot be recovered (the server must keep it as binary)',
      );
    }
  }
  return Buffer.from(body, 'latin1');
}

/** The table of a kind, or of `<Kind>List` for the lists of a kind. */
function tableFor(kind: string, apiVersion: string) {
  const version = apiVersion || undefined;
  const table = tableForKind(kind, version);
  if (table || !kind.endsWith('List')) return table;
  return listTableForKind(kind.slice(0, -'List'.length), version);
}

/** The fields of `runtime.Unknown` after `raw`: empty contentEncoding and contentType. */
const ENVELOPE_TAIL = Uint8Array.of((3 << 3) | WireType.LENGTH_DELIMITED, 0, (4 << 3) | WireType.LENGTH_DELIMITED, 0);

/** The magic and `runtime.Unknown` up to the start of a `raw` of `rawSize` bytes. */
function envelopeHead(apiVersion: string, kind: string, rawSize: number, w = new ProtoWriter()): ProtoWriter {
  w.raw(MAGIC);
  w.message(1, (typeMeta) => {
    typeMeta.tag(1, WireType.LENGTH_DELIMITED);
    typeMeta.string(apiVersion);
    typeMeta.tag(2, WireType.LENGTH_DELIMITED);
    typeMeta.string(kind);
  });
  w.tag(2, WireType.LENGTH_DELIMITED);
  w.varint(rawSize);
  return w;
}

function kindOf(object: Record<string, unknown>): { apiVersion: string; kind: string; table: MessageTable } {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const table = tableFor(kind, apiVersion);
  if (!table) throw new ProtobufError(`kind ${apiVersion}, Kind=${kind} cannot be encoded as protobuf`);
  return { apiVersion, kind, table };
}

/**
 * Encodes an object or a list (`<Kind>List` with `items`) in the envelope, by the table of its kind. Fails for kinds
 * without a table and for values the table cannot carry (a free-form field, a wrong type).
 */
export function encodeKubernetesProtobuf(object: Record<string, unknown>): Uint8Array {
  const { apiVersion, kind, table } = kindOf(object);
  const raw = encodeMessage(object, table);
  return Buffer.concat([envelopeHead(apiVersion, kind, raw.length).finish(), raw, ENVELOPE_TAIL]);
}

/** A list's envelope made in pieces, so that a big list's items can be encoded a few at a time. */
export interface ProtobufListEncoder {
  /** The message table the items are encoded by. */
  readonly itemTable: MessageTable;
  /** One item as its field of the list message (a copy of its own). */
  item(object: Record<string, unknown>): Uint8Array;
  /** What goes before and after the items' bytes, given their total size. */
  frame(itemsSize: number): { head: Uint8Array; tail: Uint8Array };
}

/** The pieces of `list` (`<Kind>List` with `items`) in the envelope; fails as `encodeKubernetesProtobuf` does. */
export function protobufListEncoder(list: Record<string, unknown>): ProtobufListEncoder {
  const { apiVersion, kind, table } = kindOf(list);
  const metadata = { metadata: list.metadata };
  const meta = encodeMessage(metadata, { name: table.name, fields: { 1: table.fields[1] } });
  const itemTable = table.fields[2]?.kind;
  if (typeof itemTable !== 'object') throw new ProtobufError(`${kind} is not a list kind`);
  const w = new ProtoWriter(4096);
  return {
    itemTable,
    item(object) {
      w.truncate(0);
      const mark = w.begin(2);
      writeMessage(w, object, itemTable);
      w.end(mark);
      return new Uint8Array(w.finish());
    },
    frame(itemsSize) {
      const head = envelopeHead(apiVersion, kind, meta.length + itemsSize);
      head.raw(meta);
      return { head: head.finish(), tail: ENVELOPE_TAIL };
    },
  };
}
