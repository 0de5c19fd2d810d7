/**
 * `POST .../pods/{name}/eviction` (policy/v1 Eviction): deletes a pod unless that would spend more
 * disruption than its PodDisruptionBudget allows (reference notes §2).
 *
 * Three layers: pure decisions (which pods skip the budget, which PDBs match, what an unready pod
 * needs, `checkAndDecrement`), the procedure that strings them together with the reference's retry
 * loops over an `EvictionStore` (so tests can inject conflicts), and the handler that binds the
 * store to the embedded control plane's storage.
 *
 * The control plane's storage is synchronous: reading the PDB, deciding and writing its status
 * happen without yielding, so parallel evictions of one budget are serialized by the event loop, and
 * the resourceVersion precondition still guards the write against anything that slipped in.
 */
import { selectorFromLabelSelector } from '../api/labels.ts';
import type { Condition, KubeObject, LabelSelector, Status } from '../api/meta.ts';
import { objectKey } from '../api/meta.ts';
import type { Pod, PodCondition } from '../api/types/core.ts';
import type { PodDisruptionBudget } from '../api/types/policy.ts';
import { rfc3339 } from '../util/time.ts';
import type { UserInfo } from './admission.ts';
import type { ApiServer, DeleteOptions, Reply, RequestBody, SubresourceHandler } from './api.ts';
import { decodeKindBody } from './decode.ts';
import { ApiError, badRequest, conflict, forbidden, invalidOptions, methodNotAllowed } from './errors.ts';
import { parseWriteOptions } from './options.ts';
import type { ResourceRequest } from './request-info.ts';

// ---------------------------------------------------------------------------------------------
// Constants (reference notes §0 and §2)

/** Evictions are refused once `status.disruptedPods` holds more than this many entries. */
export const MAX_DISRUPTED_POD_SIZE = 2000;
/** `EvictionsRetry`: 20 attempts, 500 ms apart (factor 1), 10 % jitter; on conflicts only. */
export const EVICTIONS_RETRY = { steps: 20, durationMs: 500, jitter: 0.1 } as const;
/** Retry-After of "still being processed" and of "too many conflicts". */
export const STILL_PROCESSING_RETRY_AFTER_SECONDS = 10;

export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';
export const EVICTION_REFUSED_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";
export const MULTIPLE_PDBS_MESSAGE =
  'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
export const NAME_MISMATCH_MESSAGE = 'name in URL does not match name in Eviction object';

export const DISRUPTION_TARGET = 'DisruptionTarget';
export const EVICTION_BY_EVICTION_API = 'EvictionByEvictionAPI';
export const EVICTION_CONDITION_MESSAGE = 'Eviction API: evicting';

const DISRUPTION_ALLOWED = 'DisruptionAllowed';
const INSUFFICIENT_PODS = 'InsufficientPods';
const SYNC_FAILED = 'SyncFailed';
const PDB_RESOURCE = { group: 'policy', plural: 'poddisruptionbudget' };
const POD_RESOURCE = { group: '', plural: 'Pod' };

// ---------------------------------------------------------------------------------------------
// Pure decisions

export function isPodReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Pending, finished and terminating pods are deleted without consulting any budget. */
export function canIgnorePdb(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || Boolean(pod.metadata.deletionTimestamp);
}

/** Whether a budget-free deletion pins the pod's resourceVersion (not for finished or terminating pods). */
export function shouldEnforceResourceVersion(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
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

/** 429 "still being processed", Retry-After 10 s. */
export function stillBeingProcessed(pdbName: string): ApiError {
  return new ApiError(429, 'TooManyRequests', EVICTION_REFUSED_MESSAGE, {
    causes: [
      {
        reason: DISRUPTION_BUDGET_CAUSE,
        message: `The disruption budget ${pdbName} is still being processed by the server.`,
      },
    ],
    retryAfterSeconds: STILL_PROCESSING_RETRY_AFTER_SECONDS,
  });
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
export function budgetExhausted(pdb: PodDisruptionBudget): ApiError {
  return new ApiError(429, 'TooManyRequests', EVICTION_REFUSED_MESSAGE, {
    causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: exhaustedBudgetCause(pdb) }],
  });
}

