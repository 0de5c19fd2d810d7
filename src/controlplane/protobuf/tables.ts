/**
 * Field tables of the Kubernetes messages that kubectl's typed clients send as protobuf. Field numbers are
 * those of the upstream `generated.proto` files (k8s.io/apimachinery `pkg/apis/meta/v1`, `pkg/runtime`,
 * `pkg/util/intstr`, `pkg/api/resource`; k8s.io/api `core/v1`, `apps/v1`, `policy/v1`, `certificates/v1`,
 * `autoscaling/v1`). Pod specs cover the common subset; fields not listed are skipped when decoding.
 *
 * Tables are looked up by kind only (`tableForKind`): the envelope carries the apiVersion, whatever the
 * group is called in the server's naming flavor.
 */
import { field, inline, list, type MessageTable, mapOf, message, ptr } from './schema.ts';

// ---------------------------------------------------------------------------------------------
// meta/v1

export const OwnerReference = message('OwnerReference', {
  5: field('apiVersion', 'string'),
  1: field('kind', 'string'),
  3: field('name', 'string'),
  4: field('uid', 'string'),
  6: ptr('controller', 'bool'),
  7: ptr('blockOwnerDeletion', 'bool'),
});

export const ManagedFieldsEntry = message('ManagedFieldsEntry', {
  1: field('manager', 'string'),
  2: field('operation', 'string'),
  3: field('apiVersion', 'string'),
  4: field('time', 'time'),
  6: field('fieldsType', 'string'),
  7: field('fieldsV1', 'fieldsV1'),
  8: field('subresource', 'string'),
});

export const ObjectMeta = message('ObjectMeta', {
  1: field('name', 'string'),
  2: field('generateName', 'string'),
  3: field('namespace', 'string'),
  4: field('selfLink', 'string'),
  5: field('uid', 'string'),
  6: field('resourceVersion', 'string'),
  7: field('generation', 'int64'),
  8: field('creationTimestamp', 'time'),
  9: field('deletionTimestamp', 'time'),
  10: ptr('deletionGracePeriodSeconds', 'int64'),
  11: mapOf('labels', 'string'),
  12: mapOf('annotations', 'string'),
  13: list('ownerReferences', OwnerReference),
  14: list('finalizers', 'string'),
  17: list('managedFields', ManagedFieldsEntry),
});

export const ListMeta = message('ListMeta', {
  1: field('selfLink', 'string'),
  2: field('resourceVersion', 'string'),
  3: field('continue', 'string'),
  4: ptr('remainingItemCount', 'int64'),
});

export const LabelSelectorRequirement = message('LabelSelectorRequirement', {
  1: field('key', 'string'),
  2: field('operator', 'string'),
  3: list('values', 'string'),
});

export const LabelSelector = message('LabelSelector', {
  1: mapOf('matchLabels', 'string'),
  2: list('matchExpressions', LabelSelectorRequirement),
});

export const Preconditions = message('Preconditions', {
  1: ptr('uid', 'string'),
  2: ptr('resourceVersion', 'string'),
});

export const DeleteOptions = message('DeleteOptions', {
  1: ptr('gracePeriodSeconds', 'int64'),
  2: field('preconditions', Preconditions),
  3: ptr('orphanDependents', 'bool'),
  4: ptr('propagationPolicy', 'string'),
  5: list('dryRun', 'string'),
});

// ---------------------------------------------------------------------------------------------
// core/v1: references and selectors

export const LocalObjectReference = message('LocalObjectReference', {
  1: field('name', 'string'),
});

export const ObjectFieldSelector = message('ObjectFieldSelector', {
  1: field('apiVersion', 'string'),
  2: field('fieldPath', 'string'),
});

export const ResourceFieldSelector = message('ResourceFieldSelector', {
  1: field('containerName', 'string'),
  2: field('resource', 'string'),
  3: field('divisor', 'quantity'),
});

export const ConfigMapKeySelector = message('ConfigMapKeySelector', {
  1: inline(LocalObjectReference),
  2: field('key', 'string'),
  3: ptr('optional', 'bool'),
});

export const SecretKeySelector = message('SecretKeySelector', {
  1: inline(LocalObjectReference),
  2: field('key', 'string'),
  3: ptr('optional', 'bool'),
});

export const ConfigMapEnvSource = message('ConfigMapEnvSource', {
  1: inline(LocalObjectReference),
  2: ptr('optional', 'bool'),
});

