/**
 * The reference's NodeRestriction admission: a node identity (see `nodeIdentity`) may create and change only its
 * own Node (neither its taints nor labels of the product's domains beyond the node agent's own; never the
 * node-restriction ones), the status of pods bound to it, evictions and deletions of those pods, mirror pods of
 * its own, only the status of claims, tokens bound to its pods, only its own Lease in the lease namespace, and
 * node-agent CSRs (client or serving) only for its own name.
 */
import type { KubeObject } from '../../api/meta.ts';
import { group, type Naming } from '../../api/naming.ts';
import { NODE_USER_PREFIX } from '../../api/node-identity.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { CertificateSigningRequest } from '../../api/types/certificates.ts';
import type { Node, Pod } from '../../api/types/core.ts';
import { csrCommonName } from '../../pki/certs.ts';
import { jsonEqual } from '../../util/equal.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.ts';
import { nodeIdentity } from '../authz/node.ts';
import { podReferences } from '../authz/node-graph.ts';
import { type ApiError, forbidden, notFound } from '../errors.ts';
import type { Storage } from '../storage.ts';

/** What the decision reads besides the request: stored pods and nodes. */
export interface NodeRestrictionFacts {
  pod(namespace: string, name: string): Pod | undefined;
  node(name: string): Node | undefined;
}

const q = (s: string) => JSON.stringify(s);
const labelNamespace = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (ns: string, domain: string) => ns === domain || ns.endsWith(`.${domain}`);

/** Label keys added, removed or changed between two label maps, sorted. */
export function modifiedLabels(a?: Record<string, string> | null, b?: Record<string, string> | null): string[] {
  const before = a ?? {};
  const after = b ?? {};
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => before[k] !== after[k]).sort();
}

/** Of the labels a node changes, those it may not: node-restriction ones, and the product's beyond the agent's own. */
export function forbiddenNodeLabels(n: Naming, keys: string[]): string[] {
  const { labelDomains, agentLabels, agentLabelNamespaces, restrictedLabelNamespace } = n.nodes;
  return keys.filter((key) => {
    const ns = labelNamespace(key);
    if (inNamespace(ns, restrictedLabelNamespace)) return true;
    const product = labelDomains.some((d) => inNamespace(ns, d));
    const agents = agentLabels.includes(key) || agentLabelNamespaces.some((d) => inNamespace(ns, d));
    return product && !agents;
  });
}

/** The refusal of a node's write, or `undefined` when NodeRestriction lets it through. */
export function nodeRestriction(
  node: string,
  a: AdmissionAttributes,
  facts: NodeRestrictionFacts,
  n: Naming,
): ApiError | undefined {
  const deny = (why: string) => forbidden(a.rt, a.name, why);
  if (!node) return deny(`could not determine node from user ${q(a.user.username)}`);
  const core = a.rt.group === '';
  switch (a.rt.kind) {
    case 'Pod':
      return core ? admitPod(node, a, facts, n, deny) : undefined;
    case 'Node':
      return core ? admitNode(node, a, n, deny) : undefined;
    case 'PersistentVolumeClaim':
      if (!core) return undefined;
      return a.subresource === 'status' ? admitClaimStatus(node, a, deny) : deny('may only update PVC status');
    case 'ServiceAccount':
      return core ? admitToken(node, a, facts, deny) : undefined;
    case 'Lease':
      return a.rt.group === group(n, 'coordination') ? admitLease(node, a, n, deny) : undefined;
    case 'CertificateSigningRequest':
      return a.rt.group === group(n, 'certificates') ? admitCsr(node, a, n, deny) : undefined;
  }
  return undefined;
}

type Deny = (why: string) => ApiError;

