/**
 * `why pdb/NAME` and `why pod/NAME`: the disruption controller's own core run on what the API holds now,
 * turned into plain words: where the expected, healthy and desired counts come from, and what an
 * eviction would get.
 */
import { type EvictionVerdict, evictionVerdict, isPodReady, matchingPdbs } from '../../src/api/eviction.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from '../../src/api/types/policy.ts';
import { type WhyAnswer, type WhyAnswerer, WhyNotFound, type WhySources } from '../../src/controller/why.ts';
import { DELETION_TIMEOUT_MS } from './constants.ts';
import { isTerminating, planSync, type SyncPlan, usesScale } from './core.ts';
import { controllerRefOf, findController, WORKLOAD_KINDS, type WorkloadKind, type Workloads } from './finders.ts';
import { lookupScale, prefetchScales } from './scales.ts';

/** Why a pod does not count as healthy, or undefined when it does. */
export function unhealthyReason(pod: Pod, disrupted: Record<string, string>, nowMs: number): string | undefined {
  if (isTerminating(pod)) return 'terminating';
  const name = pod.metadata.name ?? '';
  if (Object.hasOwn(disrupted, name)) {
    const until = Date.parse(disrupted[name]) + DELETION_TIMEOUT_MS;
    if (until > nowMs)
      return `being evicted (recorded ${disrupted[name]}; counted as disrupted until ${new Date(until).toISOString()})`;
  }
  if (isPodReady(pod)) return undefined;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const phase = pod.status?.phase ?? 'no phase';
  if (!ready) return `not Ready (${phase}, no Ready condition)`;
  const because = [ready.reason, ready.message].filter(Boolean).join(': ');
  return `not Ready (${phase}${because ? `, ${because}` : ''})`;
}

function describeMode(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus): string {
  const spec = pdb.spec ?? {};
  const expected = status.expectedPods ?? 0;
  if (spec.maxUnavailable != null) {
    return `maxUnavailable ${spec.maxUnavailable} of the ${expected} expected pods leaves ${status.desiredHealthy ?? 0} that must stay healthy`;
  }
  if (typeof spec.minAvailable === 'number') return `minAvailable ${spec.minAvailable}: that many must stay healthy`;
  if (spec.minAvailable != null) {
    return `minAvailable ${spec.minAvailable} of the ${expected} expected pods is ${status.desiredHealthy ?? 0} that must stay healthy`;
  }
  return 'neither minAvailable nor maxUnavailable is set: nothing is protected';
}

function describeExpected(pdb: PodDisruptionBudget, plan: SyncPlan, workloads: Workloads): string[] {
  if (!usesScale(pdb))
    return [
      `expected ${plan.pods.length}: the pods the selector matches (an integer minAvailable counts pods, not scales)`,
    ];
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const pod of plan.pods) {
    const ref = controllerRefOf(pod);
    if (!ref || seen.has(ref.uid)) continue;
    seen.add(ref.uid);
    const found = findController(ref, pod.metadata.namespace ?? '', workloads);
    if (found)
      lines.push(
        `${ref.kind}/${ref.name} asks for ${found.replicas} replicas (pod ${pod.metadata.name} belongs to it)`,
      );
  }
  const unmanaged = plan.pods.filter((p) => !controllerRefOf(p)).map((p) => p.metadata.name);
  if (unmanaged.length) lines.push(`not counted, no controller: ${unmanaged.join(', ')}`);
  return lines;
}

function describeEviction(verdict: EvictionVerdict, subject: string): string {
  if (verdict.allowed) {
    const how = {
      'ignores budgets': 'it is pending, finished or terminating, so no budget is consulted',
      'no budget': 'no budget covers it',
      'unhealthy pod policy':
        "it is not Ready and the budget's unhealthyPodEvictionPolicy lets it go without spending the budget",
      budget: `the budget ${verdict.pdb?.metadata.name} has a disruption to spend`,
    }[verdict.why];
    return `an eviction of ${subject} would be allowed now: ${how}`;
  }
  return `an eviction of ${subject} would be refused now: ${[verdict.message, ...verdict.causes].join(' ')}`;
}

