/**
 * The StatefulSet decisions, pure: (set, its pods, claims and revisions, now, gates) → the ordered
 * actions of one sync, the new status and the condition naming what the rollout waits for.
 *
 * The order is the reference's: revisions first; then phase A (live replicas: recreate failed pods,
 * create missing ones, in `OrderedReady` one at a time and only after every lower ordinal is Running,
 * Ready and available), phase B (claim owner references of condemned pods), phase C (scale down from
 * the highest ordinal), and only then the update strategy, so scaling always goes before updating.
 * In `OrderedReady` ("monotonic") the first pod that is not ready ends the sync.
 *
 * The actions are planned as if each succeeds; the reconciler runs them in order and stops at the
 * first failure, except history truncation, which always runs (as in the reference).
 */
import type { IntOrString } from '../../src/api/meta.ts';
import type { Naming } from '../../src/api/naming.ts';
import type {
  ControllerRevision,
  StatefulSet,
  StatefulSetCondition,
  StatefulSetStatus,
} from '../../src/api/types/apps.ts';
import type { PersistentVolumeClaim, Pod } from '../../src/api/types/core.ts';
import { rfc3339 } from '../../src/util/time.ts';
import {
  claimOwners,
  claimsFor,
  hasFinished,
  hasStalePodOwner,
  identityMatches,
  isAvailable,
  isCreated,
  isRunningAndReady,
  isTerminating,
  isUnavailable,
  neverReady,
  newPod,
  ordinalOf,
  readyCondition,
  readySinceMs,
  revisionOf,
  storageMatches,
  withIdentity,
} from './pods.ts';
import { equalRevision, newRevision, sortRevisions, templateOf } from './revision.ts';

export const CONDITION_TYPE = 'RolloutProgressing';
/** Collision counts tried in one sync before giving up (each is a different hash). */
const MAX_COLLISIONS_PER_SYNC = 100;

export interface Gates {
  /** `MaxUnavailableStatefulSet`: honour `rollingUpdate.maxUnavailable`. */
  maxUnavailable: boolean;
  /** `StatefulSetRecreateStrategy`: `updateStrategy.type: Recreate`. */
  recreate: boolean;
}

export interface SyncInput {
  naming: Naming;
  set: StatefulSet;
  /** The set's pods (after adoption and release). */
  pods: Pod[];
  /** Pods of the namespace whose names belong to the set but which the set does not own. */
  foreignPods?: Pod[];
  /** Claims of the namespace by name (a Map, or the cache). */
  claims: { get(name: string): PersistentVolumeClaim | undefined };
  /** The set's revisions (after adoption). */
  revisions: ControllerRevision[];
  /** Revision names held by objects that are not the set's (a create would collide). */
  takenRevisionNames?: ReadonlySet<string>;
  nowMs: number;
  gates: Gates;
}

export type Action =
  | { kind: 'createRevision'; revision: ControllerRevision }
  | { kind: 'bumpRevision'; name: string; revision: number }
  | {
      kind: 'createClaim';
      claim: PersistentVolumeClaim;
      pod: string;
      /** The write of the pod the claim is made for, whose failure the reference reports too (none: a Pending pod's). */
      podWrite?: 'create' | 'update';
    }
  /** The claim as cached, with the owner references it should have. */
  | { kind: 'setClaimOwners'; claim: PersistentVolumeClaim }
  | { kind: 'createPod'; pod: Pod }
  | { kind: 'updatePod'; pod: Pod }
  | { kind: 'deletePod'; name: string; uid: string }
  | { kind: 'deleteRevision'; name: string };

export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
  /** A rollout wait, which the reference does not record: rate-limited apart from the reference's events. */
  wait?: true;
}

/** What holds the rollout, for the condition (and the reason a sync stopped). */
export interface Blocker {
  reason: string;
  message: string;
  /** False when only someone else can clear it. */
  progressing: boolean;
}

export interface SyncPlan {
  actions: Action[];
  status: StatefulSetStatus;
  /** Whether `status` differs from the stored status in what the reference writes (or our condition). */
  statusChanged: boolean;
  events: PlannedEvent[];
  currentRevision: string;
  updateRevision: string;
  /** When a pod becomes available (minReadySeconds), the sync to run then. */
  requeueAfterMs?: number;
}

