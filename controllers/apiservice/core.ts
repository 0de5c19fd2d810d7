/**
 * The decisions of the APIService availability controller, free of I/O: which checks an APIService
 * needs (none for a local one, the Service and EndpointSlice rows of the reference's table, then
 * the discovery probe), the condition each outcome writes, and the status write rules.
 */
import {
  AVAILABLE,
  availableCondition,
  isLocal,
  type Lookup,
  resolveBackend,
  type Target,
  type Unresolved,
} from '../../src/api/apiservice.ts';
import type { Service } from '../../src/api/types/core.ts';
import type { EndpointSlice } from '../../src/api/types/discovery.ts';
import type { APIService, APIServiceStatus } from '../../src/api/types/misc.ts';
import { jsonEqual } from '../../src/util/equal.ts';

export const LOCAL: Unresolved = {
  status: 'True',
  reason: 'Local',
  message: 'Local APIServices are always available',
};
export const PASSED: Unresolved = { status: 'True', reason: 'Passed', message: 'all checks passed' };
export const FAILED_DISCOVERY_CHECK = 'FailedDiscoveryCheck';

/** The next step for one APIService: a condition to write now, or endpoints to probe first. */
export type Check = { condition: Unresolved } | { probe: Target[] };

export function check(apiService: APIService, service: Lookup<Service>, slices: Lookup<EndpointSlice[]>): Check {
  if (isLocal(apiService)) return { condition: LOCAL };
  const resolved = resolveBackend(apiService, service, slices);
  return 'failure' in resolved ? { condition: resolved.failure } : { probe: resolved.targets };
}

export type ProbeOutcome = { ok: true } | { ok: false; message: string };

export function probeCondition(outcome: ProbeOutcome): Unresolved {
  return outcome.ok ? PASSED : { status: 'False', reason: FAILED_DISCOVERY_CHECK, message: outcome.message };
}

export interface StatusUpdate {
  status: APIServiceStatus;
  /** Whether the status differs from the stored one (no write otherwise). */
  changed: boolean;
  /** Available=True before, something else now: what the unavailability counter counts. */
  becameUnavailable: boolean;
}

/**
 * The status with the `Available` condition set: reason and message always, status and
 * `lastTransitionTime` (to `now`) only when the status changes; other conditions are kept.
 */
export function withAvailable(apiService: APIService, condition: Unresolved, now: string): StatusUpdate {
  const old = apiService.status ?? {};
  const current = availableCondition(apiService);
  const next = {
    type: AVAILABLE,
    status: condition.status,
    lastTransitionTime: current && current.status === condition.status ? current.lastTransitionTime : now,
    reason: condition.reason,
    message: condition.message,
  };
  const conditions = current
    ? (old.conditions ?? []).map((c) => (c === current ? next : c))
    : [...(old.conditions ?? []), next];
  const status = { ...old, conditions };
  return {
    status,
    changed: !jsonEqual(old, status),
    becameUnavailable: current?.status === 'True' && condition.status !== 'True',
  };
}
