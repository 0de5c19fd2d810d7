/**
 * Structural schemas of the known fields of every kind the control plane serves, for `fieldValidation`
 * (Ignore / Warn / Strict): a write's body is walked against its kind's schema to find unknown fields.
 *
 * A node is `'any'` (free-form, never checked), a scalar marker, an object with its known fields, a
 * string-keyed map or a list. Scalars are markers only: this is about field names, not value types.
 * Parts the reference types in great depth (affinity, the rarer volume sources) are `'any'` here.
 */

export type Scalar = 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'quantity' | 'time';
export type Node = 'any' | Scalar | ObjectNode | MapNode | ListNode;
export type Fields = Readonly<Record<string, Node>>;
export interface ObjectNode {
  readonly object: Fields;
  /** The reference's `+structType=atomic`: the object is one value, owned and replaced as a whole. */
  readonly atomic?: true;
  /**
   * A pointer in the reference's Go type, absent from its parent's zero value; an object without it is a value
   * struct, which the zero value holds as `{}` (what the reference's Update compares against decides ownership).
   */
  readonly pointer?: true;
}
export interface MapNode {
  readonly map: Node;
  /** The reference's `+mapType=atomic`: the map is one value, owned and replaced as a whole. */
  readonly atomic?: true;
}
/**
 * A list, atomic unless it says otherwise, as the reference's `+listType`, `+listMapKey`, `+patchStrategy` and
 * `+patchMergeKey` markers say: `set` holds unique scalars, `map` objects identified by `mapKeys`; the patch
 * strategy is what strategic merge patch does with it.
 */
export interface ListNode {
  readonly list: Node;
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly mapKeys?: readonly string[];
  readonly patchStrategy?: 'merge';
  readonly patchMergeKey?: string;
  /** Key fields the schema defaults (a port's `protocol`): an item without one is keyed by its default. */
  readonly keyDefaults?: Readonly<Record<string, string>>;
  /** Without `omitempty` in the reference's Go type: its parent's zero value holds it (as null). */
  readonly inZeroValue?: true;
}

const object = (fields: Fields): ObjectNode => ({ object: fields });
const atomicObject = (fields: Fields): ObjectNode => ({ object: fields, atomic: true });
const mapOf = (values: Node): MapNode => ({ map: values });
const atomicMapOf = (values: Node): MapNode => ({ map: values, atomic: true });
/** An optional object field (a Go pointer): absent from the zero value of the object holding it. */
const pointer = (node: ObjectNode): ObjectNode => ({ ...node, pointer: true });
const listOf = (items: Node): ListNode => ({ list: items });
/** A list of objects keyed by `keys`, merged by a strategic patch on `patchMergeKey` (the first key unless given). */
const mapList = (
  items: Node,
  keys: string[],
  patchMergeKey = keys[0],
  keyDefaults?: Record<string, string>,
): ListNode => ({
  list: items,
  listType: 'map',
  mapKeys: keys,
  patchStrategy: 'merge',
  patchMergeKey,
  ...(keyDefaults ? { keyDefaults } : {}),
});
/** A list of unique scalars, merged as a set by a strategic patch. */
const setOf = (items: Node): ListNode => ({ list: items, listType: 'set', patchStrategy: 'merge' });

const strings = listOf('string');
const stringMap = mapOf('string');
const resourceList = mapOf('quantity');

// ---------------------------------------------------------------------------------------------
// Metadata and small shared shapes

const ownerReference = object({
  apiVersion: 'string',
  kind: 'string',
  name: 'string',
  uid: 'string',
  controller: 'boolean',
  blockOwnerDeletion: 'boolean',
});

const managedFieldsEntry = object({
  manager: 'string',
  operation: 'string',
  apiVersion: 'string',
  time: 'time',
  fieldsType: 'string',
  fieldsV1: 'any',
  subresource: 'string',
});

const objectMeta = object({
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'integer',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'integer',
  labels: stringMap,
  annotations: stringMap,
  ownerReferences: mapList(ownerReference, ['uid']),
  finalizers: setOf('string'),
  managedFields: listOf(managedFieldsEntry),
});

/** A top-level object: `apiVersion`, `kind` and `metadata` plus the kind's own fields. */
const kind = (fields: Fields): ObjectNode =>
  object({ apiVersion: 'string', kind: 'string', metadata: objectMeta, ...fields });

const labelSelector = atomicObject({
  matchLabels: stringMap,
  matchExpressions: listOf(object({ key: 'string', operator: 'string', values: strings })),
});

/** The common condition (`metav1.Condition`). */
const condition = object({
  type: 'string',
  status: 'string',
  observedGeneration: 'integer',
  lastTransitionTime: 'time',
  reason: 'string',
  message: 'string',
});

