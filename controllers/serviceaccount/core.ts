/**
 * The service account controller's decision, free of I/O: whether a namespace needs its `default` service
 * account created. Only an Active namespace gets one: a namespace that is terminating or gone refuses new content.
 */
import { isActiveNamespace } from '../../src/api/namespaces.ts';
import type { Namespace } from '../../src/api/types/core.ts';

/** The service account ensured in every namespace, as the reference's controller's default options. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/** Whether to create the `default` service account in `ns`, given whether it has one. */
export function needsDefaultServiceAccount(ns: Namespace | undefined, has: boolean): boolean {
  return isActiveNamespace(ns) && !has;
}
