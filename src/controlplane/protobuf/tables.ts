/**
 * Message tables of every kind the control plane serves, built from the kind's structural schema
 * (`src/api/schema.ts`) and the protobuf field numbers of `numbers.ts`: the schema says which fields exist
 * and their shape (object, list, map, scalar), the numbers table where each one sits on the wire.
 *
 * A schema field absent from the numbers is not carried in protobuf (fields newer than the reference
 * messages); a free-form (`'any'`) schema field whose protobuf type is a message is opaque: the codec
 * refuses it by name rather than dropping it.
 */
import { type Node, schemaFor } from '../../api/schema.ts';
import { KIND_MESSAGES, MESSAGES } from './numbers.ts';
import type { FieldSpec, MessageTable, ScalarKind } from './schema.ts';

/** The protobuf message of a kind; the events-group Event by apiVersion, as `schemaFor` picks it. */
export function messageOfKind(kind: string, apiVersion?: string): string | undefined {
  if (kind === 'Event' && apiVersion !== undefined && apiVersion !== 'v1') return 'events.v1.Event';
  return Object.hasOwn(KIND_MESSAGES, kind) ? KIND_MESSAGES[kind] : undefined;
}

/** One parsed entry of the numbers table. */
export interface Entry {
  number: number;
  pointer: boolean;
  /** A scalar Go marshals without `omitempty`: its zero value is always written. */
  always: boolean;
  /** A message name of the table or a special type word; undefined for the schema's scalar. */
  type?: string;
  inline: boolean;
}

const SPECIAL: Readonly<Record<string, ScalarKind>> = {
  bytes: 'bytes',
  double: 'double',
  time: 'time',
  microTime: 'microTime',
  quantity: 'quantity',
  intOrString: 'intOrString',
  raw: 'rawExtension',
  fields: 'fieldsV1',
};

/**
 * A field holding a message by value (no pointer, not inlined, no list or map) with an object form: Go marshals it
 * even when empty, so the reference always writes it (`{}`) and its OpenAPI says `default: {}`.
 */
export function isByValueStruct(entry: Entry, node: Node): boolean {
  const objectForm = node === 'any' || (typeof node === 'object' && 'object' in node);
  const message = entry.type !== undefined && entry.type !== 'strings' && !Object.hasOwn(SPECIAL, entry.type);
  return objectForm && message && !entry.pointer && !entry.inline;
}

/** `'<number>[?|!] [type] [inline]'`. */
export function parseEntry(text: string): Entry {
  const [head, type, flag] = text.split(' ');
  const number = Number.parseInt(head, 10);
  return { number, pointer: head.endsWith('?'), always: head.endsWith('!'), type, inline: flag === 'inline' };
}

/** The entries of a message, by schema field name (inline entries by their protobuf field name). */
export function entriesOf(message: string): ReadonlyMap<string, Entry> {
  let entries = parsed.get(message);
  if (!entries) {
    if (!Object.hasOwn(MESSAGES, message)) throw new Error(`protobuf numbers: no message ${message}`);
    entries = new Map(Object.entries(MESSAGES[message]).map(([name, text]) => [name, parseEntry(text)]));
    parsed.set(message, entries);
  }
  return entries;
}
const parsed = new Map<string, Map<string, Entry>>();

/** An `ExtraValue`-like message: a repeated string as field 1, whose JSON form is the list. */
const STRINGS: MessageTable = {
  name: 'ExtraValue',
  fields: { 1: { name: 'items', kind: 'string', repeated: true } },
  unwrap: 'items',
};

const SCALARS: Readonly<Record<string, ScalarKind>> = {
  string: 'string',
  integer: 'int64',
  number: 'double',
  boolean: 'bool',
  'int-or-string': 'intOrString',
  quantity: 'quantity',
  time: 'time',
};

/** Tables built so far, per schema node and message (schema nodes are shared between kinds). */
const built = new WeakMap<object, Map<string, MessageTable>>();

