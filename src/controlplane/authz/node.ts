/**
 * The reference's Node authorizer: requests of a node identity (`system:node:<name>` in `system:nodes`) to
 * secrets, config maps, claims, volumes and service account tokens are allowed only for the objects that pods
 * bound to that node use; leases only in the node lease namespace and under the node's own name; everything
 * else by the static rules of the `system:node` role, which NodeRestriction admission narrows to the node's own
 * objects. It never denies: what it does not allow goes on to RBAC (`--authorization-mode=Node,RBAC`).
 */
import { group, type Naming } from '../../api/naming.ts';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../api/node-identity.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { PolicyRule, SubjectRulesReviewStatus } from '../../api/types/index.ts';
import type { UserInfo } from '../admission.ts';
import { type GraphStorage, type NodeGraph, type RelatedKind, StorageNodeGraph } from './node-graph.ts';
import {
  type AuthorizationAttributes,
  type Authorizer,
  type Decision,
  isResourceRequest,
  type ResourceRequestAttributes,
  ruleAllows,
} from './rbac.ts';

/** The node a user is, as the reference's node identifier: `undefined` for other users, `''` when it names none. */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}

const READ = ['get', 'list', 'watch'];

/**
 * The reference's `system:node` rules (its `NodeRules`) over the resources this server serves; the storage
 * group's volume attachments, CSI drivers and CSI nodes are not served here.
 */
export function nodeRules(n: Naming): PolicyRule[] {
  const core = (verbs: string[], ...resources: string[]): PolicyRule => ({ verbs, apiGroups: [''], resources });
  const of = (prefix: string, verbs: string[], ...resources: string[]): PolicyRule => ({
    verbs,
    apiGroups: [group(n, prefix)],
    resources,
  });
  return [
    of('authentication', ['create'], 'tokenreviews'),
    of('authorization', ['create'], 'subjectaccessreviews', 'localsubjectaccessreviews'),
    core(READ, 'services'),
    core(['create', 'get', 'list', 'watch'], 'nodes'),
    core(['update', 'patch'], 'nodes/status'),
    core(['update', 'patch'], 'nodes'),
    core(['create', 'update', 'patch'], 'events'),
    core(READ, 'pods'),
    core(['create', 'delete'], 'pods'),
    core(['update', 'patch'], 'pods/status'),
    core(['create'], 'pods/eviction'),
    core(READ, 'secrets', 'configmaps'),
    core(['get'], 'persistentvolumeclaims', 'persistentvolumes'),
    core(['get'], 'endpoints'),
    of('certificates', ['create', 'get', 'list', 'watch'], 'certificatesigningrequests'),
    of('coordination', ['get', 'create', 'update', 'patch', 'delete'], 'leases'),
    core(['create'], 'serviceaccounts/token'),
    core(['get', 'update', 'patch'], 'persistentvolumeclaims/status'),
    of('node', READ, 'runtimeclasses'),
  ];
}

const allow: Decision = { allowed: true, reason: '' };
const noOpinion = (reason = ''): Decision => ({ allowed: false, reason });

/** The decision for a request of node `node` (non-empty), with `graph` answering what its pods use. */
export function decideForNode(
  node: string,
  attrs: AuthorizationAttributes,
  graph: NodeGraph,
  n: Naming,
  rules: readonly PolicyRule[],
): Decision {
  if (isResourceRequest(attrs) && attrs.group === '') {
    switch (attrs.resource) {
      case 'secrets':
        return readNamespaced(node, 'secret', attrs, graph);
      case 'configmaps':
        return readNamespaced(node, 'configmap', attrs, graph);
      case 'persistentvolumeclaims':
        if (attrs.subresource === 'status') return statusUpdate(node, attrs, graph);
        return getOnly(node, 'persistentvolumeclaim', attrs, graph);
      case 'persistentvolumes':
        return getOnly(node, 'persistentvolume', attrs, graph);
      case 'serviceaccounts':
        return createToken(node, attrs, graph);
    }
  }
  if (isResourceRequest(attrs) && attrs.group === group(n, 'coordination') && attrs.resource === 'leases') {
    return lease(node, attrs, n.nodes.leaseNamespace);
  }
  return rules.some((r) => ruleAllows(attrs, r)) ? allow : noOpinion();
}

