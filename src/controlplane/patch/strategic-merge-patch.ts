/**
 * Kubernetes strategic merge patch: a JSON merge patch in which the lists merge-keys.ts declares mergeable
 * merge element by element, steered by the `$patch`, `$retainKeys`, `$setElementOrder/<field>` and
 * `$deleteFromPrimitiveList/<field>` directives.
 */
import { PatchError } from './errors.ts';
import { listStrategy } from './merge-keys.ts';
import { getField, isObject, type JsonObject, type JsonValue, setField } from './merge-patch.ts';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

/** What identifies a list element: its merge key's value, or the element itself in a set of primitives. */
type Id = JsonValue | undefined;

export function isDirectiveKey(key: string): boolean {
  return (
    key === PATCH ||
    key === RETAIN_KEYS ||
    key.startsWith(SET_ELEMENT_ORDER) ||
    key.startsWith(DELETE_FROM_PRIMITIVE_LIST)
  );
}

export function applyStrategicMergePatch(original: JsonObject, patch: JsonObject, kind: string): JsonObject {
  // The merge updates a private copy of the original; values taken from the patch are always rebuilt.
  return mergeMap(structuredClone(original), patch, [], kind);
}

/** Merges `patch` into `target` (owned by the merge, so updated in place); `path` is the map's field path. */
function mergeMap(target: JsonObject, patch: JsonObject, path: string[], kind: string): JsonObject {
  const directive = getField(patch, PATCH);
  if (directive === 'delete') return {};
  if (directive !== undefined && directive !== 'replace' && directive !== 'merge') {
    throw unknownPatchType(directive, patch);
  }
  // Replacing is merging into nothing: the patch's fields are kept, its nulls and directives resolved.
  const result = directive === 'replace' ? {} : target;

  const retained = getField(patch, RETAIN_KEYS);
  if (retained !== undefined) retainKeys(result, patch, retained);

  const orders = new Map<string, JsonValue[]>();
  const deletions = new Map<string, JsonValue[]>();
  const fields: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(SET_ELEMENT_ORDER)) {
      orders.set(key.slice(SET_ELEMENT_ORDER.length), directiveList(value, 'setElementOrder list'));
    } else if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      deletions.set(key.slice(DELETE_FROM_PRIMITIVE_LIST.length), directiveList(value, 'primitive list'));
    } else if (!isDirectiveKey(key)) {
      fields.push(key);
    }
  }

  for (const key of fields) {
    const value = patch[key];
    if (value === null || (isObject(value) && getField(value, PATCH) === 'delete')) delete result[key];
    else setField(result, key, mergeValue(getField(result, key), value, [...path, key], kind, orders.get(key)));
  }
  // A $setElementOrder whose list is not in the patch only reorders the live list.
  for (const [key, order] of orders) {
    const live = getField(result, key);
    if (!fields.includes(key) && Array.isArray(live)) {
      setField(result, key, mergeList(live, [], [...path, key], kind, order));
    }
  }
  // Deleting after merging leaves a value both added and deleted by the same patch deleted.
  for (const [key, values] of deletions) {
    const live = getField(result, key);
    if (Array.isArray(live)) {
      const kept = live.filter((item) => !values.includes(item));
      setField(result, key, kept);
    }
  }
  return result;
}

/** A value with a different JSON type than the live one merges into an empty one, which rebuilds it from the patch. */
function mergeValue(
  live: JsonValue | undefined,
  value: JsonValue,
  path: string[],
  kind: string,
  order?: JsonValue[],
): JsonValue {
  if (isObject(value)) return mergeMap(isObject(live) ? live : {}, value, path, kind);
  if (Array.isArray(value)) return mergeList(Array.isArray(live) ? live : [], value, path, kind, order);
  return value;
}

