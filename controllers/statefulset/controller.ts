/**
 * The StatefulSet controller (`statefulset-controller`, alias `statefulset`): reads a set, its pods,
 * claims and revisions from the caches, adopts and releases through ControllerRef, asks the pure core
 * (`core.ts`) for one sync's actions and status, performs them in order and writes the status.
 *
 * Expectations: a pod this controller created or deleted must show up (or go) in the cache before the
 * set is synced again, so a slow cache never creates a pod twice nor deletes one twice.
 *
 * `ctx.config.nowMs` (a `() => number` of epoch milliseconds) replaces the wall clock, for tests.
 */

import { CONTROLLER_ACCOUNTS } from '../../src/api/controller-accounts.ts';
import { type Selector, selectorFromLabelSelector } from '../../src/api/labels.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { objectKey, splitKey } from '../../src/api/meta.ts';
import type { ControllerRevision, StatefulSet } from '../../src/api/types/apps.ts';
import type { PersistentVolumeClaim, Pod } from '../../src/api/types/core.ts';
import { isTombstone, type Lister } from '../../src/cache/informer.ts';
import { keyOf } from '../../src/cache/store.ts';
import { isAlreadyExists, isNotFound, StatusError } from '../../src/client/errors.ts';
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
  TerminalError,
} from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import { type Claimed, claimPods, claimRevisions, controllerRefOf } from './adoption.ts';
import { type Action, type Gates, planSync, type SyncPlan, type WriteFailure, writeOutcome } from './core.ts';
import { PodExpectations } from './expectations.ts';
import { isRunningAndReady, parseOrdinal } from './pods.ts';
import { dataOf, setOwnerRef } from './revision.ts';

const WRITE = ['create', 'update', 'patch', 'delete'];
const SET_META = { apiVersion: 'apps/v1', kind: 'StatefulSet' };
/** Pod creates and deletes in one slow-start batch at most (the reference's `MaxBatchSize`). */
const MAX_BATCH = 500;
/** How often a set whose expectations are pending is looked at again, in case no event comes. */
const EXPECTATION_RECHECK_MS = 1000;
/** Pods by the set their name belongs to (`name:<ns>/<set>`) and by their controller (`uid:<uid>`). */
const POD_INDEX = 'statefulset-candidates';

function podIndexValues(pod: Pod): string[] {
  const { parent, ordinal } = parseOrdinal(pod.metadata.name ?? '');
  const uid = controllerRefOf(pod)?.uid;
  return [...(ordinal >= 0 ? [`name:${pod.metadata.namespace}/${parent}`] : []), ...(uid ? [`uid:${uid}`] : [])];
}