interface Slot {
  ordinal: number;
  pod: Pod;
  /** False for a placeholder: the pod to create. */
  live: boolean;
}

// ---- spec helpers ----

const replicasOf = (set: StatefulSet) => set.spec.replicas ?? 1;
const startOf = (set: StatefulSet) => set.spec.ordinals?.start ?? 0;
const minReadyOf = (set: StatefulSet) => set.spec.minReadySeconds ?? 0;
const strategyOf = (set: StatefulSet) => set.spec.updateStrategy?.type ?? 'RollingUpdate';

/**
 * maxUnavailable as a pod count. The spec says a percentage rounds up; the reference's code rounds
 * down (its API text says up). The spec wins: ceil(p% of replicas), and never less than 1.
 */
export function maxUnavailableOf(set: StatefulSet): number {
  const ru = set.spec.updateStrategy?.rollingUpdate;
  if (!ru) return 1;
  return Math.max(1, scaledUp(ru.maxUnavailable ?? 1, replicasOf(set)));
}

function scaledUp(value: IntOrString, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  return m ? Math.ceil((Number(m[1]) * total) / 100) : Number.parseInt(value, 10) || 0;
}

/** The opt-in recovery annotation (any value but `true` leaves it off). */
export const recoveryEnabled = (n: Naming, set: StatefulSet) =>
  set.metadata.annotations?.[n.annotations.statefulSetRecovery] === 'true';

// ---- revisions ----

interface Revisions {
  current: ControllerRevision;
  update: ControllerRevision;
  collisionCount: number;
  actions: Action[];
}

/** The reference's `getStatefulSetRevisions`: reuse an equal revision, bump a rolled-back one, or create. */
export function resolveRevisions(
  n: Naming,
  set: StatefulSet,
  revisions: ControllerRevision[],
  taken: ReadonlySet<string> = new Set(),
): Revisions {
  const sorted = sortRevisions(revisions);
  let collisionCount = set.status?.collisionCount ?? 0;
  const last = sorted.at(-1);
  const next = (last?.revision ?? 0) + 1;
  let candidate = newRevision(n, set, next, collisionCount);
  const equal = sorted.filter((r) => equalRevision(n, r, candidate));
  const actions: Action[] = [];
  let update: ControllerRevision;
  if (equal.length && last && equalRevision(n, last, equal.at(-1)!)) {
    update = last;
  } else if (equal.length) {
    const older = equal.at(-1)!;
    update = { ...older, revision: next };
    actions.push({ kind: 'bumpRevision', name: older.metadata.name!, revision: next });
  } else {
    const names = new Set([...taken, ...sorted.map((r) => r.metadata.name)]);
    for (let i = 0; names.has(candidate.metadata.name) && i < MAX_COLLISIONS_PER_SYNC; i++) {
      collisionCount++;
      candidate = newRevision(n, set, next, collisionCount);
    }
    update = candidate;
    actions.push({ kind: 'createRevision', revision: candidate });
  }
  const current =
    sorted.find((r) => r.metadata.name === set.status?.currentRevision && r.metadata.name !== update.metadata.name) ??
    update;
  return { current, update, collisionCount, actions };
}

/** History beyond `revisionHistoryLimit`, oldest first, never a revision a pod or the status uses. */
export function revisionsToDelete(
  set: StatefulSet,
  pods: Pod[],
  revisions: ControllerRevision[],
  keep: string[],
): string[] {
  const live = new Set([...keep, ...pods.map(revisionOf)]);
  const history = sortRevisions(revisions).filter((r) => !live.has(r.metadata.name ?? ''));
  const limit = set.spec.revisionHistoryLimit ?? 10;
  if (limit < 0 || history.length <= limit) return [];
  return history.slice(0, history.length - limit).map((r) => r.metadata.name!);
}

// ---- the sync ----

class Planner {
  readonly actions: Action[] = [];
  readonly events: PlannedEvent[] = [];
  blocker?: Blocker;
  private readonly set: StatefulSet;
  private readonly n: Naming;
  private readonly replicas: Slot[] = [];
  private readonly condemned: Slot[] = [];
  private readonly plannedClaims = new Set<string>();
  private readonly monotonic: boolean;
  private readonly minReady: number;
  private deletedForUpdate = 0;

