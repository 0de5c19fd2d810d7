import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/meta.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import { planSync } from './core.ts';
import { NoopSyncs, type WorkloadRead } from './noop.ts';
import { at, NOW, pdb, pod, ref, workload, workloads } from './testing.ts';

const KEY = 'ns/budget';
const rs = workload('ReplicaSet', 'web', 3);
const pods = ['a', 'b', 'c'].map((name) => pod(name, { ready: true, owner: ref('ReplicaSet', 'web') }));

/** Syncs as the reconciler does: the plan, with the workload reads recorded; remembered when a no-op. */
function sync(noops: NoopSyncs, budget: PodDisruptionBudget, candidates: Pod[], objects: KubeObject[] = [rs]) {
  const view = workloads(objects);
  const reads: WorkloadRead[] = [];
  const plan = planSync({
    pdb: budget,
    candidates,
    nowMs: NOW,
    workloads: {
      ...view,
      get: (kind, namespace, name) => {
        const found = view.get(kind, namespace, name);
        reads.push({ kind, namespace, name, found });
        return found;
      },
    },
  });
  noops.record(KEY, plan, { pdb: budget, candidates, reads });
  return plan;
}

/** A budget whose status is already what a sync over `pods` and `rs` computes. */
function settled(spec: Record<string, unknown> = { maxUnavailable: 1 }): PodDisruptionBudget {
  const fresh = pdb(spec);
  const { status } = planSync({ pdb: fresh, candidates: pods, workloads: workloads([rs]), nowMs: NOW });
  return { ...fresh, status };
}

const read = (objects: KubeObject[]) => workloads(objects).get;

describe('NoopSyncs', () => {
  it('skips a sync over the very objects of the last no-op, and no other', () => {
    const noops = new NoopSyncs();
    const budget = settled();
    expect(sync(noops, budget, pods).status).toBeUndefined();
    expect(noops.unchanged(KEY, budget, [...pods], read([rs]))).toBe(true);

    const cases: Array<[string, PodDisruptionBudget, Pod[], KubeObject[]]> = [
      ['the budget replaced by an equal copy', { ...budget }, pods, [rs]],
      ['a pod replaced by an equal copy', budget, [pods[0], pods[1], { ...pods[2] }], [rs]],
      ['a pod fewer', budget, pods.slice(0, 2), [rs]],
      ['a pod more', budget, [...pods, pod('d', { ready: true })], [rs]],
      ['the ReplicaSet replaced (a scale change)', budget, pods, [workload('ReplicaSet', 'web', 4)]],
      ['the ReplicaSet gone', budget, pods, []],
    ];
    for (const [what, b, candidates, objects] of cases) {
      expect(noops.unchanged(KEY, b, candidates, read(objects)), what).toBe(false);
    }
  });

  it('remembers nothing of a sync that writes, warns or must be rechecked', () => {
    const noops = new NoopSyncs();
    const stale = pdb({ maxUnavailable: 1 });
    expect(sync(noops, stale, pods).status).toBeDefined();
    expect(noops.unchanged(KEY, stale, pods, read([rs]))).toBe(false);

    // A young disruptedPods entry keeps its status but sets a recheck time: the clock matters.
    const young = settled();
    const recorded = { ...young, status: { ...young.status, disruptedPods: { a: at(-1000) } } };
    const withEntry = { ...recorded, status: sync(noops, recorded, pods).status ?? recorded.status };
    const plan = sync(noops, withEntry, pods);
    expect(plan.recheckAtMs).toBeDefined();
    expect(noops.unchanged(KEY, withEntry, pods, read([rs]))).toBe(false);

    // No matching pods: an event each time.
    const empty = settled();
    expect(sync(noops, empty, []).events.length).toBeGreaterThan(0);
    expect(noops.unchanged(KEY, empty, [], read([rs]))).toBe(false);
  });

  it('forgets a budget on request', () => {
    const noops = new NoopSyncs();
    const budget = settled();
    sync(noops, budget, pods);
    noops.forget(KEY);
    expect(noops.unchanged(KEY, budget, pods, read([rs]))).toBe(false);
  });
});