export const SecretEnvSource = message('SecretEnvSource', {
  1: inline(LocalObjectReference),
  2: ptr('optional', 'bool'),
});

// ---------------------------------------------------------------------------------------------
// core/v1: containers

export const EnvVarSource = message('EnvVarSource', {
  1: field('fieldRef', ObjectFieldSelector),
  2: field('resourceFieldRef', ResourceFieldSelector),
  3: field('configMapKeyRef', ConfigMapKeySelector),
  4: field('secretKeyRef', SecretKeySelector),
});

export const EnvVar = message('EnvVar', {
  1: field('name', 'string'),
  2: field('value', 'string'),
  3: field('valueFrom', EnvVarSource),
});

export const EnvFromSource = message('EnvFromSource', {
  1: field('prefix', 'string'),
  2: field('configMapRef', ConfigMapEnvSource),
  3: field('secretRef', SecretEnvSource),
});

export const ContainerPort = message('ContainerPort', {
  1: field('name', 'string'),
  2: field('hostPort', 'int32'),
  3: field('containerPort', 'int32'),
  4: field('protocol', 'string'),
  5: field('hostIP', 'string'),
});

export const ResourceRequirements = message('ResourceRequirements', {
  1: mapOf('limits', 'quantity'),
  2: mapOf('requests', 'quantity'),
});

export const VolumeMount = message('VolumeMount', {
  1: field('name', 'string'),
  2: field('readOnly', 'bool'),
  3: field('mountPath', 'string'),
  4: field('subPath', 'string'),
  5: ptr('mountPropagation', 'string'),
  6: field('subPathExpr', 'string'),
});

export const ExecAction = message('ExecAction', {
  1: list('command', 'string'),
});

export const HTTPHeader = message('HTTPHeader', {
  1: field('name', 'string'),
  2: field('value', 'string'),
});

export const HTTPGetAction = message('HTTPGetAction', {
  1: field('path', 'string'),
  2: field('port', 'intOrString'),
  3: field('host', 'string'),
  4: field('scheme', 'string'),
  5: list('httpHeaders', HTTPHeader),
});

export const TCPSocketAction = message('TCPSocketAction', {
  1: field('port', 'intOrString'),
  2: field('host', 'string'),
});

/** `Handler` (later `ProbeHandler` / `LifecycleHandler`): the same first three fields. */
export const Handler = message('Handler', {
  1: field('exec', ExecAction),
  2: field('httpGet', HTTPGetAction),
  3: field('tcpSocket', TCPSocketAction),
});

export const Probe = message('Probe', {
  1: inline(Handler),
  2: field('initialDelaySeconds', 'int32'),
  3: field('timeoutSeconds', 'int32'),
  4: field('periodSeconds', 'int32'),
  5: field('successThreshold', 'int32'),
  6: field('failureThreshold', 'int32'),
  7: ptr('terminationGracePeriodSeconds', 'int64'),
});

export const Lifecycle = message('Lifecycle', {
  1: field('postStart', Handler),
  2: field('preStop', Handler),
});

export const Capabilities = message('Capabilities', {
  1: list('add', 'string'),
  2: list('drop', 'string'),
});

export const SELinuxOptions = message('SELinuxOptions', {
  1: field('user', 'string'),
  2: field('role', 'string'),
  3: field('type', 'string'),
  4: field('level', 'string'),
});

export const SeccompProfile = message('SeccompProfile', {
  1: field('type', 'string'),
  2: ptr('localhostProfile', 'string'),
});

export const SecurityContext = message('SecurityContext', {
  1: field('capabilities', Capabilities),
  2: ptr('privileged', 'bool'),
  3: field('seLinuxOptions', SELinuxOptions),
  4: ptr('runAsUser', 'int64'),
  8: ptr('runAsGroup', 'int64'),
  5: ptr('runAsNonRoot', 'bool'),
  6: ptr('readOnlyRootFilesystem', 'bool'),
  7: ptr('allowPrivilegeEscalation', 'bool'),
  9: ptr('procMount', 'string'),
  11: field('seccompProfile', SeccompProfile),
});