  constructor(
    private readonly input: SyncInput,
    private readonly rev: Revisions,
  ) {
    this.set = input.set;
    this.n = input.naming;
    this.monotonic = this.set.spec.podManagementPolicy !== 'Parallel';
    this.minReady = minReadyOf(this.set);
    const start = startOf(this.set);
    const count = replicasOf(this.set);
    const byOrdinal = new Map<number, Pod>();
    for (const pod of input.pods) {
      const ordinal = ordinalOf(pod.metadata.name ?? '');
      if (ordinal >= start && ordinal < start + count) byOrdinal.set(ordinal, pod);
      else if (ordinal >= 0) this.condemned.push({ ordinal, pod, live: true });
    }
    for (let ordinal = start; ordinal < start + count; ordinal++) {
      const pod = byOrdinal.get(ordinal);
      this.replicas.push(pod ? { ordinal, pod, live: true } : { ordinal, pod: this.podFor(ordinal), live: false });
    }
    this.condemned.sort((a, b) => b.ordinal - a.ordinal);
  }

  /** Which revision a (re)created pod gets: the reference's `newVersionedStatefulSetPod` rule. */
  private podFor(ordinal: number): Pod {
    const set = this.set;
    const ru = set.spec.updateStrategy?.rollingUpdate;
    const start = startOf(set);
    const useCurrent =
      (strategyOf(set) === 'RollingUpdate' && !ru && ordinal < start + (set.status?.currentReplicas ?? 0)) ||
      (ru !== undefined && ordinal < start + (ru.partition ?? 0));
    const revision = useCurrent ? this.rev.current : this.rev.update;
    return newPod(this.n, set, templateOf(revision), revision.metadata.name!, ordinal);
  }

  private label(pod: Pod): string {
    return `${pod.metadata.name} (revision ${revisionOf(pod) || 'none'})`;
  }

  private block(reason: string, message: string, progressing = true): void {
    this.blocker ??= { reason, message, progressing };
  }

  private unavailable(pod: Pod): boolean {
    return isUnavailable(pod, this.minReady, this.input.nowMs);
  }

  /** Why a pod is not (yet) counted as available, for the condition. */
  private waitOn(pod: Pod): void {
    const since = (ms: number | undefined) => (ms === undefined ? '' : ` since ${rfc3339(new Date(ms))}`);
    const created = Date.parse(pod.metadata.creationTimestamp ?? '');
    if (isTerminating(pod)) this.block('PodTerminating', `waiting for ${this.label(pod)} to terminate`);
    else if (pod.status?.phase !== 'Running') {
      const phase = pod.status?.phase || 'not created';
      this.block('PodNotRunning', `waiting for ${this.label(pod)} to run: ${phase}${since(created || undefined)}`);
    } else if (!isRunningAndReady(pod)) {
      const changed = Date.parse(readyCondition(pod)?.lastTransitionTime ?? '');
      this.block(
        'PodNotReady',
        `waiting for ${this.label(pod)} to become Ready: Running, not Ready${since(changed || created || undefined)}`,
      );
    } else {
      const at = (readySinceMs(pod) ?? this.input.nowMs) + this.minReady * 1000;
      this.block(
        'WaitingForMinReadySeconds',
        `waiting for ${this.label(pod)} to be Ready for minReadySeconds (${this.minReady}s), until ${rfc3339(new Date(at))}`,
      );
    }
  }

  private deletePod(pod: Pod): void {
    this.actions.push({ kind: 'deletePod', name: pod.metadata.name!, uid: pod.metadata.uid ?? '' });
  }

