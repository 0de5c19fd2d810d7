/**
 * When a write through the main resource bumps `metadata.generation`, as the reference's strategies decide: a
 * change outside metadata and status for every kind that has one; a Deployment also on an annotation change (its
 * annotations are copied to its ReplicaSets); an EndpointSlice on any change but metadata's, labels included (it
 * has no status, its generation tracks its whole content).
 */
import { jsonEqual } from '../util/equal.ts';

interface Written {
  metadata: { labels?: unknown; annotations?: unknown };
  status?: unknown;
  [field: string]: unknown;
}

export function generationChanged(kind: string, old: Written, next: Written): boolean {
  const { metadata: oldMeta, status: _s1, ...oldContent } = old;
  const { metadata: nextMeta, status: _s2, ...nextContent } = next;
  if (!jsonEqual(oldContent, nextContent)) return true;
  if (kind === 'Deployment') return !jsonEqual(oldMeta.annotations ?? {}, nextMeta.annotations ?? {});
  if (kind === 'EndpointSlice') return !jsonEqual(oldMeta.labels ?? {}, nextMeta.labels ?? {});
  return false;
}