function admitPod(node: string, a: AdmissionAttributes, facts: NodeRestrictionFacts, n: Naming, deny: Deny) {
  const op = a.operation;
  switch (a.subresource ?? '') {
    case '':
      if (op === 'CREATE') return admitMirrorPod(node, a.object as Pod, facts, n, deny);
      if (op === 'DELETE') {
        if ((a.oldObject as Pod | undefined)?.spec?.nodeName === node) return undefined;
        return deny(`node ${q(node)} can only delete pods with spec.nodeName set to itself`);
      }
      return deny(`unexpected operation ${q(op)}, node ${q(node)} can only create and delete mirror pods`);
    case 'status': {
      if (op !== 'UPDATE') return deny(`unexpected operation ${q(op)}`);
      const old = a.oldObject as Pod;
      const next = a.object as Pod;
      if (old.spec?.nodeName !== node) {
        return deny(`node ${q(node)} can only update pod status for pods with spec.nodeName set to itself`);
      }
      if (!jsonEqual(old.metadata.labels ?? {}, next.metadata.labels ?? {})) {
        return deny(`node ${q(node)} cannot update labels through pod status`);
      }
      const claims = (p: Pod) => (p.status as { resourceClaimStatuses?: unknown[] })?.resourceClaimStatuses ?? [];
      if (!jsonEqual(claims(old), claims(next))) return deny(`node ${q(node)} cannot update resource claim statues`);
      return undefined;
    }
    case 'eviction': {
      if (op !== 'CREATE') return deny(`unexpected operation ${op}`);
      const name = a.name || a.object?.metadata.name;
      if (!name) return deny('could not determine pod from request data');
      const pod = facts.pod(a.namespace ?? '', name);
      if (!pod) return notFound(a.rt, name);
      if (pod.spec?.nodeName !== node) return deny(`node ${node} can only evict pods with spec.nodeName set to itself`);
      return undefined;
    }
    default:
      return deny(`unexpected pod subresource ${q(a.subresource ?? '')}, only 'status' and 'eviction' are allowed`);
  }
}

/** A node creates only mirror pods of its own: bound to it, owned by its Node, using no other object. */
function admitMirrorPod(node: string, pod: Pod, facts: NodeRestrictionFacts, n: Naming, deny: Deny) {
  const mirror = n.nodes.mirrorPodAnnotation;
  if (pod.metadata.annotations?.[mirror] === undefined) {
    return deny(`pod does not have ${q(mirror)} annotation, node ${q(node)} can only create mirror pods`);
  }
  if (pod.spec?.nodeName !== node) return deny(`node ${q(node)} can only create pods with spec.nodeName set to itself`);
  const owners = pod.metadata.ownerReferences ?? [];
  if (owners.length > 1)
    return deny(`node ${q(node)} can only create pods with a single owner reference set to itself`);
  const owner = owners[0];
  if (owner?.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) {
    return deny(`node ${q(node)} can only create pods with an owner reference set to itself`);
  }
  if (!owner.controller) {
    return deny(`node ${q(node)} can only create pods with a controller owner reference set to itself`);
  }
  if (owner.blockOwnerDeletion) return deny(`node ${q(node)} must not set blockOwnerDeletion on an owner reference`);
  const self = facts.node(node);
  if (!self) return notFound({ group: '', plural: 'nodes' }, node);
  if (owner.uid !== self.metadata.uid) {
    return deny(`node ${node} UID mismatch: expected ${owner.uid} got ${self.metadata.uid}`);
  }
  if (pod.spec?.serviceAccountName) return deny(`node ${q(node)} can not create pods that reference a service account`);
  const volumes = Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : [];
  const bundles = volumes.filter((v) => {
    const sources = v?.projected?.sources;
    return Array.isArray(sources) && sources.some((s) => (s as { clusterTrustBundle?: unknown })?.clusterTrustBundle);
  });
  const references: [string, number][] = [
    ['secrets', podReferences(pod, 'secret').length],
    ['configmaps', podReferences(pod, 'configmap').length],
    ['clustertrustbundles', bundles.length],
    ['persistentvolumeclaims', volumes.filter((v) => v?.persistentVolumeClaim).length],
  ];
  const used = references.find(([, count]) => count > 0);
  return used && deny(`node ${q(node)} can not create pods that reference ${used[0]}`);
}

function admitNode(node: string, a: AdmissionAttributes, n: Naming, deny: Deny) {
  if (a.name !== node) return deny(`node ${q(node)} is not allowed to modify node ${q(a.name)}`);
  const next = a.object as Node | undefined;
  const old = a.oldObject as Node | undefined;
  if (a.operation === 'CREATE' && next) {
    if (next.spec?.configSource)
      return deny(`node ${q(node)} is not allowed to create pods with a non-nil configSource`);
    const labels = forbiddenNodeLabels(n, modifiedLabels(next.metadata.labels));
    if (labels.length) return deny(`node ${q(node)} is not allowed to set the following labels: ${labels.join(', ')}`);
  }
  if (a.operation === 'UPDATE' && next && old) {
    const source = next.spec?.configSource;
    if (source && !jsonEqual(source, old.spec?.configSource)) {
      return deny(`node ${q(node)} is not allowed to update configSource to a new non-nil configSource`);
    }
    if (!jsonEqual(next.spec?.taints ?? [], old.spec?.taints ?? [])) {
      return deny(`node ${q(node)} is not allowed to modify taints`);
    }
    const labels = forbiddenNodeLabels(n, modifiedLabels(next.metadata.labels, old.metadata.labels));
    if (labels.length) return deny(`is not allowed to modify labels: ${labels.join(', ')}`);
  }
  return undefined;
}

