/**
 * Review shapes as raw JSON, evaluated on create and never stored: the `authorization.<group suffix>/v1`
 * access and rules reviews, and the `authentication.<group suffix>/v1` TokenReview and SelfSubjectReview.
 */
import type { KubeObject, LabelSelectorRequirement } from '../meta.ts';

// ---------------------------------------------------------------------------------------------
// authorization

export interface FieldSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface FieldSelectorAttributes {
  /** Exclusive with `requirements`. */
  rawSelector?: string;
  requirements?: FieldSelectorRequirement[];
}

export interface LabelSelectorAttributes {
  /** Exclusive with `requirements`. */
  rawSelector?: string;
  requirements?: LabelSelectorRequirement[];
}

export interface ResourceAttributes {
  /** Empty means all namespaces for namespaced resources, and is required empty for cluster-scoped ones. */
  namespace?: string;
  /** `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`, or `*`. */
  verb?: string;
  /** `*` means all. */
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  /** Empty means all names (for get, update, delete). */
  name?: string;
  fieldSelector?: FieldSelectorAttributes;
  labelSelector?: LabelSelectorAttributes;
}

export interface NonResourceAttributes {
  path?: string;
  verb?: string;
}

export interface SubjectAccessReviewSpec {
  /** Exactly one of resourceAttributes and nonResourceAttributes. */
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: NonResourceAttributes;
  /** At least one of user and groups. */
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

export interface SubjectAccessReviewStatus {
  /** Required. */
  allowed: boolean;
  /** Short-circuits: no other authorizer is consulted. `allowed` false with `denied` false means no opinion. */
  denied?: boolean;
  reason?: string;
  /** An authorizer failed; the answer may still be usable. */
  evaluationError?: string;
}

/** Asks whether a given user may perform an action. Cluster-scoped. */
export interface SubjectAccessReview extends KubeObject {
  spec: SubjectAccessReviewSpec;
  status?: SubjectAccessReviewStatus;
}

/** A SubjectAccessReview restricted to one namespace: `spec.resourceAttributes.namespace` must match `metadata.namespace`. */
export interface LocalSubjectAccessReview extends KubeObject {
  spec: SubjectAccessReviewSpec;
  status?: SubjectAccessReviewStatus;
}

export interface SelfSubjectAccessReviewSpec {
  /** Exactly one of resourceAttributes and nonResourceAttributes. */
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: NonResourceAttributes;
}

/** Asks whether the requesting user may perform an action. */
export interface SelfSubjectAccessReview extends KubeObject {
  spec: SelfSubjectAccessReviewSpec;
  status?: SubjectAccessReviewStatus;
}

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface SubjectRulesReviewStatus {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** True when an authorizer cannot enumerate its rules; the lists may then be partial. */
  incomplete: boolean;
  evaluationError?: string;
}

/** Lists the actions the requesting user may perform in a namespace. */
export interface SelfSubjectRulesReview extends KubeObject {
  spec: { namespace?: string };
  status?: SubjectRulesReviewStatus;
}

// ---------------------------------------------------------------------------------------------
// authentication

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface TokenReviewSpec {
  /** The opaque bearer token. */
  token?: string;
  /** The token must be valid for at least one; empty means the API server's audiences. */
  audiences?: string[];
}

export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: UserInfo;
  /** The subset of requested audiences the token is valid for. */
  audiences?: string[];
  error?: string;
}

/** Authenticates a bearer token. Cluster-scoped. */
export interface TokenReview extends KubeObject {
  spec: TokenReviewSpec;
  status?: TokenReviewStatus;
}

/** Returns the requesting user's own attributes. */
export interface SelfSubjectReview extends KubeObject {
  status?: { userInfo?: UserInfo };
}
