/**
 * Which lists a strategic merge patch merges instead of replacing, per kind: the `patchStrategy` and
 * `patchMergeKey` markers of the kind's structural schema (`src/api/schema.ts`), as the Go API types carry
 * them as struct tags. Every other list is atomic.
 */
import { type Node, schemaFor } from '../../api/schema.ts';

export interface ListStrategy {
  /** Field that identifies an element in a list of objects. */
  mergeKey?: string;
  /** A list of primitives merged as a set. */
  primitiveSet?: boolean;
}

/** Kinds without a schema still merge their metadata lists (ownerReferences, finalizers). */
const METADATA_ONLY: Node = { object: { metadata: fieldOf(schemaFor('Namespace'), 'metadata') } };

/**
 * How a list at `path` (field names only, list indices removed) of an object of `kind` merges;
 * undefined means the list is atomic and a patch replaces it whole.
 */
export function listStrategy(kind: string, path: string[]): ListStrategy | undefined {
  let node: Node = schemaFor(kind) ?? METADATA_ONLY;
  for (const field of path) node = fieldOf(node, field);
  if (typeof node !== 'object' || !('list' in node) || node.patchStrategy !== 'merge') return undefined;
  return node.patchMergeKey ? { mergeKey: node.patchMergeKey } : { primitiveSet: true };
}

/** A field of an object schema, looking through lists and maps to their items; `'any'` when unknown. */
function fieldOf(node: Node | undefined, field: string): Node {
  let item = node ?? 'any';
  while (typeof item === 'object' && ('list' in item || 'map' in item)) item = 'list' in item ? item.list : item.map;
  return typeof item === 'object' && 'object' in item && Object.hasOwn(item.object, field) ? item.object[field] : 'any';
}
