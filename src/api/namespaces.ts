import type { Namespace } from './types/core.ts';

/** Whether new content may be created in the namespace: it exists, is Active and is not being deleted. */
export function isActiveNamespace(ns: Namespace | undefined): ns is Namespace {
  return ns?.status?.phase === 'Active' && !ns.metadata.deletionTimestamp;
}