  /** Claims of the ordinal that do not exist yet; false when one exists but is being deleted. */
  private createMissingClaims(slot: Slot, podWrite?: 'create' | 'update'): boolean {
    for (const claim of claimsFor(this.set, slot.ordinal)) {
      const name = claim.metadata.name!;
      const existing = this.input.claims.get(name);
      if (existing?.metadata.deletionTimestamp) {
        this.block('ClaimTerminating', `claim ${name} of ${slot.pod.metadata.name} is being deleted`);
        return false;
      }
      if (existing || this.plannedClaims.has(name)) continue;
      this.plannedClaims.add(name);
      const owners = claimOwners(this.set, slot.pod, claim, false);
      const created = owners.ownerReferences?.length
        ? { ...claim, metadata: { ...claim.metadata, ownerReferences: owners.ownerReferences } }
        : claim;
      const pod = slot.pod.metadata.name!;
      this.actions.push({ kind: 'createClaim', claim: created, pod, ...(podWrite ? { podWrite } : {}) });
    }
    return true;
  }

  /** Owner-reference patches for the ordinal's existing claims, as the retention policy wants them. */
  private fixClaimOwners(slot: Slot, condemned: boolean): void {
    for (const wanted of claimsFor(this.set, slot.ordinal)) {
      const claim = this.input.claims.get(wanted.metadata.name!);
      if (!claim) continue;
      const owners = claimOwners(this.set, slot.pod, claim, condemned);
      if (owners.conflicting) {
        this.events.push({
          type: 'Warning',
          reason: 'ConflictingController',
          note: `PersistentVolumeClaim ${claim.metadata.name} has a conflicting OwnerReference that acts as a managing controller, the retention policy is ignored for this claim`,
        });
      }
      if (owners.ownerReferences) {
        this.actions.push({
          kind: 'setClaimOwners',
          claim: { ...claim, metadata: { ...claim.metadata, ownerReferences: owners.ownerReferences } },
        });
      }
    }
  }

  private staleClaim(slot: Slot): boolean {
    if (this.set.spec.persistentVolumeClaimRetentionPolicy?.whenScaled !== 'Delete') return false;
    return claimsFor(this.set, slot.ordinal).some((c) => {
      const claim = this.input.claims.get(c.metadata.name!);
      return claim !== undefined && hasStalePodOwner(claim, slot.pod.metadata.name!);
    });
  }

  private foreignHolder(name: string): Pod | undefined {
    return this.input.foreignPods?.find((p) => p.metadata.name === name);
  }

  /** The reference's `processReplica`; true means "stop here" (honoured in monotonic mode). */
  private processReplica(slot: Slot): boolean {
    const pod = slot.pod;
    if (slot.live && hasFinished(pod)) {
      if (!isTerminating(pod)) this.deletePod(pod);
      this.block(
        'PodFailed',
        `recreating ${this.label(pod)}: it ${pod.status?.phase === 'Failed' ? 'failed' : 'exited'}`,
      );
      return true;
    }
    if (slot.live && this.monotonic && this.recovers(pod)) {
      this.deletePod(pod);
      this.block(
        'RecoveringBrokenPod',
        `recreating ${this.label(pod)} at revision ${this.rev.update.metadata.name}: it was never Ready and the template was reverted`,
      );
      return true;
    }
    if (!slot.live) {
      const name = pod.metadata.name!;
      const holder = this.foreignHolder(name);
      if (holder) {
        this.events.push({
          type: 'Warning',
          reason: 'FailedCreate',
          note: `create Pod ${name} in StatefulSet ${this.set.metadata.name} failed error: pod ${name} already exists and is not controlled by this StatefulSet`,
        });
        this.block(
          'FailedCreate',
          `cannot create ${name}: a pod of that name exists that this StatefulSet does not control`,
          false,
        );
        return true;
      }
      if (this.staleClaim(slot)) {
        this.block('StaleClaimOwner', `waiting for the claims of an earlier ${name} to be deleted`);
        return true;
      }
      if (!this.createMissingClaims(slot, 'create')) return true;
      this.actions.push({ kind: 'createPod', pod });
      this.block('Progressing', `creating ${this.label(pod)}`);
      if (this.monotonic) return true;
    }
    if (pod.status?.phase === 'Pending') this.createMissingClaims(slot);
    if (
      this.monotonic &&
      (isTerminating(pod) || !isRunningAndReady(pod) || !isAvailable(pod, this.minReady, this.input.nowMs))
    ) {
      this.waitOn(pod);
      return true;
    }
    if (!slot.live) return false;
    this.fixClaimOwners(slot, false);
    if (!identityMatches(this.n, this.set, pod) || !storageMatches(this.set, pod, slot.ordinal)) {
      this.createMissingClaims(slot, 'update');
      this.actions.push({ kind: 'updatePod', pod: withIdentity(this.n, this.set, pod, slot.ordinal) });
    }
    return false;
  }

