/**
 * The pure core of the disruption controller (reference notes §1.2 to §1.8): from a PodDisruptionBudget,
 * the pods of its namespace that may match it, the workloads' scales and the wall-clock time, to the
 * status to write (or none when nothing changed), the events to record, and when to look again.
 *
 * Nothing here reads a cache, calls the API or looks at a clock; the reconciler does that.
 */
import {
  DISRUPTION_ALLOWED,
  INSUFFICIENT_PODS,
  SUFFICIENT_PODS,
  SYNC_FAILED,
} from '../../src/api/disruption-conditions.ts';
import { isPodReady } from '../../src/api/eviction.ts';
import { type Selector, selectorFromLabelSelector } from '../../src/api/labels.ts';
import type { Condition, IntOrString, KubeObject, LabelSelector } from '../../src/api/meta.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from '../../src/api/types/policy.ts';
import { rfc3339 } from '../../src/util/time.ts';
import {
  ACTION_SYNC,
  DELETION_TIMEOUT_MS,
  EVENT_CALCULATE_EXPECTED_POD_COUNT_FAILED,
  EVENT_NO_PODS,
  EVENT_NOT_DELETED,
  EVENT_UNMANAGED_PODS,
} from './constants.ts';
import { controllerRefOf, expectedScale, FinderError, type Workloads } from './finders.ts';

// ---------------------------------------------------------------------------------------------
// Integer or percentage

/** An int-or-percent that cannot be used; the message is what the SyncFailed condition shows. */
export class IntOrPercentError extends Error {
  override name = 'IntOrPercentError';
}

const INT_TEXT = /^[+-]?[0-9]+$/;

/**
 * `GetScaledValueFromIntOrPercent`: an integer as is, `N%` of `total` rounded up or down. Beyond the
 * reference, the values the API's validation refuses (negative, over 100%) are errors here too, so a
 * budget written around validation fails visibly instead of producing counts the status write rejects.
 */
export function scaledValue(value: IntOrString | null | undefined, total: number, roundUp: boolean): number {
  if (value === null || value === undefined) throw new IntOrPercentError('nil value for IntOrString');
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new IntOrPercentError('invalid value for IntOrString: invalid type: neither int nor percentage');
    }
    if (value < 0)
      throw new IntOrPercentError(`invalid value for IntOrString: ${value}: must be greater than or equal to 0`);
    return value;
  }
  if (typeof value !== 'string') {
    throw new IntOrPercentError('invalid value for IntOrString: invalid type: neither int nor percentage');
  }
  if (!value.endsWith('%')) {
    throw new IntOrPercentError('invalid value for IntOrString: invalid type: string is not a percentage');
  }
  const digits = value.slice(0, -1);
  if (!INT_TEXT.test(digits)) {
    throw new IntOrPercentError(
      `invalid value for IntOrString: invalid value ${JSON.stringify(value)}: strconv.Atoi: parsing ${JSON.stringify(digits)}: invalid syntax`,
    );
  }
  const percent = Number(digits);
  if (!Number.isSafeInteger(percent)) {
    throw new IntOrPercentError(
      `invalid value for IntOrString: invalid value ${JSON.stringify(value)}: strconv.Atoi: parsing ${JSON.stringify(digits)}: value out of range`,
    );
  }
  if (percent < 0) {
    throw new IntOrPercentError(
      `invalid value for IntOrString: ${JSON.stringify(value)}: must be greater than or equal to 0`,
    );
  }
  if (percent > 100) {
    throw new IntOrPercentError(
      `invalid value for IntOrString: ${JSON.stringify(value)}: must not be greater than 100%`,
    );
  }
  // Exact integer arithmetic: ceil(p·t/100) = floor((p·t + 99)/100) for non-negative values.
  return roundUp ? Math.floor((percent * total + 99) / 100) : Math.floor((percent * total) / 100);
}

// ---------------------------------------------------------------------------------------------
// Pods

export function isTerminating(obj: KubeObject): boolean {
  return Boolean(obj.metadata.deletionTimestamp);
}

/**
 * A budget's selector, parsed once per selector object: cached objects are replaced, never changed, so every
 * sync of an unchanged budget (a resync's) reuses the parse. Throws for an invalid selector, every time.
 */
export function parsedSelector(selector: LabelSelector | null | undefined): Selector {
  if (selector == null) return selectorFromLabelSelector(selector);
  let parsed = parsedSelectors.get(selector);
  if (!parsed) {
    try {
      parsed = selectorFromLabelSelector(selector);
    } catch (err) {
      parsed = err instanceof Error ? err : new Error(String(err));
    }
    parsedSelectors.set(selector, parsed);
  }
  if (parsed instanceof Error) throw parsed;
  return parsed;
}

const parsedSelectors = new WeakMap<LabelSelector, Selector | Error>();