/** The table of `message` for the object schema `node`. */
export function buildTable(node: Node, message: string): MessageTable {
  if (typeof node !== 'object' || !('object' in node)) throw new Error(`protobuf: ${message} needs an object schema`);
  let byMessage = built.get(node);
  if (!byMessage) {
    byMessage = new Map();
    built.set(node, byMessage);
  }
  const cached = byMessage.get(message);
  if (cached) return cached;
  const fields: Record<number, FieldSpec> = {};
  const table: MessageTable = { name: message.slice(message.lastIndexOf('.') + 1), fields };
  byMessage.set(message, table);
  for (const [name, entry] of entriesOf(message)) {
    if (entry.inline) {
      const inner = buildTable(node, entry.type as string);
      fields[entry.number] = { name: inner.name, kind: inner, inline: true };
      continue;
    }
    const child = node.object[name];
    if (child === undefined) throw new Error(`protobuf numbers: ${message}.${name} is not a schema field`);
    fields[entry.number] = fieldSpec(name, child, entry, message);
  }
  return table;
}

function fieldSpec(name: string, node: Node, entry: Entry, message: string): FieldSpec {
  // A RawExtension is one value on the wire (JSON bytes), whatever shape the schema gives its JSON form.
  const whole = entry.type === 'raw';
  const list = !whole && typeof node === 'object' && 'list' in node ? node.list : undefined;
  const map = !whole && typeof node === 'object' && 'map' in node ? node.map : undefined;
  const item = list ?? map ?? node;
  // A free-form schema field whose protobuf type is a message: present on the wire, it is refused by name.
  const opaque = item === 'any' && entry.type !== undefined && !Object.hasOwn(SPECIAL, entry.type);
  return {
    name,
    kind: valueKind(item, entry, `${message}.${name}`),
    ...(list !== undefined ? { repeated: true } : map !== undefined ? { map: true } : {}),
    ...(entry.pointer ? { keep: true } : {}),
    ...(entry.always ? { keep: true, always: true } : {}),
    ...(opaque ? { opaque: true } : {}),
  };
}

function valueKind(item: Node, entry: Entry, at: string): FieldSpec['kind'] {
  const type = entry.type;
  if (type === 'strings') return STRINGS;
  if (type !== undefined && Object.hasOwn(SPECIAL, type)) return SPECIAL[type];
  if (type !== undefined) return item === 'any' ? { name: type, fields: {} } : buildTable(item, type);
  if (typeof item === 'string' && item !== 'any') return SCALARS[item];
  throw new Error(`protobuf numbers: ${at} has no wire type for its schema`);
}

/** The table of a served kind; undefined for kinds without a schema or a message. */
export function tableForKind(kind: string, apiVersion?: string): MessageTable | undefined {
  const message = messageOfKind(kind, apiVersion);
  const schema = schemaFor(kind, apiVersion);
  return message && schema ? buildTable(schema, message) : undefined;
}

/** `<Kind>List`: {metadata ListMeta = 1, items = 2}. */
export function listTableForKind(kind: string, apiVersion?: string): MessageTable | undefined {
  const item = tableForKind(kind, apiVersion);
  if (!item) return undefined;
  return {
    name: `${item.name}List`,
    fields: { 1: { name: 'metadata', kind: LIST_META }, 2: { name: 'items', kind: item, repeated: true } },
  };
}

const LIST_META: MessageTable = {
  name: 'ListMeta',
  fields: {
    1: { name: 'selfLink', kind: 'string' },
    2: { name: 'resourceVersion', kind: 'string' },
    3: { name: 'continue', kind: 'string' },
    4: { name: 'remainingItemCount', kind: 'int64', keep: true },
  },
};

/** The kinds with a message, sorted. */
export const PROTOBUF_KINDS: readonly string[] = Object.keys(KIND_MESSAGES).sort();