/** A condition of the older per-kind shape; `extra` adds its timestamps such as `lastUpdateTime`. */
const kindCondition = (extra: Fields = {}) =>
  mapList(
    object({
      type: 'string',
      status: 'string',
      lastTransitionTime: 'time',
      reason: 'string',
      message: 'string',
      ...extra,
    }),
    ['type'],
  );

/** `metav1.Condition` lists, keyed by type. */
const conditions = mapList(condition, ['type']);

const objectReference = atomicObject({
  apiVersion: 'string',
  kind: 'string',
  namespace: 'string',
  name: 'string',
  uid: 'string',
  resourceVersion: 'string',
  fieldPath: 'string',
});

const localObjectReference = atomicObject({ name: 'string' });
const typedLocalObjectReference = atomicObject({ apiGroup: 'string', kind: 'string', name: 'string' });
const keySelector = pointer(atomicObject({ name: 'string', key: 'string', optional: 'boolean' }));
const optionalReference = pointer(object({ name: 'string', optional: 'boolean' }));

const resourceRequirements = object({
  limits: resourceList,
  requests: resourceList,
  claims: listOf(object({ name: 'string', request: 'string' })),
});

const toleration = object({
  key: 'string',
  operator: 'string',
  value: 'string',
  effect: 'string',
  tolerationSeconds: 'integer',
});

// ---------------------------------------------------------------------------------------------
// Containers

const exec = object({ command: strings });
const httpGet = object({
  path: 'string',
  port: 'int-or-string',
  host: 'string',
  scheme: 'string',
  httpHeaders: listOf(object({ name: 'string', value: 'string' })),
});
const tcpSocket = object({ port: 'int-or-string', host: 'string' });
const lifecycleHandler = pointer(
  object({
    exec: pointer(exec),
    httpGet: pointer(httpGet),
    tcpSocket: pointer(tcpSocket),
    sleep: pointer(object({ seconds: 'integer' })),
  }),
);

const probe = object({
  exec,
  httpGet,
  tcpSocket,
  grpc: object({ port: 'integer', service: 'string' }),
  initialDelaySeconds: 'integer',
  timeoutSeconds: 'integer',
  periodSeconds: 'integer',
  successThreshold: 'integer',
  failureThreshold: 'integer',
  terminationGracePeriodSeconds: 'integer',
});

const seLinuxOptions = pointer(object({ user: 'string', role: 'string', type: 'string', level: 'string' }));
const windowsOptions = pointer(
  object({
    gmsaCredentialSpecName: 'string',
    gmsaCredentialSpec: 'string',
    runAsUserName: 'string',
    hostProcess: 'boolean',
  }),
);
const profile = pointer(object({ type: 'string', localhostProfile: 'string' }));

const containerSecurityContext = object({
  capabilities: pointer(object({ add: strings, drop: strings })),
  privileged: 'boolean',
  seLinuxOptions,
  windowsOptions,
  runAsUser: 'integer',
  runAsGroup: 'integer',
  runAsNonRoot: 'boolean',
  readOnlyRootFilesystem: 'boolean',
  allowPrivilegeEscalation: 'boolean',
  procMount: 'string',
  seccompProfile: profile,
  appArmorProfile: profile,
});

const podSecurityContext = object({
  seLinuxOptions,
  windowsOptions,
  runAsUser: 'integer',
  runAsGroup: 'integer',
  runAsNonRoot: 'boolean',
  supplementalGroups: listOf('integer'),
  supplementalGroupsPolicy: 'string',
  fsGroup: 'integer',
  sysctls: listOf(object({ name: 'string', value: 'string' })),
  fsGroupChangePolicy: 'string',
  seccompProfile: profile,
  appArmorProfile: profile,
  seLinuxChangePolicy: 'string',
});

const envVar = object({
  name: 'string',
  value: 'string',
  valueFrom: pointer(
    object({
      fieldRef: pointer(object({ apiVersion: 'string', fieldPath: 'string' })),
      resourceFieldRef: pointer(object({ containerName: 'string', resource: 'string', divisor: 'quantity' })),
      configMapKeyRef: keySelector,
      secretKeyRef: keySelector,
      fileKeyRef: pointer(object({ volumeName: 'string', path: 'string', key: 'string', optional: 'boolean' })),
    }),
  ),
});

