/**
 * `POST .../pods/{name}/eviction` (policy/v1 Eviction): deletes a pod unless that would spend more
 * disruption than its PodDisruptionBudget allows (reference notes §2).
 *
 * The pure decisions (which pods skip the budget, which PDBs match, what an unready pod needs,
 * `checkAndDecrement`) are src/api/eviction.ts's, shared with the disruption controller's `why`. Here:
 * the procedure that strings them together with the reference's retry loops over an `EvictionStore`
 * (so tests can inject conflicts), and the handler that binds the store to the embedded control
 * plane's storage.
 *
 * The control plane's storage is synchronous: reading the PDB, deciding and writing its status
 * happen without yielding, so parallel evictions of one budget are serialized by the event loop, and
 * the resourceVersion precondition still guards the write against anything that slipped in.
 */
import { DISRUPTION_TARGET } from '../api/disruption-conditions.ts';
import {
  canIgnorePdb,
  checkAndDecrement,
  isPodReady,
  MULTIPLE_PDBS_MESSAGE,
  matchingPdbs,
  type Refusal,
  STILL_PROCESSING_RETRY_AFTER_SECONDS,
  stillBeingProcessed,
  unhealthyPodDecision,
  unrecognizedPolicy,
} from '../api/eviction.ts';
import type { KubeObject, Status } from '../api/meta.ts';
import { objectKey } from '../api/meta.ts';
import type { Pod, PodCondition } from '../api/types/core.ts';
import type { PodDisruptionBudget } from '../api/types/policy.ts';
import { rfc3339 } from '../util/time.ts';
import type { UserInfo } from './admission.ts';
import type { ApiServer, DeleteOptions, Reply, RequestBody, SubresourceHandler } from './api.ts';
import { decodeKindBody } from './decode.ts';
import { ApiError, badRequest, conflict, invalidOptions, methodNotAllowed } from './errors.ts';
import { parseWriteOptions } from './options.ts';
import type { ResourceRequest } from './request-info.ts';

// ---------------------------------------------------------------------------------------------
// Constants (reference notes §0 and §2)

/** `EvictionsRetry`: 20 attempts, 500 ms apart (factor 1), 10 % jitter; on conflicts only. */
export const EVICTIONS_RETRY = { steps: 20, durationMs: 500, jitter: 0.1 } as const;

export const NAME_MISMATCH_MESSAGE = 'name in URL does not match name in Eviction object';

export const EVICTION_BY_EVICTION_API = 'EvictionByEvictionAPI';
export const EVICTION_CONDITION_MESSAGE = 'Eviction API: evicting';

const POD_RESOURCE = { group: '', plural: 'Pod' };

// ---------------------------------------------------------------------------------------------
// The procedure's own decisions and answers

/** Whether a budget-free deletion pins the pod's resourceVersion (not for finished or terminating pods). */
export function shouldEnforceResourceVersion(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
}

/** A budget's refusal, sent as the Status error it describes. */
function refusalError(r: Refusal): ApiError {
  return new ApiError(r.code, r.reason, r.message, r.details);
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
    if (need === 'refuse') throw refusalError(unrecognizedPolicy(pdb));
    if (need === 'guarded') guarded = true;
    else {
      let spent = false;
      for (let attempt = 1; attempt <= EVICTIONS_RETRY.steps && !spent; attempt++) {
        if (attempt > 1) pdb = store.getPdb(namespace, pdbName);
        const outcome = checkAndDecrement(pdb, name, store.now(), options.dryRun);
        if ('refusal' in outcome) throw refusalError(outcome.refusal);
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
    if (isConflict(err) && guarded && !callerPinned) throw refusalError(stillBeingProcessed(pdbName));
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
