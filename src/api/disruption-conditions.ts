/**
 * Condition types and reasons of voluntary disruption. The disruption controller writes them, the eviction
 * rules and the plane's eviction subresource read and write them on the same objects: one spelling for all.
 */

/** The PodDisruptionBudget condition the disruption controller owns, and its three reasons. */
export const DISRUPTION_ALLOWED = 'DisruptionAllowed';
export const SUFFICIENT_PODS = 'SufficientPods';
export const INSUFFICIENT_PODS = 'InsufficientPods';
export const SYNC_FAILED = 'SyncFailed';

/** The pod condition an eviction sets before deleting, which the controller clears when it goes stale. */
export const DISRUPTION_TARGET = 'DisruptionTarget';
