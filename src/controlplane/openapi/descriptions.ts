/**
 * Descriptions for the OpenAPI documents (what `kubectl explain` prints): one per kind, the fields every
 * object shares, and the fields users explain most. Keys are the message names of `../protobuf/numbers.ts`
 * (`<message>` for a type, `<message>.<field>` for a field); fields without an entry of their own get the
 * shared description of their name, if any. Written for this server; the reference's wording differs.
 */

const OBJECT_FIELDS: Readonly<Record<string, string>> = {
  apiVersion:
    'The versioned schema of this representation of an object: `<group>/<version>`, or `v1` for the core group.',
  kind: 'The REST resource this object represents, in CamelCase. Servers infer it from the endpoint of a request.',
  metadata: "Standard object metadata: name, namespace, labels, annotations, owners and the server's bookkeeping.",
  spec: 'The desired state, as written by users and controllers.',
  status: 'The most recently observed state, as written by the controllers that act on the object.',
  conditions: 'The latest available observations of the current state, one per condition type.',
  observedGeneration: 'The metadata.generation the status was computed for.',
  selector: 'A label query over the pods this object acts on.',
  template: 'The pod template: the pods this object creates are made from it.',
  replicas: 'The number of desired pods. Defaults to 1.',
  minReadySeconds:
    'Minimum number of seconds a newly ready pod must stay ready, without any of its containers crashing, to count as available.',
  revisionHistoryLimit: 'How many old revisions are kept to allow a rollback.',
};

const KINDS: Readonly<Record<string, string>> = {
  'core.v1.Namespace': 'A scope for names: most objects live in exactly one namespace.',
  'core.v1.Pod': 'A group of containers scheduled together on one node, with shared storage and network.',
  'core.v1.PersistentVolumeClaim': "A user's request for, and claim to, a persistent volume.",
  'core.v1.PersistentVolume': 'A piece of storage in the cluster, provisioned by an administrator or a provisioner.',
  'core.v1.Service': 'A named abstraction over a set of pods, with a stable virtual address and ports.',
  'core.v1.Endpoints': 'The addresses and ports that implement a service.',
  'core.v1.Node': 'A worker machine that runs pods.',
  'core.v1.LimitRange': 'Default and bounding resource requirements for the objects of a namespace.',
  'core.v1.ReplicationController': 'Keeps a number of pod replicas running (the predecessor of ReplicaSet).',
  'core.v1.Event': 'A report of something that happened to an object in the cluster.',
  'core.v1.Secret': 'Sensitive data such as passwords, tokens or keys, by key.',
  'core.v1.ConfigMap': 'Non-confidential configuration data, by key.',
  'core.v1.ServiceAccount': 'An identity for processes that run in pods, with the secrets they may use.',
  'apps.v1.StatefulSet':
    'Manages pods with stable, unique identities and stable storage, created and updated in order.',
  'apps.v1.Deployment': 'Declarative updates for pods, through ReplicaSets rolled out under a strategy.',
  'apps.v1.ReplicaSet': 'Keeps a number of pod replicas running.',
  'apps.v1.ControllerRevision': 'An immutable snapshot of the state a controller rolls out (a revision).',
  'policy.v1.PodDisruptionBudget':
    'The maximum disruption (voluntary evictions) a collection of pods may suffer at a time.',
  'policy.v1.Eviction': 'Asks the server to evict a pod, subject to the pod disruption budgets that cover it.',
  'certificates.v1.CertificateSigningRequest':
    'A request for a certificate from a signer, with its approval conditions and the issued certificate.',
  'certificates.v1.ClusterTrustBundle': 'A cluster-scoped set of trust anchors (X.509 root certificates).',
  'rbac.v1.ClusterRole': 'A cluster-wide set of permissions (policy rules).',
  'rbac.v1.ClusterRoleBinding': 'Grants the permissions of a cluster role to users, groups or service accounts.',
  'rbac.v1.Role': 'A namespaced set of permissions (policy rules).',
  'rbac.v1.RoleBinding': 'Grants the permissions of a role or cluster role within a namespace.',
  'networking.v1.IngressClass': 'The controller that implements a class of ingresses, and its parameters.',
  'networking.v1.Ingress': 'Rules that route external HTTP(S) traffic to services.',
  'storage.v1.StorageClass': 'A class of storage: the provisioner that makes its volumes, and their parameters.',
  'node.v1.RuntimeClass': 'A container runtime configuration that pods may select.',
  'apiregistration.v1.APIService': 'A server that serves one API group version.',
  'coordination.v1.Lease': 'A lease: a lock that a holder renews, used by leader election and heartbeats.',
  'coordination.v1beta1.LeaseCandidate': 'A candidate for a lease under coordinated leader election.',
  'admissionregistration.v1.ValidatingAdmissionPolicy':
    'Validation rules, written as CEL expressions, that the server checks on admission.',
  'admissionregistration.v1.ValidatingAdmissionPolicyBinding':
    'Binds a validating admission policy to the resources it applies to, with its parameters and actions.',
  'discovery.v1.EndpointSlice': 'A subset of the endpoints that implement a service.',
  'events.v1.Event': 'A report of something that happened to an object in the cluster.',
  'authorization.v1.SubjectAccessReview': 'Asks whether a user or group may perform an action.',
  'authorization.v1.LocalSubjectAccessReview': 'Asks whether a user or group may perform an action in a namespace.',
  'authorization.v1.SelfSubjectAccessReview': 'Asks whether the requesting user may perform an action.',
  'authorization.v1.SelfSubjectRulesReview': 'Lists the actions the requesting user may perform in a namespace.',
  'authentication.v1.TokenReview': 'Asks the server to authenticate a token.',
  'authentication.v1.SelfSubjectReview': 'Answers with the attributes the server knows the requesting user by.',
  'autoscaling.v1.Scale': 'The scale (desired and observed replicas) of a scalable resource.',
  'meta.v1.DeleteOptions': 'Options for a deletion.',
};

