/**
 * Skipping a resync that cannot change anything. A sync that found nothing to do (no status to write, no
 * event, no error, no recheck time) remembers the cached objects it read; a sync of the same budget over the
 * very same objects would find nothing to do again. The plan is a pure function of those objects and of the
 * clock, and the clock only matters through `disruptedPods` entries, which such a sync has none of (an entry
 * kept sets a recheck time; one dropped changes the status). Informer caches replace an object on every
 * change and never mutate it, so identity is a sound test of "unchanged".
 */
import type { KubeObject } from '../../src/api/meta.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import type { SyncPlan } from './core.ts';
import type { WorkloadKind } from './finders.ts';

/** A typed finder's read of a workload, and what it found. */
export interface WorkloadRead {
  kind: WorkloadKind;
  namespace: string;
  name: string;
  found: KubeObject | undefined;
}

/** The cached objects one sync read. */
export interface SyncInputs {
  pdb: PodDisruptionBudget;
  candidates: readonly Pod[];
  reads: readonly WorkloadRead[];
}

export type ReadWorkload = (kind: WorkloadKind, namespace: string, name: string) => KubeObject | undefined;

export function isNoop(plan: SyncPlan): boolean {
  return !plan.status && plan.error === undefined && plan.events.length === 0 && plan.recheckAtMs === undefined;
}

/** The inputs of each budget's last sync, kept only while that sync was a no-op. */
export class NoopSyncs {
  private readonly last = new Map<string, SyncInputs>();

  /** Keeps `inputs` when `plan` is a no-op; otherwise forgets the budget. */
  record(key: string, plan: SyncPlan, inputs: SyncInputs): void {
    if (isNoop(plan)) this.last.set(key, inputs);
    else this.last.delete(key);
  }

  forget(key: string): void {
    this.last.delete(key);
  }

  /** Whether the last sync of `key` was a no-op over exactly these objects (workloads read again through `read`). */
  unchanged(key: string, pdb: PodDisruptionBudget, candidates: readonly Pod[], read: ReadWorkload): boolean {
    const last = this.last.get(key);
    if (last?.pdb !== pdb) return false;
    if (last.candidates !== candidates) {
      if (last.candidates.length !== candidates.length) return false;
      for (let i = 0; i < candidates.length; i++) if (last.candidates[i] !== candidates[i]) return false;
    }
    return last.reads.every((r) => read(r.kind, r.namespace, r.name) === r.found);
  }
}
