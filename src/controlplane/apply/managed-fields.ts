/**
 * Field ownership (`metadata.managedFields`) as server-side apply keeps it: one entry per manager,
 * operation (Apply or Update) and subresource, holding the field set that manager owns.
 *
 * - An Update (create, update, non-apply patch) gives its manager the fields it added or changed; fields it
 *   removed leave every manager.
 * - An Apply merges the configuration into the object by the schema's list types and map keys; a field it
 *   changes that another manager owns is a conflict, unless forced, which transfers the ownership; a
 *   manager that applies the same value shares the field. The applier then owns exactly what it applied,
 *   and fields it applied before but no longer does are removed from the object if no one else owns them.
 */
import type { ListNode, Node } from '../../api/schema.ts';
import { jsonEqual } from '../../util/equal.ts';
import {
  describePath,
  type FieldSet,
  fieldNode,
  fromFieldsV1,
  isAtomicObject,
  isGranular,
  isPlainObject,
  itemElement,
  locate,
  pathElements,
  pathKey,
  presentPaths,
  toFieldSet,
  toFieldsV1,
  valueAt,
  withoutPath,
} from './field-set.ts';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** One manager's ownership, the FieldsV1 of its entry read into a set; `changed` once the set is. */
interface Manager {
  entry: ManagedFieldsEntry;
  set: FieldSet;
  changed: boolean;
}

export interface FieldOwner {
  manager: string;
  apiVersion: string;
  /** `status` or `scale` for writes through those subresources. */
  subresource?: string;
  /** RFC 3339, for the entries this operation changes. */
  time: string;
  /** The kind's structural schema. */
  schema: Node;
  /** Top-level fields whose ownership is tracked for this write (`status` only, or all but `status`). */
  tracked: (field: string) => boolean;
}

export interface Conflict {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  path: string;
}

/**
 * A conflict's manager as the reference prints it: `"kubectl"` for an applier, `"kubectl" using v1` for an
 * Update manager (whose identity includes its version), `with subresource "status"` when it wrote through one.
 */
export function managerLabel(c: Omit<Conflict, 'path'>): string {
  const subresource = c.subresource ? ` with subresource ${JSON.stringify(c.subresource)}` : '';
  const version = c.operation === 'Update' ? ` using ${c.apiVersion}` : '';
  return `${JSON.stringify(c.manager)}${subresource}${version}`;
}

/** The reference's identity of a manager (its encoded entry without time or fields), by which it sorts them. */
const managerKey = (c: Conflict) =>
  JSON.stringify({
    manager: c.manager,
    operation: c.operation,
    ...(c.operation === 'Update' ? { apiVersion: c.apiVersion } : {}),
    ...(c.subresource ? { subresource: c.subresource } : {}),
  });

