/**
 * The disruption controller's fixed values: timeouts and the reasons of the events it records (reference
 * notes §0, §1.7, §1.11). The condition names it shares with eviction are src/api/disruption-conditions.ts's.
 */

/** How long a `status.disruptedPods` entry keeps its pod out of `currentHealthy` (`DeletionTimeout`). */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

/** How long a `DisruptionTarget=True` pod condition may stand on a pod that was not deleted. */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60_000;

/** The `DisruptionTarget` reason that is never treated as stale. */
export const TERMINATION_BY_KUBELET = 'TerminationByKubelet';

/** Event reasons (§1.11). */
export const EVENT_NO_PODS = 'NoPods';
export const EVENT_CALCULATE_EXPECTED_POD_COUNT_FAILED = 'CalculateExpectedPodCountFailed';
export const EVENT_UNMANAGED_PODS = 'UnmanagedPods';
export const EVENT_NOT_DELETED = 'NotDeleted';
export const EVENT_MULTIPLE_PDBS = 'MultiplePodDisruptionBudgets';

/** The `action` field of the events (events.k8s.io requires one; the reference's legacy recorder has none). */
export const ACTION_SYNC = 'Sync';
export const ACTION_MATCH = 'MatchPodDisruptionBudgets';

/** Key prefix that routes a queue item to the stale-DisruptionTarget cleanup instead of a PDB sync. */
export const STALE_POD_KEY_PREFIX = 'pod:';