  /** The opt-in recovery: after a revert, a pod of the abandoned revision that never became Ready goes. */
  private recovers(pod: Pod): boolean {
    const { current, update } = this.rev;
    return (
      recoveryEnabled(this.n, this.set) &&
      current.metadata.name === update.metadata.name &&
      revisionOf(pod) !== update.metadata.name &&
      !isTerminating(pod) &&
      isCreated(pod) &&
      !isRunningAndReady(pod) &&
      neverReady(pod)
    );
  }

  /** Phase A: live replicas. False when the sync stops after it. */
  private phaseA(): boolean {
    for (const slot of this.replicas) {
      if (this.processReplica(slot) && this.monotonic) return false;
    }
    return true;
  }

  /** Phase C: the reference's `processCondemned`, highest ordinal first. */
  private phaseC(firstUnavailable: Pod | undefined): boolean {
    for (const slot of this.condemned) {
      const pod = slot.pod;
      if (isTerminating(pod)) {
        if (!this.monotonic) continue;
        this.block('ScalingDown', `waiting for ${this.label(pod)} to terminate`);
        return false;
      }
      if (this.monotonic && this.unavailable(pod) && pod !== firstUnavailable) {
        this.waitOn(pod);
        return false;
      }
      this.deletePod(pod);
      this.block('ScalingDown', `deleting ${this.label(pod)}: above the replica count`);
      if (this.monotonic) return false;
    }
    return true;
  }

  /** Phase D (gate off): one old pod at a time, from the top down to the partition. */
  private legacyRollingUpdate(): void {
    const updateMin = this.set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    const update = this.rev.update.metadata.name;
    for (let i = this.replicas.length - 1; i >= updateMin; i--) {
      const pod = this.replicas[i]!.pod;
      if (revisionOf(pod) !== update && !isTerminating(pod)) {
        this.deleteForUpdate(pod);
        return;
      }
      if (this.unavailable(pod)) {
        this.waitOn(pod);
        return;
      }
    }
    this.partitionReached(updateMin);
  }

  private deleteForUpdate(pod: Pod): void {
    this.deletePod(pod);
    this.deletedForUpdate++;
    this.block('Progressing', `deleting ${this.label(pod)} to update it to revision ${this.rev.update.metadata.name}`);
  }

  /**
   * Phase D (gate on): up to maxUnavailable old pods at a time, counting unavailable pods of every
   * ordinal. In Parallel, old pods that are unavailable anyway go without using the budget (the
   * reference's fix for sets stuck on a broken revision).
   */
  private rollingUpdateWithMaxUnavailable(): void {
    const updateMin = this.set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    const maxU = maxUnavailableOf(this.set);
    const update = this.rev.update.metadata.name;
    const unavailable = this.replicas.filter((s) => this.unavailable(s.pod));
    const old = this.replicas
      .slice(updateMin)
      .reverse()
      .map((s) => s.pod)
      .filter((p) => revisionOf(p) !== update && !isTerminating(p));
    if (!old.length) {
      const waiting = this.replicas.slice(updateMin).find((s) => this.unavailable(s.pod));
      if (waiting) this.waitOn(waiting.pod);
      else this.partitionReached(updateMin);
      return;
    }
    const free = this.monotonic ? [] : old.filter((p) => this.unavailable(p));
    if (unavailable.length >= maxU && !free.length) {
      this.block(
        'BudgetSpent',
        `maxUnavailable (${maxU}) is spent: ${unavailable.length} pod(s) unavailable, first ${this.label(unavailable[0]!.pod)}`,
      );
      return;
    }
    for (const pod of free) this.deleteForUpdate(pod);
    const budget = Math.max(0, maxU - unavailable.length);
    const freed = new Set(free);
    for (const pod of old.filter((p) => !freed.has(p)).slice(0, budget)) this.deleteForUpdate(pod);
  }

