import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import { naming } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import type { Pod } from '../../api/types/core.ts';
import type { UserInfo } from '../admission.ts';
import { Storage } from '../storage.ts';
import { decideForNode, NodeAuthorizer, nodeIdentity, nodeRules } from './node.ts';
import { type NodeGraph, podReferences, type RelatedKind } from './node-graph.ts';
import type { AuthorizationAttributes } from './rbac.ts';
import { UnionAuthorizer } from './union.ts';

const k8s = naming('kubernetes');
const orch = naming('orch');
const user = (username: string, ...groups: string[]): UserInfo => ({ username, groups });

describe('nodeIdentity', () => {
  it.each([
    [user('system:node:n1', 'system:nodes'), 'n1'],
    [user('system:node:', 'system:nodes'), ''],
    [user('system:node:n1'), undefined],
    [user('n1', 'system:nodes'), undefined],
    [user('admin', 'system:masters'), undefined],
  ])('%j is node %j', (u, node) => {
    expect(nodeIdentity(u)).toBe(node);
  });
});

/** n1 runs pod default/web, which uses secret s1, config map c1, claim data (volume pv1) and account sa1. */
const graph: NodeGraph = {
  related: (node: string, kind: RelatedKind, namespace: string, name: string) => {
    const of: Record<RelatedKind, string> = {
      secret: 'default/s1',
      configmap: 'default/c1',
      persistentvolumeclaim: 'default/data',
      persistentvolume: '/pv1',
      serviceaccount: 'default/sa1',
    };
    return node === 'n1' && of[kind] === `${namespace}/${name}`;
  },
};

const attrs = (verb: string, resource: string, o: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  verb,
  group: '',
  resource,
  ...o,
});

const inDefault = (verb: string, resource: string, name?: string, subresource?: string) =>
  attrs(verb, resource, { namespace: 'default', ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) });