/** The candidates the PDB's selector matches: null matches nothing, `{}` everything; a bad selector throws. */
export function selectPods(pdb: PodDisruptionBudget, candidates: readonly Pod[]): Pod[] {
  const selector = parsedSelector(pdb.spec?.selector);
  const ns = pdb.metadata.namespace;
  return candidates.filter((p) => p.metadata.namespace === ns && selector.matches(p.metadata.labels));
}

function parseTime(text: string | undefined): number {
  return text ? Date.parse(text) : Number.NaN;
}

export interface DisruptedPods {
  /** The entries kept (pod name → RFC 3339 time), in the order of the pods. */
  kept: Record<string, string>;
  /**
   * The first moment one of the kept entries has expired: a millisecond past its deadline, as an entry is kept
   * through its deadline itself (and its pod counted healthy then). A recheck at the deadline would write that
   * in-between status, the entry still listed and its pod healthy again, one sync before the entry goes.
   */
  recheckAtMs?: number;
  /** Pods whose entry expired without the pod being deleted. */
  expired: Pod[];
}

/**
 * `buildDisruptedPodMap` (§1.6): keeps the entries of matched, non-terminating pods whose two minutes
 * are not over; an expired entry is reported (event NotDeleted); entries of pods gone or no longer
 * matched, and of terminating pods (their deletion was observed), are dropped silently.
 */
export function buildDisruptedPods(pdb: PodDisruptionBudget, pods: readonly Pod[], nowMs: number): DisruptedPods {
  const recorded = pdb.status?.disruptedPods ?? {};
  const out: DisruptedPods = { kept: {}, expired: [] };
  if (Object.keys(recorded).length === 0) return out;
  for (const pod of pods) {
    if (isTerminating(pod)) continue;
    const name = pod.metadata.name ?? '';
    if (!Object.hasOwn(recorded, name)) continue;
    const at = parseTime(recorded[name]);
    // An unreadable time cannot be honoured; it is dropped like an entry of a pod that is gone.
    if (Number.isNaN(at)) continue;
    const deadline = at + DELETION_TIMEOUT_MS;
    if (deadline < nowMs) {
      out.expired.push(pod);
      continue;
    }
    out.kept[name] = recorded[name];
    out.recheckAtMs = Math.min(out.recheckAtMs ?? Number.POSITIVE_INFINITY, deadline + 1);
  }
  return out;
}

/** `countHealthyPods` (§1.5): Ready, not terminating, not recorded as being evicted within the last two minutes. */
export function countHealthy(pods: readonly Pod[], disrupted: Record<string, string>, nowMs: number): number {
  let healthy = 0;
  for (const pod of pods) {
    if (isTerminating(pod)) continue;
    const name = pod.metadata.name ?? '';
    if (Object.hasOwn(disrupted, name) && parseTime(disrupted[name]) + DELETION_TIMEOUT_MS > nowMs) continue;
    if (isPodReady(pod)) healthy++;
  }
  return healthy;
}

// ---------------------------------------------------------------------------------------------
// Expected and desired counts

export interface Counts {
  expected: number;
  desired: number;
  unmanaged: string[];
  /** UIDs of workloads the counts were derived from (empty when the mode does not use scales). */
  controllers: string[];
}

/** Whether the budget's counts come from the workloads' scales (percentages and maxUnavailable). */
export function usesScale(pdb: PodDisruptionBudget): boolean {
  const spec = pdb.spec ?? {};
  return spec.maxUnavailable != null || (spec.minAvailable != null && typeof spec.minAvailable !== 'number');
}

function fieldError(field: string, err: unknown): never {
  if (err instanceof IntOrPercentError) throw new IntOrPercentError(`${field}: ${err.message}`);
  throw err;
}

/** `getExpectedPodCount` (§1.3); throws FinderError or IntOrPercentError. */
export function expectedCounts(pdb: PodDisruptionBudget, pods: readonly Pod[], w: Workloads): Counts {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable != null) {
    const scale = expectedScale(pods, w);
    let maxUnavailable: number;
    try {
      maxUnavailable = scaledValue(spec.maxUnavailable, scale.expected, true);
    } catch (err) {
      fieldError('spec.maxUnavailable', err);
    }
    return { ...scale, desired: Math.max(0, scale.expected - maxUnavailable) };
  }
  if (spec.minAvailable != null) {
    if (typeof spec.minAvailable === 'number') {
      let desired: number;
      try {
        desired = scaledValue(spec.minAvailable, pods.length, true);
      } catch (err) {
        fieldError('spec.minAvailable', err);
      }
      return { expected: pods.length, desired, unmanaged: [], controllers: [] };
    }
    const scale = expectedScale(pods, w);
    let desired: number;
    try {
      desired = scaledValue(spec.minAvailable, scale.expected, true);
    } catch (err) {
      fieldError('spec.minAvailable', err);
    }
    return { ...scale, desired };
  }
  return { expected: 0, desired: 0, unmanaged: [], controllers: [] };
}

