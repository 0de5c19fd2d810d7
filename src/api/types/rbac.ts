/** `rbac.authorization.<group suffix>/v1` shapes as raw JSON. */
import type { KubeObject, LabelSelector } from '../meta.ts';
import type { Open } from './core.ts';

export interface PolicyRule {
  /** Required; `*` means all. */
  verbs: string[];
  /** `""` is the core group; `*` means all. */
  apiGroups?: string[];
  /** `*` means all; `pods/status` names a subresource. */
  resources?: string[];
  resourceNames?: string[];
  /** Only in ClusterRoles bound by ClusterRoleBindings; mutually exclusive with resources. */
  nonResourceURLs?: string[];
}

export interface AggregationRule {
  /** Roles matching any selector have their rules added to this role. */
  clusterRoleSelectors?: LabelSelector[];
}

/** A namespaced set of policy rules. */
export interface Role extends KubeObject {
  rules?: PolicyRule[];
}

/** A cluster-level set of policy rules, referenced as a unit by role bindings (spec §2.2). */
export interface ClusterRole extends KubeObject {
  rules?: PolicyRule[];
  /** When set, `rules` are controller-managed and direct changes to them are overwritten. */
  aggregationRule?: AggregationRule;
}

export interface Subject {
  /** `User`, `Group` or `ServiceAccount`. */
  kind: Open<'User' | 'Group' | 'ServiceAccount'>;
  /** Empty for ServiceAccount; the RBAC group for User and Group. */
  apiGroup?: string;
  name: string;
  /** Required for ServiceAccount subjects. */
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  /** `Role` or `ClusterRole`. */
  kind: string;
  name: string;
}

/** Grants a Role's or ClusterRole's rules to subjects inside one namespace. `roleRef` is immutable. */
export interface RoleBinding extends KubeObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}

/** Grants a ClusterRole's rules to subjects cluster-wide. `roleRef` is immutable. */
export interface ClusterRoleBinding extends KubeObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}
