/**
 * Validation and defaulting of the documented resources, looked up by kind.
 *
 * Validators take raw JSON (never trusted) and answer FieldErrors; some answer a promise (the CSR request
 * signature is checked with WebCrypto), so callers `await` every result. Defaulters mutate the object in place.
 */

import type { FieldError } from '../../api/field-errors.ts';
import {
  defaultAPIService,
  validateAPIServiceCreate,
  validateAPIServiceStatusUpdate,
  validateAPIServiceUpdate,
} from './api-service.ts';
import {
  defaultCsrConditions,
  validateCertificateSigningRequestApprovalUpdate,
  validateCertificateSigningRequestCreate,
  validateCertificateSigningRequestStatusUpdate,
  validateCertificateSigningRequestUpdate,
} from './certificate-signing-request.ts';
import { validateClusterTrustBundleCreate, validateClusterTrustBundleUpdate } from './cluster-trust-bundle.ts';
import { validateConfigMapCreate, validateConfigMapUpdate } from './config-map.ts';
import type { ValidationContext } from './context.ts';
import { validateControllerRevisionCreate, validateControllerRevisionUpdate } from './controller-revision.ts';
import { defaultIngressClass, validateIngressClassCreate, validateIngressClassUpdate } from './ingress-class.ts';
import { validateLeaseCreate, validateLeaseUpdate } from './lease.ts';
import { validateLeaseCandidateCreate, validateLeaseCandidateUpdate } from './lease-candidate.ts';
import { defaultLimitRange, validateLimitRangeCreate, validateLimitRangeUpdate } from './limit-range.ts';
import { validatePodCreate, validatePodUpdate } from './pod.ts';
import {
  validatePodDisruptionBudgetCreate,
  validatePodDisruptionBudgetStatusUpdate,
  validatePodDisruptionBudgetUpdate,
} from './pod-disruption-budget.ts';
import { validateClusterRoleCreate, validateRoleCreate, validateRoleUpdate } from './role.ts';
import {
  defaultRoleBinding,
  validateClusterRoleBindingCreate,
  validateClusterRoleBindingUpdate,
  validateRoleBindingCreate,
  validateRoleBindingUpdate,
} from './role-binding.ts';
import { validateRuntimeClassCreate, validateRuntimeClassUpdate } from './runtime-class.ts';
import {
  defaultStatefulSet,
  validateStatefulSetCreate,
  validateStatefulSetStatusUpdate,
  validateStatefulSetUpdate,
} from './stateful-set.ts';
import {
  defaultPersistentVolume,
  defaultStorageClass,
  validatePersistentVolumeCreate,
  validatePersistentVolumeUpdate,
  validateStorageClassCreate,
  validateStorageClassUpdate,
} from './storage.ts';
import {
  defaultValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyCreate,
  validateValidatingAdmissionPolicyStatusUpdate,
  validateValidatingAdmissionPolicyUpdate,
} from './validating-admission-policy.ts';

export type ValidatedKind =
  | 'Pod'
  | 'Role'
  | 'ClusterRole'
  | 'ConfigMap'
  | 'CertificateSigningRequest'
  | 'ClusterTrustBundle'
  | 'IngressClass'
  | 'RuntimeClass'
  | 'PersistentVolume'
  | 'StorageClass'
  | 'LimitRange'
  | 'APIService'
  | 'PodDisruptionBudget'
  | 'ControllerRevision'
  | 'Lease'
  | 'LeaseCandidate'
  | 'StatefulSet'
  | 'ValidatingAdmissionPolicy'
  | 'RoleBinding'
  | 'ClusterRoleBinding';

export type Validation = FieldError[] | Promise<FieldError[]>;
export type CreateValidator = (obj: unknown, ctx: ValidationContext) => Validation;
export type UpdateValidator = (obj: unknown, old: unknown, ctx: ValidationContext) => Validation;
export type Defaulter = (obj: unknown, ctx: ValidationContext) => void;

export interface KindValidators {
  create?: CreateValidator;
  /** An update of the main resource. */
  update?: UpdateValidator;
  /** An update through the `/status` subresource. */
  statusUpdate?: UpdateValidator;
  /** An update through the `/approval` subresource (CertificateSigningRequest only). */
  approvalUpdate?: UpdateValidator;
  /** Defaults applied to the decoded object before validation of a create or an update of the main resource. */
  defaults?: Defaulter;
}

