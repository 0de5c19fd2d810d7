/**
 * The disruption controller (`disruption-controller`, alias `disruption`): keeps PodDisruptionBudget
 * status current from the pods the budgets select and the scales of the pods' controllers, so the
 * eviction subresource can spend the allowance. The decisions are in `core.ts`; this file wires the
 * informers, indexes and queue to them and performs the writes.
 *
 * One queue carries two kinds of keys: `<namespace>/<name>` syncs a PDB, `pod:<namespace>/<name>`
 * clears a stale `DisruptionTarget` pod condition. Two workers stand in for the reference's main and
 * stale-pod workers (its recheck worker only moves keys into the main queue; `addAfter` does that here).
 *
 * `ctx.config.nowMs` (a `() => number` of epoch milliseconds) replaces the wall clock, for tests.
 */

import { CONTROLLER_ACCOUNTS } from '../../src/api/controller-accounts.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { splitKey } from '../../src/api/meta.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from '../../src/api/types/policy.ts';
import { type DeletedFinalStateUnknown, isTombstone, type Lister } from '../../src/cache/informer.ts';
import { keyOf, type Store } from '../../src/cache/store.ts';
import { isConflict, isNotFound } from '../../src/client/errors.ts';
import type { ResourceClient } from '../../src/client/resource.ts';
import {
  type ControllerContext,
  type ControllerDefinition,
  configuredNowMs,
  done,
  type Enqueuer,
  errorText,
  type Reconciler,
  type Result,
  requeueAfter,
  requiredResource,
} from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import { rfc3339 } from '../../src/util/time.ts';
import { ACTION_MATCH, EVENT_MULTIPLE_PDBS, STALE_POD_KEY_PREFIX } from './constants.ts';
import { failSafeStatus, type PlannedEvent, planSync, usesScale } from './core.ts';
import { controllerRefOf, type ScaleLookup, WORKLOAD_KINDS, type WorkloadKind, type Workloads } from './finders.ts';
import { NoopSyncs, type ReadWorkload, type WorkloadRead } from './noop.ts';
import {
  candidateIndexValues,
  clearedDisruptionTarget,
  multiplePdbsNote,
  PDB_SELECTOR_INDEX,
  POD_LABEL_INDEX,
  pdbIndexValues,
  pdbsForPod,
  podIndexValues,
  staleDisruptionWait,
} from './routing.ts';
import { lookupScale, prefetchScales } from './scales.ts';

export const disruptionControllerDefinition: ControllerDefinition = {
  name: 'disruption-controller',
  aliases: ['disruption'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.disruption,
  shardBy: { key: 'namespace' },
  workers: 2,
  permissions: () => [
    rule(['policy'], ['poddisruptionbudgets'], READ),
    rule(['policy'], ['poddisruptionbudgets/status'], ['update']),
    rule([''], ['pods'], READ),
    rule([''], ['pods/status'], ['update']),
    rule([''], ['replicationcontrollers'], READ),
    rule(['apps'], ['deployments', 'replicasets', 'statefulsets'], READ),
    // Owners found through any `/scale` subresource, as the reference's finder does.
    rule(['*'], ['*/scale'], ['get']),
  ],
  setup: (ctx, enqueue) => new DisruptionReconciler(ctx, enqueue),
};

const TYPE_META: Record<string, { apiVersion: string; kind: string }> = {
  pdb: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' },
  pod: { apiVersion: 'v1', kind: 'Pod' },
};

function unwrap<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return isTombstone(obj) ? obj.obj : obj;
}

function replicasOf(obj: KubeObject): unknown {
  return (obj.spec as { replicas?: unknown } | undefined)?.replicas;
}

export class DisruptionReconciler implements Reconciler {
  private readonly pods: Lister<Pod>;
  private readonly podCache: Store<Pod>;
  /** Where each cached budget's candidate pods are filed (cached objects are replaced, never changed). */
  private readonly candidatesWhere = new WeakMap<PodDisruptionBudget, string[] | 'namespace'>();
  private readonly pdbs: Lister<PodDisruptionBudget>;
  private readonly workloads = new Map<WorkloadKind, Lister<KubeObject>>();
  private readonly pdbClient: ResourceClient<PodDisruptionBudget>;
  private readonly podClient: ResourceClient<Pod>;
  private readonly nowMs: () => number;
  /** Workload or controller-reference UID → keys of the PDBs whose last sync depended on it. */
  private readonly dependents = new Map<string, Set<string>>();
  /** PDB key → the UIDs it depended on at its last sync. */
  private readonly dependsOn = new Map<string, string[]>();
  /** Budgets whose last sync was a no-op: a resync over the same cached objects stops there. */
  private readonly noops = new NoopSyncs();
  private readonly readWorkload: ReadWorkload = (kind, namespace, name) =>
    this.workloads.get(kind)?.get(namespace, name);

