/**
 * The naming flavors: every identifier that carries the product word comes from this table.
 * `orch` is the spec's wording (the default); `kubernetes` is the real one, for kind and real clusters.
 * No other file may spell a product word.
 */

export type FlavorName = 'orch' | 'kubernetes';
export const FLAVORS: readonly FlavorName[] = ['orch', 'kubernetes'];

/**
 * This daemon's own name, the same in both flavors: its shipped RBAC and its default leader Lease. Not the flavor's
 * controller-manager name: in the kubernetes flavor that is kube-controller-manager's, whose bootstrap ClusterRole
 * our RBAC would replace and whose Lease (`kube-system/kube-controller-manager`) a kube-controller-manager running
 * the other controllers beside this daemon holds.
 */
export const DAEMON_NAME = 'orch-controller-manager';

export interface Naming {
  readonly flavor: FlavorName;
  /** The product word itself: `orch` or `kubernetes` (metric prefix, component names). */
  readonly product: string;
  /** Suffix of API groups: `certificates.<groupSuffix>`. */
  readonly groupSuffix: string;
  /** Domain of well-known label, annotation and signer names. */
  readonly domain: string;
  /** The word for the node agent in signer names, flags and messages. */
  readonly nodeAgent: string;
  /** The API server's component name. */
  readonly apiServer: string;
  /** The controller manager's component name (user agent, events, statusz). */
  readonly controllerManager: string;
  /** The product's short word (`kube`, `orch`) that prefixes component names. */
  readonly shortWord: string;
  /** Namespace of system components (leases, candidates). */
  readonly systemNamespace: string;
  /** Prefix of the shard Leases of `--sharding` replicas: `<prefix>-00`, `<prefix>-01`, ... */
  readonly shardLeasePrefix: string;
  /** Namespaces every cluster starts with, the default one first. */
  readonly initialNamespaces: readonly string[];
  /** The finalizer a namespace carries in `spec.finalizers` until it is emptied. */
  readonly namespaceFinalizer: string;
  /** Prefix of component metrics such as `<prefix>_healthcheck`. */
  readonly metricPrefix: string;
  /** The ConfigMap published in every namespace with the cluster's root CA as `ca.crt` (`kube-root-ca.crt`). */
  readonly rootCAConfigMap: string;
  /** What the root CA ConfigMap's description annotation says it is for. */
  readonly rootCADescription: string;
  readonly signers: {
    readonly apiServerClient: string;
    readonly apiServerClientNodeAgent: string;
    readonly nodeAgentServing: string;
    readonly legacyUnknown: string;
    readonly apiServerServing: string;
  };
  readonly annotations: {
    readonly initialEventsEnd: string;
    readonly defaultIngressClass: string;
    /** On a StorageClass: `true` makes it the class of claims that name none (and the dynamic provisioner's). */
    readonly defaultStorageClass: string;
    /** The beta predecessor of the default-class annotation, still honoured by the printers. */
    readonly betaDefaultStorageClass: string;
    /** The beta annotation naming a claim's or volume's class (before `spec.storageClassName`). */
    readonly betaStorageClass: string;
    readonly legacyIngressClass: string;
    readonly limitRanger: string;
    /** On a StatefulSet: `true` opts in to recovering a broken OrderedReady rollout after a revert. */
    readonly statefulSetRecovery: string;
    /** On a pod: how long a simulated node waits before reporting it Ready (a duration such as `1s`). */
    readonly readinessDelay: string;
    /**
     * On a pod: how long its simulated containers take to exit after SIGTERM (a duration such as `1s`, capped
     * by the grace period), or `ignore-sigterm` for containers that wait out the whole grace period.
     */
    readonly terminationDelay: string;
    /** The audit annotation of ValidatingAdmissionPolicy failures under the `Audit` action. */
    readonly validationFailure: string;
    /** A human-readable description of an object (`kubernetes.io/description`). */
    readonly description: string;
  };
  readonly labels: {
    readonly statefulSetPodName: string;
    readonly podIndex: string;
    readonly serviceName: string;
    readonly hostname: string;
    readonly aggregateToAdmin: string;
    readonly aggregateToEdit: string;
    readonly aggregateToView: string;
    readonly managedBy: string;
    /** On a ControllerRevision: the hash part of its name. */
    readonly revisionHash: string;
    /** Marks the APIServices the API server registers for the groups it serves itself. */
    readonly autoManaged: string;
    /** On every namespace: its own name (the reference's `kubernetes.io/metadata.name`). */
    readonly metadataName: string;
  };
  /** What the Node authorizer and NodeRestriction admission know about node agents. */
  readonly nodes: {
    /** Where each node agent keeps its Lease, named after its node. */
    readonly leaseNamespace: string;
    /** Label domains of the product: a node agent may set only the labels below in them on its own Node. */
    readonly labelDomains: readonly string[];
    /** Single labels a node agent may set on its own Node. */
    readonly agentLabels: readonly string[];
    /** Label namespaces (and their subdomains) a node agent may set on its own Node. */
    readonly agentLabelNamespaces: readonly string[];
    /** The label namespace (and its subdomains) only administrators may set on Nodes. */
    readonly restrictedLabelNamespace: string;
    /** Marks a pod that a node agent created for a static pod. */
    readonly mirrorPodAnnotation: string;
  };
  /** Group of structured z-page answers and of the component configuration. */
  readonly configGroup: string;
  /** Groups that the client protocol itself fixes (kubectl asks for them by these names in both flavors). */
  readonly protocol: {
    readonly metaGroup: string;
    readonly discoveryGroup: string;
  };
}