const containerFields: Fields = {
  name: 'string',
  image: 'string',
  command: strings,
  args: strings,
  workingDir: 'string',
  ports: mapList(
    object({ name: 'string', hostPort: 'integer', containerPort: 'integer', protocol: 'string', hostIP: 'string' }),
    ['containerPort', 'protocol'],
    'containerPort',
    { protocol: 'TCP' },
  ),
  envFrom: listOf(object({ prefix: 'string', configMapRef: optionalReference, secretRef: optionalReference })),
  env: mapList(envVar, ['name']),
  resources: resourceRequirements,
  resizePolicy: listOf(object({ resourceName: 'string', restartPolicy: 'string' })),
  restartPolicy: 'string',
  restartPolicyRules: listOf('any'),
  volumeMounts: mapList(
    object({
      name: 'string',
      readOnly: 'boolean',
      recursiveReadOnly: 'string',
      mountPath: 'string',
      subPath: 'string',
      mountPropagation: 'string',
      subPathExpr: 'string',
    }),
    ['mountPath'],
  ),
  volumeDevices: mapList(object({ name: 'string', devicePath: 'string' }), ['devicePath']),
  livenessProbe: pointer(probe),
  readinessProbe: pointer(probe),
  startupProbe: pointer(probe),
  lifecycle: pointer(object({ postStart: lifecycleHandler, preStop: lifecycleHandler, stopSignal: 'string' })),
  terminationMessagePath: 'string',
  terminationMessagePolicy: 'string',
  imagePullPolicy: 'string',
  securityContext: pointer(containerSecurityContext),
  stdin: 'boolean',
  stdinOnce: 'boolean',
  tty: 'boolean',
};
const container = object(containerFields);
const ephemeralContainer = object({ ...containerFields, targetContainerName: 'string' });

// ---------------------------------------------------------------------------------------------
// Pods

const keyToPath = listOf(object({ key: 'string', path: 'string', mode: 'integer' }));
/** The common volume sources in full; the others are free-form, only their keys are known. */
const volumeSources: Fields = {
  hostPath: pointer(object({ path: 'string', type: 'string' })),
  emptyDir: pointer(object({ medium: 'string', sizeLimit: 'quantity' })),
  secret: pointer(object({ secretName: 'string', items: keyToPath, defaultMode: 'integer', optional: 'boolean' })),
  configMap: pointer(object({ name: 'string', items: keyToPath, defaultMode: 'integer', optional: 'boolean' })),
  persistentVolumeClaim: pointer(object({ claimName: 'string', readOnly: 'boolean' })),
};
const FREE_FORM_VOLUME_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];
const volume = object({
  name: 'string',
  ...volumeSources,
  ...Object.fromEntries(FREE_FORM_VOLUME_SOURCES.map((source) => [source, 'any'])),
});

const podSpec = object({
  volumes: mapList(volume, ['name']),
  initContainers: mapList(container, ['name']),
  containers: { ...mapList(container, ['name']), inZeroValue: true },
  ephemeralContainers: mapList(ephemeralContainer, ['name']),
  restartPolicy: 'string',
  terminationGracePeriodSeconds: 'integer',
  activeDeadlineSeconds: 'integer',
  dnsPolicy: 'string',
  nodeSelector: stringMap,
  serviceAccountName: 'string',
  serviceAccount: 'string',
  automountServiceAccountToken: 'boolean',
  nodeName: 'string',
  hostNetwork: 'boolean',
  hostPID: 'boolean',
  hostIPC: 'boolean',
  shareProcessNamespace: 'boolean',
  securityContext: pointer(podSecurityContext),
  imagePullSecrets: mapList(localObjectReference, ['name']),
  hostname: 'string',
  hostnameOverride: 'string',
  subdomain: 'string',
  affinity: 'any',
  schedulerName: 'string',
  tolerations: listOf(toleration),
  hostAliases: mapList(object({ ip: 'string', hostnames: strings }), ['ip']),
  priorityClassName: 'string',
  priority: 'integer',
  dnsConfig: pointer(
    object({
      nameservers: strings,
      searches: strings,
      options: listOf(object({ name: 'string', value: 'string' })),
    }),
  ),
  readinessGates: listOf(object({ conditionType: 'string' })),
  runtimeClassName: 'string',
  enableServiceLinks: 'boolean',
  preemptionPolicy: 'string',
  overhead: resourceList,
  topologySpreadConstraints: mapList(
    object({
      maxSkew: 'integer',
      topologyKey: 'string',
      whenUnsatisfiable: 'string',
      labelSelector,
      minDomains: 'integer',
      nodeAffinityPolicy: 'string',
      nodeTaintsPolicy: 'string',
      matchLabelKeys: strings,
    }),
    ['topologyKey', 'whenUnsatisfiable'],
  ),
  setHostnameAsFQDN: 'boolean',
  os: pointer(object({ name: 'string' })),
  hostUsers: 'boolean',
  schedulingGates: mapList(object({ name: 'string' }), ['name']),
  resourceClaims: mapList(
    object({ name: 'string', resourceClaimName: 'string', resourceClaimTemplateName: 'string' }),
    ['name'],
  ),
  resources: pointer(resourceRequirements),
});

const podTemplateSpec = object({ metadata: objectMeta, spec: podSpec });

const containerState = object({
  waiting: object({ reason: 'string', message: 'string' }),
  running: object({ startedAt: 'time' }),
  terminated: object({
    exitCode: 'integer',
    signal: 'integer',
    reason: 'string',
    message: 'string',
    startedAt: 'time',
    finishedAt: 'time',
    containerID: 'string',
  }),
});

