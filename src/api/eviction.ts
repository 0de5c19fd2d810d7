/**
 * What an eviction (`POST .../pods/{name}/eviction`, policy/v1) of a pod gets under its PodDisruptionBudgets
 * (reference notes §2), decided purely: which pods skip the budget, which PDBs match, what an unready pod needs,
 * `checkAndDecrement`, and the refusals in the reference's words. Shared: the embedded plane's eviction
 * subresource acts on these decisions, the disruption controller's `why` explains them.
 */
import { rfc3339 } from '../util/time.ts';
import { DISRUPTION_ALLOWED, INSUFFICIENT_PODS, SYNC_FAILED } from './disruption-conditions.ts';
import { selectorFromLabelSelector } from './labels.ts';
import type { Condition, LabelSelector, StatusDetails } from './meta.ts';
import type { Pod } from './types/core.ts';
import type { PodDisruptionBudget } from './types/policy.ts';

/** Evictions are refused once `status.disruptedPods` holds more than this many entries. */
export const MAX_DISRUPTED_POD_SIZE = 2000;
/** Retry-After of "still being processed" and of "too many conflicts". */
export const STILL_PROCESSING_RETRY_AFTER_SECONDS = 10;

export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';
export const EVICTION_REFUSED_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";
export const MULTIPLE_PDBS_MESSAGE =
  'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';

/** A refused eviction as the reference answers it: the Status's code, reason, message and details. */
export interface Refusal {
  code: 403 | 429;
  reason: 'Forbidden' | 'TooManyRequests';
  message: string;
  details: StatusDetails;
}

/** Condition `Ready` with status `True` (phase is not looked at). */
export function isPodReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Pending, finished and terminating pods are deleted without consulting any budget. */
export function canIgnorePdb(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || Boolean(pod.metadata.deletionTimestamp);
}

/** The PDBs of the pod's namespace that select it: `{}` selects all, null none, an invalid selector is skipped. */
export function matchingPdbs(pod: Pod, pdbs: readonly PodDisruptionBudget[]): PodDisruptionBudget[] {
  return pdbs.filter((pdb) => {
    if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
    try {
      return selectorFromLabelSelector(pdb.spec?.selector as LabelSelector | null | undefined).matches(
        pod.metadata.labels,
      );
    } catch {
      return false;
    }
  });
}

/**
 * What evicting a pod that is not Ready takes under the PDB's `unhealthyPodEvictionPolicy`:
 * `guarded` (delete without spending the budget, pinned to the pod's resourceVersion), `budget`
 * (spend a disruption like a Ready pod), or `refuse` (an unrecognized policy, spec §2.8).
 */
export function unhealthyPodDecision(pdb: PodDisruptionBudget): 'guarded' | 'budget' | 'refuse' {
  const policy = pdb.spec?.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget';
  if (policy === 'AlwaysAllow') return 'guarded';
  if (policy !== 'IfHealthyBudget') return 'refuse';
  const status = pdb.status ?? {};
  const desired = status.desiredHealthy ?? 0;
  return (status.currentHealthy ?? 0) >= desired && desired > 0 ? 'guarded' : 'budget';
}

/** 429 with one DisruptionBudget cause. */
function tooManyRequests(cause: string, retryAfterSeconds?: number): Refusal {
  return {
    code: 429,
    reason: 'TooManyRequests',
    message: EVICTION_REFUSED_MESSAGE,
    details: {
      causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: cause }],
      ...(retryAfterSeconds !== undefined && { retryAfterSeconds }),
    },
  };
}

/** 429 "still being processed", Retry-After 10 s. */
export function stillBeingProcessed(pdbName: string): Refusal {
  return tooManyRequests(
    `The disruption budget ${pdbName} is still being processed by the server.`,
    STILL_PROCESSING_RETRY_AFTER_SECONDS,
  );
}

/**
 * Why a budget with no disruption left refuses, as the reference words it: a failed sync first (its counts are not
 * to be trusted), then "needs D and has C" while the healthy pods are not above the desired, then the condition's own
 * reason, else nothing more (e.g. right after an eviction spent the last disruption, before the controller recounts).
 */
export function exhaustedBudgetCause(pdb: PodDisruptionBudget): string {
  const s = pdb.status ?? {};
  const name = pdb.metadata.name;
  const condition = s.conditions?.find((c) => c.type === DISRUPTION_ALLOWED);
  const explained = condition?.status === 'False' && Boolean(condition.message);
  if (explained && condition?.reason === SYNC_FAILED) {
    return `The disruption budget ${name} does not allow evicting pods currently because it failed sync: ${condition.message}`;
  }
  if ((s.currentHealthy ?? 0) <= (s.desiredHealthy ?? 0)) {
    return `The disruption budget ${name} needs ${s.desiredHealthy ?? 0} healthy pods and has ${s.currentHealthy ?? 0} currently`;
  }
  if (explained) {
    return `The disruption budget ${name} does not allow evicting pods currently (${condition?.reason}): ${condition?.message}`;
  }
  return `The disruption budget ${name} does not allow evicting pods currently`;
}