function related(node: string, kind: RelatedKind, attrs: ResourceRequestAttributes, graph: NodeGraph): Decision {
  if (!attrs.name) return noOpinion('No Object name found');
  if (graph.related(node, kind, attrs.namespace ?? '', attrs.name)) return allow;
  return noOpinion(`no relationship found between node '${node}' and this object`);
}

function readNamespaced(node: string, kind: RelatedKind, attrs: ResourceRequestAttributes, graph: NodeGraph) {
  if (!READ.includes(attrs.verb)) return noOpinion('can only read resources of this type');
  if (attrs.subresource) return noOpinion('cannot read subresource');
  if (!attrs.namespace) return noOpinion('can only read namespaced object of this type');
  return related(node, kind, attrs, graph);
}

function getOnly(node: string, kind: RelatedKind, attrs: ResourceRequestAttributes, graph: NodeGraph) {
  if (attrs.verb !== 'get') return noOpinion('can only get individual resources of this type');
  if (attrs.subresource) return noOpinion('cannot get subresource');
  return related(node, kind, attrs, graph);
}

function statusUpdate(node: string, attrs: ResourceRequestAttributes, graph: NodeGraph) {
  if (attrs.verb !== 'update' && attrs.verb !== 'patch') return noOpinion('can only get/update/patch this type');
  return related(node, 'persistentvolumeclaim', attrs, graph);
}

function createToken(node: string, attrs: ResourceRequestAttributes, graph: NodeGraph) {
  if (attrs.verb !== 'create' || !attrs.name) {
    return noOpinion('can only create tokens for individual service accounts');
  }
  if (attrs.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
  return related(node, 'serviceaccount', attrs, graph);
}

function lease(node: string, attrs: ResourceRequestAttributes, leaseNamespace: string): Decision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(attrs.verb)) {
    return noOpinion('can only get, create, update, patch, or delete a node lease');
  }
  if (attrs.namespace !== leaseNamespace) {
    return noOpinion(`can only access leases in the ${JSON.stringify(leaseNamespace)} system namespace`);
  }
  // A create names no lease here: NodeRestriction admission checks the name in the body.
  if (attrs.verb !== 'create' && attrs.name !== node) {
    return noOpinion('can only access node lease with the same name as the requesting node');
  }
  return allow;
}

/** The Node authorizer over a storage; no opinion on users that are not nodes. */
export class NodeAuthorizer implements Authorizer {
  private readonly graph: NodeGraph;
  private readonly rules: PolicyRule[];

  constructor(
    storage: GraphStorage,
    private readonly registry: ResourceRegistry,
  ) {
    const rt = (kind: string) => {
      const found = registry.kind('v1', kind);
      if (!found) throw new Error(`the registry has no v1 ${kind}`);
      return found;
    };
    this.graph = new StorageNodeGraph(storage, rt('Pod'), rt('PersistentVolumeClaim'));
    this.rules = nodeRules(registry.naming);
  }

  authorize(user: UserInfo, attrs: AuthorizationAttributes): Decision {
    const node = nodeIdentity(user);
    if (node === undefined) return noOpinion();
    if (!node) return noOpinion(`unknown node for user ${JSON.stringify(user.username)}`);
    return decideForNode(node, attrs, this.graph, this.registry.naming, this.rules);
  }

  /** As the reference: a node's permissions depend on its pods, so they are not listed. */
  rulesFor(user: UserInfo): SubjectRulesReviewStatus {
    const status: SubjectRulesReviewStatus = { resourceRules: [], nonResourceRules: [], incomplete: false };
    if (nodeIdentity(user) === undefined) return status;
    return { ...status, incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' };
  }
}
