/**
 * RFC 6902 JSON Patch, addressing values with RFC 6901 JSON Pointers.
 */
import { PatchError } from './errors.ts';
import { getField, isObject, type JsonObject, type JsonValue, setField } from './merge-patch.ts';

export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: JsonValue }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

type Container = JsonObject | JsonValue[];

const OPERATIONS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Most operations one JSON Patch may hold, as the reference's patch handler allows. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/** Applies every operation in order, or none: the input document is never modified. */
export function applyJsonPatch(document: JsonValue, patch: unknown): JsonValue {
  const operations = parseOperations(patch);
  // Operations update a private copy; a failing one throws before the caller sees any change.
  let result = structuredClone(document);
  for (const operation of operations) result = applyOperation(result, operation);
  return result;
}

function parseOperations(patch: unknown): JsonPatchOperation[] {
  if (!Array.isArray(patch)) throw new PatchError('BadRequest', 'invalid JSON Patch');
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError(
      'RequestEntityTooLarge',
      `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`,
    );
  }
  return patch.map((operation: unknown, index) => {
    const invalid = (why: string) => new PatchError('BadRequest', `invalid JSON Patch: operation ${index} ${why}`);
    if (!isObject(operation)) throw invalid('is not an object');
    const op = getField(operation, 'op');
    if (typeof op !== 'string' || !OPERATIONS.has(op)) throw invalid(`has unknown op ${JSON.stringify(op)}`);
    if (typeof getField(operation, 'path') !== 'string') throw invalid('has no "path"');
    if ((op === 'move' || op === 'copy') && typeof getField(operation, 'from') !== 'string') {
      throw invalid('has no "from"');
    }
    if ((op === 'add' || op === 'replace' || op === 'test') && !Object.hasOwn(operation, 'value')) {
      throw invalid('has no "value"');
    }
    return operation as JsonPatchOperation;
  });
}

function applyOperation(document: JsonValue, operation: JsonPatchOperation): JsonValue {
  switch (operation.op) {
    case 'add':
      return add(document, operation.path, structuredClone(operation.value));
    case 'remove':
      remove(document, operation.path);
      return document;
    case 'replace':
      return replace(document, operation.path, structuredClone(operation.value));
    case 'move': {
      if (operation.path.startsWith(`${operation.from}/`)) {
        throw new PatchError('Invalid', `cannot move ${operation.from} into its own child ${operation.path}`);
      }
      const value = valueAt(document, operation.from);
      remove(document, operation.from);
      return add(document, operation.path, value);
    }
    case 'copy':
      return add(document, operation.path, structuredClone(valueAt(document, operation.from)));
    case 'test':
      if (!deepEqual(valueAt(document, operation.path), operation.value)) {
        throw new PatchError('Invalid', `testing value ${operation.path} failed`);
      }
      return document;
  }
}

function add(document: JsonValue, path: string, value: JsonValue): JsonValue {
  if (path === '') return value;
  const { parent, token } = parentOf(document, path);
  if (!Array.isArray(parent)) {
    setField(parent, token, value);
    return document;
  }
  const index = token === '-' ? parent.length : arrayIndex(token);
  if (index === undefined || index > parent.length) {
    throw new PatchError('Invalid', `unable to add at ${path}: index ${token} is out of bounds`);
  }
  parent.splice(index, 0, value);
  return document;
}

function remove(document: JsonValue, path: string): void {
  if (path === '') throw new PatchError('Invalid', 'cannot remove the whole document');
  const { parent, token } = parentOf(document, path);
  if (childOf(parent, token) === undefined) throw missingPath(path);
  if (Array.isArray(parent)) parent.splice(Number(token), 1);
  else delete parent[token];
}

function replace(document: JsonValue, path: string, value: JsonValue): JsonValue {
  if (path === '') return value;
  const { parent, token } = parentOf(document, path);
  if (childOf(parent, token) === undefined) throw missingPath(path);
  // Assigning in place keeps the member's position among its siblings.
  if (Array.isArray(parent)) parent[Number(token)] = value;
  else setField(parent, token, value);
  return document;
}

function valueAt(document: JsonValue, path: string): JsonValue {
  return resolve(document, parsePointer(path), path);
}

/** The container holding the last token of `path`; its member need not exist yet. */
function parentOf(document: JsonValue, path: string): { parent: Container; token: string } {
  const tokens = parsePointer(path);
  const parent = resolve(document, tokens.slice(0, -1), path);
  if (!isObject(parent) && !Array.isArray(parent)) throw missingPath(path);
  return { parent, token: tokens[tokens.length - 1] };
}

function resolve(document: JsonValue, tokens: string[], path: string): JsonValue {
  let value = document;
  for (const token of tokens) {
    const child = childOf(value, token);
    if (child === undefined) throw missingPath(path);
    value = child;
  }
  return value;
}

function childOf(value: JsonValue, token: string): JsonValue | undefined {
  if (Array.isArray(value)) {
    const index = arrayIndex(token);
    return index === undefined ? undefined : value[index];
  }
  return isObject(value) ? getField(value, token) : undefined;
}

/** RFC 6901 array indexes are decimal without leading zeros; anything else (including `-`) names no element. */
function arrayIndex(token: string): number | undefined {
  return /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : undefined;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/') || /~(?![01])/.test(pointer)) {
    throw new PatchError('BadRequest', `invalid JSON Pointer ${JSON.stringify(pointer)}`);
  }
  // `~1` is decoded before `~0`, so `~01` becomes the literal `~1` (RFC 6901 section 4).
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function missingPath(path: string): PatchError {
  return new PatchError('Invalid', `doc is missing path: "${path}": missing value`);
}

function deepEqual(a: JsonValue, b: JsonValue): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  if (!isObject(a)) return a === b;
  if (!isObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
  );
}
