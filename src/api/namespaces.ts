import type { Namespace } from './types/core.ts';

/** The service account every namespace has, as the reference's serviceaccount controller's default options. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/** Whether new content may be created in the namespace: it exists, is Active and is not being deleted. */
export function isActiveNamespace(ns: Namespace | undefined): ns is Namespace {
  return ns?.status?.phase === 'Active' && !ns.metadata.deletionTimestamp;
}

/**
 * Whether to create the `default` service account in `ns`, given whether it has one: only an Active namespace gets
 * one, as one that is terminating or gone refuses new content. The serviceaccount controller and the embedded
 * plane (which stands in for it) both decide so.
 */
export function needsDefaultServiceAccount(ns: Namespace | undefined, has: boolean): boolean {
  return isActiveNamespace(ns) && !has;
}