/** 429 for a budget with no disruption left, without Retry-After. */
export function budgetExhausted(pdb: PodDisruptionBudget): Refusal {
  return tooManyRequests(exhaustedBudgetCause(pdb));
}

/** 429 for a pod that is not Ready under a policy this server does not know: unhealthy pods are not evicted. */
export function unrecognizedPolicy(pdb: PodDisruptionBudget): Refusal {
  const policy = String(pdb.spec?.unhealthyPodEvictionPolicy);
  return tooManyRequests(
    `The disruption budget ${pdb.metadata.name} has an unrecognized unhealthyPodEvictionPolicy ${JSON.stringify(policy)}; pods that are not Ready are not evicted under it`,
  );
}

/** The reference's 403 on the budget (`poddisruptionbudget.policy`), with a cause saying the same in its words. */
function forbidden(pdbName: string, why: string, cause: string): Refusal {
  return {
    code: 403,
    reason: 'Forbidden',
    message: `poddisruptionbudget.policy "${pdbName}" is forbidden: ${why}`,
    details: {
      name: pdbName,
      group: 'policy',
      kind: 'poddisruptionbudget',
      causes: [
        {
          reason: DISRUPTION_BUDGET_CAUSE,
          message: `The disruption budget ${pdbName} does not allow evicting pods currently: ${cause}`,
        },
      ],
    },
  };
}

function setCondition(conditions: readonly Condition[], next: Condition, now: string): Condition[] {
  const i = conditions.findIndex((c) => c.type === next.type);
  if (i < 0) return [...conditions, { ...next, lastTransitionTime: now }];
  const old = conditions[i];
  const out = [...conditions];
  out[i] = { ...old, ...next, lastTransitionTime: old.status === next.status ? old.lastTransitionTime : now };
  return out;
}

/** What an eviction of the pod would get now, decided as the plane's `evictPod` decides it, with nothing written. */
export type EvictionVerdict =
  | {
      allowed: true;
      why: 'ignores budgets' | 'no budget' | 'unhealthy pod policy' | 'budget';
      pdb?: PodDisruptionBudget;
    }
  | { allowed: false; message: string; causes: string[]; pdb?: PodDisruptionBudget };

export function evictionVerdict(pod: Pod, pdbs: readonly PodDisruptionBudget[], now: Date): EvictionVerdict {
  if (canIgnorePdb(pod)) return { allowed: true, why: 'ignores budgets' };
  const matched = matchingPdbs(pod, pdbs);
  if (matched.length > 1) return { allowed: false, message: MULTIPLE_PDBS_MESSAGE, causes: [] };
  const pdb = matched[0];
  if (!pdb) return { allowed: true, why: 'no budget' };
  const refused = (r: Refusal): EvictionVerdict => ({
    allowed: false,
    message: r.message,
    causes: (r.details.causes ?? []).map((c) => c.message ?? ''),
    pdb,
  });
  const need = isPodReady(pod) ? 'budget' : unhealthyPodDecision(pdb);
  if (need === 'refuse') return refused(unrecognizedPolicy(pdb));
  if (need === 'guarded') return { allowed: true, why: 'unhealthy pod policy', pdb };
  const outcome = checkAndDecrement(pdb, pod.metadata.name ?? '', now, true);
  return 'refusal' in outcome ? refused(outcome.refusal) : { allowed: true, why: 'budget', pdb };
}

/**
 * `checkAndDecrement` (§2.2): the refusal, or the PDB with one disruption spent (condition
 * False/InsufficientPods when it reaches 0) and, unless `dryRun`, the pod recorded in disruptedPods.
 */
export function checkAndDecrement(
  pdb: PodDisruptionBudget,
  podName: string,
  now: Date,
  dryRun: boolean,
): { refusal: Refusal } | { pdb: PodDisruptionBudget } {
  const status = pdb.status ?? {};
  const name = pdb.metadata.name ?? '';
  const allowed = status.disruptionsAllowed ?? 0;
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) return { refusal: stillBeingProcessed(name) };
  if (allowed < 0) {
    return { refusal: forbidden(name, 'pdb disruptions allowed is negative', 'pdb disruptions allowed is negative') };
  }
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
    return {
      refusal: forbidden(
        name,
        'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
        'too many pending evictions not confirmed by PDB controller',
      ),
    };
  }
  if (allowed === 0) return { refusal: budgetExhausted(pdb) };
  const stamp = rfc3339(now);
  const next = { ...status, disruptionsAllowed: allowed - 1 };
  if (next.disruptionsAllowed === 0) {
    next.conditions = setCondition(
      status.conditions ?? [],
      {
        type: DISRUPTION_ALLOWED,
        status: 'False',
        reason: INSUFFICIENT_PODS,
        message: '',
        observedGeneration: status.observedGeneration ?? 0,
      },
      stamp,
    );
  }
  if (!dryRun) next.disruptedPods = { ...(status.disruptedPods ?? {}), [podName]: stamp };
  return { pdb: { ...pdb, status: next } };
}