function build(
  flavor: FlavorName,
  product: string,
  productTitle: string,
  groupSuffix: string,
  domain: string,
  shortWord: string,
): Naming {
  const nodeAgent = flavor === 'orch' ? 'nodeagent' : 'kubelet';
  const apiServer = `${shortWord}-apiserver`;
  return {
    flavor,
    product,
    groupSuffix,
    domain,
    nodeAgent,
    apiServer,
    controllerManager: `${shortWord}-controller-manager`,
    shortWord,
    systemNamespace: `${shortWord}-system`,
    shardLeasePrefix: `${shortWord}-controller-manager-shard`,
    initialNamespaces: ['default', `${shortWord}-system`, `${shortWord}-public`, `${shortWord}-node-lease`],
    namespaceFinalizer: product,
    metricPrefix: product,
    rootCAConfigMap: `${shortWord}-root-ca.crt`,
    rootCADescription:
      `Contains a CA bundle that can be used to verify the ${apiServer} when using internal endpoints such as ` +
      `the internal service IP or ${product}.default.svc. No other usage is guaranteed across distributions of ` +
      `${productTitle} clusters.`,
    signers: {
      apiServerClient: `${domain}/${apiServer}-client`,
      apiServerClientNodeAgent: `${domain}/${apiServer}-client-${nodeAgent}`,
      nodeAgentServing: `${domain}/${nodeAgent}-serving`,
      legacyUnknown: `${domain}/legacy-unknown`,
      apiServerServing: `${domain}/${apiServer}-serving`,
    },
    annotations: {
      initialEventsEnd: `${groupSuffix}/initial-events-end`,
      defaultIngressClass: `ingressclass.${domain}/is-default-class`,
      defaultStorageClass: `storageclass.${domain}/is-default-class`,
      betaDefaultStorageClass: `storageclass.beta.${domain}/is-default-class`,
      betaStorageClass: `volume.beta.${domain}/storage-class`,
      legacyIngressClass: `${domain}/ingress.class`,
      limitRanger: `${domain}/limit-ranger`,
      statefulSetRecovery: `statefulset.${domain}/recover-broken-rollout`,
      readinessDelay: `simulation.${domain}/readiness-delay`,
      terminationDelay: `simulation.${domain}/termination-delay`,
      validationFailure: `validation.policy.admission.${groupSuffix}/validation_failure`,
      description: `${domain}/description`,
    },
    labels: {
      statefulSetPodName: `statefulset.${domain}/pod-name`,
      podIndex: `apps.${domain}/pod-index`,
      serviceName: `${domain}/service-name`,
      hostname: `${domain}/hostname`,
      aggregateToAdmin: `rbac.authorization.${groupSuffix}/aggregate-to-admin`,
      aggregateToEdit: `rbac.authorization.${groupSuffix}/aggregate-to-edit`,
      aggregateToView: `rbac.authorization.${groupSuffix}/aggregate-to-view`,
      managedBy: `app.${domain}/managed-by`,
      revisionHash: `controller.${domain}/hash`,
      autoManaged: `${shortWord}-aggregator.${domain}/automanaged`,
      metadataName: `${domain}/metadata.name`,
    },
    nodes: {
      leaseNamespace: `${shortWord}-node-lease`,
      labelDomains: [...new Set([domain, groupSuffix])],
      agentLabels: [
        `${domain}/hostname`,
        `topology.${domain}/zone`,
        `topology.${domain}/region`,
        `failure-domain.beta.${domain}/zone`,
        `failure-domain.beta.${domain}/region`,
        `beta.${domain}/instance-type`,
        `node.${domain}/instance-type`,
        `${domain}/os`,
        `${domain}/arch`,
        `beta.${domain}/os`,
        `beta.${domain}/arch`,
      ],
      agentLabelNamespaces: [`${nodeAgent}.${domain}`, `node.${domain}`],
      restrictedLabelNamespace: `node-restriction.${domain}`,
      mirrorPodAnnotation: `${domain}/config.mirror`,
    },
    configGroup: `config.${groupSuffix}`,
    protocol: { metaGroup: 'meta.k8s.io', discoveryGroup: 'apidiscovery.k8s.io' },
  };
}

const TABLE: Record<FlavorName, Naming> = {
  orch: build('orch', 'orch', 'orch', 'orch.io', 'orch.io', 'orch'),
  kubernetes: build('kubernetes', 'kubernetes', 'Kubernetes', 'k8s.io', 'kubernetes.io', 'kube'),
};

export function naming(flavor: FlavorName = 'orch'): Naming {
  const n = TABLE[flavor];
  if (!n) throw new Error(`unknown API flavor "${flavor}": must be one of ${FLAVORS.join(', ')}`);
  return n;
}

export function isFlavorName(value: string): value is FlavorName {
  return (FLAVORS as readonly string[]).includes(value);
}

/** A group in the flavor's domain, e.g. `group(n, 'certificates')` → `certificates.orch.io`. */
export function group(n: Naming, prefix: string): string {
  return `${prefix}.${n.groupSuffix}`;
}