export const Container = message('Container', {
  1: field('name', 'string'),
  2: field('image', 'string'),
  3: list('command', 'string'),
  4: list('args', 'string'),
  5: field('workingDir', 'string'),
  6: list('ports', ContainerPort),
  19: list('envFrom', EnvFromSource),
  7: list('env', EnvVar),
  8: field('resources', ResourceRequirements),
  9: list('volumeMounts', VolumeMount),
  10: field('livenessProbe', Probe),
  11: field('readinessProbe', Probe),
  22: field('startupProbe', Probe),
  12: field('lifecycle', Lifecycle),
  13: field('terminationMessagePath', 'string'),
  20: field('terminationMessagePolicy', 'string'),
  14: field('imagePullPolicy', 'string'),
  15: field('securityContext', SecurityContext),
  16: field('stdin', 'bool'),
  17: field('stdinOnce', 'bool'),
  18: field('tty', 'bool'),
});

// ---------------------------------------------------------------------------------------------
// core/v1: volumes and scheduling

export const KeyToPath = message('KeyToPath', {
  1: field('key', 'string'),
  2: field('path', 'string'),
  3: ptr('mode', 'int32'),
});

export const HostPathVolumeSource = message('HostPathVolumeSource', {
  1: field('path', 'string'),
  2: ptr('type', 'string'),
});

export const EmptyDirVolumeSource = message('EmptyDirVolumeSource', {
  1: field('medium', 'string'),
  2: field('sizeLimit', 'quantity'),
});

export const SecretVolumeSource = message('SecretVolumeSource', {
  1: field('secretName', 'string'),
  2: list('items', KeyToPath),
  3: ptr('defaultMode', 'int32'),
  4: ptr('optional', 'bool'),
});

export const ConfigMapVolumeSource = message('ConfigMapVolumeSource', {
  1: inline(LocalObjectReference),
  2: list('items', KeyToPath),
  3: ptr('defaultMode', 'int32'),
  4: ptr('optional', 'bool'),
});

export const PersistentVolumeClaimVolumeSource = message('PersistentVolumeClaimVolumeSource', {
  1: field('claimName', 'string'),
  2: field('readOnly', 'bool'),
});

export const VolumeSource = message('VolumeSource', {
  1: field('hostPath', HostPathVolumeSource),
  2: field('emptyDir', EmptyDirVolumeSource),
  6: field('secret', SecretVolumeSource),
  10: field('persistentVolumeClaim', PersistentVolumeClaimVolumeSource),
  19: field('configMap', ConfigMapVolumeSource),
});

export const Volume = message('Volume', {
  1: field('name', 'string'),
  2: inline(VolumeSource),
});

export const Toleration = message('Toleration', {
  1: field('key', 'string'),
  2: field('operator', 'string'),
  3: field('value', 'string'),
  4: field('effect', 'string'),
  5: ptr('tolerationSeconds', 'int64'),
});

export const Taint = message('Taint', {
  1: field('key', 'string'),
  2: field('value', 'string'),
  3: field('effect', 'string'),
  4: field('timeAdded', 'time'),
});

export const PodSecurityContext = message('PodSecurityContext', {
  1: field('seLinuxOptions', SELinuxOptions),
  2: ptr('runAsUser', 'int64'),
  6: ptr('runAsGroup', 'int64'),
  3: ptr('runAsNonRoot', 'bool'),
  4: list('supplementalGroups', 'int64'),
  5: ptr('fsGroup', 'int64'),
  9: ptr('fsGroupChangePolicy', 'string'),
  10: field('seccompProfile', SeccompProfile),
});

export const PodSpec = message('PodSpec', {
  1: list('volumes', Volume),
  20: list('initContainers', Container),
  2: list('containers', Container),
  3: field('restartPolicy', 'string'),
  4: ptr('terminationGracePeriodSeconds', 'int64'),
  5: ptr('activeDeadlineSeconds', 'int64'),
  6: field('dnsPolicy', 'string'),
  7: mapOf('nodeSelector', 'string'),
  8: field('serviceAccountName', 'string'),
  9: field('serviceAccount', 'string'),
  21: ptr('automountServiceAccountToken', 'bool'),
  10: field('nodeName', 'string'),
  11: field('hostNetwork', 'bool'),
  12: field('hostPID', 'bool'),
  13: field('hostIPC', 'bool'),
  27: ptr('shareProcessNamespace', 'bool'),
  14: field('securityContext', PodSecurityContext),
  15: list('imagePullSecrets', LocalObjectReference),
  16: field('hostname', 'string'),
  17: field('subdomain', 'string'),
  19: field('schedulerName', 'string'),
  22: list('tolerations', Toleration),
  24: field('priorityClassName', 'string'),
  25: ptr('priority', 'int32'),
  29: ptr('runtimeClassName', 'string'),
  30: ptr('enableServiceLinks', 'bool'),
  31: ptr('preemptionPolicy', 'string'),
});