// ---------------------------------------------------------------------------------------------
// Conditions and status

/** `meta.SetStatusCondition`: lastTransitionTime moves only when the status changes. */
export function setCondition(conditions: readonly Condition[], next: Condition, now: string): Condition[] {
  const i = conditions.findIndex((c) => c.type === next.type);
  if (i < 0) return [...conditions, { ...next, lastTransitionTime: next.lastTransitionTime ?? now }];
  const old = conditions[i];
  const merged: Condition = {
    ...old,
    status: next.status,
    reason: next.reason,
    message: next.message,
    observedGeneration: next.observedGeneration,
    lastTransitionTime: old.status !== next.status ? (next.lastTransitionTime ?? now) : old.lastTransitionTime,
  };
  const out = [...conditions];
  out[i] = merged;
  return out;
}

/** `UpdateDisruptionAllowedCondition`: True/SufficientPods when disruptions are allowed, else False/InsufficientPods. */
export function withDisruptionAllowedCondition(
  status: PodDisruptionBudgetStatus,
  now: string,
): PodDisruptionBudgetStatus {
  const allowed = (status.disruptionsAllowed ?? 0) > 0;
  const condition: Condition = {
    type: DISRUPTION_ALLOWED,
    status: allowed ? 'True' : 'False',
    reason: allowed ? SUFFICIENT_PODS : INSUFFICIENT_PODS,
    message: '',
    observedGeneration: status.observedGeneration ?? 0,
  };
  return { ...status, conditions: setCondition(status.conditions ?? [], condition, now) };
}

/** `ConditionsAreUpToDate`: the condition exists, the status is current, and it says what the allowance says. */
export function conditionUpToDate(pdb: PodDisruptionBudget): boolean {
  const status = pdb.status ?? {};
  const c = status.conditions?.find((x) => x.type === DISRUPTION_ALLOWED);
  if (!c) return false;
  if ((status.observedGeneration ?? 0) !== (pdb.metadata.generation ?? 0)) return false;
  return (status.disruptionsAllowed ?? 0) > 0
    ? c.status === 'True' && c.reason === SUFFICIENT_PODS
    : c.status === 'False' && c.reason === INSUFFICIENT_PODS;
}

function sameDisruptedPods(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  // Compared as times: the same instant written with or without fractions is the same entry.
  return ka.every((k) => Object.hasOwn(b!, k) && parseTime(a![k]) === parseTime(b![k]));
}

function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

/**
 * `updatePdbStatus` (§1.7): the new status, or undefined when every counter, the disruptedPods map, the
 * observed generation and the condition are already what they should be. Foreign conditions are kept.
 */
export function nextStatus(
  pdb: PodDisruptionBudget,
  counts: { currentHealthy: number; desiredHealthy: number; expectedPods: number },
  disruptedPods: Record<string, string>,
  now: string,
): PodDisruptionBudgetStatus | undefined {
  const { currentHealthy, desiredHealthy, expectedPods } = counts;
  let allowed = currentHealthy - desiredHealthy;
  if (expectedPods <= 0 || allowed <= 0) allowed = 0;
  const old = pdb.status ?? {};
  const generation = pdb.metadata.generation ?? 0;
  if (
    (old.currentHealthy ?? 0) === currentHealthy &&
    (old.desiredHealthy ?? 0) === desiredHealthy &&
    (old.expectedPods ?? 0) === expectedPods &&
    (old.disruptionsAllowed ?? 0) === allowed &&
    sameDisruptedPods(old.disruptedPods, disruptedPods) &&
    (old.observedGeneration ?? 0) === generation &&
    conditionUpToDate(pdb)
  ) {
    return undefined;
  }
  const status: PodDisruptionBudgetStatus = {
    observedGeneration: generation,
    disruptionsAllowed: allowed,
    currentHealthy,
    desiredHealthy,
    expectedPods,
    conditions: old.conditions ?? [],
  };
  if (Object.keys(disruptedPods).length > 0) status.disruptedPods = disruptedPods;
  return withDisruptionAllowedCondition(status, now);
}

/**
 * `failSafe` (§1.8): disruptionsAllowed 0 and DisruptionAllowed False/SyncFailed with the error, the
 * rest of the status untouched; undefined when the status already says exactly that.
 */
export function failSafeStatus(
  pdb: PodDisruptionBudget,
  message: string,
  now: string,
): PodDisruptionBudgetStatus | undefined {
  const old = pdb.status ?? {};
  const condition: Condition = {
    type: DISRUPTION_ALLOWED,
    status: 'False',
    reason: SYNC_FAILED,
    message,
    observedGeneration: old.observedGeneration ?? 0,
  };
  const status: PodDisruptionBudgetStatus = {
    ...old,
    disruptionsAllowed: 0,
    conditions: setCondition(old.conditions ?? [], condition, now),
  };
  if ((old.disruptionsAllowed ?? 0) === 0 && sameConditions(old.conditions, status.conditions)) return undefined;
  return status;
}