describe('decideForNode', () => {
  const rules = nodeRules(k8s);
  const decide = (a: AuthorizationAttributes, node = 'n1') => decideForNode(node, a, graph, k8s, rules);
  const lease = (verb: string, namespace: string, name?: string) =>
    attrs(verb, 'leases', { group: 'coordination.k8s.io', namespace, ...(name ? { name } : {}) });
  const noRelation = "no relationship found between node 'n1' and this object";

  it.each<[string, AuthorizationAttributes, boolean, string]>([
    ['its pod’s secret', inDefault('get', 'secrets', 's1'), true, ''],
    ['a list of its pod’s secret by name', inDefault('list', 'secrets', 's1'), true, ''],
    ['another secret', inDefault('get', 'secrets', 's2'), false, noRelation],
    ['the same name elsewhere', attrs('get', 'secrets', { namespace: 'other', name: 's1' }), false, noRelation],
    ['all secrets', inDefault('list', 'secrets'), false, 'No Object name found'],
    ['secrets everywhere', attrs('list', 'secrets'), false, 'can only read namespaced object of this type'],
    ['a secret write', inDefault('update', 'secrets', 's1'), false, 'can only read resources of this type'],
    ['its config map', inDefault('watch', 'configmaps', 'c1'), true, ''],
    ['its claim', inDefault('get', 'persistentvolumeclaims', 'data'), true, ''],
    [
      'a claim list',
      inDefault('list', 'persistentvolumeclaims'),
      false,
      'can only get individual resources of this type',
    ],
    ['its claim status', inDefault('patch', 'persistentvolumeclaims', 'data', 'status'), true, ''],
    [
      'its claim status read',
      inDefault('get', 'persistentvolumeclaims', 'data', 'status'),
      false,
      'can only get/update/patch this type',
    ],
    ['its volume', attrs('get', 'persistentvolumes', { name: 'pv1' }), true, ''],
    ['another volume', attrs('get', 'persistentvolumes', { name: 'pv2' }), false, noRelation],
    ['a token of its account', inDefault('create', 'serviceaccounts', 'sa1', 'token'), true, ''],
    ['a token of another account', inDefault('create', 'serviceaccounts', 'sa2', 'token'), false, noRelation],
    [
      'an account read',
      inDefault('get', 'serviceaccounts', 'sa1'),
      false,
      'can only create tokens for individual service accounts',
    ],
    ['its lease', lease('update', 'kube-node-lease', 'n1'), true, ''],
    ['its lease created', lease('create', 'kube-node-lease'), true, ''],
    [
      'another lease',
      lease('delete', 'kube-node-lease', 'n2'),
      false,
      'can only access node lease with the same name as the requesting node',
    ],
    [
      'a lease elsewhere',
      lease('get', 'kube-system', 'n1'),
      false,
      'can only access leases in the "kube-node-lease" system namespace',
    ],
    [
      'all leases',
      lease('list', 'kube-node-lease'),
      false,
      'can only get, create, update, patch, or delete a node lease',
    ],
    ['a node patch (NodeRestriction narrows it)', attrs('patch', 'nodes', { name: 'n2' }), true, ''],
    ['a node status update', attrs('update', 'nodes', { name: 'n1', subresource: 'status' }), true, ''],
    ['a node delete', attrs('delete', 'nodes', { name: 'n1' }), false, ''],
    ['a pod status patch', inDefault('patch', 'pods', 'web', 'status'), true, ''],
    ['a pod update', inDefault('update', 'pods', 'web'), false, ''],
    ['an eviction', inDefault('create', 'pods', 'web', 'eviction'), true, ''],
    ['events', inDefault('create', 'events'), true, ''],
    ['its CSRs', attrs('watch', 'certificatesigningrequests', { group: 'certificates.k8s.io' }), true, ''],
    [
      'a CSR approval',
      attrs('update', 'certificatesigningrequests', {
        group: 'certificates.k8s.io',
        name: 'x',
        subresource: 'approval',
      }),
      false,
      '',
    ],
    ['namespaces', attrs('get', 'namespaces', { name: 'default' }), false, ''],
    ['a path', { verb: 'get', path: '/healthz' }, false, ''],
  ])('%s', (_what, a, allowed, reason) => {
    expect(decide(a)).toEqual({ allowed, reason });
  });

  it('finds leases in the flavor’s group and namespace', () => {
    const a = attrs('get', 'leases', { group: 'coordination.orch.io', namespace: 'orch-node-lease', name: 'n1' });
    expect(decideForNode('n1', a, graph, orch, nodeRules(orch))).toEqual({ allowed: true, reason: '' });
    expect(decideForNode('n1', { ...a, group: 'coordination.k8s.io' }, graph, orch, nodeRules(orch)).allowed).toBe(
      false,
    );
  });
});

