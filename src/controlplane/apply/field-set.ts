/**
 * Field sets, as server-side apply tracks ownership: the set of paths an object (or an apply configuration)
 * sets, computed against the kind's structural schema, and their `FieldsV1` form in `managedFields`.
 *
 * A path is a list of path elements: `f:<field>` (an object field or a map key), `k:<json>` (an item of a
 * `map` list, by its key fields), `v:<json>` (an item of a `set` list, by value) or `i:<index>` (read from
 * FieldsV1, never produced here). Which paths are members follows the reference's walk: scalars, atomic
 * lists, list items, map entries, and object fields that are null or empty; an object field holding a
 * non-empty object is not a member itself, only what it holds.
 */
import type { ListNode, Node } from '../../api/schema.ts';

/** Paths encoded as their elements joined by NUL (which no element contains unescaped in JSON). */
export type FieldSet = Set<string>;

const SEPARATOR = '\u0000';

export const pathKey = (elements: readonly string[]): string => elements.join(SEPARATOR);
export const pathElements = (key: string): string[] => (key === '' ? [] : key.split(SEPARATOR));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function isPlainObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The child schema of a field; `'any'` for fields the schema does not know. */
export function fieldNode(node: Node, field: string): Node {
  if (typeof node !== 'object') return 'any';
  if ('object' in node) return Object.hasOwn(node.object, field) ? node.object[field] : 'any';
  if ('map' in node) return node.map;
  return 'any';
}

/** The `k:` element of a map-list item: its key fields, by name. */
export function itemKey(list: ListNode, item: Json): string {
  const keys: Record<string, Json> = {};
  if (isPlainObject(item)) {
    for (const name of keyNamesInOrder(list)) {
      const value = item[name] ?? list.keyDefaults?.[name];
      if (value !== undefined) keys[name] = value;
    }
  }
  return `k:${JSON.stringify(keys)}`;
}

/** Each map list's key names, sorted once: the schema keeps them in their declared order. */
const sortedKeyNames = new WeakMap<ListNode, readonly string[]>();

function keyNamesInOrder(list: ListNode): readonly string[] {
  let names = sortedKeyNames.get(list);
  if (!names) {
    names = [...(list.mapKeys ?? [])].sort();
    sortedKeyNames.set(list, names);
  }
  return names;
}

/** The element that identifies a list item: by key (map lists) or by value (sets). */
export function itemElement(list: ListNode, item: Json): string {
  return list.listType === 'map' ? itemKey(list, item) : `v:${JSON.stringify(item)}`;
}

/** An object or map the schema marks atomic: a leaf, as an atomic list is. */
export function isAtomicObject(node: Node): boolean {
  return typeof node === 'object' && ('object' in node || 'map' in node) && node.atomic === true;
}

export function isGranular(node: Node): node is ListNode {
  return typeof node === 'object' && 'list' in node && (node.listType === 'map' || node.listType === 'set');
}

export interface WalkOptions {
  /** Collects the value of every member that is a leaf (scalars, atomic lists, null and empty objects). */
  leaves?: Map<string, unknown>;
}

/** The field set of `value` under `node`, with paths prefixed by `prefix`. */
export function toFieldSet(value: unknown, node: Node, prefix: string[] = [], options: WalkOptions = {}): FieldSet {
  const out: FieldSet = new Set();
  walk(value as Json, node, pathKey(prefix), out, options);
  return out;
}

const child = (key: string, element: string) => (key === '' ? element : key + SEPARATOR + element);

function leaf(key: string, value: Json, out: FieldSet, options: WalkOptions): void {
  out.add(key);
  options.leaves?.set(key, value);
}

