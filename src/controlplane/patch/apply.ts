/**
 * Server-side apply, first version: the applied configuration is strategically merged onto the live object,
 * so lists with a merge key merge by it, other lists are replaced, and nulls delete fields.
 * Managed fields (field ownership) and apply conflicts are not tracked yet.
 */
import { PatchError } from './errors.ts';
import { isObject, type JsonObject, type JsonValue } from './merge-patch.ts';
import { applyStrategicMergePatch, isDirectiveKey } from './strategic-merge-patch.ts';

/** Returns the object that results from applying `applied`; `live` is undefined when the object does not exist. */
export function applyServerSideApply(live: JsonObject | undefined, applied: unknown, kind: string): JsonObject {
  if (!isObject(applied)) throw new PatchError('BadRequest', 'the apply configuration must be an object');
  rejectDirectives(applied);
  return applyStrategicMergePatch(live ?? {}, applied, kind);
}

// Directives are strategic merge patch syntax; an apply configuration only states the fields it wants.
function rejectDirectives(value: JsonValue): void {
  if (Array.isArray(value)) {
    for (const item of value) rejectDirectives(item);
  } else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (isDirectiveKey(key)) {
        throw new PatchError('BadRequest', `the apply configuration may not contain the patch directive "${key}"`);
      }
      rejectDirectives(child);
    }
  }
}