const FIELDS: Readonly<Record<string, string>> = {
  'meta.v1.ObjectMeta.name': 'The name, unique within a namespace (or the cluster for cluster-scoped objects).',
  'meta.v1.ObjectMeta.namespace': 'The namespace the object belongs to; empty for cluster-scoped objects.',
  'meta.v1.ObjectMeta.labels': 'Key/value pairs that organize and select objects.',
  'meta.v1.ObjectMeta.annotations': 'Key/value pairs that tools and controllers store; not used to select objects.',
  'meta.v1.ObjectMeta.managedFields':
    'Which field manager owns which fields, per operation (Apply or Update): the ownership server-side apply works with.',
  'meta.v1.ObjectMeta.resourceVersion': 'An opaque value that changes on every write, for optimistic concurrency.',
  'meta.v1.ObjectMeta.uid': 'The unique identity of this object in time and space.',
  'meta.v1.ObjectMeta.ownerReferences': 'The objects this one depends on; it is garbage-collected after them.',
  'meta.v1.ObjectMeta.finalizers': 'Keys that must be removed before the object is deleted from storage.',
  'policy.v1.PodDisruptionBudgetSpec.minAvailable':
    'An eviction is allowed if at least this many of the selected pods are still available after it, ' +
    'an absolute number or a percentage of the desired pods ("50%"). Mutually exclusive with maxUnavailable.',
  'policy.v1.PodDisruptionBudgetSpec.maxUnavailable':
    'An eviction is allowed if at most this many of the selected pods are unavailable after it, ' +
    'an absolute number or a percentage. Mutually exclusive with minAvailable.',
  'policy.v1.PodDisruptionBudgetSpec.selector': 'The pods the budget covers; an empty selector selects every pod.',
  'policy.v1.PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy':
    'When running but not ready pods may be evicted: IfHealthyBudget (default) or AlwaysAllow.',
  'policy.v1.PodDisruptionBudgetStatus.disruptionsAllowed': 'How many pod disruptions are currently allowed.',
  'apps.v1.StatefulSetSpec.serviceName': 'The governing service, which gives the pods their network identity.',
  'apps.v1.StatefulSetSpec.podManagementPolicy':
    'How pods are created and deleted: OrderedReady (one at a time, in order; the default) or Parallel.',
  'apps.v1.StatefulSetSpec.updateStrategy': 'How pods are updated when the template changes.',
  'apps.v1.StatefulSetSpec.volumeClaimTemplates': 'Claims each pod gets its own copy of, named after the pod.',
  'apps.v1.StatefulSetUpdateStrategy.type': 'RollingUpdate (the default) or OnDelete.',
  'apps.v1.StatefulSetUpdateStrategy.rollingUpdate': 'Parameters of the RollingUpdate strategy.',
  'apps.v1.RollingUpdateStatefulSetStrategy.partition':
    'Only pods with an ordinal at or above the partition are updated. Defaults to 0.',
  'apps.v1.RollingUpdateStatefulSetStrategy.maxUnavailable':
    'The most pods that may be unavailable during the update, a number or a percentage. Defaults to 1.',
  'apps.v1.DeploymentSpec.strategy': 'How existing pods are replaced by new ones.',
  'apps.v1.DeploymentSpec.paused': 'Whether the deployment is paused: template changes are not rolled out.',
  'apps.v1.DeploymentSpec.progressDeadlineSeconds':
    'Seconds a rollout may make no progress before it is reported as failed. Defaults to 600.',
  'core.v1.PodSpec.containers': 'The containers of the pod; at least one.',
  'core.v1.Container.image': 'The container image to run.',
  'core.v1.Container.name': 'The name of the container, unique within the pod.',
};

/** The description of a type (a message), if any. */
export function typeDescription(message: string): string | undefined {
  return own(KINDS, message);
}

/** The description of a field of a message, or the shared one of its name, if any. */
export function fieldDescription(message: string | undefined, field: string): string | undefined {
  return (message !== undefined ? own(FIELDS, `${message}.${field}`) : undefined) ?? own(OBJECT_FIELDS, field);
}

function own(record: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