const containerStatus = object({
  name: 'string',
  state: containerState,
  lastState: containerState,
  ready: 'boolean',
  restartCount: 'integer',
  image: 'string',
  imageID: 'string',
  containerID: 'string',
  started: 'boolean',
  allocatedResources: resourceList,
  resources: resourceRequirements,
  volumeMounts: listOf(
    object({ name: 'string', mountPath: 'string', readOnly: 'boolean', recursiveReadOnly: 'string' }),
  ),
  user: 'any',
  allocatedResourcesStatus: listOf('any'),
  stopSignal: 'string',
});

const podIP = mapList(object({ ip: 'string' }), ['ip']);
/** `hostIPs`: merged on `ip` by a strategic patch, but one value to server-side apply (`+listType=atomic`). */
const hostIPs: ListNode = {
  list: object({ ip: 'string' }),
  listType: 'atomic',
  patchStrategy: 'merge',
  patchMergeKey: 'ip',
};

const podStatus = object({
  observedGeneration: 'integer',
  phase: 'string',
  conditions: kindCondition({ observedGeneration: 'integer', lastProbeTime: 'time' }),
  message: 'string',
  reason: 'string',
  nominatedNodeName: 'string',
  hostIP: 'string',
  hostIPs,
  podIP: 'string',
  podIPs: podIP,
  startTime: 'time',
  initContainerStatuses: listOf(containerStatus),
  containerStatuses: listOf(containerStatus),
  ephemeralContainerStatuses: listOf(containerStatus),
  qosClass: 'string',
  resize: 'string',
  resourceClaimStatuses: listOf(object({ name: 'string', resourceClaimName: 'string' })),
  extendedResourceClaimStatus: 'any',
});

// ---------------------------------------------------------------------------------------------
// PersistentVolumeClaim

const persistentVolumeClaimSpec = object({
  accessModes: strings,
  selector: labelSelector,
  resources: object({ limits: resourceList, requests: resourceList }),
  volumeName: 'string',
  storageClassName: 'string',
  volumeMode: 'string',
  dataSource: typedLocalObjectReference,
  dataSourceRef: object({ apiGroup: 'string', kind: 'string', name: 'string', namespace: 'string' }),
  volumeAttributesClassName: 'string',
});

const persistentVolumeClaimStatus = object({
  phase: 'string',
  accessModes: strings,
  capacity: resourceList,
  conditions: kindCondition({ lastProbeTime: 'time' }),
  allocatedResources: resourceList,
  allocatedResourceStatuses: stringMap,
  currentVolumeAttributesClassName: 'string',
  modifyVolumeStatus: object({ targetVolumeAttributesClassName: 'string', status: 'string' }),
});

const persistentVolumeClaim = kind({ spec: persistentVolumeClaimSpec, status: persistentVolumeClaimStatus });

// The volume sources (hostPath, csi, nfs, ...) and the node affinity stay loose.
const persistentVolume = kind({
  spec: object({
    capacity: resourceList,
    accessModes: strings,
    claimRef: objectReference,
    persistentVolumeReclaimPolicy: 'string',
    storageClassName: 'string',
    mountOptions: strings,
    volumeMode: 'string',
    nodeAffinity: 'any',
    volumeAttributesClassName: 'string',
    hostPath: pointer(object({ path: 'string', type: 'string' })),
    local: 'any',
    csi: 'any',
    nfs: 'any',
  }),
  status: object({ phase: 'string', message: 'string', reason: 'string', lastPhaseTransitionTime: 'time' }),
});

const storageClass = kind({
  provisioner: 'string',
  parameters: stringMap,
  reclaimPolicy: 'string',
  mountOptions: strings,
  allowVolumeExpansion: 'boolean',
  volumeBindingMode: 'string',
  allowedTopologies: listOf(object({ matchLabelExpressions: listOf(object({ key: 'string', values: strings })) })),
});

// ---------------------------------------------------------------------------------------------
// Workloads

const intOrStringStrategy = object({ maxUnavailable: 'int-or-string', maxSurge: 'int-or-string' });

const statefulSet = kind({
  spec: object({
    replicas: 'integer',
    selector: labelSelector,
    template: podTemplateSpec,
    volumeClaimTemplates: listOf(persistentVolumeClaim),
    serviceName: 'string',
    podManagementPolicy: 'string',
    updateStrategy: object({
      type: 'string',
      rollingUpdate: pointer(object({ partition: 'integer', maxUnavailable: 'int-or-string' })),
    }),
    revisionHistoryLimit: 'integer',
    minReadySeconds: 'integer',
    persistentVolumeClaimRetentionPolicy: pointer(object({ whenDeleted: 'string', whenScaled: 'string' })),
    ordinals: pointer(object({ start: 'integer' })),
  }),
  status: object({
    observedGeneration: 'integer',
    replicas: 'integer',
    readyReplicas: 'integer',
    currentReplicas: 'integer',
    updatedReplicas: 'integer',
    availableReplicas: 'integer',
    currentRevision: 'string',
    updateRevision: 'string',
    collisionCount: 'integer',
    conditions: kindCondition(),
  }),
});

