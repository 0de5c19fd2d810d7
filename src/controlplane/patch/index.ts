/**
 * Patch engines of the embedded API server, chosen by the request's Content-Type.
 */
import { applyServerSideApply } from './apply.ts';
import { PatchError } from './errors.ts';
import { applyJsonPatch } from './json-patch.ts';
import { applyMergePatch, isObject, type JsonObject, type JsonValue } from './merge-patch.ts';
import { applyStrategicMergePatch } from './strategic-merge-patch.ts';

export { PatchError, type PatchErrorReason } from './errors.ts';
export type { JsonObject, JsonValue } from './merge-patch.ts';

/** The patch media types the server accepts, for discovery. */
export const PATCH_CONTENT_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;

/**
 * Applies a parsed request `body` to `original` (`{}` for an apply that creates the object) and returns the
 * new object; the inputs are left untouched. `kind` selects the strategic merge keys.
 */
export function applyPatch(contentType: string, original: JsonObject, body: unknown, kind: string): JsonObject {
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  switch (mediaType) {
    case 'application/json-patch+json':
      return patchedObject(applyJsonPatch(original, body));
    case 'application/merge-patch+json':
      return patchedObject(applyMergePatch(original, patchObject(body)));
    case 'application/strategic-merge-patch+json':
      return applyStrategicMergePatch(original, patchObject(body), kind);
    case 'application/apply-patch+yaml':
      return applyServerSideApply(original, body, kind);
    default:
      throw new PatchError(
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: ${PATCH_CONTENT_TYPES.join(', ')}`,
      );
  }
}

function patchObject(body: unknown): JsonObject {
  if (!isObject(body)) throw new PatchError('BadRequest', 'invalid JSON document: the patch must be a JSON object');
  return body;
}

function patchedObject(document: JsonValue): JsonObject {
  if (!isObject(document)) throw new PatchError('Invalid', 'the patched document is not a JSON object');
  return document;
}
