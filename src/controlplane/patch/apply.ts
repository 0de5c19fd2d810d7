/**
 * Server-side apply as a patch engine: the applied configuration is merged onto the live object by the
 * kind's schema (map lists by their keys, sets by value, other lists replaced, nulls delete fields).
 * Field ownership, conflicts and the removal of fields no longer applied are `../apply/managed-fields.ts`.
 */
import { schemaFor } from '../../api/schema.ts';
import { mergeValue } from '../apply/managed-fields.ts';
import { PatchError } from './errors.ts';
import { isObject, type JsonObject, type JsonValue } from './merge-patch.ts';
import { isDirectiveKey } from './strategic-merge-patch.ts';

/** Returns the object that results from applying `applied`; `live` is undefined when the object does not exist. */
export function applyServerSideApply(live: JsonObject | undefined, applied: unknown, kind: string): JsonObject {
  if (!isObject(applied)) throw new PatchError('BadRequest', 'the apply configuration must be an object');
  rejectDirectives(applied);
  return mergeValue(live ?? {}, applied, schemaFor(kind) ?? 'any') as JsonObject;
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