const deployment = kind({
  spec: object({
    replicas: 'integer',
    selector: labelSelector,
    template: podTemplateSpec,
    strategy: object({ type: 'string', rollingUpdate: pointer(intOrStringStrategy) }),
    minReadySeconds: 'integer',
    revisionHistoryLimit: 'integer',
    paused: 'boolean',
    progressDeadlineSeconds: 'integer',
  }),
  status: object({
    observedGeneration: 'integer',
    replicas: 'integer',
    updatedReplicas: 'integer',
    readyReplicas: 'integer',
    availableReplicas: 'integer',
    unavailableReplicas: 'integer',
    terminatingReplicas: 'integer',
    conditions: kindCondition({ lastUpdateTime: 'time' }),
    collisionCount: 'integer',
  }),
});

/** A ReplicationController's status; a ReplicaSet's adds `terminatingReplicas`, which the older kind lacks. */
const replicationControllerStatus = {
  replicas: 'integer',
  fullyLabeledReplicas: 'integer',
  readyReplicas: 'integer',
  availableReplicas: 'integer',
  observedGeneration: 'integer',
  conditions: kindCondition(),
} as const;

const replicaSet = kind({
  spec: object({ replicas: 'integer', minReadySeconds: 'integer', selector: labelSelector, template: podTemplateSpec }),
  status: object({ ...replicationControllerStatus, terminatingReplicas: 'integer' }),
});

const replicationController = kind({
  spec: object({
    replicas: 'integer',
    minReadySeconds: 'integer',
    selector: atomicMapOf('string'),
    template: pointer(podTemplateSpec),
  }),
  status: object(replicationControllerStatus),
});

// ---------------------------------------------------------------------------------------------
// Services and endpoints

const portStatus = listOf(object({ port: 'integer', protocol: 'string', error: 'string' }));
const loadBalancerStatus = object({
  ingress: listOf(object({ ip: 'string', hostname: 'string', ipMode: 'string', ports: portStatus })),
});

const service = kind({
  spec: object({
    ports: mapList(
      object({
        name: 'string',
        protocol: 'string',
        appProtocol: 'string',
        port: 'integer',
        targetPort: 'int-or-string',
        nodePort: 'integer',
      }),
      ['port', 'protocol'],
      'port',
      { protocol: 'TCP' },
    ),
    selector: atomicMapOf('string'),
    clusterIP: 'string',
    clusterIPs: strings,
    type: 'string',
    externalIPs: strings,
    sessionAffinity: 'string',
    loadBalancerIP: 'string',
    loadBalancerSourceRanges: strings,
    externalName: 'string',
    externalTrafficPolicy: 'string',
    healthCheckNodePort: 'integer',
    publishNotReadyAddresses: 'boolean',
    sessionAffinityConfig: object({ clientIP: object({ timeoutSeconds: 'integer' }) }),
    ipFamilies: strings,
    ipFamilyPolicy: 'string',
    allocateLoadBalancerNodePorts: 'boolean',
    loadBalancerClass: 'string',
    internalTrafficPolicy: 'string',
    trafficDistribution: 'string',
  }),
  status: object({ loadBalancer: loadBalancerStatus, conditions: conditions }),
});

const endpointAddress = object({ ip: 'string', hostname: 'string', nodeName: 'string', targetRef: objectReference });
const endpointPort = object({ name: 'string', port: 'integer', protocol: 'string', appProtocol: 'string' });

const endpoints = kind({
  subsets: listOf(
    object({
      addresses: listOf(endpointAddress),
      notReadyAddresses: listOf(endpointAddress),
      ports: listOf(endpointPort),
    }),
  ),
});

const endpointSlice = kind({
  addressType: 'string',
  endpoints: listOf(
    object({
      addresses: strings,
      conditions: object({ ready: 'boolean', serving: 'boolean', terminating: 'boolean' }),
      hostname: 'string',
      targetRef: objectReference,
      deprecatedTopology: stringMap,
      nodeName: 'string',
      zone: 'string',
      hints: object({ forZones: listOf(object({ name: 'string' })), forNodes: listOf(object({ name: 'string' })) }),
    }),
  ),
  ports: listOf(endpointPort),
});

const ingressBackend = object({
  service: pointer(object({ name: 'string', port: atomicObject({ name: 'string', number: 'integer' }) })),
  resource: pointer(typedLocalObjectReference),
});

const ingress = kind({
  spec: object({
    ingressClassName: 'string',
    defaultBackend: pointer(ingressBackend),
    tls: listOf(object({ hosts: strings, secretName: 'string' })),
    rules: listOf(
      object({
        host: 'string',
        http: object({ paths: listOf(object({ path: 'string', pathType: 'string', backend: ingressBackend })) }),
      }),
    ),
  }),
  status: object({
    loadBalancer: object({ ingress: listOf(object({ ip: 'string', hostname: 'string', ports: portStatus })) }),
  }),
});

