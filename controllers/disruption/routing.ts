/**
 * Event routing without scans: the index values that connect pods and PDBs through their labels, the
 * exact pod-to-PDB match behind them, and the stale `DisruptionTarget` check (reference notes §1.1, §1.9).
 *
 * Pods are filed under `<namespace>/<key>=<value>` for each of their labels. A PDB is filed under the
 * values one of its requirements pins (the first `key=value`, or every value of the first one-key `In`),
 * or under `<namespace>/*` when no requirement pins a value (`{}`, Exists, NotIn ...). A pod can only
 * match a PDB filed under one of its own label values or under the wildcard, and a PDB can only match
 * pods filed under its values; the exact selector decides among those candidates.
 */
import { DISRUPTION_TARGET } from '../../src/api/disruption-conditions.ts';
import type { Selector } from '../../src/api/labels.ts';
import type { LabelSelector } from '../../src/api/meta.ts';
import type { Pod, PodCondition } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import { STALE_POD_DISRUPTION_TIMEOUT_MS, TERMINATION_BY_KUBELET } from './constants.ts';
import { isTerminating, parsedSelector } from './core.ts';

export const POD_LABEL_INDEX = 'disruption/pod-labels';
export const PDB_SELECTOR_INDEX = 'disruption/pdb-selector';

const WILDCARD = '*';

export function labelValueKey(namespace: string, key: string, value: string): string {
  return `${namespace}/${key}=${value}`;
}

export function wildcardKey(namespace: string): string {
  return `${namespace}/${WILDCARD}`;
}

/** Index values of a pod: one per label. */
export function podIndexValues(pod: Pod): string[] {
  const ns = pod.metadata.namespace ?? '';
  return Object.entries(pod.metadata.labels ?? {}).map(([k, v]) => labelValueKey(ns, k, v));
}

/** The selector of a PDB, or undefined when it matches nothing (null) or cannot be read (invalid). */
export function pdbSelector(pdb: PodDisruptionBudget): Selector | undefined {
  if (pdb.spec?.selector == null) return undefined;
  try {
    return parsedSelector(pdb.spec.selector as LabelSelector);
  } catch {
    return undefined;
  }
}

/** Index values of a PDB: the pinned label values, the namespace wildcard, or none (matches nothing). */
export function pdbIndexValues(pdb: PodDisruptionBudget): string[] {
  const selector = pdbSelector(pdb);
  if (!selector) return [];
  const ns = pdb.metadata.namespace ?? '';
  const pinned = selector.requirements.find((r) => r.operator === '=' || r.operator === '==');
  if (pinned) return [labelValueKey(ns, pinned.key, pinned.values[0])];
  const set = selector.requirements.find((r) => r.operator === 'in');
  if (set) return set.values.map((v) => labelValueKey(ns, set.key, v));
  return [wildcardKey(ns)];
}

/** Whether the PDB selects the pod (same namespace, valid selector that matches its labels). */
export function pdbMatchesPod(pdb: PodDisruptionBudget, pod: Pod): boolean {
  if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
  return pdbSelector(pdb)?.matches(pod.metadata.labels) ?? false;
}

/** The PDBs, among candidates filed under the pod's index values, that select the pod. */
export function pdbsForPod(
  pod: Pod,
  byIndex: (value: string) => readonly PodDisruptionBudget[],
): PodDisruptionBudget[] {
  const ns = pod.metadata.namespace ?? '';
  const seen = new Set<string>();
  const out: PodDisruptionBudget[] = [];
  for (const value of [...podIndexValues(pod), wildcardKey(ns)]) {
    for (const pdb of byIndex(value)) {
      const name = pdb.metadata.name ?? '';
      if (seen.has(name)) continue;
      seen.add(name);
      if (pdbMatchesPod(pdb, pod)) out.push(pdb);
    }
  }
  return out.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}

/**
 * Where the pods that may match a PDB are: under its pinned index values, in the whole namespace
 * (`'namespace'`) for a wildcard PDB, nowhere (`[]`) for a PDB that matches nothing.
 */
export function candidateIndexValues(pdb: PodDisruptionBudget): string[] | 'namespace' {
  const values = pdbIndexValues(pdb);
  if (values.length === 1 && values[0] === wildcardKey(pdb.metadata.namespace ?? '')) return 'namespace';
  // An invalid selector has no index values, but its sync must still fail visibly: the core reports it.
  return values;
}

export function multiplePdbsNote(pod: Pod, pdbs: readonly PodDisruptionBudget[]): string {
  const names = pdbs.map((p) => p.metadata.name).join(', ');
  return (
    `Pod ${pod.metadata.namespace}/${pod.metadata.name} matches multiple PodDisruptionBudgets (${names}). ` +
    'Every one of them counts it, and the eviction API refuses to evict it.'
  );
}

// ---------------------------------------------------------------------------------------------
// Stale DisruptionTarget conditions

function disruptionTarget(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === DISRUPTION_TARGET);
}

/**
 * §1.9: milliseconds until a non-terminating pod's `DisruptionTarget=True` condition is stale (0: now),
 * or undefined when it has none that can be (absent, not True, set by the kubelet, or a finished pod).
 */
export function staleDisruptionWait(pod: Pod, nowMs: number): number | undefined {
  if (isTerminating(pod)) return undefined;
  const c = disruptionTarget(pod);
  if (c?.status !== 'True' || c.reason === TERMINATION_BY_KUBELET) return undefined;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const since = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : 0;
  const age = nowMs - (Number.isNaN(since) ? 0 : since);
  return Math.max(0, STALE_POD_DISRUPTION_TIMEOUT_MS - age);
}

/** The pod status with `DisruptionTarget` replaced by `{status: False}` (reason and message cleared). */
export function clearedDisruptionTarget(pod: Pod, now: string): NonNullable<Pod['status']> {
  const conditions = (pod.status?.conditions ?? []).map((c) =>
    c.type === DISRUPTION_TARGET ? { type: DISRUPTION_TARGET, status: 'False' as const, lastTransitionTime: now } : c,
  );
  return { ...(pod.status ?? {}), conditions };
}