/** 429 for a pod that is not Ready under a policy this server does not know: unhealthy pods are not evicted. */
export function unrecognizedPolicy(pdb: PodDisruptionBudget): ApiError {
  const policy = String(pdb.spec?.unhealthyPodEvictionPolicy);
  return new ApiError(429, 'TooManyRequests', EVICTION_REFUSED_MESSAGE, {
    causes: [
      {
        reason: DISRUPTION_BUDGET_CAUSE,
        message: `The disruption budget ${pdb.metadata.name} has an unrecognized unhealthyPodEvictionPolicy ${JSON.stringify(policy)}; pods that are not Ready are not evicted under it`,
      },
    ],
  });
}

/** 504 after 20 write conflicts on the PDB. */
export function tooManyConflicts(pdbName: string): ApiError {
  return new ApiError(
    504,
    'Timeout',
    `Timeout: couldn't update PodDisruptionBudget ${JSON.stringify(pdbName)} due to conflicts`,
    { retryAfterSeconds: STILL_PROCESSING_RETRY_AFTER_SECONDS },
  );
}

function setCondition(conditions: readonly Condition[], next: Condition, now: string): Condition[] {
  const i = conditions.findIndex((c) => c.type === next.type);
  if (i < 0) return [...conditions, { ...next, lastTransitionTime: now }];
  const old = conditions[i];
  const out = [...conditions];
  out[i] = { ...old, ...next, lastTransitionTime: old.status === next.status ? old.lastTransitionTime : now };
  return out;
}

/** What an eviction of the pod would get now, decided as `evictPod` decides it, with nothing written. */
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
  const refused = (err: ApiError): EvictionVerdict => ({
    allowed: false,
    message: err.message,
    causes: (err.details?.causes ?? []).map((c) => c.message ?? ''),
    pdb,
  });
  const need = isPodReady(pod) ? 'budget' : unhealthyPodDecision(pdb);
  if (need === 'refuse') return refused(unrecognizedPolicy(pdb));
  if (need === 'guarded') return { allowed: true, why: 'unhealthy pod policy', pdb };
  const outcome = checkAndDecrement(pdb, pod.metadata.name ?? '', now, true);
  return 'error' in outcome ? refused(outcome.error) : { allowed: true, why: 'budget', pdb };
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
): { error: ApiError } | { pdb: PodDisruptionBudget } {
  const status = pdb.status ?? {};
  const name = pdb.metadata.name ?? '';
  const allowed = status.disruptionsAllowed ?? 0;
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) return { error: stillBeingProcessed(name) };
  // The reference's 403s carry a cause saying the same in the budget's words.
  const refusedBecause = (why: string, cause: string) =>
    forbidden(PDB_RESOURCE, name, why, [
      {
        reason: DISRUPTION_BUDGET_CAUSE,
        message: `The disruption budget ${name} does not allow evicting pods currently: ${cause}`,
      },
    ]);
  if (allowed < 0) {
    return { error: refusedBecause('pdb disruptions allowed is negative', 'pdb disruptions allowed is negative') };
  }
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
    return {
      error: refusedBecause(
        'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
        'too many pending evictions not confirmed by PDB controller',
      ),
    };
  }
  if (allowed === 0) return { error: budgetExhausted(pdb) };
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

/** The pod with `DisruptionTarget=True` (EvictionByEvictionAPI), or undefined when it already has exactly that. */
export function withDisruptionTarget(pod: Pod, now: Date): Pod | undefined {
  const conditions = pod.status?.conditions ?? [];
  const wanted: PodCondition = {
    type: DISRUPTION_TARGET,
    status: 'True',
    reason: EVICTION_BY_EVICTION_API,
    message: EVICTION_CONDITION_MESSAGE,
  };
  const i = conditions.findIndex((c) => c.type === DISRUPTION_TARGET);
  const old = i < 0 ? undefined : conditions[i];
  if (old && old.status === wanted.status && old.reason === wanted.reason && old.message === wanted.message) {
    return undefined;
  }
  const next: PodCondition = {
    ...wanted,
    lastTransitionTime: old && old.status === wanted.status ? old.lastTransitionTime : rfc3339(now),
  };
  const updated = i < 0 ? [...conditions, next] : conditions.map((c, j) => (j === i ? next : c));
  return { ...pod, status: { ...(pod.status ?? {}), conditions: updated } };
}

// ---------------------------------------------------------------------------------------------
// The procedure

/** What the procedure reads and writes; the control plane binds it to its storage. */
export interface EvictionStore {
  now(): Date;
  getPod(namespace: string, name: string): Pod;
  listPdbs(namespace: string): PodDisruptionBudget[];
  getPdb(namespace: string, name: string): PodDisruptionBudget;
  /** Writes the PDB as given, its resourceVersion a precondition (409 Conflict when stale). */
  writePdbStatus(pdb: PodDisruptionBudget): Promise<void>;
  /** Writes the pod as given, its resourceVersion a precondition; returns the stored pod. */
  writePod(pod: Pod): Promise<Pod>;
  /** The normal pod delete (preconditions, grace period, dry run). */
  deletePod(namespace: string, name: string, options: DeleteOptions): Promise<void>;
  sleep(ms: number): Promise<void>;
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.reason === 'Conflict';
}