function walk(value: Json, node: Node, key: string, out: FieldSet, options: WalkOptions): void {
  if (Array.isArray(value)) {
    if (!isGranular(node)) {
      leaf(key, value, out, options);
      return;
    }
    for (const item of value) {
      const itemKey = child(key, itemElement(node, item));
      out.add(itemKey);
      if (node.listType === 'map') walk(item, node.list, itemKey, out, options);
    }
    return;
  }
  if (!isPlainObject(value) || isAtomicObject(node)) {
    leaf(key, value, out, options);
    return;
  }
  const known = typeof node === 'object' && 'object' in node ? node.object : undefined;
  for (const field in value) {
    const fieldValue = value[field];
    const fieldSchema = fieldNode(node, field);
    const fieldKey = child(key, `f:${field}`);
    walk(fieldValue, fieldSchema, fieldKey, out, options);
    const empty = isPlainObject(fieldValue) && isEmpty(fieldValue);
    if (fieldValue === null || empty || isAtomicObject(fieldSchema)) leaf(fieldKey, fieldValue, out, options);
    else if (!known || !Object.hasOwn(known, field)) out.add(fieldKey);
  }
}

/**
 * Every path of `value` as the reference's Update compares it (its typed form of the object): each field, map
 * entry and list item, with the fields the Go zero value of an object holds although the JSON leaves them out
 * (value structs as `{}`, lists without omitempty as null). `leaves` gets each leaf's value: an object or list
 * holding nothing is one. `topLevel` says which fields of the root count.
 */
export function presentPaths(
  value: unknown,
  node: Node,
  leaves: Map<string, unknown>,
  topLevel: (field: string) => boolean,
): FieldSet {
  const out: FieldSet = new Set();
  walkPresent(value as Json, node, '', out, leaves, topLevel);
  return out;
}

/** `value` undefined: an object only the zero value holds. */
function walkPresent(
  value: Json | undefined,
  node: Node,
  key: string,
  out: FieldSet,
  leaves: Map<string, unknown>,
  counts: (field: string) => boolean = () => true,
): void {
  if (Array.isArray(value) && isGranular(node) && value.length > 0) {
    for (const item of value) {
      const itemKey = child(key, itemElement(node, item));
      out.add(itemKey);
      if (node.listType === 'map') walkPresent(item, node.list, itemKey, out, leaves);
      else leaves.set(itemKey, item);
    }
    return;
  }
  if (value !== undefined && (!isPlainObject(value) || isAtomicObject(node))) {
    leaves.set(key, value);
    return;
  }
  const fields = value ?? {};
  let holds = false;
  for (const field in fields) {
    if (!counts(field)) continue;
    const fieldKey = child(key, `f:${field}`);
    out.add(fieldKey);
    walkPresent(fields[field], fieldNode(node, field), fieldKey, out, leaves);
    holds = true;
  }
  const known = typeof node === 'object' && 'object' in node ? node.object : {};
  for (const field in known) {
    const fieldSchema = known[field];
    if (Object.hasOwn(fields, field) || !counts(field) || typeof fieldSchema !== 'object') continue;
    const valueStruct = 'object' in fieldSchema && !fieldSchema.pointer;
    if (!valueStruct && !('list' in fieldSchema && fieldSchema.inZeroValue)) continue;
    const fieldKey = child(key, `f:${field}`);
    out.add(fieldKey);
    if (valueStruct) walkPresent(undefined, fieldSchema, fieldKey, out, leaves);
    else leaves.set(fieldKey, null);
    holds = true;
  }
  if (!holds) leaves.set(key, fields);
}

// ---------------------------------------------------------------------------------------------
// FieldsV1

/** The FieldsV1 form: a tree of path elements; `".": {}` marks a member that also has children. */
export function toFieldsV1(set: FieldSet): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  // Sorted, a member comes right before what it holds (a NUL sorts below every other character).
  const keys = [...set].sort();
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    let node = root;
    // Elements are read in place (no split): `start` is where the current one begins.
    let start = 0;
    for (let end = key.indexOf(SEPARATOR); end >= 0; start = end + 1, end = key.indexOf(SEPARATOR, start)) {
      const element = key.slice(start, end);
      node[element] ??= {};
      node = node[element] as Record<string, unknown>;
    }
    const next = keys[i + 1];
    const holdsMore =
      next !== undefined && next.length > key.length && next[key.length] === SEPARATOR && next.startsWith(key);
    // Each node its own object: a copy that keeps shared references (structuredClone, as JSON Patch makes) must
    // be able to change one without the others.
    node[key.slice(start)] = holdsMore ? { '.': {} } : {};
  }
  return root;
}

