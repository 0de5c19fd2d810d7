/**
 * `why sts/NAME`: the StatefulSet controller's core run on what the API holds now: the rollout's
 * condition (which ordinal it waits on, on which revision, and why) and the next steps it would take.
 */

import { selectorFromLabelSelector } from '../../src/api/labels.ts';
import type { PersistentVolumeClaim } from '../../src/api/types/core.ts';
import type { ControllerRevision, Pod, StatefulSet } from '../../src/api/types/index.ts';
import { type WhyAnswer, type WhyAnswerer, WhyNotFound } from '../../src/controller/why.ts';
import { DEFAULT_FEATURE_GATES } from '../../src/controlplane/validation/context.ts';
import { claimPods, claimRevisions } from './adoption.ts';
import { type Action, CONDITION_TYPE, planSync, type SyncPlan } from './core.ts';

function describeAction(a: Action): string | undefined {
  switch (a.kind) {
    case 'createPod':
      return `create pod ${a.pod.metadata.name}`;
    case 'deletePod':
      return `delete pod ${a.name}`;
    case 'updatePod':
      return `update the identity of pod ${a.pod.metadata.name}`;
    case 'createClaim':
      return `create claim ${a.claim.metadata.name} for pod ${a.pod}`;
    case 'createRevision':
      return `record revision ${a.revision.metadata.name}`;
    default:
      return undefined;
  }
}

/** The answer for one set from the core's plan (pure: table-tested). */
export function explainStatefulSet(set: StatefulSet, plan: SyncPlan): WhyAnswer {
  const s = plan.status;
  const condition = s.conditions?.find((c) => c.type === CONDITION_TYPE);
  const replicas = set.spec.replicas ?? 1;
  const details = [
    `${s.readyReplicas ?? 0} of ${replicas} ready, ${s.updatedReplicas ?? 0} at the update revision ${plan.updateRevision}, ${s.currentReplicas ?? 0} at the current revision ${plan.currentRevision}`,
  ];
  const next = plan.actions.map(describeAction).filter((t): t is string => t !== undefined);
  details.push(next.length ? `next: ${next.join(', ')}` : 'nothing to do until a pod changes');
  const stored = set.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
  if (!stored) details.push('the stored status has no rollout condition: is the StatefulSet controller running?');
  return {
    subject: `statefulset/${set.metadata.name}`,
    namespace: set.metadata.namespace,
    summary: condition ? `${condition.reason}: ${condition.message}` : 'no rollout condition',
    details,
  };
}

export const statefulSetWhy: WhyAnswerer = {
  names: ['statefulsets', 'statefulset', 'sts'],
  namespaced: true,
  async answer(src, namespace = 'default', name) {
    const set = await src.get<StatefulSet>('StatefulSet', namespace, name);
    if (!set) throw new WhyNotFound(`statefulsets.apps "${name}" not found in namespace ${namespace}`);
    const selector = selectorFromLabelSelector(set.spec.selector);
    const pods = claimPods(set, selector, await src.list<Pod>('Pod', namespace));
    const revisions = claimRevisions(
      set,
      selector,
      await src.list<ControllerRevision>('ControllerRevision', namespace),
    );
    const claims = await src.list<PersistentVolumeClaim>('PersistentVolumeClaim', namespace);
    const enabled = src.features ?? ((g: string) => DEFAULT_FEATURE_GATES[g] ?? false);
    const plan = planSync({
      naming: src.naming,
      set,
      pods: pods.owned,
      foreignPods: pods.foreign,
      claims: new Map(claims.map((c) => [c.metadata.name!, c])),
      revisions: revisions.owned,
      takenRevisionNames: new Set(revisions.foreign.map((r) => r.metadata.name!)),
      nowMs: src.now.getTime(),
      gates: { maxUnavailable: enabled('MaxUnavailableStatefulSet'), recreate: enabled('StatefulSetRecreateStrategy') },
    });
    return explainStatefulSet(set, plan);
  },
};
