/**
 * Core group (`v1`) shapes as raw JSON: Namespace, Pod and its parts, PersistentVolumeClaim, Service,
 * Endpoints, Node, LimitRange, ReplicationController, Secret, ConfigMap, plus the small reference
 * types other groups reuse. Timestamps are RFC 3339 strings.
 */
import type { Condition, ConditionStatus, IntOrString, KubeObject, LabelSelector, ObjectMeta } from '../meta.ts';

/** A string union that still accepts values this code does not know (open enums on the wire). */
export type Open<T extends string> = T | (string & Record<never, never>);

/** A resource quantity such as `"500m"` or `"1Gi"`; the server always answers with strings, clients may send numbers. */
export type Quantity = string | number;

/** Quantities by resource name (`cpu`, `memory`, `storage`, `pods`, ...). */
export type ResourceList = Record<string, Quantity>;

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  /** A path inside the object, e.g. `spec.containers{name}`. */
  fieldPath?: string;
}

export interface LocalObjectReference {
  name?: string;
}

export interface TypedLocalObjectReference {
  /** When unset, `kind` must be in the core group. */
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface TypedObjectReference extends TypedLocalObjectReference {
  namespace?: string;
}

// ---------------------------------------------------------------------------------------------
// Namespace

export type NamespacePhase = 'Active' | 'Terminating';

export interface NamespaceCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** A cluster-scoped partition for names; deleting it removes everything inside before `spec.finalizers` empties. */
export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: NamespacePhase; conditions?: NamespaceCondition[] };
}

// ---------------------------------------------------------------------------------------------
// Pod: containers

export interface ContainerPort {
  name?: string;
  /** Required; 1 to 65535. */
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  /** Default `TCP`. */
  protocol?: Protocol;
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: Quantity;
}

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVarSource {
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  configMapKeyRef?: KeySelector;
  secretKeyRef?: KeySelector;
}

export interface EnvVar {
  name: string;
  /** `$(VAR)` references to earlier variables are expanded; `$$` escapes. Ignored when `valueFrom` is set. */
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface ResourceClaimRef {
  name: string;
  request?: string;
}

export interface ResourceRequirements {
  limits?: ResourceList;
  /** When omitted, defaults to `limits` if set. */
  requests?: ResourceList;
  claims?: ResourceClaimRef[];
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  recursiveReadOnly?: 'Disabled' | 'IfPossible' | 'Enabled';
  subPath?: string;
  /** Mutually exclusive with `subPath`. */
  subPathExpr?: string;
  mountPropagation?: 'None' | 'HostToContainer' | 'Bidirectional';
}

export interface VolumeDevice {
  name: string;
  devicePath: string;
}

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface ProbeHandler {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port: IntOrString; host?: string; scheme?: 'HTTP' | 'HTTPS'; httpHeaders?: HTTPHeader[] };
  tcpSocket?: { port: IntOrString; host?: string };
  grpc?: { port: number; service?: string };
}

