/** `apps/v1` shapes as raw JSON: StatefulSet, Deployment, ReplicaSet, ControllerRevision. */
import type { ConditionStatus, IntOrString, KubeObject, LabelSelector } from '../meta.ts';
import type { PersistentVolumeClaim, PodTemplateSpec } from './core.ts';

// ---------------------------------------------------------------------------------------------
// StatefulSet (spec §2.12)

export interface RollingUpdateStatefulSetStrategy {
  /** Default 0; pods with ordinal from replicas-1 down to partition are updated, lower ordinals untouched. */
  partition?: number;
  /**
   * Default 1; cannot be 0; a percentage rounds up. Counts unavailable pods in ordinals 0 to replicas-1;
   * may have no effect with `OrderedReady`. Beta, on by default.
   */
  maxUnavailable?: IntOrString;
}

export type StatefulSetUpdateStrategyType = 'RollingUpdate' | 'OnDelete' | 'Recreate';

export interface StatefulSetUpdateStrategy {
  /**
   * `RollingUpdate` (default); `OnDelete`: pods are recreated only when deleted by hand (scale-up pods use
   * updateRevision); `Recreate` (alpha, gate `StatefulSetRecreateStrategy`): all old pods fully terminate first.
   */
  type?: StatefulSetUpdateStrategyType;
  rollingUpdate?: RollingUpdateStatefulSetStrategy;
}

export type PersistentVolumeClaimRetentionPolicyType = 'Retain' | 'Delete';

export interface StatefulSetPersistentVolumeClaimRetentionPolicy {
  /** Default `Retain`. */
  whenDeleted?: PersistentVolumeClaimRetentionPolicyType;
  /** Default `Retain`. */
  whenScaled?: PersistentVolumeClaimRetentionPolicyType;
}

export interface StatefulSetOrdinals {
  /** First ordinal, default 0; indices run over [start, start + replicas). */
  start?: number;
}

export type PodManagementPolicyType = 'OrderedReady' | 'Parallel';

export interface StatefulSetSpec {
  /** Default 1. */
  replicas?: number;
  /** Required; must match the pod template labels. */
  selector: LabelSelector;
  /** Pods are named `<set_name>-<ordinal>`; the only allowed restartPolicy is `Always`. */
  template: PodTemplateSpec;
  /**
   * Every claim needs a volumeMount with the same name in a template container; takes precedence over
   * template volumes of the same name.
   */
  volumeClaimTemplates?: PersistentVolumeClaim[];
  /** Governing service; pods get DNS names `<pod_name>.<serviceName>.<namespace>.svc.<cluster_domain>`. */
  serviceName?: string;
  /**
   * `OrderedReady` (default): create in increasing ordinal order waiting for readiness, delete in reverse,
   * one pod at a time; `Parallel`: create and delete without waiting.
   */
  podManagementPolicy?: PodManagementPolicyType;
  updateStrategy?: StatefulSetUpdateStrategy;
  /** Default 10. */
  revisionHistoryLimit?: number;
  /** Default 0. */
  minReadySeconds?: number;
  persistentVolumeClaimRetentionPolicy?: StatefulSetPersistentVolumeClaimRetentionPolicy;
  ordinals?: StatefulSetOrdinals;
}

export interface StatefulSetCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  /** Required. */
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  conditions?: StatefulSetCondition[];
}

/** A set of pods with stable network and storage identity (spec §2.12). `status` may be out of date. */
export interface StatefulSet extends KubeObject {
  spec: StatefulSetSpec;
  status?: StatefulSetStatus;
}

// ---------------------------------------------------------------------------------------------
// Deployment

export interface RollingUpdateDeployment {
  /** Default 25%; rounds down; cannot be 0 when maxSurge is 0. */
  maxUnavailable?: IntOrString;
  /** Default 25%; rounds up. */
  maxSurge?: IntOrString;
}

export interface DeploymentStrategy {
  /** Default `RollingUpdate`. */
  type?: 'Recreate' | 'RollingUpdate';
  rollingUpdate?: RollingUpdateDeployment;
}

export interface DeploymentSpec {
  /** Default 1. */
  replicas?: number;
  /** Must match the template labels; immutable. */
  selector: LabelSelector;
  template: PodTemplateSpec;
  strategy?: DeploymentStrategy;
  minReadySeconds?: number;
  /** Default 10. */
  revisionHistoryLimit?: number;
  paused?: boolean;
  /** Default 600. */
  progressDeadlineSeconds?: number;
}

export interface DeploymentCondition {
  /** `Available`, `Progressing`, `ReplicaFailure`. */
  type: string;
  status: ConditionStatus;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  terminatingReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
}

/** Declarative updates of pods through ReplicaSets. */
export interface Deployment extends KubeObject {
  spec?: DeploymentSpec;
  status?: DeploymentStatus;
}

// ---------------------------------------------------------------------------------------------
// ReplicaSet

export interface ReplicaSetSpec {
  /** Default 1. */
  replicas?: number;
  minReadySeconds?: number;
  /** Must match the template labels. */
  selector: LabelSelector;
  template?: PodTemplateSpec;
}

export interface ReplicaSetCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  terminatingReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicaSetCondition[];
}

/** Keeps a number of identical pods running. */
export interface ReplicaSet extends KubeObject {
  spec?: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

// ---------------------------------------------------------------------------------------------
// ControllerRevision (spec §2.9)

/**
 * An immutable snapshot of controller state (spec §2.9). After creation the object cannot be updated,
 * only deleted. Beta; the representation may change.
 */
export interface ControllerRevision extends KubeObject {
  /** Required raw serialized state; immutable: validation rejects any request mutating it. */
  data: unknown;
  /** Revision of the state in `data`. */
  revision?: number;
}
