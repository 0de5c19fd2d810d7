/** The write pipeline's extension points: who is asking, and admission plugins that mutate or reject writes. */
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/registry.ts';
import { jsonEqual } from '../util/equal.ts';

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  operation: Operation;
  rt: ResourceType;
  subresource?: string;
  namespace?: string;
  name: string;
  /** The object to be stored; mutating plugins may change it in place (it is the request's own copy). */
  object?: KubeObject;
  oldObject?: KubeObject;
  user: UserInfo;
  dryRun: boolean;
  /** `Warning` header texts for the response; plugins append. */
  warnings?: string[];
  /** Annotations for the request's audit event (`<key>` → value); the first writer of a key wins. */
  auditAnnotations?: Record<string, string>;
}

/**
 * An admission plugin. `admit` runs first (mutating, in registration order), then validation of the
 * object, then every `validate`. Either rejects a request by throwing an ApiError.
 */
export interface AdmissionPlugin {
  name: string;
  admit?(a: AdmissionAttributes): void | Promise<void>;
  validate?(a: AdmissionAttributes): void | Promise<void>;
}

/**
 * Whether an update changes nothing but what the garbage collector writes (owner references, finalizers) and the
 * write's own bookkeeping (managed fields, resourceVersion, selfLink), as the reference's `IsOnlyMutatingGCFields`:
 * such updates skip the checks of what an object grants (CSR attest, RBAC escalation).
 */
export function onlyGcFieldsChanged(next: object, old: object): boolean {
  const strip = (o: object) => {
    const { metadata, ...rest } = o as { metadata?: Record<string, unknown> };
    const { ownerReferences, finalizers, managedFields, resourceVersion, selfLink, ...kept } = metadata ?? {};
    return { ...rest, metadata: kept };
  };
  return jsonEqual(strip(next), strip(old));
}