  private partitionReached(updateMin: number): void {
    const update = this.rev.update.metadata.name;
    const below = this.replicas.slice(0, updateMin).filter((s) => revisionOf(s.pod) !== update).length;
    if (below > 0) {
      this.block(
        'PartitionReached',
        `ordinals from ${startOf(this.set) + updateMin} up run revision ${update}; ${below} pod(s) below the partition (${updateMin}) keep revision ${this.rev.current.metadata.name}`,
      );
    }
  }

  /** Recreate: every old pod goes, and nothing is created until all of them are gone. */
  private recreate(): boolean {
    const update = this.rev.update.metadata.name;
    const old = [...this.replicas, ...this.condemned].filter((s) => s.live && revisionOf(s.pod) !== update);
    if (!old.length) return true;
    for (const slot of old) if (!isTerminating(slot.pod)) this.deletePod(slot.pod);
    this.block(
      'Recreating',
      `waiting for ${old.length} pod(s) of earlier revisions to terminate before creating revision ${update}`,
    );
    return false;
  }

  run(): void {
    if (this.set.metadata.deletionTimestamp) return;
    const strategy = strategyOf(this.set);
    if (strategy === 'Recreate' && this.input.gates.recreate && !this.recreate()) return;
    const ordered = [...this.replicas, ...[...this.condemned].reverse()];
    const firstUnavailable = ordered.find((s) => this.unavailable(s.pod))?.pod;
    if (!this.phaseA()) return;
    for (const slot of this.condemned) this.fixClaimOwners(slot, true);
    if (!this.phaseC(firstUnavailable)) return;
    if (strategy === 'OnDelete') {
      const old = this.replicas.filter((s) => revisionOf(s.pod) !== this.rev.update.metadata.name).length;
      if (old) this.block('OnDelete', `${old} pod(s) keep their revision until deleted (updateStrategy OnDelete)`);
      return;
    }
    if (strategy !== 'RollingUpdate') return;
    if (this.input.gates.maxUnavailable) this.rollingUpdateWithMaxUnavailable();
    else this.legacyRollingUpdate();
  }

  /** Counts over every pod of the set, as the reference's status rules say. */
  status(): StatefulSetStatus {
    const current = this.rev.current.metadata.name!;
    const update = this.rev.update.metadata.name!;
    // One pass: a thousand-pod set is counted at every sync.
    let created = 0;
    let ready = 0;
    let available = 0;
    let atCurrent = 0;
    let atUpdate = 0;
    for (const slots of [this.replicas, this.condemned]) {
      for (const { live, pod } of slots) {
        if (!live || !isCreated(pod)) continue;
        created++;
        if (isRunningAndReady(pod)) {
          ready++;
          if (isAvailable(pod, this.minReady, this.input.nowMs)) available++;
        }
        if (isTerminating(pod)) continue;
        const revision = revisionOf(pod);
        if (revision === current) atCurrent++;
        if (revision === update) atUpdate++;
      }
    }
    return {
      observedGeneration: this.set.metadata.generation,
      replicas: created,
      readyReplicas: ready,
      availableReplicas: available,
      currentReplicas: Math.max(0, atCurrent - this.deletedForUpdate),
      updatedReplicas: atUpdate,
      currentRevision: current,
      updateRevision: update,
      collisionCount: this.rev.collisionCount,
    };
  }

  /** The earliest moment a Ready pod becomes available, when minReadySeconds holds it back. */
  requeueAfterMs(): number | undefined {
    if (this.minReady <= 0) return undefined;
    const waits = this.replicas
      .map((s) => readySinceMs(s.pod))
      .filter((t): t is number => t !== undefined)
      .map((t) => t + this.minReady * 1000 - this.input.nowMs + 1)
      .filter((ms) => ms > 0);
    return waits.length ? Math.min(...waits) : undefined;
  }
}

/**
 * The reference's `completeRollingUpdate`: the update revision becomes current once every pod runs it,
 * Ready. Recreate (which the reference's function predates) completes the same way; OnDelete never does.
 */
function completeRollingUpdate(set: StatefulSet, status: StatefulSetStatus): StatefulSetStatus {
  const n = replicasOf(set);
  if (
    strategyOf(set) !== 'OnDelete' &&
    status.updatedReplicas === n &&
    status.readyReplicas === n &&
    status.replicas === n
  ) {
    return { ...status, currentRevision: status.updateRevision, currentReplicas: status.updatedReplicas };
  }
  return status;
}

