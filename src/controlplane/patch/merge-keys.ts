/**
 * Which lists a strategic merge patch merges instead of replacing, per kind. The table mirrors the
 * `patchStrategy:"merge"` and `patchMergeKey` tags of the Go API types; every other list is atomic.
 */

export interface ListStrategy {
  /** Field that identifies an element in a list of objects. */
  mergeKey?: string;
  /** A list of primitives merged as a set. */
  primitiveSet?: boolean;
}

/** Field paths relative to some base, dot-joined, without list indices. */
type Table = [path: string, strategy: ListStrategy][];

const byName: ListStrategy = { mergeKey: 'name' };
const byType: ListStrategy = { mergeKey: 'type' };
const byIp: ListStrategy = { mergeKey: 'ip' };

function under(prefix: string, table: Table): Table {
  return table.map(([path, strategy]) => [`${prefix}.${path}`, strategy]);
}

// ObjectMeta lists, merged on every kind.
const METADATA = new Map<string, ListStrategy>([
  ['metadata.ownerReferences', { mergeKey: 'uid' }],
  ['metadata.finalizers', { primitiveSet: true }],
]);

// Container, init and ephemeral containers carry the same tags; resizePolicy, args and envFrom are atomic.
const CONTAINER: Table = [
  ['ports', { mergeKey: 'containerPort' }],
  ['env', byName],
  ['volumeMounts', { mergeKey: 'mountPath' }],
  ['volumeDevices', { mergeKey: 'devicePath' }],
];

// Tolerations, readiness gates and affinity terms (nodeSelectorTerms) have no patch strategy: atomic.
const POD_SPEC: Table = [
  ['volumes', byName],
  ['imagePullSecrets', byName],
  ['hostAliases', byIp],
  ['topologySpreadConstraints', { mergeKey: 'topologyKey' }],
  ['resourceClaims', byName],
  ['schedulingGates', byName],
  ...['containers', 'initContainers', 'ephemeralContainers'].flatMap(
    (field): Table => [[field, byName], ...under(field, CONTAINER)],
  ),
];

const CONDITIONS: Table = [['status.conditions', byType]];
const WORKLOAD: Table = [...under('spec.template.spec', POD_SPEC), ...CONDITIONS];

// Pod container statuses, Node images and Node taints are atomic; PDB disruptedPods is a map and merges as one.
const KINDS: Record<string, Table> = {
  Pod: [...under('spec', POD_SPEC), ...CONDITIONS, ['status.podIPs', byIp], ['status.hostIPs', byIp]],
  PodTemplate: under('template.spec', POD_SPEC),
  Deployment: WORKLOAD,
  ReplicaSet: WORKLOAD,
  StatefulSet: WORKLOAD,
  DaemonSet: WORKLOAD,
  ReplicationController: WORKLOAD,
  Job: WORKLOAD,
  CronJob: under('spec.jobTemplate.spec.template.spec', POD_SPEC),
  Service: [['spec.ports', { mergeKey: 'port' }], ...CONDITIONS],
  Node: [['spec.podCIDRs', { primitiveSet: true }], ['status.addresses', byType], ...CONDITIONS],
  Namespace: CONDITIONS,
  PersistentVolumeClaim: CONDITIONS,
  PodDisruptionBudget: CONDITIONS,
  APIService: CONDITIONS,
};

const STRATEGIES = new Map(Object.entries(KINDS).map(([kind, table]) => [kind, new Map(table)]));

/**
 * How a list at `path` (field names only, list indices removed) of an object of `kind` merges;
 * undefined means the list is atomic and a patch replaces it whole.
 */
export function listStrategy(kind: string, path: string[]): ListStrategy | undefined {
  const key = path.join('.');
  return STRATEGIES.get(kind)?.get(key) ?? METADATA.get(key);
}
