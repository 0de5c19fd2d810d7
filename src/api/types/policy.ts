/** `policy/v1` shapes as raw JSON: PodDisruptionBudget and the pod `eviction` subresource body. */
import type { Condition, IntOrString, KubeObject, LabelSelector } from '../meta.ts';
import type { Open } from './core.ts';
import type { DeleteOptions } from './misc.ts';

/**
 * `IfHealthyBudget` (default): running but not yet healthy pods are evictable only while currentHealthy is at
 * least desiredHealthy; `AlwaysAllow`: they are always evictable. Clients must refuse eviction of unhealthy
 * pods on an unrecognized policy.
 */
export type UnhealthyPodEvictionPolicyType = Open<'IfHealthyBudget' | 'AlwaysAllow'>;

export interface PodDisruptionBudgetSpec {
  /** Eviction allowed if at least this many selected pods remain available; exclusive with maxUnavailable. */
  minAvailable?: IntOrString;
  /** Eviction allowed if at most this many selected pods are unavailable; 0 blocks all voluntary evictions. */
  maxUnavailable?: IntOrString;
  /** Null matches no pods; an empty selector matches every pod in the namespace. */
  selector?: LabelSelector | null;
  unhealthyPodEvictionPolicy?: UnhealthyPodEvictionPolicyType;
}

export interface PodDisruptionBudgetStatus {
  /** Status is valid only if equal to the object's generation. */
  observedGeneration?: number;
  /** Pod name to the time its eviction was processed, until the deletion is observed or a timeout passes. */
  disruptedPods?: Record<string, string>;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
  /** `DisruptionAllowed`: reasons `SyncFailed` (False), `InsufficientPods` (False), `SufficientPods` (True). */
  conditions?: Condition[];
}

/** Bounds voluntary disruption of a set of pods (spec §2.8). A pod is healthy when its `Ready` condition is `True`. */
export interface PodDisruptionBudget extends KubeObject {
  spec?: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}

/** Body of `POST .../pods/{name}/eviction`: `metadata.name` and `metadata.namespace` name the pod. */
export interface Eviction extends KubeObject {
  deleteOptions?: DeleteOptions;
}
