/**
 * The resource registry: one description per resource (group, version, kind, plural, scope,
 * subresources, verbs, short names, field selectors, printer columns), built for a naming flavor.
 * The control plane serves exactly these; the client and the controllers address resources through them.
 *
 * Verbs: the spec's §4.3 lists a documented subset per resource and leaves plain get/list "not shown";
 * the reference server offers the full storage verb set on every stored resource (controllers need
 * watch and delete on CSRs, for instance), so stored resources get the full set and review resources
 * only `create`.
 */
import { humanDuration } from '../util/time.ts';
import { CORE_EVENT_FIELDS, coreToEvent, EVENTS_GROUP_FIELDS, eventToCore } from './event-conversion.ts';
import type { KubeObject } from './meta.ts';
import { type FlavorName, group, type Naming, naming } from './naming.ts';
import * as printers from './printers.ts';

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';
export const STORAGE_VERBS: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

export type Subresource = 'status' | 'approval' | 'scale' | 'eviction' | 'binding' | 'token' | PodStreamSubresource;
/** Pod subresources a node agent serves (the API server passes them on): its logs and its streams. */
export const POD_STREAM_SUBRESOURCES = ['log', 'exec', 'attach', 'portforward'] as const;
export type PodStreamSubresource = (typeof POD_STREAM_SUBRESOURCES)[number];

/** A printer column for kubectl's server-side tables. */
export interface Column {
  name: string;
  type: 'string' | 'integer' | 'date' | 'number';
  description?: string;
  priority?: number;
  format?: string;
  /** What an empty value prints: `<none>` unless the reference prints the empty string (a claim's capacity). */
  empty?: string;
  /** `now` is the time of the request, for relative times. */
  value: (obj: KubeObject, now: Date) => unknown;
}

/** Where a resource's objects are stored when it is a view of another resource's, and how they convert. */
export interface StoredAs {
  rt: ResourceType;
  toStored: (obj: KubeObject) => KubeObject;
  fromStored: (obj: KubeObject) => KubeObject;
}

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: readonly Verb[];
  subresources: Subresource[];
  /** Field-selector fields beyond `metadata.name` and `metadata.namespace`. */
  fieldSelectors: Record<string, (obj: KubeObject) => string | undefined>;
  columns: Column[];
  /** Review resources are evaluated on create and never stored. */
  virtual: boolean;
  /** Whether writes to the main resource ignore `status` (true when a status subresource exists). */
  hasStatus: boolean;
  /** Whether `columns` are the whole table row: no Name first and no Age last (the reference's Event table). */
  ownLayout: boolean;
  /** Set when the objects are another resource's, seen through a conversion (events-group Events are core Events). */
  storedAs?: StoredAs;
  /** Whether objects carry `metadata.generation` (see GENERATION_KINDS). */
  hasGeneration: boolean;
  /** The version the reference stores objects in when not the served one (its hash is in discovery). */
  storageVersion?: string;
  /** The reference's deprecation warning, sent with every answer about the resource. */
  deprecation?: string;
}

/**
 * The kinds whose reference strategies set `metadata.generation` (1 on create, +1 on a spec change or a graceful
 * delete): those with a spec their controllers observe. ConfigMaps, Secrets, CSRs, Leases, RBAC and the rest have
 * none.
 */