export const validators: Record<ValidatedKind, KindValidators> = {
  CertificateSigningRequest: {
    create: validateCertificateSigningRequestCreate,
    update: validateCertificateSigningRequestUpdate,
    statusUpdate: validateCertificateSigningRequestStatusUpdate,
    approvalUpdate: validateCertificateSigningRequestApprovalUpdate,
  },
  ClusterTrustBundle: { create: validateClusterTrustBundleCreate, update: validateClusterTrustBundleUpdate },
  IngressClass: {
    create: validateIngressClassCreate,
    update: validateIngressClassUpdate,
    defaults: defaultIngressClass,
  },
  RuntimeClass: { create: validateRuntimeClassCreate, update: validateRuntimeClassUpdate },
  ConfigMap: { create: validateConfigMapCreate, update: validateConfigMapUpdate },
  Pod: { create: validatePodCreate, update: validatePodUpdate },
  Role: { create: validateRoleCreate, update: validateRoleUpdate },
  ClusterRole: { create: validateClusterRoleCreate, update: validateRoleUpdate },
  PersistentVolume: {
    create: validatePersistentVolumeCreate,
    update: validatePersistentVolumeUpdate,
    defaults: defaultPersistentVolume,
  },
  StorageClass: {
    create: validateStorageClassCreate,
    update: validateStorageClassUpdate,
    defaults: defaultStorageClass,
  },
  LimitRange: { create: validateLimitRangeCreate, update: validateLimitRangeUpdate, defaults: defaultLimitRange },
  APIService: {
    create: validateAPIServiceCreate,
    update: validateAPIServiceUpdate,
    statusUpdate: validateAPIServiceStatusUpdate,
    defaults: defaultAPIService,
  },
  PodDisruptionBudget: {
    create: validatePodDisruptionBudgetCreate,
    update: validatePodDisruptionBudgetUpdate,
    statusUpdate: validatePodDisruptionBudgetStatusUpdate,
  },
  ControllerRevision: { create: validateControllerRevisionCreate, update: validateControllerRevisionUpdate },
  Lease: { create: validateLeaseCreate, update: validateLeaseUpdate },
  LeaseCandidate: { create: validateLeaseCandidateCreate, update: validateLeaseCandidateUpdate },
  StatefulSet: {
    create: validateStatefulSetCreate,
    update: validateStatefulSetUpdate,
    statusUpdate: validateStatefulSetStatusUpdate,
    defaults: defaultStatefulSet,
  },
  ValidatingAdmissionPolicy: {
    create: validateValidatingAdmissionPolicyCreate,
    update: validateValidatingAdmissionPolicyUpdate,
    statusUpdate: validateValidatingAdmissionPolicyStatusUpdate,
    defaults: defaultValidatingAdmissionPolicy,
  },
  RoleBinding: { create: validateRoleBindingCreate, update: validateRoleBindingUpdate, defaults: defaultRoleBinding },
  ClusterRoleBinding: {
    create: validateClusterRoleBindingCreate,
    update: validateClusterRoleBindingUpdate,
    defaults: defaultRoleBinding,
  },
};

export function isValidatedKind(kind: string): kind is ValidatedKind {
  return Object.hasOwn(validators, kind);
}

/** The validators of a kind, or `undefined` for kinds without rules here. */
export function validatorsFor(kind: string): KindValidators | undefined {
  return isValidatedKind(kind) ? validators[kind] : undefined;
}

/** The defaulter of a kind, or `undefined` when the reference defaults nothing for it. */
export function defaultsFor(kind: string): Defaulter | undefined {
  return validatorsFor(kind)?.defaults;
}

export * from '../../api/field-errors.ts';
export { formatTime, KEY_USAGES } from './certificate-signing-request.ts';
export { clusterTrustBundleNameFn, MAX_TRUST_BUNDLE_SIZE, validateTrustBundle } from './cluster-trust-bundle.ts';
export * from './common.ts';
export type { ValidationContext } from './context.ts';
export { DEFAULT_FEATURE_GATES, gateEnabled } from './context.ts';
export { effectiveUnhealthyPodEvictionPolicy } from './pod-disruption-budget.ts';
export {
  defaultAPIService,
  defaultCsrConditions,
  defaultIngressClass,
  defaultLimitRange,
  defaultStatefulSet,
  defaultValidatingAdmissionPolicy,
  validateAPIServiceCreate,
  validateAPIServiceStatusUpdate,
  validateAPIServiceUpdate,
  validateCertificateSigningRequestApprovalUpdate,
  validateCertificateSigningRequestCreate,
  validateCertificateSigningRequestStatusUpdate,
  validateCertificateSigningRequestUpdate,
  validateClusterTrustBundleCreate,
  validateClusterTrustBundleUpdate,
  validateControllerRevisionCreate,
  validateControllerRevisionUpdate,
  validateIngressClassCreate,
  validateIngressClassUpdate,
  validateLeaseCandidateCreate,
  validateLeaseCandidateUpdate,
  validateLeaseCreate,
  validateLeaseUpdate,
  validateLimitRangeCreate,
  validateLimitRangeUpdate,
  validatePodDisruptionBudgetCreate,
  validatePodDisruptionBudgetStatusUpdate,
  validatePodDisruptionBudgetUpdate,
  validateRuntimeClassCreate,
  validateRuntimeClassUpdate,
  validateStatefulSetCreate,
  validateStatefulSetStatusUpdate,
  validateStatefulSetUpdate,
  validateValidatingAdmissionPolicyCreate,
  validateValidatingAdmissionPolicyStatusUpdate,
  validateValidatingAdmissionPolicyUpdate,
};
