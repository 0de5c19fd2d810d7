/**
 * RFC 7386 JSON merge patch, and the JSON value helpers the other patch engines share.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads own fields only, so a `__proto__` key never reaches the prototype. */
export function getField(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Defines an own field, so a `__proto__` key is stored as data instead of replacing the prototype. */
export function setField(object: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Returns `target` with `patch` merged in: null deletes, objects merge recursively, anything else replaces. */
export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  // The merge updates a private copy, so the result shares nothing with the caller's target.
  return mergeInto(structuredClone(target), patch);
}

function mergeInto(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return structuredClone(patch);
  const result = isObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setField(result, key, mergeInto(getField(result, key), value));
  }
  return result;
}
