/** The admission chain of the embedded control plane, in the reference's order. */
import type { Naming } from '../../api/naming.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { AuthorizeFn } from '../../cel/ext/authorizer.ts';
import type { AdmissionPlugin } from '../admission.ts';
import type { Storage } from '../storage.ts';
import type { AccessChecker } from './authorize.ts';
import { certificatesAdmission } from './certificates.ts';
import { defaultIngressClass, defaultStorageClass } from './default-class.ts';
import { limitRanger } from './limit-ranger.ts';
import { nodeRestrictionAdmission } from './node-restriction.ts';
import { defaultTolerationSeconds, priorityAdmission, serviceAccountAdmission } from './pod-defaults.ts';
import { runtimeClassAdmission } from './runtime-class.ts';
import { storageObjectInUseProtection } from './storage-object-in-use.ts';
import { taintNodesByCondition } from './taint-nodes.ts';
import { validatingAdmissionPolicy } from './validating-admission-policy.ts';

export function standardAdmission(
  registry: ResourceRegistry,
  storage: Storage,
  can: AccessChecker,
  subjectOrganizations: (csrPem: string) => string[],
  authorize: AuthorizeFn,
): AdmissionPlugin[] {
  const n: Naming = registry.naming;
  return [
    limitRanger(registry, storage, n),
    serviceAccountAdmission(registry, storage, n),
    nodeRestrictionAdmission(registry, storage),
    taintNodesByCondition(n),
    priorityAdmission(),
    defaultTolerationSeconds(n),
    runtimeClassAdmission(registry, storage, n),
    defaultIngressClass(registry, storage, n),
    defaultStorageClass(registry, storage, n),
    storageObjectInUseProtection(n),
    certificatesAdmission(n, can, subjectOrganizations),
    validatingAdmissionPolicy(registry, storage, n, authorize),
  ];
}