export const statefulSetControllerDefinition: ControllerDefinition = {
  name: 'statefulset-controller',
  aliases: ['statefulset'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.statefulSet,
  shardBy: { key: 'namespace' },
  workers: 5,
  permissions: () => [
    rule(['apps'], ['statefulsets'], READ),
    rule(['apps'], ['statefulsets/status'], ['update', 'patch']),
    rule(['apps'], ['controllerrevisions'], [...READ, ...WRITE]),
    rule([''], ['pods'], [...READ, ...WRITE]),
    rule([''], ['persistentvolumeclaims'], [...READ, 'create', 'update', 'patch']),
  ],
  setup: (ctx, enqueue) => new StatefulSetReconciler(ctx, enqueue),
};

export class StatefulSetReconciler implements Reconciler {
  private readonly sets: Lister<StatefulSet>;
  private readonly pods: Lister<Pod>;
  private readonly claims: Lister<PersistentVolumeClaim>;
  private readonly revisions: Lister<ControllerRevision>;
  private readonly setClient: ResourceClient<StatefulSet>;
  private readonly podClient: ResourceClient<Pod>;
  private readonly claimClient: ResourceClient<PersistentVolumeClaim>;
  private readonly revisionClient: ResourceClient<ControllerRevision>;
  private readonly nowMs: () => number;
  private readonly expectations: PodExpectations;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly enqueue: Enqueuer,
  ) {
    const rt = (kind: string) => requiredResource(ctx, kind, 'statefulset controller');
    this.nowMs = configuredNowMs(ctx);
    this.expectations = new PodExpectations(this.nowMs);
    const setInformer = ctx.informers.informerFor<StatefulSet>(rt('StatefulSet'));
    const podInformer = ctx.informers.informerFor<Pod>(rt('Pod'));
    podInformer.addIndexer(POD_INDEX, podIndexValues);
    this.sets = setInformer.lister();
    this.pods = podInformer.lister();
    this.claims = ctx.informers.informerFor<PersistentVolumeClaim>(rt('PersistentVolumeClaim')).lister();
    this.revisions = ctx.informers.informerFor<ControllerRevision>(rt('ControllerRevision')).lister();
    this.setClient = ctx.client.resource<StatefulSet>(rt('StatefulSet'));
    this.podClient = ctx.client.resource<Pod>(rt('Pod'));
    this.claimClient = ctx.client.resource<PersistentVolumeClaim>(rt('PersistentVolumeClaim'));
    this.revisionClient = ctx.client.resource<ControllerRevision>(rt('ControllerRevision'));

    const unwrap = <T>(obj: T | { obj: T }) => (isTombstone(obj as never) ? (obj as { obj: T }).obj : (obj as T));
    setInformer.addEventHandler({
      add: (set) => this.enqueue.add(keyOf(set)),
      update: (_old, set) => this.enqueue.add(keyOf(set)),
      delete: (obj) => this.enqueue.add(keyOf(unwrap(obj))),
    });
    podInformer.addEventHandler({
      add: (pod) => {
        const { parent, ordinal } = parseOrdinal(pod.metadata.name ?? '');
        if (ordinal >= 0)
          this.expectations.createObserved(objectKey({ ...pod.metadata, name: parent }), pod.metadata.name!);
        this.routePod(pod);
      },
      update: (old, pod) => {
        if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
        const moved =
          controllerRefOf(old)?.uid !== controllerRefOf(pod)?.uid ||
          JSON.stringify(old.metadata.labels) !== JSON.stringify(pod.metadata.labels);
        if (moved) this.routePod(old);
        for (const key of this.routePod(pod)) {
          const [ns, name] = keyParts(key);
          const minReady = this.sets.get(ns, name)?.spec.minReadySeconds ?? 0;
          if (minReady > 0 && !isRunningAndReady(old) && isRunningAndReady(pod)) {
            this.enqueue.addAfter(key, minReady * 1000 + 1000);
          }
        }
      },
      delete: (obj) => this.routePod(unwrap(obj)),
    });
  }

  /**
   * Queues the sets a pod concerns: its owner, the set its name belongs to (a foreign pod holding one
   * of its names), and for an orphan every set whose selector matches. Returns the owner's key.
   */
  private routePod(pod: Pod): string[] {
    const ns = pod.metadata.namespace ?? '';
    const keys = new Set<string>();
    const ref = controllerRefOf(pod);
    const owner = ref?.kind === 'StatefulSet' ? this.sets.get(ns, ref.name) : undefined;
    const owned = owner && owner.metadata.uid === ref?.uid ? [keyOf(owner)] : [];
    for (const key of owned) keys.add(key);
    const byName = this.sets.get(ns, parseOrdinal(pod.metadata.name ?? '').parent);
    if (byName) keys.add(keyOf(byName));
    if (!ref) {
      for (const set of this.sets.list(ns)) {
        if (selectorOf(set)?.matches(pod.metadata.labels)) keys.add(keyOf(set));
      }
    }
    for (const key of keys) this.enqueue.add(key);
    return owned;
  }

  async reconcile(key: string, signal: AbortSignal): Promise<Result> {
    const { namespace = '', name } = splitKey(key);
    const set = this.sets.get(namespace, name);
    if (!set) {
      this.expectations.forget(key);
      return done;
    }
    if (this.expectations.pending(key, (pod) => this.pods.get(namespace, pod))) {
      return requeueAfter(EXPECTATION_RECHECK_MS);
    }
    const selector = selectorOf(set);
    if (!selector) throw new TerminalError(`statefulset ${key}: its selector cannot be used`);

    const pods = claimPods(set, selector, this.candidatePods(set));
    const revisions = claimRevisions(set, selector, this.revisions.list(namespace));
    await this.adoptAndRelease(set, pods, revisions, signal);

    const plan = planSync({
      naming: this.ctx.naming,
      set,
      pods: pods.owned,
      foreignPods: pods.foreign,
      claims: { get: (claim) => this.claims.get(namespace, claim) },
      revisions: revisions.owned,
      takenRevisionNames: new Set(revisions.foreign.map((r) => r.metadata.name!)),
      nowMs: this.nowMs(),
      gates: this.gates(),
    });
    for (const e of plan.events) {
      this.ctx.recorder.event({ ...SET_META, ...set }, e.type, e.reason, 'Sync', e.note, e.wait && 'rollout-waits');
    }
    const outcome = await this.execute(key, set, plan, signal);
    if (outcome === 'collision') {
      await this.writeStatus(set, { collisionCount: (plan.status.collisionCount ?? 0) + 1 }, signal);
      return requeueAfter(0);
    }
    if (plan.statusChanged) await this.writeStatus(set, plan.status, signal);
    if (outcome instanceof Error) throw outcome;
    return plan.requeueAfterMs === undefined ? done : requeueAfter(plan.requeueAfterMs);
  }

  /**
   * The pods adoption looks at: those whose names belong to the set and those it controls (an orphan
   * with another name is never adopted), instead of every pod of the namespace.
   */
  private candidatePods(set: StatefulSet): Pod[] {
    const pods = this.pods.byIndex(POD_INDEX, `name:${keyOf(set)}`);
    const named = new Set(pods);
    for (const pod of this.pods.byIndex(POD_INDEX, `uid:${set.metadata.uid}`)) if (!named.has(pod)) pods.push(pod);
    return pods;
  }

  private gates(): Gates {
    return {
      maxUnavailable: this.ctx.features('MaxUnavailableStatefulSet'),
      recreate: this.ctx.features('StatefulSetRecreateStrategy'),
    };
  }

  // ---- adoption ----

  private async adoptAndRelease(
    set: StatefulSet,
    pods: Claimed<Pod>,
    revisions: Claimed<ControllerRevision>,
    signal: AbortSignal,
  ): Promise<void> {
    if (pods.adopt.length || revisions.adopt.length) {
      // The reference re-reads the set uncached before adopting: a set being deleted adopts nothing.
      const fresh = await this.setClient.get(set.metadata.namespace, set.metadata.name!);
      if (fresh.metadata.uid !== set.metadata.uid || fresh.metadata.deletionTimestamp) {
        throw new Error(`statefulset ${keyOf(set)}: not adopting, the set was replaced or is being deleted`);
      }
      const ref = setOwnerRef(set);
      for (const pod of pods.adopt) await this.patchOwners(this.podClient, pod, [...owners(pod), ref], signal);
      for (const rev of revisions.adopt)
        await this.patchOwners(this.revisionClient, rev, [...owners(rev), ref], signal);
    }
    for (const pod of pods.release) {
      const rest = owners(pod).filter((r) => r.uid !== set.metadata.uid);
      await this.patchOwners(this.podClient, pod, rest, signal).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }

  private async patchOwners<T extends KubeObject>(
    client: ResourceClient<T>,
    obj: T,
    ownerReferences: NonNullable<KubeObject['metadata']['ownerReferences']>,
    signal: AbortSignal,
  ): Promise<void> {
    const patch = { metadata: { ownerReferences, resourceVersion: obj.metadata.resourceVersion } };
    await client.patch(obj.metadata.namespace, obj.metadata.name!, patch, 'merge', { signal });
  }

  // ---- actions ----

  /**
   * Runs the plan in order and stops at the first failure; in Parallel, creates and deletes go in
   * slow-start batches (1, 2, 4, ... up to 500) that stop after a batch with a failure. History
   * truncation runs whatever happened.
   */
  private async execute(
    key: string,
    set: StatefulSet,
    plan: SyncPlan,
    signal: AbortSignal,
  ): Promise<Error | 'collision' | undefined> {
    const parallel = set.spec.podManagementPolicy === 'Parallel';
    const steps = groupSteps(
      plan.actions.filter((a) => a.kind !== 'deleteRevision'),
      parallel,
    );
    let failure: Error | 'collision' | undefined;
    for (const step of steps) {
      failure = await this.runBatched(key, set, step, signal);
      if (failure) break;
    }
    for (const a of plan.actions.filter((x) => x.kind === 'deleteRevision')) {
      try {
        await this.perform(key, set, a, signal);
      } catch (err) {
        this.ctx.logger.warn({ set: key, revision: a.name, err: errorText(err) }, 'revision history not truncated');
        break;
      }
    }
    return failure;
  }

  /** Units (each a short sequence of actions) in slow-start batches; the first failure stops the step. */
  private async runBatched(
    key: string,
    set: StatefulSet,
    units: Action[][],
    signal: AbortSignal,
  ): Promise<Error | 'collision' | undefined> {
    for (let start = 0, size = 1; start < units.length; start += size, size = Math.min(size * 2, MAX_BATCH)) {
      const batch = units.slice(start, start + size);
      const results = await Promise.all(batch.map((unit) => this.runUnit(key, set, unit, signal)));
      const failed = results.find((r) => r !== undefined);
      if (failed) return failed;
    }
    return undefined;
  }

  private async runUnit(
    key: string,
    set: StatefulSet,
    unit: Action[],
    signal: AbortSignal,
  ): Promise<Error | 'collision' | undefined> {
    for (const action of unit) {
      try {
        if ((await this.perform(key, set, action, signal)) === 'collision') return 'collision';
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    }
    return undefined;
  }

  /** One action's write; its answer decides (`writeOutcome`) whether the sync goes on and what is recorded. */
  private async perform(
    key: string,
    set: StatefulSet,
    action: Action,
    signal: AbortSignal,
  ): Promise<'collision' | undefined> {
    if (action.kind === 'createRevision') return this.createRevision(action.revision, signal);
    const created = action.kind === 'createPod' ? action.pod.metadata.name! : undefined;
    if (created) this.expectations.expectCreate(key, created);
    let failure: unknown;
    try {
      await this.write(set, action, signal);
    } catch (err) {
      failure = err;
      if (created) this.expectations.createObserved(key, created);
    }
    const outcome = writeOutcome(set, action, failure === undefined ? undefined : writeFailure(failure));
    for (const e of outcome.events)
      this.ctx.recorder.event({ ...SET_META, ...set }, e.type, e.reason, verbOf(action), e.note);
    if (outcome.fails) throw failure;
    if (failure !== undefined) return;
    if (action.kind === 'deletePod') this.expectations.expectDelete(key, action.name, action.uid);
  }

  private async write(set: StatefulSet, action: Exclude<Action, { kind: 'createRevision' }>, signal: AbortSignal) {
    const ns = set.metadata.namespace;
    switch (action.kind) {
      case 'bumpRevision': {
        const rev = this.revisions.get(ns ?? '', action.name);
        if (rev) await this.revisionClient.replace({ ...rev, revision: action.revision }, { signal });
        return;
      }
      case 'deleteRevision':
        await this.revisionClient.delete(ns, action.name, { signal });
        return;
      case 'createClaim':
        await this.claimClient.create(action.claim, { signal });
        return;
      case 'setClaimOwners':
        // An update from the cached claim, as the reference's: its controller role may update claims, not patch them.
        await this.claimClient.replace(
          { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...action.claim },
          { signal },
        );
        return;
      case 'createPod':
        await this.podClient.create(action.pod, { signal });
        return;
      case 'updatePod':
        await this.podClient.replace(action.pod, { signal });
        return;
      case 'deletePod':
        await this.podClient.delete(ns, action.name, { signal, preconditions: { uid: action.uid } });
        return;
    }
  }

  /** Creates a revision; an existing one of that name with the same data is it, other data is a collision. */
  private async createRevision(revision: ControllerRevision, signal: AbortSignal): Promise<'collision' | undefined> {
    try {
      await this.revisionClient.create(revision, { signal });
      return undefined;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const existing = await this.revisionClient.get(revision.metadata.namespace, revision.metadata.name!);
    return dataOf(existing) === dataOf(revision) ? undefined : 'collision';
  }

  private async writeStatus(
    set: StatefulSet,
    status: Partial<StatefulSet['status']>,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      // An unconditional update of the status subresource (no resourceVersion: it never conflicts, as the merge
      // patch it replaces), as the reference's: its controller role may update a set's status, not patch it.
      await this.setClient.replaceStatus(
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          ...set,
          metadata: { ...set.metadata, resourceVersion: undefined },
          status: { ...set.status, ...status } as StatefulSet['status'],
        },
        { signal },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

function selectorOf(set: StatefulSet): Selector | undefined {
  try {
    return selectorFromLabelSelector(set.spec.selector);
  } catch {
    return undefined;
  }
}

function keyParts(key: string): [string, string] {
  const { namespace = '', name } = splitKey(key);
  return [namespace, name];
}

const owners = (obj: KubeObject) => obj.metadata.ownerReferences ?? [];

function writeFailure(err: unknown): WriteFailure {
  return { reason: err instanceof StatusError ? err.reason : '', message: errorText(err) };
}

function verbOf(action: Action): string {
  return action.kind.startsWith('create') ? 'Create' : action.kind.startsWith('delete') ? 'Delete' : 'Update';
}

/**
 * Splits the actions into steps of units. In Parallel, a run of claim creates, pod creates and pod
 * deletes becomes one step whose units (an ordinal's claims and its pod, or one delete) run batched;
 * every other action is a step of its own.
 */
function groupSteps(actions: Action[], parallel: boolean): Action[][][] {
  const batchable = (a: Action) =>
    parallel && (a.kind === 'createClaim' || a.kind === 'createPod' || a.kind === 'deletePod');
  const steps: Action[][][] = [];
  let run: Action[][] = [];
  let unit: Action[] = [];
  const flush = () => {
    if (unit.length) run.push(unit);
    if (run.length) steps.push(run);
    run = [];
    unit = [];
  };
  for (const a of actions) {
    if (!batchable(a)) {
      flush();
      steps.push([[a]]);
      continue;
    }
    unit.push(a);
    if (a.kind !== 'createClaim') {
      run.push(unit);
      unit = [];
    }
  }
  flush();
  return steps;
}