/** The reference's message: one conflict on a line, several grouped by manager (sorted), a path per line. */
function conflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${managerLabel(conflicts[0])}: ${conflicts[0].path}`;
  }
  const byManager = new Map<string, Conflict[]>();
  for (const c of conflicts) byManager.set(managerKey(c), [...(byManager.get(managerKey(c)) ?? []), c]);
  const lines = [...byManager.keys()].sort().flatMap((key) => {
    const group = byManager.get(key) ?? [];
    return [`conflicts with ${managerLabel(group[0])}:`, ...group.map((c) => `- ${c.path}`)];
  });
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** An apply whose changes other managers own: nothing was written. */
export class ApplyConflict extends Error {
  override name = 'ApplyConflict';
  constructor(readonly conflicts: Conflict[]) {
    super(conflictMessage(conflicts));
  }
}

/** Top-level fields no manager owns: identity, bookkeeping and the type. */
const UNTRACKED_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
  'managedFields',
]);

/** The part of an object whose ownership is tracked for an operation. */
function trackedPart(object: unknown, owner: FieldOwner): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isPlainObject(object)) return out;
  for (const field in object) {
    const value = object[field];
    if (field === 'apiVersion' || field === 'kind' || !owner.tracked(field)) continue;
    if (field === 'metadata' && isPlainObject(value)) {
      const metadata: Record<string, unknown> = {};
      let tracked = false;
      for (const k in value) {
        if (UNTRACKED_METADATA.has(k)) continue;
        metadata[k] = value[k];
        tracked = true;
      }
      if (tracked) out.metadata = metadata;
    } else {
      out[field] = value;
    }
  }
  return out;
}

/** Field sets of stored entries, which are never modified: each is read once. */
const readSets = new WeakMap<object, FieldSet>();

/** The stored entries as sets; a malformed entry (not written by this server) is dropped, as the reference resets it. */
function readManagers(entries: unknown): Manager[] {
  if (!Array.isArray(entries)) return [];
  const managers: Manager[] = [];
  for (const entry of entries) {
    if (!isPlainObject(entry) || typeof entry.manager !== 'string') continue;
    let set = readSets.get(entry);
    if (!set) {
      try {
        set = fromFieldsV1(entry.fieldsV1 ?? {});
      } catch {
        continue; // dropped: its field set cannot be read
      }
      readSets.set(entry, set);
    }
    managers.push({ entry: entry as unknown as ManagedFieldsEntry, set: new Set(set), changed: false });
  }
  return managers;
}

function remove(manager: Manager, key: string): void {
  if (manager.set.delete(key)) manager.changed = true;
}

function add(manager: Manager, key: string): void {
  if (manager.set.has(key)) return;
  manager.set.add(key);
  manager.changed = true;
}

const sameEntry = (entry: ManagedFieldsEntry, manager: string, operation: string, subresource?: string) =>
  entry.manager === manager && entry.operation === operation && (entry.subresource ?? '') === (subresource ?? '');

/** The entries again: an entry whose set changed gets the operation's time; empty sets are dropped. */
function writeManagers(managers: Manager[], owner: FieldOwner): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const manager of managers) {
    if (manager.set.size === 0) continue;
    if (!manager.changed) {
      out.push(manager.entry);
      continue;
    }
    const { manager: name, operation, subresource } = manager.entry;
    const entry = newEntry({ ...owner, manager: name, subresource }, operation, toFieldsV1(manager.set));
    // Not copied: the managers of one write are dropped after it, and readers copy what they read.
    readSets.set(entry, manager.set);
    out.push(entry);
  }
  return out.sort(byEncodedOrder);
}

const seconds = (time: string | undefined) => (time ? Math.floor(Date.parse(time) / 1000) : 0);

/** The reference's order of encoded entries: Apply before Update, then older first, then manager, version, subresource. */
function byEncodedOrder(p: ManagedFieldsEntry, q: ManagedFieldsEntry): number {
  const compare = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  return (
    compare(p.operation, q.operation) ||
    compare(seconds(p.time), seconds(q.time)) ||
    compare(p.manager, q.manager) ||
    compare(p.apiVersion, q.apiVersion) ||
    compare(p.subresource ?? '', q.subresource ?? '')
  );
}

/** An entry's time; the `scale` subresource's entry has none, as the reference's (a Scale carries no times). */
const stamp = (owner: FieldOwner) => (owner.subresource === 'scale' ? {} : { time: owner.time });

function findOrAdd(managers: Manager[], owner: FieldOwner, operation: 'Apply' | 'Update'): Manager {
  const found = managers.find((m) => sameEntry(m.entry, owner.manager, operation, owner.subresource));
  if (found) return found;
  // A manager's first entry: it owns nothing yet.
  const manager: Manager = { entry: newEntry(owner, operation, {}), set: new Set(), changed: true };
  managers.push(manager);
  return manager;
}

function newEntry(
  owner: FieldOwner,
  operation: 'Apply' | 'Update',
  fieldsV1: Record<string, unknown>,
): ManagedFieldsEntry {
  return {
    manager: owner.manager,
    operation,
    apiVersion: owner.apiVersion,
    ...stamp(owner),
    fieldsType: 'FieldsV1',
    fieldsV1,
    ...(owner.subresource ? { subresource: owner.subresource } : {}),
  };
}

/**
 * The managed fields after an Update from `old` (undefined on create) to `next`: the manager gains what
 * it added or changed, and what it removed leaves every manager.
 */
export function recordUpdate(old: unknown, next: unknown, owner: FieldOwner): ManagedFieldsEntry[] {
  // A create compares against the kind's zero value, as the reference does.
  const managers = readManagers(isPlainObject(old) ? (old.metadata as Record<string, unknown>)?.managedFields : []);
  const oldLeaves = new Map<string, unknown>();
  const nextLeaves = new Map<string, unknown>();
  const topLevel = (field: string) => field !== 'apiVersion' && field !== 'kind' && owner.tracked(field);
  const oldSet = presentPaths(trackedPart(old, owner), owner.schema, oldLeaves, topLevel);
  const nextSet = presentPaths(trackedPart(next, owner), owner.schema, nextLeaves, topLevel);
  const removed = [...oldSet].filter((key) => !nextSet.has(key));
  // New paths (containers too: the reference records an object that appears as a member), and leaves whose
  // value changed. An object that only lost its members is no change of its own (the reference omits it empty).
  const emptied = (key: string) => !oldLeaves.has(key) && isEmptyObject(nextLeaves.get(key));
  const gained = [...nextSet].filter(
    (key) =>
      !oldSet.has(key) || (nextLeaves.has(key) && !sameValue(nextLeaves.get(key), oldLeaves.get(key)) && !emptied(key)),
  );
  // What the update removed leaves every manager; what it set or changed becomes the updater's alone.
  for (const manager of managers) {
    for (const key of removed) remove(manager, key);
    for (const key of gained) remove(manager, key);
  }
  if (gained.length > 0) {
    const self = findOrAdd(managers, owner, 'Update');
    for (const key of gained) add(self, key);
  }
  return writeManagers(managers, owner);
}

export interface ApplyResult {
  object: Record<string, unknown>;
  managedFields: ManagedFieldsEntry[];
}

/**
 * Applies `config` to `live` (an empty object on create) for `owner.manager`. Throws ApplyConflict when the
 * configuration changes fields other managers own and `force` is false.
 */
export function applyConfiguration(
  live: Record<string, unknown>,
  config: Record<string, unknown>,
  owner: FieldOwner,
  force: boolean,
): ApplyResult {
  const managers = readManagers((live.metadata as Record<string, unknown> | undefined)?.managedFields);
  const applied = toFieldSet(trackedPart(config, owner), owner.schema);
  let merged = mergeValue(live, config, owner.schema) as Record<string, unknown>;

  const self = findOrAdd(managers, owner, 'Apply');
  const others = managers.filter((m) => m !== self);
  const changed = [...applied].filter((key) => changedBy(live, merged, key, owner.schema));
  const conflicts: Conflict[] = [];
  for (const other of others) {
    for (const key of changed) {
      if (other.set.has(key)) {
        const { manager, operation, apiVersion, subresource } = other.entry;
        conflicts.push({ manager, operation, apiVersion, subresource, path: describePath(pathElements(key)) });
      }
    }
  }
  if (conflicts.length > 0 && !force) throw new ApplyConflict(conflicts);
  // Forced (or free) changes move to the applier.
  for (const other of others) for (const key of changed) remove(other, key);

  // Fields applied before and no longer, that nobody else holds, go away.
  const dropped = [...self.set].filter((key) => !applied.has(key));
  const ownedByOthers = new Set<string>();
  for (const other of others) {
    for (const key of other.set) {
      const path = pathElements(key);
      for (let n = 1; n <= path.length; n++) ownedByOthers.add(pathKey(path.slice(0, n)));
    }
  }
  // Parents first: removing an item takes its fields along, and it is found by its key fields.
  for (const key of dropped.sort((a, b) => a.length - b.length)) {
    if (!ownedByOthers.has(key)) merged = withoutPath(merged, pathElements(key), owner.schema) as typeof merged;
  }
  if (self.set.size !== applied.size || [...applied].some((key) => !self.set.has(key))) {
    self.set = applied;
    self.changed = true;
  }
  return { object: merged, managedFields: writeManagers(managers, owner) };
}

/** Whether applying changes the value at a path: leaves (atomic objects too) by value, containers by presence. */
function changedBy(live: unknown, merged: unknown, key: string, schema: Node): boolean {
  const path = pathElements(key);
  const [after, node] = locate(merged, path, schema) ?? [];
  const previous = valueAt(live, path, schema);
  if (isPlainObject(after) && !isAtomicObject(node ?? 'any')) return previous === undefined;
  return !jsonEqual(previous, after);
}

/** Merges an apply configuration into a live value by the schema: objects field by field, granular lists by item. */
export function mergeValue(live: unknown, config: unknown, node: Node): unknown {
  if (isPlainObject(config) && !isAtomicObject(node)) {
    const out: Record<string, unknown> = isPlainObject(live) ? { ...live } : {};
    for (const [key, value] of Object.entries(config)) {
      if (value === null) delete out[key];
      else out[key] = mergeValue(out[key], value, fieldNode(node, key));
    }
    return out;
  }
  if (Array.isArray(config) && Array.isArray(live) && isGranular(node)) return mergeItems(live, config, node);
  return config;
}

function mergeItems(live: unknown[], config: unknown[], list: ListNode): unknown[] {
  const out = [...live];
  for (const item of config) {
    const element = itemElement(list, item as never);
    const index = out.findIndex((existing) => itemElement(list, existing as never) === element);
    if (index < 0) out.push(item);
    else if (list.listType === 'map') out[index] = mergeValue(out[index], item, list.list);
  }
  return out;
}

const isEmptyObject = (v: unknown) => isPlainObject(v) && Object.keys(v).length === 0;

/** Leaf values are mostly scalars: compared directly, atomic lists and objects by their JSON. */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && typeof b === 'object' && jsonEqual(a, b));
}