/** Only `status.capacity` and `status.conditions` (and the expansion fields) of a claim may change. */
function admitClaimStatus(node: string, a: AdmissionAttributes, deny: Deny) {
  if (a.operation !== 'UPDATE') return deny(`unexpected operation ${q(a.operation)}`);
  const comparable = (o: KubeObject | undefined) => {
    const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o?.metadata ?? {};
    const {
      capacity: _c,
      conditions: _cs,
      allocatedResources: _ar,
      allocatedResourceStatuses: _as,
      ...status
    } = (o?.status ?? {}) as Record<string, unknown>;
    return { ...o, metadata, status };
  };
  const before = comparable(a.oldObject);
  const after = comparable(a.object);
  if (jsonEqual(before, after)) return undefined;
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => !jsonEqual((before as Record<string, unknown>)[k], (after as Record<string, unknown>)[k]),
  );
  return deny(
    `node ${q(node)} is not allowed to update fields other than status.capacity and status.conditions: ${fields.sort().join(', ')}`,
  );
}

/** A token a node asks for must be bound to a pod on that node. */
function admitToken(node: string, a: AdmissionAttributes, facts: NodeRestrictionFacts, deny: Deny) {
  if (a.operation !== 'CREATE' || a.subresource !== 'token') return undefined;
  const ref = (
    a.object?.spec as { boundObjectRef?: { apiVersion?: string; kind?: string; name?: string; uid?: string } }
  )?.boundObjectRef;
  if (ref?.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) {
    return deny('node requested token not bound to a pod');
  }
  if (!ref.uid) return deny('node requested token with a pod binding without a uid');
  const pod = facts.pod(a.namespace ?? '', ref.name);
  if (!pod) return notFound({ group: '', plural: 'pods' }, ref.name);
  if (ref.uid !== pod.metadata.uid) {
    return deny(
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  if (pod.spec?.nodeName !== node) return deny('node requested token bound to a pod scheduled on a different node');
  return undefined;
}

function admitLease(node: string, a: AdmissionAttributes, n: Naming, deny: Deny) {
  if (a.namespace !== n.nodes.leaseNamespace) {
    return deny(`can only access leases in the ${q(n.nodes.leaseNamespace)} system namespace`);
  }
  const name = a.operation === 'CREATE' ? a.object?.metadata.name : a.name;
  if (name !== node) return deny('can only access node lease with the same name as the requesting node');
  return undefined;
}

/** A node asks for node-agent certificates in its own name only (other signers are the signer's to check). */
function admitCsr(node: string, a: AdmissionAttributes, n: Naming, deny: Deny) {
  if (a.operation !== 'CREATE') return undefined;
  const spec = (a.object as CertificateSigningRequest | undefined)?.spec;
  if (spec?.signerName !== n.signers.nodeAgentServing && spec?.signerName !== n.signers.apiServerClientNodeAgent) {
    return undefined;
  }
  const commonName = csrCommonName(Buffer.from(spec.request ?? '', 'base64').toString('utf8'));
  if (commonName === undefined) return deny('unable to parse csr');
  const own = `${NODE_USER_PREFIX}${node}`;
  return commonName === own ? undefined : deny(`can only create a node CSR with CN=${own}`);
}

/** The plugin over a storage: a no-op for every user that is not a node. */
export function nodeRestrictionAdmission(registry: ResourceRegistry, storage: Pick<Storage, 'get'>): AdmissionPlugin {
  const pods = registry.kind('v1', 'Pod')!;
  const nodes = registry.kind('v1', 'Node')!;
  const facts: NodeRestrictionFacts = {
    pod: (namespace, name) => storage.get(pods, `${namespace}/${name}`) as Pod | undefined,
    node: (name) => storage.get(nodes, name) as Node | undefined,
  };
  return {
    name: 'NodeRestriction',
    admit(a) {
      const node = nodeIdentity(a.user);
      if (node === undefined) return;
      const refusal = nodeRestriction(node, a, facts, registry.naming);
      if (refusal) throw refusal;
    },
  };
}