  constructor(
    private readonly ctx: ControllerContext,
    private readonly enqueue: Enqueuer,
  ) {
    const rt = (kind: string) => requiredResource(ctx, kind, 'disruption controller');
    this.nowMs = configuredNowMs(ctx);
    this.pdbClient = ctx.client.resource<PodDisruptionBudget>(rt('PodDisruptionBudget'));
    this.podClient = ctx.client.resource<Pod>(rt('Pod'));

    const podInformer = ctx.informers.informerFor<Pod>(rt('Pod'));
    podInformer.addIndexer(POD_LABEL_INDEX, podIndexValues);
    this.pods = podInformer.lister();
    this.podCache = podInformer.getStore();
    const pdbInformer = ctx.informers.informerFor<PodDisruptionBudget>(rt('PodDisruptionBudget'));
    pdbInformer.addIndexer(PDB_SELECTOR_INDEX, pdbIndexValues);
    this.pdbs = pdbInformer.lister();

    pdbInformer.addEventHandler({
      add: (pdb) => this.enqueue.add(keyOf(pdb)),
      update: (_old, pdb) => this.enqueue.add(keyOf(pdb)),
      delete: (obj) => this.enqueue.add(keyOf(unwrap(obj))),
    });
    podInformer.addEventHandler({
      add: (pod) => {
        this.routePod(pod, undefined, true);
        this.checkStale(pod);
      },
      update: (old, pod) => {
        this.routePod(pod, old, true);
        this.checkStale(pod);
      },
      delete: (obj) => this.routePod(unwrap(obj), undefined, false),
    });
    for (const kind of WORKLOAD_KINDS) {
      const informer = ctx.informers.informerFor(rt(kind));
      this.workloads.set(kind, informer.lister());
      informer.addEventHandler({
        add: (obj) => this.enqueueDependents(obj.metadata.uid),
        update: (old, obj) => {
          const changed =
            replicasOf(old) !== replicasOf(obj) ||
            old.metadata.uid !== obj.metadata.uid ||
            controllerRefOf(old)?.uid !== controllerRefOf(obj)?.uid;
          if (!changed) return;
          this.enqueueDependents(obj.metadata.uid);
          if (old.metadata.uid !== obj.metadata.uid) this.enqueueDependents(old.metadata.uid);
        },
        delete: (obj) => this.enqueueDependents(unwrap(obj).metadata.uid),
      });
    }
  }

  async reconcile(key: string, signal: AbortSignal): Promise<Result> {
    if (key.startsWith(STALE_POD_KEY_PREFIX)) return this.syncStalePod(key.slice(STALE_POD_KEY_PREFIX.length), signal);
    return this.syncPdb(key, signal);
  }

  // ---- event routing ----

  /** Queues every PDB that selects the pod (and, when its labels changed, every one that selected it before). */
  private routePod(pod: Pod, old: Pod | undefined, record: boolean): void {
    const byIndex = (value: string) => this.pdbs.byIndex(PDB_SELECTOR_INDEX, value);
    const matched = pdbsForPod(pod, byIndex);
    for (const pdb of matched) this.enqueue.add(keyOf(pdb));
    if (old && JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(pod.metadata.labels ?? {})) {
      for (const pdb of pdbsForPod(old, byIndex)) this.enqueue.add(keyOf(pdb));
    }
    if (record && matched.length > 1) {
      this.ctx.recorder.event(
        { ...TYPE_META.pod, ...pod },
        'Warning',
        EVENT_MULTIPLE_PDBS,
        ACTION_MATCH,
        multiplePdbsNote(pod, matched),
      );
    }
  }

  private checkStale(pod: Pod): void {
    const wait = staleDisruptionWait(pod, this.nowMs());
    if (wait !== undefined) this.enqueue.addAfter(STALE_POD_KEY_PREFIX + keyOf(pod), wait);
  }

  private enqueueDependents(uid: string | undefined): void {
    if (!uid) return;
    for (const key of this.dependents.get(uid) ?? []) this.enqueue.add(key);
  }