function retryDelay(): number {
  return EVICTIONS_RETRY.durationMs * (1 + Math.random() * EVICTIONS_RETRY.jitter);
}

function withResourceVersion(options: DeleteOptions, resourceVersion: string | undefined): DeleteOptions {
  return { ...options, preconditions: { ...(options.preconditions ?? {}), resourceVersion } };
}

function success(): Reply {
  const body: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  return { status: 201, body, warnings: [] };
}

/** §2.3: check the preconditions on the latest pod, mark it `DisruptionTarget`, then delete it. */
export async function addConditionAndDelete(
  store: EvictionStore,
  namespace: string,
  name: string,
  options: DeleteOptions,
): Promise<void> {
  let opts = options;
  if (!opts.dryRun) {
    const latest = store.getPod(namespace, name);
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== latest.metadata.uid) {
      throw conflict(
        POD_RESOURCE,
        name,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${latest.metadata.uid}). The object might have been deleted and then recreated`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== latest.metadata.resourceVersion) {
      throw conflict(
        POD_RESOURCE,
        name,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${latest.metadata.resourceVersion}). The object might have been modified`,
      );
    }
    const marked = withDisruptionTarget(latest, store.now());
    const stored = marked ? await store.writePod(marked) : latest;
    // We made the change, so the caller's pin moves to the version we wrote.
    if (pre.resourceVersion) opts = withResourceVersion(opts, stored.metadata.resourceVersion);
  }
  await store.deletePod(namespace, name, opts);
}

/**
 * §2.1: evicts `namespace/name`. Resolves with the reply (201 Success, or the 500 Status for several
 * budgets); throws the ApiError of a refusal.
 */
export async function evictPod(
  store: EvictionStore,
  namespace: string,
  name: string,
  options: DeleteOptions,
): Promise<Reply> {
  const callerPinned = Boolean(options.preconditions?.resourceVersion);
  // Budget-free deletions: retried on conflicts unless the caller pinned a resourceVersion.
  let pod: Pod;
  for (let attempt = 1; ; attempt++) {
    pod = store.getPod(namespace, name);
    if (!canIgnorePdb(pod)) break;
    const opts =
      shouldEnforceResourceVersion(pod) && !callerPinned
        ? withResourceVersion(options, pod.metadata.resourceVersion)
        : options;
    try {
      await addConditionAndDelete(store, namespace, name, opts);
      return success();
    } catch (err) {
      if (!isConflict(err) || callerPinned || attempt >= EVICTIONS_RETRY.steps) throw err;
      await store.sleep(retryDelay());
    }
  }

  const pdbs = matchingPdbs(pod, store.listPdbs(namespace));
  if (pdbs.length > 1) {
    const body: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: MULTIPLE_PDBS_MESSAGE,
      code: 500,
    };
    return { status: 500, body, warnings: [] };
  }
  let guarded = false;
  let pdbName = '';
  if (pdbs.length === 1) {
    let pdb = pdbs[0];
    pdbName = pdb.metadata.name ?? '';
    const need = isPodReady(pod) ? 'budget' : unhealthyPodDecision(pdb);
    if (need === 'refuse') throw unrecognizedPolicy(pdb);
    if (need === 'guarded') guarded = true;
    else {
      let spent = false;
      for (let attempt = 1; attempt <= EVICTIONS_RETRY.steps && !spent; attempt++) {
        if (attempt > 1) pdb = store.getPdb(namespace, pdbName);
        const outcome = checkAndDecrement(pdb, name, store.now(), options.dryRun);
        if ('error' in outcome) throw outcome.error;
        if (options.dryRun) break;
        try {
          await store.writePdbStatus(outcome.pdb);
          spent = true;
        } catch (err) {
          if (!isConflict(err)) throw err;
          if (attempt < EVICTIONS_RETRY.steps) await store.sleep(retryDelay());
        }
      }
      if (!spent && !options.dryRun) throw tooManyConflicts(pdbName);
    }
  }

  // A guarded deletion must not race the pod turning Ready: it is pinned to the version we judged.
  const opts = guarded ? withResourceVersion(options, pod.metadata.resourceVersion) : options;
  try {
    await addConditionAndDelete(store, namespace, name, opts);
  } catch (err) {
    if (isConflict(err) && guarded && !callerPinned) throw stillBeingProcessed(pdbName);
    throw err;
  }
  return success();
}

