/**
 * `why sts/NAME`: the StatefulSet controller's core run on what the API holds now: the rollout's
 * condition (which ordinal it waits on, on which revision, and why) and the next steps it would take.
 */

import { selectorFromLabelSelector } from '../../src/api/labels.ts';
import type { Naming } from '../../src/api/naming.ts';
import type { PersistentVolumeClaim } from '../../src/api/types/core.ts';
import type { ControllerRevision, Pod, StatefulSet } from '../../src/api/types/index.ts';
import { CONTROLLER_MANAGER_FEATURES } from '../../src/config/features.ts';
import { type WhyAnswer, type WhyAnswerer, WhyNotFound } from '../../src/controller/why.ts';
import { claimPods, claimRevisions } from './adoption.ts';
import { type Action, CONDITION_TYPE, planSync, recoveryEnabled, type SyncPlan } from './core.ts';
import { readyCondition, revisionOf } from './pods.ts';

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

/** Why the pod itself is not Ready, from what its node reported: its Ready condition and its waiting containers. */
function podNotReady(pod: Pod): string[] {
  const ready = readyCondition(pod);
  const lines = ready?.reason ? [`${pod.metadata.name}: ${ready.reason}: ${ready.message ?? ''}`.trimEnd()] : [];
  for (const c of pod.status?.containerStatuses ?? []) {
    const waiting = c.state?.waiting;
    if (waiting?.reason)
      lines.push(`${pod.metadata.name} container ${c.name}: ${waiting.reason}, restarted ${c.restartCount} time(s)`);
  }
  return lines;
}

/**
 * What unblocks a rollout held by a pod that is not Ready: a fixed or reverted template alone does not, since
 * the controller waits on that pod before it updates anything (the reference's behaviour), so the pod has to go.
 */
export function unblockHint(n: Naming, set: StatefulSet, plan: SyncPlan, pod: Pod): string {
  const name = pod.metadata.name;
  const sts = `sts/${set.metadata.name}`;
  const annotate = `kubectl annotate ${sts} ${n.annotations.statefulSetRecovery}=true`;
  if (revisionOf(pod) !== plan.updateRevision) {
    const or = recoveryEnabled(n, set)
      ? ''
      : `; or \`${annotate}\` and the controller replaces it if it was never Ready`;
    return `to unblock: delete pod ${name} (revision ${revisionOf(pod) || 'none'}, no longer the template): it is recreated at revision ${plan.updateRevision}${or}`;
  }
  return `to unblock: fix the template or revert it (kubectl rollout undo ${sts}), then delete pod ${name}, which the rollout waits on until it is Ready; or revert and \`${annotate}\` so that the controller replaces it`;
}

/** The answer for one set from the core's plan (pure: table-tested); `pods` are the set's own. */
export function explainStatefulSet(set: StatefulSet, plan: SyncPlan, pods: Pod[] = [], n?: Naming): WhyAnswer {
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
  // The pod a not-Ready wait names (`waiting for web-4 (revision ...)`): why it is not Ready, and what unblocks it.
  const stuck =
    condition?.reason === 'PodNotReady'
      ? pods.find((p) => condition.message?.startsWith(`waiting for ${p.metadata.name} (`))
      : undefined;
  if (stuck) details.push(...podNotReady(stuck));
  if (stuck && n) details.push(unblockHint(n, set, plan, stuck));
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
    const enabled = src.features ?? ((g: string) => CONTROLLER_MANAGER_FEATURES[g]?.default ?? false);
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
    return explainStatefulSet(set, plan, pods.owned, src.naming);
  },
};