  private track(key: string, uids: string[]): void {
    for (const uid of this.dependsOn.get(key) ?? []) {
      const keys = this.dependents.get(uid);
      keys?.delete(key);
      if (keys?.size === 0) this.dependents.delete(uid);
    }
    if (uids.length === 0) {
      this.dependsOn.delete(key);
      return;
    }
    this.dependsOn.set(key, uids);
    for (const uid of uids) {
      let keys = this.dependents.get(uid);
      if (!keys) {
        keys = new Set();
        this.dependents.set(uid, keys);
      }
      keys.add(key);
    }
  }

  // ---- PDB sync ----

  /** The pods the budget may select; for one pinned value, the cache's shared array (the same while unchanged). */
  private candidates(pdb: PodDisruptionBudget): readonly Pod[] {
    let where = this.candidatesWhere.get(pdb);
    if (where === undefined) {
      where = candidateIndexValues(pdb);
      this.candidatesWhere.set(pdb, where);
    }
    if (where === 'namespace') return this.pods.list(pdb.metadata.namespace ?? '');
    if (where.length === 1) return this.podCache.byIndexShared(POD_LABEL_INDEX, where[0]);
    return where.flatMap((value) => this.podCache.byIndexShared(POD_LABEL_INDEX, value));
  }

  private async syncPdb(key: string, signal: AbortSignal): Promise<Result> {
    const { namespace = '', name } = splitKey(key);
    const pdb = this.pdbs.get(namespace, name);
    if (!pdb) {
      this.track(key, []);
      this.noops.forget(key);
      return done;
    }
    const candidates = this.candidates(pdb);
    if (this.noops.unchanged(key, pdb, candidates, this.readWorkload)) return done;
    this.noops.forget(key);

    let generic = new Map<string, ScaleLookup>();
    const reads: WorkloadRead[] = [];
    const workloads: Workloads = {
      get: (kind, namespace, name) => {
        const found = this.readWorkload(kind, namespace, name);
        reads.push({ kind, namespace, name, found });
        return found;
      },
      scale: (ref) => generic.get(ref.uid) ?? { notFound: true },
    };
    if (usesScale(pdb)) {
      generic = await prefetchScales(pdb, candidates, workloads, (ref, ns) => lookupScale(this.ctx.client, ref, ns));
    }
    const nowMs = this.nowMs();
    const plan = planSync({ pdb, candidates, workloads, nowMs });
    this.track(key, plan.controllers);
    // Scales fetched from the API are not cached objects: a sync that used one is never skipped.
    if (generic.size === 0) this.noops.record(key, plan, { pdb, candidates, reads });
    for (const e of plan.events) this.record(e);

    if (plan.error !== undefined) {
      // The fail-safe write; when it succeeds the failure is not retried (the next event re-evaluates).
      if (plan.status) await this.writeStatus(pdb, plan.status, signal);
      return done;
    }
    if (plan.status) {
      try {
        await this.writeStatus(pdb, plan.status, signal);
      } catch (err) {
        if (isConflict(err)) throw err;
        if (isNotFound(err)) return done;
        const fallback = failSafeStatus(pdb, errorText(err), rfc3339(new Date(this.nowMs())));
        if (fallback) await this.writeStatus(pdb, fallback, signal);
        return done;
      }
    }
    if (plan.recheckAtMs !== undefined) this.enqueue.addAfter(key, Math.max(0, plan.recheckAtMs - nowMs));
    return done;
  }

  private async writeStatus(
    pdb: PodDisruptionBudget,
    status: PodDisruptionBudgetStatus,
    signal: AbortSignal,
  ): Promise<void> {
    await this.pdbClient.replaceStatus({ ...TYPE_META.pdb, ...pdb, status }, { signal });
  }

  private record(e: PlannedEvent): void {
    this.ctx.recorder.event({ ...TYPE_META[e.subject], ...e.regarding }, e.type, e.reason, e.action, e.note);
  }

  // ---- stale DisruptionTarget ----

  private async syncStalePod(key: string, signal: AbortSignal): Promise<Result> {
    const { namespace = '', name } = splitKey(key);
    const pod = this.pods.get(namespace, name);
    if (!pod) return done;
    const nowMs = this.nowMs();
    const wait = staleDisruptionWait(pod, nowMs);
    if (wait === undefined) return done;
    if (wait > 0) return requeueAfter(wait);
    try {
      await this.podClient.replaceStatus(
        { ...TYPE_META.pod, ...pod, status: clearedDisruptionTarget(pod, rfc3339(new Date(nowMs))) },
        { signal },
      );
    } catch (err) {
      if (isNotFound(err)) return done;
      throw err;
    }
    return done;
  }
}