const GENERATION_KINDS: ReadonlySet<string> = new Set([
  'Deployment',
  'EndpointSlice',
  'Ingress',
  'IngressClass',
  'Pod',
  'PodDisruptionBudget',
  'ReplicaSet',
  'ReplicationController',
  'StatefulSet',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

/** `apiVersion` as written in objects: `v1` for the core group, `<group>/<version>` otherwise. */
export function apiVersionOf(rt: Pick<ResourceType, 'group' | 'version'>): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

/** Whether the resource is the core group's Pod (whatever version). */
export function isPodResource(rt: Pick<ResourceType, 'group' | 'kind'>): boolean {
  return rt.group === '' && rt.kind === 'Pod';
}

export function groupVersionPath(rt: Pick<ResourceType, 'group' | 'version'>): string {
  return rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
}

type Def = Partial<Omit<ResourceType, 'group' | 'version' | 'kind' | 'plural'>> & {
  group: string;
  version: string;
  kind: string;
  plural: string;
};

const get = (obj: unknown, path: string): unknown =>
  path.split('.').reduce<any>((o, k) => (o == null ? undefined : o[k]), obj);
const str = (path: string) => (obj: KubeObject) => {
  const v = get(obj, path);
  return v == null ? undefined : String(v);
};
const col = (name: string, path: string, type: Column['type'] = 'string', priority?: number): Column => ({
  name,
  type,
  priority,
  value: (o) => get(o, path),
});
/** A column the reference leaves without a description (its field has no doc comment). */
const undescribed = (column: Column): Column => ({ ...column, description: '' });
/** Marks where the server puts the Age column for kinds that show it before their own columns. */
const AGE_SLOT: Column = { name: 'Age', type: 'string', value: () => undefined };
/** The Name column, for kinds whose own layout has no Age. */
const NAME: Column = { name: 'Name', type: 'string', format: 'name', value: (o) => o.metadata.name };
/** The reference's RBAC role and LimitRange table: the name and the creation time itself, no Age. */
const CREATED_AT_LAYOUT = {
  columns: [NAME, { name: 'Created At', type: 'date', value: (o: KubeObject) => o.metadata.creationTimestamp }],
  ownLayout: true,
} satisfies Pick<Def, 'columns' | 'ownLayout'>;
const count = (name: string, path: string): Column => ({ name, type: 'integer', value: (o) => get(o, path) ?? 0 });
/** Age, then the pod template's containers and images and the selector (wide), as workload tables end. */
const templateTail = (selector: (o: KubeObject) => string): Column[] => [
  AGE_SLOT,
  { name: 'Containers', type: 'string', priority: 1, empty: '', value: (o) => printers.templateContainers(o, 'name') },
  { name: 'Images', type: 'string', priority: 1, empty: '', value: (o) => printers.templateContainers(o, 'image') },
  { name: 'Selector', type: 'string', priority: 1, value: selector },
];
/** Desired, Current and Ready replicas and the template tail (ReplicaSets, ReplicationControllers). */
const replicaColumns = (selector: (o: KubeObject) => string): Column[] => [
  count('Desired', 'spec.replicas'),
  count('Current', 'status.replicas'),
  count('Ready', 'status.readyReplicas'),
  ...templateTail(selector),
];

/** RoleBindings and ClusterRoleBindings: the role, Age, and the subjects by kind (wide). */
const BINDING_COLUMNS: Column[] = [
  { name: 'Role', type: 'string', value: (o) => `${get(o, 'roleRef.kind')}/${get(o, 'roleRef.name')}` },
  AGE_SLOT,
  ...(['User', 'Group', 'ServiceAccount'] as const).map(
    (kind): Column => ({
      name: `${kind}s`,
      type: 'string',
      priority: 1,
      empty: '',
      value: (o) => printers.bindingSubjects(o, kind),
    }),
  ),
];

/** The reference's `translateTimestampSince`: `<unknown>` for no time. */
function since(timestamp: unknown, now: Date): string {
  return typeof timestamp === 'string' && timestamp
    ? humanDuration(now.getTime() - Date.parse(timestamp))
    : '<unknown>';
}

/**
 * The reference's Event table (its `printEvent`), read from the core view: first seen falls back to
 * `eventTime`, last seen to first seen, and a series overrides last seen and count (1 for a singleton).
 */
const EVENT_COLUMNS: Column[] = (() => {
  const firstSeen = (o: KubeObject, now: Date) => since(get(o, 'firstTimestamp') || get(o, 'eventTime'), now);
  const lastSeen = (o: KubeObject, now: Date) =>
    get(o, 'series')
      ? since(get(o, 'series.lastObservedTime'), now)
      : get(o, 'lastTimestamp')
        ? since(get(o, 'lastTimestamp'), now)
        : firstSeen(o, now);
  const either = (a: string, b: string) => (o: KubeObject) => (get(o, a) as string) || (get(o, b) as string) || '';
  const component = either('source.component', 'reportingComponent');
  const instance = either('source.host', 'reportingInstance');
  return [
    { name: 'Last Seen', type: 'string', value: lastSeen },
    col('Type', 'type'),
    col('Reason', 'reason'),
    {
      name: 'Object',
      type: 'string',
      value: (o) => {
        const kind = String(get(o, 'involvedObject.kind') ?? '').toLowerCase();
        const name = get(o, 'involvedObject.name');
        return name ? `${kind}/${name}` : kind;
      },
    },
    { ...col('Subobject', 'involvedObject.fieldPath', 'string', 1), empty: '' },
    {
      name: 'Source',
      type: 'string',
      priority: 1,
      value: (o) => (instance(o) ? `${component(o)}, ${instance(o)}` : component(o)),
    },
    col('Message', 'message'),
    { name: 'First Seen', type: 'string', priority: 1, value: firstSeen },
    {
      name: 'Count',
      type: 'string',
      priority: 1,
      value: (o) => (get(o, 'series') ? get(o, 'series.count') : get(o, 'count') || 1),
    },
    { name: 'Name', type: 'string', format: 'name', priority: 1, value: (o) => o.metadata.name },
  ];
})();

/** The claim's and volume's columns after StorageClass: their attributes class, Age, and the volume mode (wide). */
const VOLUME_TAIL: Column[] = [
  {
    name: 'VolumeAttributesClass',
    type: 'string',
    value: (o) => get(o, 'spec.volumeAttributesClassName') ?? '<unset>',
  },
  AGE_SLOT,
  { name: 'VolumeMode', type: 'string', priority: 1, value: (o) => get(o, 'spec.volumeMode') ?? '<unset>' },
];

function csrCondition(obj: KubeObject): string {
  const conditions = (get(obj, 'status.conditions') as { type: string; status: string }[] | undefined) ?? [];
  const shown = conditions.filter((c) => c.status === 'True').map((c) => c.type);
  if (get(obj, 'status.certificate')) shown.push('Issued');
  return shown.length ? shown.join(',') : 'Pending';
}

function definitions(n: Naming): Def[] {
  const g = (prefix: string) => group(n, prefix);
  const certificates = g('certificates');
  const coordination = g('coordination');
  const review = { verbs: ['create'] as Verb[], virtual: true };
  const storageClassColumn: Column = {
    name: 'StorageClass',
    type: 'string',
    empty: '',
    value: (o) => printers.storageClassOf(o, n.annotations.betaStorageClass),
  };
  return [
    // core
    {
      group: '',
      version: 'v1',
      kind: 'Namespace',
      plural: 'namespaces',
      namespaced: false,
      // The reference deletes namespaces one at a time: no deletecollection.
      verbs: STORAGE_VERBS.filter((v) => v !== 'deletecollection'),
      shortNames: ['ns'],
      subresources: ['status'],
      fieldSelectors: { 'status.phase': str('status.phase') },
      columns: [col('Status', 'status.phase')],
    },
    {
      group: '',
      version: 'v1',
      kind: 'Pod',
      plural: 'pods',
      shortNames: ['po'],
      categories: ['all'],
      subresources: ['status', 'binding', 'eviction', ...POD_STREAM_SUBRESOURCES],
      fieldSelectors: {
        'spec.nodeName': str('spec.nodeName'),
        'status.phase': str('status.phase'),
        'spec.restartPolicy': str('spec.restartPolicy'),
        'spec.schedulerName': str('spec.schedulerName'),
        'spec.serviceAccountName': str('spec.serviceAccountName'),
        'status.podIP': str('status.podIP'),
      },
      columns: [
        { name: 'Ready', type: 'string', value: (o, now) => printers.podCells(o, now).ready },
        { name: 'Status', type: 'string', value: (o, now) => printers.podCells(o, now).status },
        { name: 'Restarts', type: 'string', value: (o, now) => printers.podCells(o, now).restarts },
        AGE_SLOT,
        { name: 'IP', type: 'string', priority: 1, value: printers.podIP },
        col('Node', 'spec.nodeName', 'string', 1),
        col('Nominated Node', 'status.nominatedNodeName', 'string', 1),
        { name: 'Readiness Gates', type: 'string', priority: 1, value: printers.readinessGates },
      ],
    },
    {
      group: '',
      version: 'v1',
      kind: 'PersistentVolumeClaim',
      plural: 'persistentvolumeclaims',
      shortNames: ['pvc'],
      subresources: ['status'],
      // The reference prints these cells as they are, blank when empty.
      columns: [
        { name: 'Status', type: 'string', empty: '', value: (o) => printers.claimCells(o).status },
        { ...col('Volume', 'spec.volumeName'), empty: '' },
        { name: 'Capacity', type: 'string', empty: '', value: (o) => printers.claimCells(o).capacity },
        { name: 'Access Modes', type: 'string', empty: '', value: (o) => printers.claimCells(o).modes },
        storageClassColumn,
        ...VOLUME_TAIL,
      ],
    },
    {
      group: '',
      version: 'v1',
      kind: 'PersistentVolume',
      plural: 'persistentvolumes',
      namespaced: false,
      shortNames: ['pv'],
      subresources: ['status'],
      columns: [
        { ...col('Capacity', 'spec.capacity.storage'), empty: '' },
        {
          name: 'Access Modes',
          type: 'string',
          empty: '',
          value: (o) => printers.accessModes(get(o, 'spec.accessModes')),
        },
        { ...col('Reclaim Policy', 'spec.persistentVolumeReclaimPolicy'), empty: '' },
        { ...col('Status', 'status.phase'), empty: '' },
        { name: 'Claim', type: 'string', empty: '', value: printers.volumeClaim },
        storageClassColumn,
        VOLUME_TAIL[0],
        { ...col('Reason', 'status.reason'), empty: '' },
        ...VOLUME_TAIL.slice(1),
      ],
    },
    {
      group: '',
      version: 'v1',
      kind: 'Service',
      plural: 'services',
      shortNames: ['svc'],
      categories: ['all'],
      subresources: ['status'],
      columns: [
        col('Type', 'spec.type'),
        col('Cluster-IP', 'spec.clusterIPs.0'),
        { name: 'External-IP', type: 'string', value: printers.serviceExternalIP },
        { name: 'Port(s)', type: 'string', value: printers.servicePorts },
        AGE_SLOT,
        { name: 'Selector', type: 'string', priority: 1, value: (o) => printers.formatLabels(get(o, 'spec.selector')) },
      ],
    },
    {
      group: '',
      version: 'v1',
      kind: 'Endpoints',
      plural: 'endpoints',
      shortNames: ['ep'],
      columns: [{ name: 'Endpoints', type: 'string', empty: '', value: printers.endpointsCell }],
      deprecation: `v1 Endpoints is deprecated in v1.33+; use ${g('discovery')}/v1 EndpointSlice`,
    },
    {
      group: '',
      version: 'v1',
      kind: 'Node',
      plural: 'nodes',
      namespaced: false,
      shortNames: ['no'],
      subresources: ['status'],
      fieldSelectors: { 'spec.unschedulable': (o) => String(Boolean(get(o, 'spec.unschedulable'))) },
      columns: [
        { name: 'Status', type: 'string', value: printers.nodeStatus },
        { name: 'Roles', type: 'string', value: (o) => printers.nodeRoles(o, n.domain) },
        AGE_SLOT,
        { ...col('Version', 'status.nodeInfo.kubeletVersion'), empty: '' },
        { name: 'Internal-IP', type: 'string', priority: 1, value: (o) => printers.nodeAddress(o, 'InternalIP') },
        { name: 'External-IP', type: 'string', priority: 1, value: (o) => printers.nodeAddress(o, 'ExternalIP') },
        { name: 'OS-Image', type: 'string', priority: 1, value: (o) => printers.nodeInfo(o, 'osImage') },
        { name: 'Kernel-Version', type: 'string', priority: 1, value: (o) => printers.nodeInfo(o, 'kernelVersion') },
        {
          name: 'Container-Runtime',
          type: 'string',
          priority: 1,
          value: (o) => printers.nodeInfo(o, 'containerRuntimeVersion'),
        },
      ],
    },
    {
      group: '',
      version: 'v1',
      kind: 'LimitRange',
      plural: 'limitranges',
      shortNames: ['limits'],
      ...CREATED_AT_LAYOUT,
    },
    {
      group: '',
      version: 'v1',
      kind: 'ReplicationController',
      plural: 'replicationcontrollers',
      shortNames: ['rc'],
      categories: ['all'],
      subresources: ['status', 'scale'],
      columns: replicaColumns((o) => printers.formatLabels(get(o, 'spec.selector'))),
    },
    {
      group: '',
      version: 'v1',
      kind: 'Event',
      plural: 'events',
      shortNames: ['ev'],
      fieldSelectors: CORE_EVENT_FIELDS,
      columns: EVENT_COLUMNS,
      ownLayout: true,
    },
    {
      group: '',
      version: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      fieldSelectors: { type: str('type') },
      columns: [col('Type', 'type'), { name: 'Data', type: 'string', value: (o) => printers.keyCount(o, 'data') }],
    },
    {
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      shortNames: ['cm'],
      columns: [{ name: 'Data', type: 'string', value: (o) => printers.keyCount(o, 'data', 'binaryData') }],
    },
    {
      group: '',
      version: 'v1',
      kind: 'ServiceAccount',
      plural: 'serviceaccounts',
      shortNames: ['sa'],
      subresources: ['token'],
    },
    // apps
    {
      group: 'apps',
      version: 'v1',
      kind: 'StatefulSet',
      plural: 'statefulsets',
      shortNames: ['sts'],
      categories: ['all'],
      subresources: ['status', 'scale'],
      columns: [
        {
          name: 'Ready',
          type: 'string',
          value: (o) => `${get(o, 'status.readyReplicas') ?? 0}/${get(o, 'spec.replicas') ?? 0}`,
        },
        AGE_SLOT,
        {
          name: 'Containers',
          type: 'string',
          priority: 1,
          empty: '',
          value: (o) => printers.templateContainers(o, 'name'),
        },
        {
          name: 'Images',
          type: 'string',
          priority: 1,
          empty: '',
          value: (o) => printers.templateContainers(o, 'image'),
        },
      ],
    },
    {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      plural: 'deployments',
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: ['status', 'scale'],
      columns: [
        {
          name: 'Ready',
          type: 'string',
          value: (o) => `${get(o, 'status.readyReplicas') ?? 0}/${get(o, 'spec.replicas') ?? 0}`,
        },
        // The reference declares these two string columns and fills them with numbers.
        { ...count('Up-to-date', 'status.updatedReplicas'), type: 'string' },
        { ...count('Available', 'status.availableReplicas'), type: 'string' },
        ...templateTail((o) => printers.formatLabelSelector(get(o, 'spec.selector'))),
      ],
    },
    {
      group: 'apps',
      version: 'v1',
      kind: 'ReplicaSet',
      plural: 'replicasets',
      shortNames: ['rs'],
      categories: ['all'],
      subresources: ['status', 'scale'],
      columns: replicaColumns((o) => printers.formatLabelSelector(get(o, 'spec.selector'))),
    },
    {
      group: 'apps',
      version: 'v1',
      kind: 'ControllerRevision',
      plural: 'controllerrevisions',
      columns: [{ name: 'Controller', type: 'string', value: printers.controllerOf }, col('Revision', 'revision')],
    },
    // policy
    {
      group: 'policy',
      version: 'v1',
      kind: 'PodDisruptionBudget',
      plural: 'poddisruptionbudgets',
      shortNames: ['pdb'],
      subresources: ['status'],
      columns: [
        { name: 'Min Available', type: 'string', value: (o) => printers.budgetField(o, 'minAvailable') },
        { name: 'Max Unavailable', type: 'string', value: (o) => printers.budgetField(o, 'maxUnavailable') },
        col('Allowed Disruptions', 'status.disruptionsAllowed', 'integer'),
      ],
    },
    // certificates
    {
      group: certificates,
      version: 'v1',
      kind: 'CertificateSigningRequest',
      plural: 'certificatesigningrequests',
      namespaced: false,
      shortNames: ['csr'],
      subresources: ['status', 'approval'],
      fieldSelectors: { 'spec.signerName': str('spec.signerName') },
      columns: [
        AGE_SLOT,
        col('SignerName', 'spec.signerName'),
        col('Requestor', 'spec.username'),
        {
          name: 'RequestedDuration',
          type: 'string',
          value: (o) => {
            const s = get(o, 'spec.expirationSeconds');
            return typeof s === 'number' ? humanDuration(s * 1000) : '<none>';
          },
        },
        { name: 'Condition', type: 'string', value: csrCondition },
      ],
    },
    {
      group: certificates,
      version: 'v1',
      kind: 'ClusterTrustBundle',
      plural: 'clustertrustbundles',
      namespaced: false,
      storageVersion: 'v1beta1',
      fieldSelectors: { 'spec.signerName': str('spec.signerName') },
      // The reference's ClusterTrustBundle table has no Age.
      columns: [NAME, col('SignerName', 'spec.signerName')],
      ownLayout: true,
    },
    // rbac
    ...(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'] as const).map(
      (kind): Def => ({
        group: g('rbac.authorization'),
        version: 'v1',
        kind,
        plural: `${kind.toLowerCase()}s`,
        namespaced: !kind.startsWith('Cluster'),
        ...(kind.endsWith('Binding') ? { columns: BINDING_COLUMNS } : CREATED_AT_LAYOUT),
      }),
    ),
    // networking
    {
      group: g('networking'),
      version: 'v1',
      kind: 'IngressClass',
      plural: 'ingressclasses',
      namespaced: false,
      columns: [
        col('Controller', 'spec.controller'),
        { name: 'Parameters', type: 'string', value: printers.ingressClassParameters },
      ],
    },
    {
      group: g('networking'),
      version: 'v1',
      kind: 'Ingress',
      plural: 'ingresses',
      shortNames: ['ing'],
      subresources: ['status'],
      columns: [
        col('Class', 'spec.ingressClassName'),
        { name: 'Hosts', type: 'string', value: printers.ingressHosts },
        { name: 'Address', type: 'string', empty: '', value: printers.ingressAddress },
        { name: 'Ports', type: 'string', value: printers.ingressPorts },
      ],
    },
    {
      group: g('storage'),
      version: 'v1',
      kind: 'StorageClass',
      plural: 'storageclasses',
      namespaced: false,
      shortNames: ['sc'],
      columns: [
        {
          name: 'Name',
          type: 'string',
          format: 'name',
          value: (o) =>
            printers.storageClassName(o, [n.annotations.defaultStorageClass, n.annotations.betaDefaultStorageClass]),
        },
        col('Provisioner', 'provisioner'),
        { name: 'ReclaimPolicy', type: 'string', value: (o) => get(o, 'reclaimPolicy') ?? 'Delete' },
        { name: 'VolumeBindingMode', type: 'string', value: (o) => get(o, 'volumeBindingMode') ?? 'Immediate' },
        { name: 'AllowVolumeExpansion', type: 'string', value: (o) => get(o, 'allowVolumeExpansion') ?? false },
        AGE_SLOT,
      ],
      ownLayout: true,
    },
    {
      group: g('node'),
      version: 'v1',
      kind: 'RuntimeClass',
      plural: 'runtimeclasses',
      namespaced: false,
      columns: [undescribed(col('Handler', 'handler'))],
    },
    {
      group: g('apiregistration'),
      version: 'v1',
      kind: 'APIService',
      plural: 'apiservices',
      namespaced: false,
      categories: ['api-extensions'],
      subresources: ['status'],
      columns: [
        {
          name: 'Service',
          type: 'string',
          value: (o) => {
            const s = get(o, 'spec.service') as { namespace?: string; name?: string } | undefined;
            return s ? `${s.namespace}/${s.name}` : 'Local';
          },
        },
        {
          name: 'Available',
          type: 'string',
          value: (o) => {
            const c = ((get(o, 'status.conditions') as any[] | undefined) ?? []).find((x) => x.type === 'Available');
            return c ? (c.status === 'True' ? 'True' : `${c.status} (${c.reason})`) : 'Unknown';
          },
        },
      ],
    },
    {
      group: coordination,
      version: 'v1',
      kind: 'Lease',
      plural: 'leases',
      columns: [col('Holder', 'spec.holderIdentity')],
    },
    {
      group: coordination,
      version: 'v1beta1',
      kind: 'LeaseCandidate',
      plural: 'leasecandidates',
      deprecation: `${coordination}/v1beta1 LeaseCandidate is deprecated in v1.36+, unavailable in v1.39+`,
      columns: [
        col('LeaseName', 'spec.leaseName'),
        undescribed(col('BinaryVersion', 'spec.binaryVersion')),
        undescribed(col('EmulationVersion', 'spec.emulationVersion')),
      ],
    },
    {
      group: g('admissionregistration'),
      version: 'v1',
      kind: 'ValidatingAdmissionPolicy',
      plural: 'validatingadmissionpolicies',
      namespaced: false,
      categories: ['api-extensions'],
      subresources: ['status'],
      columns: [
        { name: 'Validations', type: 'integer', value: (o) => (get(o, 'spec.validations') as unknown[])?.length ?? 0 },
        {
          name: 'ParamKind',
          type: 'string',
          value: (o) => {
            const kind = get(o, 'spec.paramKind') as { apiVersion?: string; kind?: string } | undefined;
            return kind ? `${kind.apiVersion ?? ''}/${kind.kind ?? ''}` : '<unset>';
          },
        },
      ],
    },
    {
      group: g('admissionregistration'),
      version: 'v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      plural: 'validatingadmissionpolicybindings',
      namespaced: false,
      categories: ['api-extensions'],
      columns: [
        col('PolicyName', 'spec.policyName'),
        { name: 'ParamRef', type: 'string', value: printers.policyParamRef },
      ],
    },
    {
      group: g('discovery'),
      version: 'v1',
      kind: 'EndpointSlice',
      plural: 'endpointslices',
      columns: [
        col('AddressType', 'addressType'),
        { name: 'Ports', type: 'string', value: (o) => printers.endpointSliceCell(o, 'ports') },
        { name: 'Endpoints', type: 'string', value: (o) => printers.endpointSliceCell(o, 'endpoints') },
      ],
    },
    {
      group: g('events'),
      version: 'v1',
      kind: 'Event',
      plural: 'events',
      shortNames: ['ev'],
      fieldSelectors: EVENTS_GROUP_FIELDS,
      // The reference serves both APIs from the core Event storage, so both print the core Event table.
      columns: EVENT_COLUMNS.map((c) => ({ ...c, value: (o, now) => c.value(eventToCore(o), now) })),
      ownLayout: true,
    },
    // reviews: evaluated on create, never stored
    {
      group: g('authorization'),
      version: 'v1',
      kind: 'SubjectAccessReview',
      plural: 'subjectaccessreviews',
      namespaced: false,
      ...review,
    },
    {
      group: g('authorization'),
      version: 'v1',
      kind: 'SelfSubjectAccessReview',
      plural: 'selfsubjectaccessreviews',
      namespaced: false,
      ...review,
    },
    {
      group: g('authorization'),
      version: 'v1',
      kind: 'SelfSubjectRulesReview',
      plural: 'selfsubjectrulesreviews',
      namespaced: false,
      ...review,
    },
    {
      group: g('authorization'),
      version: 'v1',
      kind: 'LocalSubjectAccessReview',
      plural: 'localsubjectaccessreviews',
      ...review,
    },
    {
      group: g('authentication'),
      version: 'v1',
      kind: 'TokenReview',
      plural: 'tokenreviews',
      namespaced: false,
      ...review,
    },
    {
      group: g('authentication'),
      version: 'v1',
      kind: 'SelfSubjectReview',
      plural: 'selfsubjectreviews',
      namespaced: false,
      ...review,
    },
  ];
}

export class ResourceRegistry {
  readonly naming: Naming;
  readonly all: readonly ResourceType[];
  private readonly byGvr = new Map<string, ResourceType>();
  private readonly byGvk = new Map<string, ResourceType>();

  constructor(flavor: FlavorName | Naming = 'orch') {
    this.naming = typeof flavor === 'string' ? naming(flavor) : flavor;
    this.all = definitions(this.naming).map(complete);
    const events = this.all.find((rt) => rt.kind === 'Event' && rt.group === group(this.naming, 'events'));
    const coreEvents = this.all.find((rt) => rt.kind === 'Event' && rt.group === '');
    if (events && coreEvents) {
      const apiVersion = apiVersionOf(events);
      events.storedAs = { rt: coreEvents, toStored: eventToCore, fromStored: (o) => coreToEvent(o, apiVersion) };
    }
    for (const rt of this.all) {
      this.byGvr.set(`${rt.group}/${rt.version}/${rt.plural}`, rt);
      this.byGvk.set(`${apiVersionOf(rt)}/${rt.kind}`, rt);
    }
  }

  /** By group, version and plural (how URLs name a resource). */
  resource(groupName: string, version: string, plural: string): ResourceType | undefined {
    return this.byGvr.get(`${groupName}/${version}/${plural}`);
  }

  /** By apiVersion and kind (how objects name their type). */
  kind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.byGvk.get(`${apiVersion}/${kind}`);
  }

  /** By kind alone, picking the first registered group (for `Pod`, `StatefulSet`, ...). */
  byKind(kind: string): ResourceType | undefined {
    return this.all.find((rt) => rt.kind === kind);
  }

  /** Every resource of one group and version, in registry order. */
  groupVersion(groupName: string, version: string): ResourceType[] {
    return this.all.filter((rt) => rt.group === groupName && rt.version === version);
  }

  /** The API groups (without the core group), each with its versions, preferred first. */
  groups(): { name: string; versions: string[] }[] {
    const out = new Map<string, string[]>();
    for (const rt of this.all) {
      if (!rt.group) continue;
      const versions = out.get(rt.group) ?? [];
      if (!versions.includes(rt.version)) versions.push(rt.version);
      out.set(rt.group, versions);
    }
    return [...out].map(([name, versions]) => ({ name, versions }));
  }
}

function complete(d: Def): ResourceType {
  const subresources = d.subresources ?? [];
  return {
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: STORAGE_VERBS,
    fieldSelectors: {},
    columns: [],
    virtual: false,
    ownLayout: false,
    singular: d.kind.toLowerCase(),
    ...d,
    subresources,
    hasStatus: subresources.includes('status'),
    hasGeneration: GENERATION_KINDS.has(d.kind),
  };
}