export const PodTemplateSpec = message('PodTemplateSpec', {
  1: field('metadata', ObjectMeta),
  2: field('spec', PodSpec),
});

export const PodCondition = message('PodCondition', {
  1: field('type', 'string'),
  2: field('status', 'string'),
  3: field('lastProbeTime', 'time'),
  4: field('lastTransitionTime', 'time'),
  5: field('reason', 'string'),
  6: field('message', 'string'),
});

export const PodIP = message('PodIP', {
  1: field('ip', 'string'),
});

export const PodStatus = message('PodStatus', {
  1: field('phase', 'string'),
  2: list('conditions', PodCondition),
  3: field('message', 'string'),
  4: field('reason', 'string'),
  11: field('nominatedNodeName', 'string'),
  5: field('hostIP', 'string'),
  6: field('podIP', 'string'),
  12: list('podIPs', PodIP),
  7: field('startTime', 'time'),
  9: field('qosClass', 'string'),
});

// ---------------------------------------------------------------------------------------------
// Top-level kinds

export const Pod = message('Pod', {
  1: field('metadata', ObjectMeta),
  2: field('spec', PodSpec),
  3: field('status', PodStatus),
});

export const NamespaceCondition = message('NamespaceCondition', {
  1: field('type', 'string'),
  2: field('status', 'string'),
  4: field('lastTransitionTime', 'time'),
  5: field('reason', 'string'),
  6: field('message', 'string'),
});

export const Namespace = message('Namespace', {
  1: field('metadata', ObjectMeta),
  2: field('spec', message('NamespaceSpec', { 1: list('finalizers', 'string') })),
  3: field(
    'status',
    message('NamespaceStatus', { 1: field('phase', 'string'), 2: list('conditions', NamespaceCondition) }),
  ),
});

export const ConfigMap = message('ConfigMap', {
  1: field('metadata', ObjectMeta),
  4: ptr('immutable', 'bool'),
  2: mapOf('data', 'string'),
  3: mapOf('binaryData', 'bytes'),
});

export const Secret = message('Secret', {
  1: field('metadata', ObjectMeta),
  5: ptr('immutable', 'bool'),
  2: mapOf('data', 'bytes'),
  4: mapOf('stringData', 'string'),
  3: field('type', 'string'),
});

export const NodeCondition = message('NodeCondition', {
  1: field('type', 'string'),
  2: field('status', 'string'),
  3: field('lastHeartbeatTime', 'time'),
  4: field('lastTransitionTime', 'time'),
  5: field('reason', 'string'),
  6: field('message', 'string'),
});

export const NodeSystemInfo = message('NodeSystemInfo', {
  1: field('machineID', 'string'),
  2: field('systemUUID', 'string'),
  3: field('bootID', 'string'),
  4: field('kernelVersion', 'string'),
  5: field('osImage', 'string'),
  6: field('containerRuntimeVersion', 'string'),
  7: field('kubeletVersion', 'string'),
  8: field('kubeProxyVersion', 'string'),
  9: field('operatingSystem', 'string'),
  10: field('architecture', 'string'),
});

export const Node = message('Node', {
  1: field('metadata', ObjectMeta),
  2: field(
    'spec',
    message('NodeSpec', {
      1: field('podCIDR', 'string'),
      7: list('podCIDRs', 'string'),
      3: field('providerID', 'string'),
      4: field('unschedulable', 'bool'),
      5: list('taints', Taint),
      2: field('externalID', 'string'),
    }),
  ),
  3: field(
    'status',
    message('NodeStatus', {
      1: mapOf('capacity', 'quantity'),
      2: mapOf('allocatable', 'quantity'),
      3: field('phase', 'string'),
      4: list('conditions', NodeCondition),
      5: list('addresses', message('NodeAddress', { 1: field('type', 'string'), 2: field('address', 'string') })),
      7: field('nodeInfo', NodeSystemInfo),
    }),
  ),
});

export const Eviction = message('Eviction', {
  1: field('metadata', ObjectMeta),
  2: field('deleteOptions', DeleteOptions),
});