const ingressClass = kind({
  spec: object({
    controller: 'string',
    parameters: object({ apiGroup: 'string', kind: 'string', name: 'string', scope: 'string', namespace: 'string' }),
  }),
});

// ---------------------------------------------------------------------------------------------
// Cluster, configuration and events

const namespace = kind({
  spec: object({ finalizers: strings }),
  status: object({ phase: 'string', conditions: kindCondition() }),
});

const node = kind({
  spec: object({
    podCIDR: 'string',
    podCIDRs: setOf('string'),
    providerID: 'string',
    unschedulable: 'boolean',
    taints: listOf(object({ key: 'string', value: 'string', effect: 'string', timeAdded: 'time' })),
    configSource: 'any',
    externalID: 'string',
  }),
  status: object({
    capacity: resourceList,
    allocatable: resourceList,
    phase: 'string',
    conditions: kindCondition({ lastHeartbeatTime: 'time' }),
    addresses: mapList(object({ type: 'string', address: 'string' }), ['type']),
    daemonEndpoints: object({ kubeletEndpoint: object({ Port: 'integer' }) }),
    nodeInfo: object({
      machineID: 'string',
      systemUUID: 'string',
      bootID: 'string',
      kernelVersion: 'string',
      osImage: 'string',
      containerRuntimeVersion: 'string',
      kubeletVersion: 'string',
      kubeProxyVersion: 'string',
      operatingSystem: 'string',
      architecture: 'string',
      swap: pointer(object({ capacity: 'integer' })),
    }),
    images: listOf(object({ names: strings, sizeBytes: 'integer' })),
    volumesInUse: strings,
    volumesAttached: listOf(object({ name: 'string', devicePath: 'string' })),
    config: 'any',
    runtimeHandlers: listOf('any'),
    features: 'any',
  }),
});

const limitRange = kind({
  spec: object({
    limits: listOf(
      object({
        type: 'string',
        max: resourceList,
        min: resourceList,
        default: resourceList,
        defaultRequest: resourceList,
        maxLimitRequestRatio: resourceList,
      }),
    ),
  }),
});

const secret = kind({ data: stringMap, stringData: stringMap, type: 'string', immutable: 'boolean' });
const configMap = kind({ data: stringMap, binaryData: stringMap, immutable: 'boolean' });
const serviceAccount = kind({
  secrets: listOf(objectReference),
  imagePullSecrets: listOf(localObjectReference),
  automountServiceAccountToken: 'boolean',
});

const eventSource = object({ component: 'string', host: 'string' });
const eventSeries = object({ count: 'integer', lastObservedTime: 'time' });

const coreEvent = kind({
  involvedObject: objectReference,
  reason: 'string',
  message: 'string',
  source: eventSource,
  firstTimestamp: 'time',
  lastTimestamp: 'time',
  count: 'integer',
  type: 'string',
  eventTime: 'time',
  series: eventSeries,
  action: 'string',
  related: objectReference,
  reportingComponent: 'string',
  reportingInstance: 'string',
});

const eventsGroupEvent = kind({
  eventTime: 'time',
  series: eventSeries,
  reportingController: 'string',
  reportingInstance: 'string',
  action: 'string',
  reason: 'string',
  regarding: objectReference,
  related: objectReference,
  note: 'string',
  type: 'string',
  deprecatedSource: eventSource,
  deprecatedFirstTimestamp: 'time',
  deprecatedLastTimestamp: 'time',
  deprecatedCount: 'integer',
});

// ---------------------------------------------------------------------------------------------
// Certificates, coordination, extension registration, runtime classes

const certificateSigningRequest = kind({
  spec: object({
    request: 'string',
    signerName: 'string',
    expirationSeconds: 'integer',
    usages: strings,
    username: 'string',
    uid: 'string',
    groups: strings,
    extra: mapOf(strings),
  }),
  status: object({ certificate: 'string', conditions: kindCondition({ lastUpdateTime: 'time' }) }),
});

const clusterTrustBundle = kind({ spec: object({ signerName: 'string', trustBundle: 'string' }) });

const lease = kind({
  spec: object({
    holderIdentity: 'string',
    leaseDurationSeconds: 'integer',
    acquireTime: 'time',
    renewTime: 'time',
    leaseTransitions: 'integer',
    strategy: 'string',
    preferredHolder: 'string',
  }),
});

const leaseCandidate = kind({
  spec: object({
    leaseName: 'string',
    pingTime: 'time',
    renewTime: 'time',
    binaryVersion: 'string',
    emulationVersion: 'string',
    strategy: 'string',
  }),
});