describe('podReferences', () => {
  const pod: Pod = {
    metadata: { namespace: 'default', name: 'web' },
    spec: {
      serviceAccountName: 'runner',
      imagePullSecrets: [{ name: 'pull' }],
      initContainers: [{ name: 'i', envFrom: [{ secretRef: { name: 'init-env' } }] }],
      containers: [
        {
          name: 'c',
          env: [
            { name: 'A', valueFrom: { secretKeyRef: { name: 'key', key: 'k' } } },
            { name: 'B', valueFrom: { configMapKeyRef: { name: 'cm-key', key: 'k' } } },
          ],
          envFrom: [{ configMapRef: { name: 'cm-env' } }],
        },
      ],
      volumes: [
        { name: 'v1', secret: { secretName: 'vol' } },
        { name: 'v2', configMap: { name: 'cm-vol' } },
        { name: 'v3', projected: { sources: [{ secret: { name: 'proj' } }, { configMap: { name: 'cm-proj' } }] } },
        { name: 'v4', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi' } } },
        { name: 'v5', rbd: { image: 'i', secretRef: { name: 'rbd' } } },
        { name: 'v6', azureFile: { secretName: 'azure', shareName: 's' } },
        { name: 'v7', persistentVolumeClaim: { claimName: 'data' } },
        { name: 'scratch', ephemeral: { volumeClaimTemplate: {} } },
      ],
    },
  };

  it.each<[Exclude<RelatedKind, 'persistentvolume'>, string[]]>([
    ['secret', ['pull', 'vol', 'proj', 'csi', 'rbd', 'azure', 'init-env', 'key']],
    ['configmap', ['cm-vol', 'cm-proj', 'cm-env', 'cm-key']],
    ['persistentvolumeclaim', ['data', 'web-scratch']],
    ['serviceaccount', ['runner']],
  ])('%s', (kind, names) => {
    expect(podReferences(pod, kind).sort()).toEqual([...names].sort());
  });

  it('gives a pod without an account the default one', () => {
    expect(podReferences({ metadata: { name: 'p' }, spec: { containers: [] } }, 'serviceaccount')).toEqual(['default']);
  });
});

describe('NodeAuthorizer over a storage', () => {
  const registry = new ResourceRegistry(k8s);
  const pods = registry.kind('v1', 'Pod')!;
  const n1 = user('system:node:n1', 'system:nodes');
  const secretGet = (name: string): AuthorizationAttributes => attrs('get', 'secrets', { namespace: 'default', name });
  const podUsing = (name: string, secret: string, nodeName?: string): KubeObject =>
    ({
      metadata: { namespace: 'default', name, uid: name },
      spec: { nodeName, containers: [], volumes: [{ name: 'v', secret: { secretName: secret } }] },
    }) as KubeObject;

  it('follows pods as they are bound, moved and deleted', () => {
    const storage = new Storage();
    const authz = new NodeAuthorizer(storage, registry);
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(false);
    storage.create(pods, podUsing('p', 's'));
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(false);
    const bound = storage.update(pods, podUsing('p', 's', 'n1'));
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(true);
    storage.update(pods, { ...bound, spec: { ...(bound.spec as object), nodeName: 'n2' } } as KubeObject);
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(false);
    storage.create(pods, podUsing('q', 's', 'n1'));
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(true);
    storage.remove(pods, 'default/q');
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(false);
  });

  it('rebuilds its index when the storage is reloaded whole', () => {
    const storage = new Storage();
    const authz = new NodeAuthorizer(storage, registry);
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(false);
    const object = { ...podUsing('p', 's', 'n1'), metadata: { namespace: 'default', name: 'p', resourceVersion: '7' } };
    storage.replace({ rv: 7, objects: [{ rt: pods, object }], events: [], keptAfter: 7 });
    expect(authz.authorize(n1, secretGet('s')).allowed).toBe(true);
  });

  it('has no opinion on other users, and names an unidentifiable node', () => {
    const authz = new NodeAuthorizer(new Storage(), registry);
    expect(authz.authorize(user('admin', 'system:masters'), secretGet('s'))).toEqual({ allowed: false, reason: '' });
    expect(authz.authorize(user('system:node:', 'system:nodes'), secretGet('s'))).toEqual({
      allowed: false,
      reason: 'unknown node for user "system:node:"',
    });
  });

  it('does not list a node’s rules', () => {
    const authz = new NodeAuthorizer(new Storage(), registry);
    expect(authz.rulesFor(n1)).toMatchObject({ incomplete: true });
    expect(authz.rulesFor(user('alice'))).toEqual({ resourceRules: [], nonResourceRules: [], incomplete: false });
  });
});

describe('UnionAuthorizer', () => {
  const fixed = (allowed: boolean, reason: string) => ({
    authorize: () => ({ allowed, reason }),
    rulesFor: () => ({
      resourceRules: [{ verbs: [reason] }],
      nonResourceRules: [],
      incomplete: !allowed,
      ...(reason ? { evaluationError: reason } : {}),
    }),
  });
  const a = attrs('get', 'pods');

  it.each([
    [[fixed(false, 'one'), fixed(true, 'two')], { allowed: true, reason: 'two' }],
    [[fixed(true, ''), fixed(false, 'never asked')], { allowed: true, reason: '' }],
    [[fixed(false, 'one'), fixed(false, ''), fixed(false, 'three')], { allowed: false, reason: 'one\nthree' }],
  ])('%#: the first to allow decides, else every reason', (chain, decision) => {
    expect(new UnionAuthorizer(chain).authorize(user('u'), a)).toEqual(decision);
  });

  it('joins the rules of every authorizer', () => {
    const status = new UnionAuthorizer([fixed(false, 'x'), fixed(true, 'y')]).rulesFor(user('u'), 'default');
    expect(status).toEqual({
      resourceRules: [{ verbs: ['x'] }, { verbs: ['y'] }],
      nonResourceRules: [],
      incomplete: true,
      evaluationError: '[x, y]',
    });
  });
});