/** authentication/v1 TokenRequest, as `kubectl create token` sends it. */
export const TokenRequest = message('TokenRequest', {
  1: field('metadata', ObjectMeta),
  2: field(
    'spec',
    message('TokenRequestSpec', {
      1: list('audiences', 'string'),
      4: ptr('expirationSeconds', 'int64'),
      3: field(
        'boundObjectRef',
        message('BoundObjectReference', {
          1: field('kind', 'string'),
          2: field('apiVersion', 'string'),
          3: field('name', 'string'),
          4: field('uid', 'string'),
        }),
      ),
    }),
  ),
  3: field(
    'status',
    message('TokenRequestStatus', { 1: field('token', 'string'), 2: field('expirationTimestamp', 'time') }),
  ),
});

/** `ExtraValue` is a `[]string` in Go: its JSON form is the list itself. */
export const ExtraValue = message('ExtraValue', { 1: list('items', 'string') }, 'items');

export const CertificateSigningRequestCondition = message('CertificateSigningRequestCondition', {
  1: field('type', 'string'),
  6: field('status', 'string'),
  2: field('reason', 'string'),
  3: field('message', 'string'),
  4: field('lastUpdateTime', 'time'),
  5: field('lastTransitionTime', 'time'),
});

export const CertificateSigningRequest = message('CertificateSigningRequest', {
  1: field('metadata', ObjectMeta),
  2: field(
    'spec',
    message('CertificateSigningRequestSpec', {
      1: field('request', 'bytes'),
      7: field('signerName', 'string'),
      8: ptr('expirationSeconds', 'int32'),
      5: list('usages', 'string'),
      2: field('username', 'string'),
      3: field('uid', 'string'),
      4: list('groups', 'string'),
      6: mapOf('extra', ExtraValue),
    }),
  ),
  3: field(
    'status',
    message('CertificateSigningRequestStatus', {
      1: list('conditions', CertificateSigningRequestCondition),
      2: field('certificate', 'bytes'),
    }),
  ),
});

export const RollingUpdateDeployment = message('RollingUpdateDeployment', {
  1: field('maxUnavailable', 'intOrString'),
  2: field('maxSurge', 'intOrString'),
});

export const DeploymentCondition = message('DeploymentCondition', {
  1: field('type', 'string'),
  2: field('status', 'string'),
  6: field('lastUpdateTime', 'time'),
  7: field('lastTransitionTime', 'time'),
  4: field('reason', 'string'),
  5: field('message', 'string'),
});

export const Deployment = message('Deployment', {
  1: field('metadata', ObjectMeta),
  2: field(
    'spec',
    message('DeploymentSpec', {
      1: ptr('replicas', 'int32'),
      2: field('selector', LabelSelector),
      3: field('template', PodTemplateSpec),
      4: field(
        'strategy',
        message('DeploymentStrategy', {
          1: field('type', 'string'),
          2: field('rollingUpdate', RollingUpdateDeployment),
        }),
      ),
      5: field('minReadySeconds', 'int32'),
      6: ptr('revisionHistoryLimit', 'int32'),
      7: field('paused', 'bool'),
      9: ptr('progressDeadlineSeconds', 'int32'),
    }),
  ),
  3: field(
    'status',
    message('DeploymentStatus', {
      1: field('observedGeneration', 'int64'),
      2: field('replicas', 'int32'),
      3: field('updatedReplicas', 'int32'),
      7: field('readyReplicas', 'int32'),
      4: field('availableReplicas', 'int32'),
      5: field('unavailableReplicas', 'int32'),
      6: list('conditions', DeploymentCondition),
      8: ptr('collisionCount', 'int32'),
    }),
  ),
});

/** autoscaling/v1 Scale. `replicas` is kept at 0: a scale to zero must say so. */
export const Scale = message('Scale', {
  1: field('metadata', ObjectMeta),
  2: field('spec', message('ScaleSpec', { 1: ptr('replicas', 'int32') })),
  3: field('status', message('ScaleStatus', { 1: ptr('replicas', 'int32'), 2: field('selector', 'string') })),
});

const BY_KIND: Readonly<Record<string, MessageTable>> = {
  CertificateSigningRequest,
  ConfigMap,
  DeleteOptions,
  Deployment,
  Eviction,
  Namespace,
  Node,
  Pod,
  Scale,
  Secret,
  TokenRequest,
};

/** The table of a top-level kind, whatever its group and version; undefined for kinds not covered. */
export function tableForKind(kind: string): MessageTable | undefined {
  return Object.hasOwn(BY_KIND, kind) ? BY_KIND[kind] : undefined;
}

/** The kinds `tableForKind` knows. */
export const PROTOBUF_KINDS: readonly string[] = Object.keys(BY_KIND).sort();