/** Our condition in a status. */
const rolloutCondition = (s: StatefulSetStatus | undefined) => s?.conditions?.find((c) => c.type === CONDITION_TYPE);

function conditionFor(
  set: StatefulSet,
  status: StatefulSetStatus,
  blocker: Blocker | undefined,
  nowMs: number,
): StatefulSetCondition {
  const previous = rolloutCondition(set.status);
  // Every pod Ready at the update revision (with OnDelete the current revision never moves).
  const complete =
    status.updatedReplicas === replicasOf(set) &&
    status.readyReplicas === replicasOf(set) &&
    status.replicas === replicasOf(set);
  const { reason, message, progressing } =
    blocker ??
    (complete
      ? {
          reason: 'RolloutComplete',
          message: `${replicasOf(set)} pod(s) at revision ${status.updateRevision}`,
          progressing: true,
        }
      : { reason: 'Progressing', message: `rolling out revision ${status.updateRevision}`, progressing: true });
  const state = progressing ? 'True' : 'False';
  const lastTransitionTime =
    previous?.status === state && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(new Date(nowMs));
  return { type: CONDITION_TYPE, status: state, lastTransitionTime, reason, message };
}

const WRITTEN_FIELDS = [
  'replicas',
  'readyReplicas',
  'availableReplicas',
  'currentReplicas',
  'updatedReplicas',
  'currentRevision',
  'updateRevision',
] as const;

/**
 * Whether the status is written: when the generation or a counted field moved (the reference writes on those
 * alone), or our condition's status or reason did. A change of its message alone (the next pod waited on for the
 * same reason, as pods start one after another) waits for the next write, so that the condition costs no writes
 * the reference does not make while pods merely come up.
 */
function statusChanged(old: StatefulSetStatus | undefined, next: StatefulSetStatus): boolean {
  if ((next.observedGeneration ?? 0) > (old?.observedGeneration ?? 0)) return true;
  if (WRITTEN_FIELDS.some((f) => (old?.[f] ?? 0) !== (next[f] ?? 0))) return true;
  const a = rolloutCondition(old);
  const b = rolloutCondition(next);
  return a?.status !== b?.status || a?.reason !== b?.reason;
}

/**
 * An event when the condition moves to another reason, so that `kubectl describe` (which shows events, not
 * StatefulSet conditions) answers why a rollout stands still. The next pod waited on for the same reason makes
 * none (a set of 1,000 coming up would make one per pod); plain progress makes none, and FailedCreate has its own.
 */
function transitionEvent(set: StatefulSet, status: StatefulSetStatus): PlannedEvent[] {
  const before = rolloutCondition(set.status);
  const now = rolloutCondition(status)!;
  const quiet = ['Progressing', 'FailedCreate'];
  if (quiet.includes(now.reason ?? '') || (before?.reason === now.reason && before?.status === now.status)) return [];
  const type = now.status === 'True' ? 'Normal' : 'Warning';
  return [{ type, reason: now.reason ?? '', note: now.message ?? '', wait: true }];
}

/** One sync of a set. */
export function planSync(input: SyncInput): SyncPlan {
  const { set, naming: n } = input;
  const rev = resolveRevisions(n, set, input.revisions, input.takenRevisionNames);
  const planner = new Planner(input, rev);
  planner.run();
  const counted = completeRollingUpdate(set, planner.status());
  const others = (set.status?.conditions ?? []).filter((c) => c.type !== CONDITION_TYPE);
  const status: StatefulSetStatus = {
    ...counted,
    conditions: [...others, conditionFor(set, counted, planner.blocker, input.nowMs)],
  };
  const revisions = [
    ...input.revisions,
    ...rev.actions.flatMap((a) => (a.kind === 'createRevision' ? [a.revision] : [])),
  ];
  const events = [...planner.events, ...transitionEvent(set, status)];
  const truncate = revisionsToDelete(set, input.pods, revisions, [status.currentRevision!, status.updateRevision!]);
  return {
    actions: [
      ...rev.actions,
      ...planner.actions,
      ...truncate.map((name): Action => ({ kind: 'deleteRevision', name })),
    ],
    status,
    statusChanged: statusChanged(set.status, status),
    events,
    currentRevision: status.currentRevision!,
    updateRevision: status.updateRevision!,
    requeueAfterMs: planner.requeueAfterMs(),
  };
}