const apiService = kind({
  spec: object({
    service: pointer(object({ namespace: 'string', name: 'string', port: 'integer' })),
    group: 'string',
    version: 'string',
    insecureSkipTLSVerify: 'boolean',
    caBundle: 'string',
    groupPriorityMinimum: 'integer',
    versionPriority: 'integer',
  }),
  status: object({ conditions: kindCondition() }),
});

const runtimeClass = kind({
  handler: 'string',
  overhead: object({ podFixed: resourceList }),
  scheduling: object({ nodeSelector: stringMap, tolerations: listOf(toleration) }),
});

// ---------------------------------------------------------------------------------------------
// Apps and policy odds and ends

// Its data is a RawExtension: one value to the reference's field manager.
const controllerRevision = kind({ data: atomicMapOf('any'), revision: 'integer' });

const podDisruptionBudget = kind({
  spec: object({
    minAvailable: 'int-or-string',
    maxUnavailable: 'int-or-string',
    selector: labelSelector,
    unhealthyPodEvictionPolicy: 'string',
  }),
  status: object({
    observedGeneration: 'integer',
    disruptedPods: mapOf('time'),
    disruptionsAllowed: 'integer',
    currentHealthy: 'integer',
    desiredHealthy: 'integer',
    expectedPods: 'integer',
    conditions: conditions,
  }),
});

/** A Status (an error or a delete's answer) has type metadata and list metadata, no object metadata. */
const status = object({
  apiVersion: 'string',
  kind: 'string',
  metadata: object({
    selfLink: 'string',
    resourceVersion: 'string',
    continue: 'string',
    remainingItemCount: 'integer',
  }),
  status: 'string',
  message: 'string',
  reason: 'string',
  details: pointer(
    object({
      name: 'string',
      group: 'string',
      kind: 'string',
      uid: 'string',
      causes: listOf(object({ reason: 'string', message: 'string', field: 'string' })),
      retryAfterSeconds: 'integer',
    }),
  ),
  code: 'integer',
});

/** DeleteOptions has type metadata but no object metadata. */
const deleteOptions = object({
  apiVersion: 'string',
  kind: 'string',
  gracePeriodSeconds: 'integer',
  preconditions: object({ uid: 'string', resourceVersion: 'string' }),
  orphanDependents: 'boolean',
  propagationPolicy: 'string',
  dryRun: strings,
  ignoreStoreReadErrorWithClusterBreakingPotential: 'boolean',
});

const eviction = kind({ deleteOptions });

/** The body of `pods/{name}/binding`: the node the pod is assigned to. */
const podBinding = kind({ target: objectReference });

const scale = kind({
  spec: object({ replicas: 'integer' }),
  status: object({ replicas: 'integer', selector: 'string' }),
});

// ---------------------------------------------------------------------------------------------
// RBAC

const policyRule = object({
  verbs: strings,
  apiGroups: strings,
  resources: strings,
  resourceNames: strings,
  nonResourceURLs: strings,
});

const role = kind({ rules: listOf(policyRule) });
const clusterRole = kind({
  rules: listOf(policyRule),
  aggregationRule: object({ clusterRoleSelectors: listOf(labelSelector) }),
});

const binding = kind({
  subjects: listOf(object({ kind: 'string', apiGroup: 'string', name: 'string', namespace: 'string' })),
  roleRef: atomicObject({ apiGroup: 'string', kind: 'string', name: 'string' }),
});

// ---------------------------------------------------------------------------------------------
// Admission policies

const namedRuleWithOperations = object({
  resourceNames: strings,
  operations: strings,
  apiGroups: strings,
  apiVersions: strings,
  resources: strings,
  scope: 'string',
});

const matchResources = atomicObject({
  namespaceSelector: labelSelector,
  objectSelector: labelSelector,
  resourceRules: listOf(namedRuleWithOperations),
  excludeResourceRules: listOf(namedRuleWithOperations),
  matchPolicy: 'string',
});

const namedExpression = listOf(object({ name: 'string', expression: 'string' }));

const validatingAdmissionPolicy = kind({
  spec: object({
    paramKind: object({ apiVersion: 'string', kind: 'string' }),
    matchConstraints: matchResources,
    validations: listOf(
      object({ expression: 'string', message: 'string', reason: 'string', messageExpression: 'string' }),
    ),
    failurePolicy: 'string',
    auditAnnotations: listOf(object({ key: 'string', valueExpression: 'string' })),
    matchConditions: namedExpression,
    variables: namedExpression,
  }),
  status: object({
    observedGeneration: 'integer',
    typeChecking: object({ expressionWarnings: listOf(object({ fieldRef: 'string', warning: 'string' })) }),
    conditions: conditions,
  }),
});

const validatingAdmissionPolicyBinding = kind({
  spec: object({
    policyName: 'string',
    paramRef: object({
      name: 'string',
      namespace: 'string',
      selector: labelSelector,
      parameterNotFoundAction: 'string',
    }),
    matchResources,
    validationActions: { list: 'string', listType: 'set' },
  }),
});