/** The answer for one budget, from the core's plan (pure: table-tested). */
export function explainBudget(
  pdb: PodDisruptionBudget,
  plan: SyncPlan,
  workloads: Workloads,
  nowMs: number,
): WhyAnswer {
  const subject = `poddisruptionbudget/${pdb.metadata.name}`;
  const stored = pdb.status ?? {};
  const status = plan.status ?? stored;
  if (plan.error !== undefined) {
    return {
      subject,
      namespace: pdb.metadata.namespace,
      summary: `no disruption is allowed: the budget cannot be computed: ${plan.error}`,
      details: plan.events.map((e) => `${e.reason}: ${e.note}`),
    };
  }
  const allowed = status.disruptionsAllowed ?? 0;
  const healthy = status.currentHealthy ?? 0;
  const desired = status.desiredHealthy ?? 0;
  const details = [
    describeMode(pdb, status),
    ...describeExpected(pdb, plan, workloads),
    `healthy ${healthy} of the ${plan.pods.length} matched pods`,
  ];
  const disrupted = status.disruptedPods ?? {};
  for (const pod of plan.pods) {
    const reason = unhealthyReason(pod, disrupted, nowMs);
    if (reason) details.push(`pod ${pod.metadata.name} is not counted as healthy: ${reason}`);
  }
  if (plan.status && (stored.observedGeneration ?? 0) === (pdb.metadata.generation ?? 0)) {
    details.push(
      `the stored status is behind (says ${stored.disruptionsAllowed ?? 0} allowed, ${stored.currentHealthy ?? 0} healthy): the disruption controller has not written it yet`,
    );
  } else if (plan.status) {
    details.push('the stored status is for an older generation: evictions wait until the controller catches up');
  }
  const readyPod = plan.pods.find((p) => isPodReady(p) && !isTerminating(p));
  if (readyPod) {
    details.push(
      describeEviction(
        evictionVerdict(readyPod, [pdb], new Date(nowMs)),
        `a Ready pod such as ${readyPod.metadata.name}`,
      ),
    );
  }
  const summary =
    allowed > 0
      ? `${allowed} disruption${allowed === 1 ? '' : 's'} allowed: ${healthy} healthy, ${desired} must stay healthy`
      : `no disruption is allowed: ${healthy} healthy and ${desired} must stay healthy`;
  return { subject, namespace: pdb.metadata.namespace, summary, details };
}

/** The answer for one pod: the budgets that cover it and what an eviction would get (pure). */
export function explainPod(pod: Pod, pdbs: readonly PodDisruptionBudget[], nowMs: number): WhyAnswer {
  const verdict = evictionVerdict(pod, pdbs, new Date(nowMs));
  const covering = matchingPdbs(pod, pdbs);
  const details = covering.map((p) => {
    const s = p.status ?? {};
    return `covered by poddisruptionbudget/${p.metadata.name}: ${s.disruptionsAllowed ?? 0} allowed, ${s.currentHealthy ?? 0} healthy, ${s.desiredHealthy ?? 0} must stay healthy`;
  });
  const health = unhealthyReason(pod, {}, nowMs);
  details.unshift(health ? `the pod is ${health}` : 'the pod is Ready');
  return {
    subject: `pod/${pod.metadata.name}`,
    namespace: pod.metadata.namespace,
    summary: describeEviction(verdict, 'this pod').replace(/^an eviction of this pod would be /, 'eviction '),
    details,
  };
}

async function workloadsIn(src: WhySources, namespace: string): Promise<Map<WorkloadKind, Map<string, KubeObject>>> {
  const byKind = new Map<WorkloadKind, Map<string, KubeObject>>();
  for (const kind of WORKLOAD_KINDS) {
    const objects = await src.list(kind, namespace);
    byKind.set(kind, new Map(objects.map((o) => [o.metadata.name ?? '', o])));
  }
  return byKind;
}

export const budgetWhy: WhyAnswerer = {
  names: ['poddisruptionbudgets', 'poddisruptionbudget', 'pdb'],
  namespaced: true,
  async answer(src, namespace = 'default', name) {
    const pdb = await src.get<PodDisruptionBudget>('PodDisruptionBudget', namespace, name);
    if (!pdb) throw new WhyNotFound(`poddisruptionbudgets "${name}" not found in namespace ${namespace}`);
    const candidates = await src.list<Pod>('Pod', namespace);
    const typed = await workloadsIn(src, namespace);
    let generic = new Map<string, ReturnType<Workloads['scale']>>();
    const workloads: Workloads = {
      get: (kind, _ns, n) => typed.get(kind)?.get(n),
      scale: (ref) => generic.get(ref.uid) ?? { notFound: true },
    };
    if (usesScale(pdb))
      generic = await prefetchScales(pdb, candidates, workloads, (ref, ns) => lookupScale(src.client, ref, ns));
    const nowMs = src.now.getTime();
    return explainBudget(pdb, planSync({ pdb, candidates, workloads, nowMs }), workloads, nowMs);
  },
};

export const podWhy: WhyAnswerer = {
  names: ['pods', 'pod', 'po'],
  namespaced: true,
  async answer(src, namespace = 'default', name) {
    const pod = await src.get<Pod>('Pod', namespace, name);
    if (!pod) throw new WhyNotFound(`pods "${name}" not found in namespace ${namespace}`);
    return explainPod(pod, await src.list<PodDisruptionBudget>('PodDisruptionBudget', namespace), src.now.getTime());
  },
};