/**
 * The event the reference records for an action's outcome (none for revisions and claim owners). Its message
 * title-cases the verb, as kube-controller-manager v1.37 does ("Create Pod web-0 in StatefulSet web successful").
 * A pod update that conflicts makes none: the reference retries it on the fresh pod before it records anything,
 * and ours retries it with the set's next sync.
 */
export function eventFor(set: StatefulSet, action: Action, error?: string): PlannedEvent | undefined {
  const s = set.metadata.name;
  const outcome = (verb: string, what: string, okReason: string, failReason: string): PlannedEvent =>
    error === undefined
      ? { type: 'Normal', reason: okReason, note: `${verb} ${what} in StatefulSet ${s} successful` }
      : { type: 'Warning', reason: failReason, note: `${verb} ${what} in StatefulSet ${s} failed error: ${error}` };
  switch (action.kind) {
    case 'createPod':
      return outcome('Create', `Pod ${action.pod.metadata.name}`, 'SuccessfulCreate', 'FailedCreate');
    case 'deletePod':
      return outcome('Delete', `Pod ${action.name}`, 'SuccessfulDelete', 'FailedDelete');
    case 'updatePod':
      return outcome('Update', `Pod ${action.pod.metadata.name}`, 'SuccessfulUpdate', 'FailedUpdate');
    case 'createClaim':
      return error === undefined
        ? {
            type: 'Normal',
            reason: 'SuccessfulCreate',
            note: `Create Claim ${action.claim.metadata.name} Pod ${action.pod} in StatefulSet ${s} success`,
          }
        : {
            type: 'Warning',
            reason: 'FailedCreate',
            note: `Create Claim ${action.claim.metadata.name} for Pod ${action.pod} in StatefulSet ${s} failed error: ${error}`,
          };
    default:
      return undefined;
  }
}

/** A write the API refused: its status reason (`AlreadyExists`, `NotFound`, ...; empty without one) and text. */
export interface WriteFailure {
  reason: string;
  message: string;
}

export interface WriteOutcome {
  /** The sync stops here and fails, so the set is retried with backoff. */
  fails: boolean;
  events: PlannedEvent[];
}

/**
 * What the answer to an action's write means, as the reference's pod control reads it. A create answered
 * AlreadyExists (the cache is behind) fails the sync without an event of its own; the next sync, once the
 * cache shows the object, goes on. A claim made for a pod's create or update that fails, fails that too, with
 * the pod's event. A delete of what is already gone is done (the reference reports it; we do not).
 */
export function writeOutcome(set: StatefulSet, action: Action, failure?: WriteFailure): WriteOutcome {
  const own = (error?: string) => {
    const e = eventFor(set, action, error);
    return e ? [e] : [];
  };
  if (!failure) return { fails: false, events: own() };
  const deletes = action.kind === 'deletePod' || action.kind === 'deleteRevision';
  if (deletes && failure.reason === 'NotFound') return { fails: false, events: [] };
  // The reference retries a conflicting pod update before it records anything; here the set's next sync retries it.
  if (failure.reason === 'Conflict' && action.kind === 'updatePod') return { fails: true, events: [] };
  const exists = failure.reason === 'AlreadyExists';
  if (action.kind !== 'createClaim')
    return { fails: true, events: exists && action.kind === 'createPod' ? [] : own(failure.message) };
  const { podWrite, pod, claim } = action;
  const forPod: PlannedEvent[] = podWrite
    ? [
        {
          type: 'Warning',
          reason: podWrite === 'create' ? 'FailedCreate' : 'FailedUpdate',
          note: `${podWrite} Pod ${pod} in StatefulSet ${set.metadata.name} failed error: failed to create PVC ${claim.metadata.name}: ${failure.message}`,
        },
      ]
    : [];
  return { fails: true, events: [...(exists ? [] : own(failure.message)), ...forPod] };
}