// ---------------------------------------------------------------------------------------------
// Reviews

const selectorRequirements = listOf(object({ key: 'string', operator: 'string', values: strings }));
const resourceAttributes = pointer(
  object({
    namespace: 'string',
    verb: 'string',
    group: 'string',
    version: 'string',
    resource: 'string',
    subresource: 'string',
    name: 'string',
    fieldSelector: pointer(object({ rawSelector: 'string', requirements: selectorRequirements })),
    labelSelector: pointer(object({ rawSelector: 'string', requirements: selectorRequirements })),
  }),
);
const nonResourceAttributes = pointer(object({ path: 'string', verb: 'string' }));
const accessReviewStatus = object({
  allowed: 'boolean',
  denied: 'boolean',
  reason: 'string',
  evaluationError: 'string',
});

const subjectAccessReview = kind({
  spec: object({
    resourceAttributes,
    nonResourceAttributes,
    user: 'string',
    groups: strings,
    extra: mapOf(strings),
    uid: 'string',
  }),
  status: accessReviewStatus,
});

const selfSubjectAccessReview = kind({
  spec: object({ resourceAttributes, nonResourceAttributes }),
  status: accessReviewStatus,
});

const selfSubjectRulesReview = kind({
  spec: object({ namespace: 'string' }),
  status: object({
    resourceRules: listOf(object({ verbs: strings, apiGroups: strings, resources: strings, resourceNames: strings })),
    nonResourceRules: listOf(object({ verbs: strings, nonResourceURLs: strings })),
    incomplete: 'boolean',
    evaluationError: 'string',
  }),
});

const userInfo = object({ username: 'string', uid: 'string', groups: strings, extra: mapOf(strings) });

const tokenReview = kind({
  spec: object({ token: 'string', audiences: strings }),
  status: object({ authenticated: 'boolean', user: userInfo, audiences: strings, error: 'string' }),
});

const selfSubjectReview = kind({ status: object({ userInfo }) });

const tokenRequest = kind({
  spec: object({
    audiences: strings,
    expirationSeconds: 'integer',
    boundObjectRef: object({ kind: 'string', apiVersion: 'string', name: 'string', uid: 'string' }),
  }),
  status: object({ token: 'string', expirationTimestamp: 'string' }),
});

// ---------------------------------------------------------------------------------------------
// Lookup

/** Schemas by kind; `Event` here is the core `v1` one (the events-group one is picked by apiVersion). */
const BY_KIND: Readonly<Record<string, Node>> = {
  Namespace: namespace,
  Pod: kind({ spec: podSpec, status: podStatus }),
  PersistentVolumeClaim: persistentVolumeClaim,
  PersistentVolume: persistentVolume,
  StorageClass: storageClass,
  Service: service,
  Endpoints: endpoints,
  Node: node,
  LimitRange: limitRange,
  ReplicationController: replicationController,
  Event: coreEvent,
  Secret: secret,
  ConfigMap: configMap,
  ServiceAccount: serviceAccount,
  StatefulSet: statefulSet,
  Deployment: deployment,
  ReplicaSet: replicaSet,
  ControllerRevision: controllerRevision,
  PodDisruptionBudget: podDisruptionBudget,
  CertificateSigningRequest: certificateSigningRequest,
  ClusterTrustBundle: clusterTrustBundle,
  ClusterRole: clusterRole,
  ClusterRoleBinding: binding,
  Role: role,
  RoleBinding: binding,
  IngressClass: ingressClass,
  Ingress: ingress,
  RuntimeClass: runtimeClass,
  APIService: apiService,
  Lease: lease,
  LeaseCandidate: leaseCandidate,
  ValidatingAdmissionPolicy: validatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding: validatingAdmissionPolicyBinding,
  EndpointSlice: endpointSlice,
  SubjectAccessReview: subjectAccessReview,
  LocalSubjectAccessReview: subjectAccessReview,
  SelfSubjectAccessReview: selfSubjectAccessReview,
  SelfSubjectRulesReview: selfSubjectRulesReview,
  TokenReview: tokenReview,
  SelfSubjectReview: selfSubjectReview,
  TokenRequest: tokenRequest,
  Scale: scale,
  Eviction: eviction,
  Binding: podBinding,
  DeleteOptions: deleteOptions,
  Status: status,
};

/**
 * The schema of a kind, or undefined for kinds this server does not know. Kinds are unique except `Event`:
 * `v1` (or no apiVersion) is the core Event, any other apiVersion the events-group one.
 */
export function schemaFor(kindName: string, apiVersion?: string): Node | undefined {
  if (kindName === 'Event' && apiVersion !== undefined && apiVersion !== 'v1') return eventsGroupEvent;
  return Object.hasOwn(BY_KIND, kindName) ? BY_KIND[kindName] : undefined;
}