// ---------------------------------------------------------------------------------------------
// The handler

interface EvictionBody extends KubeObject {
  deleteOptions?: Record<string, unknown> & { dryRun?: unknown };
}

function decodeEviction(body: RequestBody | undefined): EvictionBody {
  return decodeKindBody(body, 'Eviction', ['policy/v1', 'policy/v1beta1']) as EvictionBody;
}

function goList(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}

/** The delete options of an eviction, with the request's dryRun merged in (the reference's `propagateDryRun`). */
function evictionDeleteOptions(api: ApiServer, query: URLSearchParams, eviction: EvictionBody): DeleteOptions {
  const metaGroup = api.naming.protocol.metaGroup;
  parseWriteOptions(query, 'CreateOptions', metaGroup);
  const { dryRun: rawDryRun, ...rest } = eviction.deleteOptions ?? {};
  const fromBody = Array.isArray(rawDryRun) ? rawDryRun.map(String) : [];
  const fromQuery = query.getAll('dryRun');
  if (fromBody.length && fromQuery.length && goList(fromBody) !== goList(fromQuery)) {
    throw badRequest(
      `DryRun in CreateOptions (${goList(fromQuery)}) and Eviction's DeleteOptions (${goList(fromBody)}) do not match`,
    );
  }
  const bad = fromBody.filter((v) => v !== 'All');
  if (bad.length) {
    throw invalidOptions(
      metaGroup,
      'DeleteOptions',
      bad.map((v) => ({
        type: 'FieldValueNotSupported',
        field: 'dryRun',
        message: `dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`,
      })),
    );
  }
  // The normal delete's option parsing validates the grace period and propagation policy up front,
  // so a bad option never spends the budget.
  const parsed = api.deleteOptions(new URLSearchParams(), {
    text: JSON.stringify(rest),
    contentType: 'application/json',
  });
  return { ...parsed, dryRun: fromBody.length > 0 || fromQuery.length > 0 };
}

/** The EvictionStore over the control plane's storage; the pod delete goes through the normal delete path. */
export function storageEvictionStore(api: ApiServer, req: ResourceRequest, user: UserInfo): EvictionStore {
  const podRt = req.rt;
  const pdbRt = api.registry.resource('policy', 'v1', 'poddisruptionbudgets');
  if (!pdbRt) throw new Error('the registry has no policy/v1 poddisruptionbudgets');
  return {
    now: () => api.options.now(),
    getPod: (namespace, name) => api.read(podRt, objectKey({ namespace, name })) as Pod,
    listPdbs: (namespace) => api.storage.list(pdbRt, namespace) as PodDisruptionBudget[],
    getPdb: (namespace, name) => api.read(pdbRt, objectKey({ namespace, name })) as PodDisruptionBudget,
    writePdbStatus: async (pdb) => {
      await api.storage.backend.update(pdbRt, pdb, pdb.metadata.resourceVersion);
    },
    writePod: async (pod) => (await api.storage.backend.update(podRt, pod, pod.metadata.resourceVersion)) as Pod,
    deletePod: async (namespace, name, options) => {
      const { dryRun, ...rest } = options;
      const query = new URLSearchParams(dryRun ? { dryRun: 'All' } : {});
      const body = { kind: 'DeleteOptions', apiVersion: 'v1', ...rest };
      await api.delete(
        { ...req, verb: 'delete', namespace, name, subresource: undefined },
        query,
        { text: JSON.stringify(body), contentType: 'application/json' },
        user,
      );
    },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

/** `api.subresourceHandlers.set('pods/eviction', evictionHandler)`. */
export const evictionHandler: SubresourceHandler = async (api, req, query, body, user) => {
  if (req.verb !== 'create') throw methodNotAllowed();
  const eviction = decodeEviction(body);
  if (eviction.metadata.name !== req.name) throw badRequest(NAME_MISMATCH_MESSAGE);
  if (eviction.metadata.namespace && eviction.metadata.namespace !== req.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const options = evictionDeleteOptions(api, query, eviction);
  // Admission first (NodeRestriction: a node evicts only its own pods), before any budget is spent.
  await api.admitSubresource(req, eviction, user, options.dryRun);
  return evictPod(storageEvictionStore(api, req, user), req.namespace ?? '', req.name ?? '', options);
};