// ---------------------------------------------------------------------------------------------
// One sync

/** An event to record, about the PDB or about one of its pods. */
export interface PlannedEvent {
  /** What the event is about: the PDB, or one of its pods. */
  subject: 'pdb' | 'pod';
  regarding: KubeObject;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

export interface SyncInput {
  pdb: PodDisruptionBudget;
  /** Pods of the PDB's namespace that may match (all of them, or those an index picked); selection is exact here. */
  candidates: readonly Pod[];
  workloads: Workloads;
  /** Wall-clock time, epoch milliseconds. */
  nowMs: number;
}

export interface SyncPlan {
  /** The status to write, or undefined when nothing changed. */
  status?: PodDisruptionBudgetStatus;
  /** Set when the sync failed: the error text (the status then is the fail-safe one). */
  error?: string;
  events: PlannedEvent[];
  /** When to sync again for an entry of disruptedPods to expire (only after a successful sync). */
  recheckAtMs?: number;
  /** UIDs of the controllers of the matched pods and of the workloads they resolved to. */
  controllers: string[];
  /** The pods the selector matched. */
  pods: Pod[];
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function unmanagedPodsNote(pdb: PodDisruptionBudget, unmanaged: readonly string[]): string {
  const shown = unmanaged.slice(0, 5).join(', ') + (unmanaged.length > 5 ? `, ... (${unmanaged.length} in all)` : '');
  return (
    `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec?.selector ?? null)}) have no ` +
    `controller: ${shown}. They are left out of the expected pod count, so the budget's percentages and ` +
    'maxUnavailable cannot account for them. To count them, set ".spec.minAvailable" to an integer.'
  );
}

export function notDeletedNote(pdb: PodDisruptionBudget): string {
  return `Pod was expected by PDB ${pdb.metadata.namespace}/${pdb.metadata.name} to be deleted but it wasn't`;
}

/** The whole of `sync`/`trySync` for one PDB, short of the API calls. */
export function planSync(input: SyncInput): SyncPlan {
  const { pdb, nowMs } = input;
  const now = rfc3339(new Date(nowMs));
  const events: PlannedEvent[] = [];
  const onPdb = (type: PlannedEvent['type'], reason: string, note: string) =>
    events.push({ subject: 'pdb', regarding: pdb, type, reason, action: ACTION_SYNC, note });
  const controllersOf = (pods: readonly Pod[]) => [
    ...new Set(pods.map((p) => controllerRefOf(p)?.uid).filter((u): u is string => Boolean(u))),
  ];
  const fail = (error: string, pods: Pod[]): SyncPlan => ({
    status: failSafeStatus(pdb, error, now),
    error,
    events,
    controllers: controllersOf(pods),
    pods,
  });

  let pods: Pod[];
  try {
    pods = selectPods(pdb, input.candidates);
  } catch (err) {
    onPdb('Warning', EVENT_NO_PODS, `Failed to get pods: ${message(err)}`);
    return fail(message(err), []);
  }
  if (pods.length === 0) onPdb('Normal', EVENT_NO_PODS, 'No matching pods found');

  let counts: Counts;
  try {
    counts = expectedCounts(pdb, pods, input.workloads);
  } catch (err) {
    if (!(err instanceof FinderError || err instanceof IntOrPercentError)) throw err;
    onPdb(
      'Warning',
      EVENT_CALCULATE_EXPECTED_POD_COUNT_FAILED,
      `Failed to calculate the number of expected pods: ${err.message}`,
    );
    return fail(err.message, pods);
  }
  if (counts.unmanaged.length > 0) onPdb('Warning', EVENT_UNMANAGED_PODS, unmanagedPodsNote(pdb, counts.unmanaged));

  const disrupted = buildDisruptedPods(pdb, pods, nowMs);
  for (const pod of disrupted.expired) {
    events.push({
      subject: 'pod',
      regarding: pod,
      type: 'Warning',
      reason: EVENT_NOT_DELETED,
      action: ACTION_SYNC,
      note: notDeletedNote(pdb),
    });
  }
  const currentHealthy = countHealthy(pods, disrupted.kept, nowMs);
  const status = nextStatus(
    pdb,
    { currentHealthy, desiredHealthy: counts.desired, expectedPods: counts.expected },
    disrupted.kept,
    now,
  );
  return {
    status,
    events,
    recheckAtMs: disrupted.recheckAtMs,
    controllers: [...new Set([...controllersOf(pods), ...counts.controllers])],
    pods,
  };
}
