/**
 * Shapes of smaller groups as raw JSON: DeleteOptions (meta), Scale (`autoscaling/v1`), RuntimeClass
 * (`node.<group suffix>/v1`) and APIService (`apiregistration.<group suffix>/v1`).
 */
import type { ConditionStatus, KubeObject } from '../meta.ts';
import type { ResourceList, Toleration } from './core.ts';

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export type DeletionPropagation = 'Orphan' | 'Background' | 'Foreground';

/** Options of a delete call, sent as the request body or as query parameters. */
export interface DeleteOptions {
  apiVersion?: string;
  kind?: string;
  /** Seconds before the object is deleted; 0 means immediately; unset uses the kind's default. */
  gracePeriodSeconds?: number;
  /** Delete only if uid and resourceVersion still match. */
  preconditions?: Preconditions;
  /** Deprecated in favor of `propagationPolicy`; may not be set together with it. */
  orphanDependents?: boolean;
  propagationPolicy?: DeletionPropagation;
  /** `["All"]` processes every stage without persisting. */
  dryRun?: string[];
  /** Lets a corrupt object that cannot be read be deleted anyway. */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

/** The `scale` subresource of a workload (`autoscaling/v1`). */
export interface Scale extends KubeObject {
  spec?: { replicas?: number };
  /** `selector` is the label selector of the pods in string form (`a=b,c in (d)`). */
  status?: { replicas: number; selector?: string };
}

// ---------------------------------------------------------------------------------------------
// RuntimeClass (spec §2.4)

export interface Overhead {
  /** Fixed resource overhead of running a pod. */
  podFixed?: ResourceList;
}

export interface Scheduling {
  /** Labels nodes must carry; merged with the pod's node selector; a conflict rejects the pod at admission. */
  nodeSelector?: Record<string, string>;
  /** Appended to the pod's tolerations at admission, excluding duplicates. */
  tolerations?: Toleration[];
}

/** Selects a container runtime configuration for a pod's containers (spec §2.4). Cluster-scoped. */
export interface RuntimeClass extends KubeObject {
  /** Required; lowercase DNS label (RFC 1123); immutable; same name means equivalent on every node. */
  handler: string;
  overhead?: Overhead;
  /** When nil, all nodes are assumed to support the class. */
  scheduling?: Scheduling;
}

// ---------------------------------------------------------------------------------------------
// APIService (spec §2.7)

export interface ServiceReference {
  namespace?: string;
  name?: string;
  /** Default 443, range 1 to 65535. */
  port?: number;
}

export interface APIServiceSpec {
  /** Must be reachable on port 443 (https only); when nil the group version is handled locally. */
  service?: ServiceReference;
  group?: string;
  version?: string;
  /** Strongly discouraged. */
  insecureSkipTLSVerify?: boolean;
  /** PEM CA bundle (base64 in JSON) for the server certificate; unset means system trust roots. */
  caBundle?: string;
  /** Required; higher is preferred; groups sort highest first, then by object name. */
  groupPriorityMinimum: number;
  /** Required, greater than zero; orders versions inside a group, highest first, ties by version string. */
  versionPriority: number;
}

export interface APIServiceCondition {
  /** E.g. `Available`. */
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  /** One-word CamelCase. */
  reason?: string;
  message?: string;
}

export interface APIServiceStatus {
  /** Merge patch keyed by `type`. */
  conditions?: APIServiceCondition[];
}

/** Registers an extension server for one group and version; the name must be `<version>.<group>` (spec §2.7). */
export interface APIService extends KubeObject {
  spec?: APIServiceSpec;
  status?: APIServiceStatus;
}