function mergeList(
  live: JsonValue[],
  patch: JsonValue[],
  path: string[],
  kind: string,
  order?: JsonValue[],
): JsonValue[] {
  const strategy = listStrategy(kind, path);
  const { items, deleted, replace, merge } = splitDirectives(patch);
  const rebuild = (item: JsonValue) => mergeValue(undefined, item, path, kind);
  if (!strategy) {
    if (merge || deleted.length > 0) {
      throw badRequest(
        `${path.join('.')} is replaced as a whole, so $patch: ${merge ? 'merge' : 'delete'} cannot apply`,
      );
    }
    return items.map(rebuild);
  }
  if (replace) return items.map(rebuild);

  const mergeKey = strategy.mergeKey;
  // Live elements without the merge key match nothing; patch elements must carry it.
  const idOf = (item: JsonValue): Id =>
    mergeKey === undefined ? item : isObject(item) ? getField(item, mergeKey) : undefined;
  const requireId = (item: JsonValue): Id => {
    const id = idOf(item);
    if (id === undefined) {
      throw badRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    }
    return id;
  };
  if (deleted.length > 0 && mergeKey === undefined) {
    throw badRequest(`${path.join('.')} is a list of primitives: delete from it with ${DELETE_FROM_PRIMITIVE_LIST}`);
  }
  const gone = deleted.map(requireId);
  const base = live.filter((item) => !gone.includes(idOf(item)));

  const merged = [...base];
  for (const item of items) {
    const id = requireId(item);
    const at = merged.findIndex((existing) => idOf(existing) === id);
    if (at < 0) merged.push(rebuild(item));
    else if (mergeKey !== undefined) merged[at] = mergeValue(merged[at], item, path, kind);
  }

  const patchOrder = (order ?? items).map(requireId);
  const unlisted = items.find((item) => !patchOrder.includes(requireId(item)));
  if (unlisted !== undefined) {
    throw badRequest(`${SET_ELEMENT_ORDER}${path[path.length - 1]} does not list ${JSON.stringify(unlisted)}`);
  }
  return sortMerged(merged, idOf, patchOrder, base.map(idOf));
}

/**
 * Orders a merged list as the reference server does: elements named by the patch (or its $setElementOrder)
 * follow that order, and live-only elements are woven back in before the first patched element that came
 * after them in the live list. Elements new to the list therefore land ahead of the live-only ones after them.
 */
function sortMerged(
  merged: JsonValue[],
  idOf: (item: JsonValue) => Id,
  patchOrder: Id[],
  liveOrder: Id[],
): JsonValue[] {
  const rank = (item: JsonValue) => patchOrder.indexOf(idOf(item));
  const patched = merged.filter((item) => rank(item) >= 0).sort((a, b) => rank(a) - rank(b));
  const liveOnly = merged.filter((item) => rank(item) < 0);
  const sorted: JsonValue[] = [];
  let p = 0;
  let l = 0;
  while (p < patched.length || l < liveOnly.length) {
    const patchedAt = p < patched.length ? liveOrder.indexOf(idOf(patched[p])) : Number.POSITIVE_INFINITY;
    const liveFirst = l < liveOnly.length && patchedAt >= 0 && liveOrder.indexOf(idOf(liveOnly[l])) < patchedAt;
    sorted.push(liveFirst ? liveOnly[l++] : patched[p++]);
  }
  return sorted;
}

/** Separates `{$patch: ...}` elements from the elements to merge. */
function splitDirectives(patch: JsonValue[]) {
  const items: JsonValue[] = [];
  const deleted: JsonValue[] = [];
  let replace = false;
  let merge = false;
  for (const item of patch) {
    const directive = isObject(item) ? getField(item, PATCH) : undefined;
    if (directive === undefined) items.push(item);
    else if (directive === 'delete') deleted.push(item);
    else if (directive === 'replace') replace = true;
    else if (directive === 'merge') merge = true;
    else throw unknownPatchType(directive, item);
  }
  return { items, deleted, replace, merge };
}

/** Drops the fields of `target` the directive does not name; the patch itself may only set named fields. */
function retainKeys(target: JsonObject, patch: JsonObject, retained: JsonValue): void {
  if (!Array.isArray(retained)) throw badRequest('invalid patch format of retainKeys');
  for (const [key, value] of Object.entries(patch)) {
    if (value !== null && !isDirectiveKey(key) && !retained.includes(key)) {
      throw new PatchError('Invalid', `patch content doesn't match retainKeys list: "${key}" is not retained`);
    }
  }
  for (const key of Object.keys(target)) {
    if (!retained.includes(key)) delete target[key];
  }
}

function directiveList(value: JsonValue, what: string): JsonValue[] {
  if (!Array.isArray(value)) throw badRequest(`invalid patch format of ${what}`);
  return value;
}

function unknownPatchType(directive: JsonValue, map: JsonValue): PatchError {
  return badRequest(`unknown patch type: ${JSON.stringify(directive)} in map: ${JSON.stringify(map)}`);
}

function badRequest(message: string): PatchError {
  return new PatchError('BadRequest', message);
}