export interface Probe extends ProbeHandler {
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  /** Must be 1 for liveness and startup probes. */
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface ContainerResizePolicy {
  resourceName: string;
  restartPolicy: 'NotRequired' | 'RestartContainer';
}

export interface Container {
  /** DNS label, unique within the pod. */
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  envFrom?: EnvFromSource[];
  env?: EnvVar[];
  resources?: ResourceRequirements;
  resizePolicy?: ContainerResizePolicy[];
  /** Only for init containers: `Always` makes it a sidecar that keeps running. */
  restartPolicy?: 'Always';
  volumeMounts?: VolumeMount[];
  volumeDevices?: VolumeDevice[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: Record<string, unknown>;
  terminationMessagePath?: string;
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  /** Defaults to `Always` for the `:latest` tag or no tag, `IfNotPresent` otherwise. */
  imagePullPolicy?: 'Always' | 'Never' | 'IfNotPresent';
  securityContext?: Record<string, unknown>;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Pod: volumes, scheduling

/**
 * A pod volume, kept loose: the name plus exactly one source. The common sources are typed;
 * any other source passes through unchanged.
 */
export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  configMap?: {
    name?: string;
    items?: { key: string; path: string; mode?: number }[];
    defaultMode?: number;
    optional?: boolean;
  };
  secret?: {
    secretName?: string;
    items?: { key: string; path: string; mode?: number }[];
    defaultMode?: number;
    optional?: boolean;
  };
  emptyDir?: { medium?: string; sizeLimit?: Quantity };
  hostPath?: { path: string; type?: string };
  projected?: { sources?: Record<string, unknown>[]; defaultMode?: number };
  downwardAPI?: Record<string, unknown>;
  ephemeral?: Record<string, unknown>;
  [source: string]: unknown;
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Toleration {
  /** Empty with operator `Exists` matches every key. */
  key?: string;
  /** Default `Equal`. */
  operator?: 'Exists' | 'Equal';
  /** Must be empty when operator is `Exists`. */
  value?: string;
  /** Empty matches every effect. */
  effect?: TaintEffect;
  /** Only with effect `NoExecute`: how long the pod stays bound after the taint appears; unset means forever. */
  tolerationSeconds?: number;
}

export interface PodReadinessGate {
  conditionType: string;
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface PodSpec {
  volumes?: Volume[];
  initContainers?: Container[];
  /** At least one. */
  containers: Container[];
  ephemeralContainers?: Record<string, unknown>[];
  /** Default `Always`. */
  restartPolicy?: RestartPolicy;
  /** Default 30. */
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  dnsPolicy?: 'ClusterFirstWithHostNet' | 'ClusterFirst' | 'Default' | 'None';
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  /** Deprecated alias of `serviceAccountName`. */
  serviceAccount?: string;
  automountServiceAccountToken?: boolean;
  /** Set by the scheduler (or directly) to bind the pod to a node. */
  nodeName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  shareProcessNamespace?: boolean;
  securityContext?: Record<string, unknown>;
  imagePullSecrets?: LocalObjectReference[];
  hostname?: string;
  subdomain?: string;
  affinity?: Record<string, unknown>;
  schedulerName?: string;
  tolerations?: Toleration[];
  hostAliases?: { ip: string; hostnames?: string[] }[];
  priorityClassName?: string;
  priority?: number;
  dnsConfig?: Record<string, unknown>;
  readinessGates?: PodReadinessGate[];
  runtimeClassName?: string;
  enableServiceLinks?: boolean;
  preemptionPolicy?: 'Never' | 'PreemptLowerPriority';
  /** Set at admission from the RuntimeClass `overhead.podFixed`. */
  overhead?: ResourceList;
  topologySpreadConstraints?: Record<string, unknown>[];
  setHostnameAsFQDN?: boolean;
  os?: { name: string };
  hostUsers?: boolean;
  schedulingGates?: { name: string }[];
  resourceClaims?: Record<string, unknown>[];
  /** Pod-level resources. */
  resources?: ResourceRequirements;
}

/** The pod part of a workload: metadata (labels must match the owner's selector) and spec. */
export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpec;
}

// ---------------------------------------------------------------------------------------------
// Pod: status

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodCondition {
  /** `PodScheduled`, `PodReadyToStartContainers`, `Initialized`, `ContainersReady`, `Ready`, `DisruptionTarget`, or a readiness gate. */
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerStateRunning {
  startedAt?: string;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

/** At most one member is set; none means waiting. */
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
  /** Whether the container passes its readiness probe. */
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  /** Whether the container passed its startup probe (false while it runs). */
  started?: boolean;
  allocatedResources?: ResourceList;
  resources?: ResourceRequirements;
  volumeMounts?: (VolumeMount & { recursiveReadOnly?: string })[];
  stopSignal?: string;
}

export interface PodIP {
  ip: string;
}

export interface PodStatus {
  observedGeneration?: number;
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  /** E.g. `Evicted`. */
  reason?: string;
  nominatedNodeName?: string;
  hostIP?: string;
  hostIPs?: PodIP[];
  podIP?: string;
  podIPs?: PodIP[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: 'Guaranteed' | 'Burstable' | 'BestEffort';
  resize?: string;
  resourceClaimStatuses?: Record<string, unknown>[];
}

/** A group of containers scheduled together on one node. Healthy means a `Ready` condition with status `True`. */
export interface Pod extends KubeObject {
  spec?: PodSpec;
  status?: PodStatus;
}

// ---------------------------------------------------------------------------------------------
// PersistentVolumeClaim

export type PersistentVolumeAccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod';

export interface VolumeResourceRequirements {
  limits?: ResourceList;
  /** `storage` is the requested size. */
  requests?: ResourceList;
}

export interface PersistentVolumeClaimSpec {
  accessModes?: PersistentVolumeAccessMode[];
  selector?: LabelSelector;
  resources?: VolumeResourceRequirements;
  /** The bound volume. */
  volumeName?: string;
  storageClassName?: string;
  /** Default `Filesystem`. */
  volumeMode?: 'Filesystem' | 'Block';
  dataSource?: TypedLocalObjectReference;
  dataSourceRef?: TypedObjectReference;
  volumeAttributesClassName?: string;
}

export interface PersistentVolumeClaimCondition {
  type: string;
  status: ConditionStatus;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface PersistentVolumeClaimStatus {
  phase?: 'Pending' | 'Bound' | 'Lost';
  accessModes?: PersistentVolumeAccessMode[];
  capacity?: ResourceList;
  conditions?: PersistentVolumeClaimCondition[];
  allocatedResources?: ResourceList;
  allocatedResourceStatuses?: Record<string, string>;
  currentVolumeAttributesClassName?: string;
  modifyVolumeStatus?: { targetVolumeAttributesClassName?: string; status: string };
}

/** A request for storage; also the element of a StatefulSet's `volumeClaimTemplates`. */
export interface PersistentVolumeClaim extends KubeObject {
  spec?: PersistentVolumeClaimSpec;
  status?: PersistentVolumeClaimStatus;
}

// ---------------------------------------------------------------------------------------------
// Service and Endpoints

export interface ServicePort {
  /** Required when the service has more than one port. */
  name?: string;
  /** Default `TCP`. */
  protocol?: Protocol;
  appProtocol?: string;
  port: number;
  /** Port number or named container port; defaults to `port`. */
  targetPort?: IntOrString;
  nodePort?: number;
}

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';

export interface ServiceSpec {
  ports?: ServicePort[];
  /** Pods with these labels back the service; unset means endpoints are managed by hand. */
  selector?: Record<string, string>;
  /** `None` makes a headless service. */
  clusterIP?: string;
  clusterIPs?: string[];
  /** Default `ClusterIP`. */
  type?: ServiceType;
  externalIPs?: string[];
  sessionAffinity?: 'ClientIP' | 'None';
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  loadBalancerIP?: string;
  loadBalancerSourceRanges?: string[];
  externalName?: string;
  externalTrafficPolicy?: 'Cluster' | 'Local';
  healthCheckNodePort?: number;
  /** Endpoints include not-ready pods (used by StatefulSet governing services). */
  publishNotReadyAddresses?: boolean;
  ipFamilies?: ('IPv4' | 'IPv6')[];
  ipFamilyPolicy?: 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';
  allocateLoadBalancerNodePorts?: boolean;
  loadBalancerClass?: string;
  internalTrafficPolicy?: 'Cluster' | 'Local';
  trafficDistribution?: string;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
  ipMode?: 'VIP' | 'Proxy';
  ports?: { port: number; protocol: Protocol; error?: string }[];
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: LoadBalancerIngress[] };
  conditions?: Condition[];
}

/** A stable virtual address in front of a set of pods. */
export interface Service extends KubeObject {
  spec?: ServiceSpec;
  status?: ServiceStatus;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: Protocol;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

/** The legacy per-service endpoint list (same name as the service). */
export interface Endpoints extends KubeObject {
  subsets?: EndpointSubset[];
}

// ---------------------------------------------------------------------------------------------
// Node

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  /** When a controller added it (the node lifecycle controller stamps its condition taints). */
  timeAdded?: string;
}

export interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[];
  providerID?: string;
  /** Cordoned: no new pods are scheduled. */
  unschedulable?: boolean;
  taints?: Taint[];
  configSource?: Record<string, unknown>;
  externalID?: string;
}

export interface NodeCondition {
  /** `Ready`, `MemoryPressure`, `DiskPressure`, `PIDPressure`, `NetworkUnavailable`, ... */
  type: string;
  status: ConditionStatus;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface NodeAddress {
  type: Open<'Hostname' | 'InternalIP' | 'ExternalIP' | 'InternalDNS' | 'ExternalDNS'>;
  address: string;
}

/** Identity of the node's software; the agent and proxy version fields pass through untyped. */
export interface NodeSystemInfo {
  machineID?: string;
  systemUUID?: string;
  bootID?: string;
  kernelVersion?: string;
  osImage?: string;
  containerRuntimeVersion?: string;
  operatingSystem?: string;
  architecture?: string;
  [field: string]: unknown;
}

export interface NodeStatus {
  capacity?: ResourceList;
  allocatable?: ResourceList;
  /** Deprecated. */
  phase?: 'Pending' | 'Running' | 'Terminated';
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  /** Ports of the daemons on the node (the node agent's endpoint). */
  daemonEndpoints?: Record<string, { Port: number } | undefined>;
  nodeInfo?: NodeSystemInfo;
  images?: { names?: string[]; sizeBytes?: number }[];
  volumesInUse?: string[];
  volumesAttached?: { name: string; devicePath: string }[];
  config?: Record<string, unknown>;
  runtimeHandlers?: Record<string, unknown>[];
  features?: Record<string, unknown>;
}

/** A worker machine. Cluster-scoped. */
export interface Node extends KubeObject {
  spec?: NodeSpec;
  status?: NodeStatus;
}

// ---------------------------------------------------------------------------------------------
// LimitRange

export interface LimitRangeItem {
  /** Resource kind the limit applies to: `Container`, `Pod`, `PersistentVolumeClaim`. */
  type: Open<'Container' | 'Pod' | 'PersistentVolumeClaim'>;
  /** Maximum usage by resource name. */
  max?: ResourceList;
  /** Minimum usage by resource name. */
  min?: ResourceList;
  /** Default limit by resource name when a limit is omitted. */
  default?: ResourceList;
  /** Default request by resource name when a request is omitted. */
  defaultRequest?: ResourceList;
  /** When set, the resource needs nonzero request and limit, with limit / request at most this value (maximum burst). */
  maxLimitRequestRatio?: ResourceList;
}

export interface LimitRangeSpec {
  limits: LimitRangeItem[];
}

/** Per-namespace minimum, maximum and default resource usage per kind (spec §2.6). */
export interface LimitRange extends KubeObject {
  spec?: LimitRangeSpec;
}

// ---------------------------------------------------------------------------------------------
// ReplicationController

export interface ReplicationControllerSpec {
  /** Default 1. */
  replicas?: number;
  minReadySeconds?: number;
  /** Equality-based label selector; defaults to the template labels. */
  selector?: Record<string, string>;
  template?: PodTemplateSpec;
}

export interface ReplicationControllerCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicationControllerStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicationControllerCondition[];
}

/** The legacy core replica controller (equality selectors only). */
export interface ReplicationController extends KubeObject {
  spec?: ReplicationControllerSpec;
  status?: ReplicationControllerStatus;
}

// ---------------------------------------------------------------------------------------------
// Secret and ConfigMap

/** Opaque data; `data` values are base64, `stringData` is write-only plain text merged into `data`. */
export interface Secret extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  /** Default `Opaque`; e.g. `<domain>/service-account-token`, `<domain>/tls`. */
  type?: string;
  /** Once true, data cannot change and the flag cannot be unset. */
  immutable?: boolean;
}

/** Non-secret configuration; keys of `data` (UTF-8) and `binaryData` (base64) must not overlap. */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}