export function isEmpty(object: object): boolean {
  for (const _ in object) return false;
  return true;
}

/** Reads FieldsV1; a malformed tree is reported with the path where it goes wrong. */
export function fromFieldsV1(tree: unknown, path: string[] = [], out: FieldSet = new Set()): FieldSet {
  if (!isPlainObject(tree)) throw new Error(`fieldsV1: expected an object at ${describePath(path) || 'the root'}`);
  const keys = Object.keys(tree);
  if (path.length > 0 && (keys.length === 0 || Object.hasOwn(tree, '.'))) out.add(pathKey(path));
  for (const element of keys) {
    if (element === '.') continue;
    if (!/^[fkvi]:/.test(element)) throw new Error(`fieldsV1: unknown path element "${element}"`);
    fromFieldsV1(tree[element], [...path, element], out);
  }
  return out;
}

/** A path as the reference prints it in conflicts: `.spec.containers[name="web"].image`. */
export function describePath(elements: readonly string[]): string {
  return elements
    .map((element) => {
      const body = element.slice(2);
      switch (element[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const keys = JSON.parse(body) as Record<string, unknown>;
          return `[${Object.entries(keys)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}

// ---------------------------------------------------------------------------------------------
// Reading and removing along a path

/** The value at a path, or undefined when something along it is absent. */
export function valueAt(value: unknown, elements: readonly string[], node: Node): unknown {
  return locate(value, elements, node)?.[0];
}

/** The value at a path and its schema node; undefined when the value has no such path. */
export function locate(value: unknown, elements: readonly string[], node: Node): [unknown, Node] | undefined {
  let found: [unknown, Node] | undefined = [value, node];
  for (const element of elements) {
    found = step(found[0], element, found[1]);
    if (!found) return undefined;
  }
  return found;
}

function step(value: unknown, element: string, node: Node): [unknown, Node] | undefined {
  const body = element.slice(2);
  if (element.startsWith('f:')) {
    return isPlainObject(value) && Object.hasOwn(value, body) ? [value[body], fieldNode(node, body)] : undefined;
  }
  if (!Array.isArray(value)) return undefined;
  const list = typeof node === 'object' && 'list' in node ? node : undefined;
  const index = findItem(value, element, list);
  return index < 0 ? undefined : [value[index], list?.list ?? 'any'];
}

function findItem(items: Json[], element: string, list: ListNode | undefined): number {
  if (element.startsWith('i:')) {
    const index = Number(element.slice(2));
    return index < items.length ? index : -1;
  }
  if (!list) return -1;
  return items.findIndex((item) => itemElement(list, item) === element);
}

/**
 * `value` without what is at a path: the objects and lists along the path are copied, the rest is shared
 * (the input may be a stored object, which is never modified). Parents left empty stay.
 */
export function withoutPath(value: unknown, elements: readonly string[], node: Node): unknown {
  if (elements.length === 0) return value;
  const [element, ...rest] = elements;
  const found = step(value, element, node);
  if (!found) return value;
  const [child, childNode] = found;
  const replacement = rest.length === 0 ? undefined : withoutPath(child, rest, childNode);
  if (rest.length > 0 && replacement === child) return value;
  if (element.startsWith('f:')) {
    const copy = { ...(value as Record<string, unknown>) };
    if (rest.length === 0) delete copy[element.slice(2)];
    else copy[element.slice(2)] = replacement;
    return copy;
  }
  const copy = [...(value as Json[])];
  const index = copy.indexOf(child as Json);
  if (rest.length === 0) copy.splice(index, 1);
  else copy[index] = replacement as Json;
  return copy;
}
