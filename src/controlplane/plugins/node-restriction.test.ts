import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import { naming } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import type { Node, Pod } from '../../api/types/core.ts';
import type { AdmissionAttributes, Operation } from '../admission.ts';
import { csrPem } from '../validation/test-helpers.ts';
import { forbiddenNodeLabels, modifiedLabels, type NodeRestrictionFacts, nodeRestriction } from './node-restriction.ts';

const k8s = naming('kubernetes');
const orch = naming('orch');
const registry = new ResourceRegistry(k8s);
const rt = (kind: string) => registry.byKind(kind)!;
const n1 = { username: 'system:node:n1', groups: ['system:nodes'] };

const node = (name: string, o: { labels?: Record<string, string>; taints?: object[]; uid?: string } = {}): Node => ({
  metadata: { name, uid: o.uid ?? `uid-${name}`, ...(o.labels ? { labels: o.labels } : {}) },
  spec: o.taints ? { taints: o.taints as never } : {},
});
const pod = (name: string, nodeName: string | undefined, o: Partial<Pod['metadata']> = {}, spec = {}): Pod => ({
  metadata: { namespace: 'default', name, uid: `uid-${name}`, ...o },
  spec: { nodeName, containers: [{ name: 'c', image: 'app:1' }], ...spec },
});

const facts: NodeRestrictionFacts = {
  pod: (namespace, name) =>
    namespace === 'default' ? { mine: pod('mine', 'n1'), theirs: pod('theirs', 'n2') }[name] : undefined,
  node: (name) => (name === 'n1' ? node('n1') : undefined),
};

function attrs(
  kind: string,
  operation: Operation,
  o: { name?: string; namespace?: string; subresource?: string; object?: object; old?: object } = {},
): AdmissionAttributes {
  return {
    operation,
    rt: rt(kind),
    subresource: o.subresource,
    namespace: o.namespace,
    name: o.name ?? (o.object as KubeObject | undefined)?.metadata.name ?? '',
    object: o.object as KubeObject | undefined,
    oldObject: o.old as KubeObject | undefined,
    user: n1,
    dryRun: false,
  };
}

/** The refusal's code and message, or `undefined` when admitted. */
const decide = (a: AdmissionAttributes, n = k8s) => {
  const err = nodeRestriction('n1', a, facts, n);
  return err && { code: err.code, message: err.message };
};
const forbidden = (message: string) => ({ code: 403, message });

describe('nodeRestriction: nodes', () => {
  const labelled = (labels: Record<string, string>) => node('n1', { labels });
  it.each<[string, AdmissionAttributes, ReturnType<typeof decide>]>([
    ['its own registration', attrs('Node', 'CREATE', { object: node('n1') }), undefined],
    [
      'another node’s registration',
      attrs('Node', 'CREATE', { object: node('sim-node-9') }),
      forbidden('nodes "sim-node-9" is forbidden: node "n1" is not allowed to modify node "sim-node-9"'),
    ],
    [
      'a patch of another node',
      attrs('Node', 'UPDATE', { object: node('n2', { labels: { a: 'b' } }), old: node('n2') }),
      forbidden('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
    ],
    [
      'another node’s status',
      attrs('Node', 'UPDATE', { subresource: 'status', object: node('n2'), old: node('n2') }),
      forbidden('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
    ],
    [
      'deleting another node',
      attrs('Node', 'DELETE', { name: 'n2', old: node('n2') }),
      forbidden('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
    ],
    [
      'its own labels in allowed places',
      attrs('Node', 'UPDATE', {
        object: labelled({
          'kubernetes.io/hostname': 'n1',
          'topology.kubernetes.io/zone': 'z',
          'kubelet.kubernetes.io/x': '1',
          'sub.node.kubernetes.io/y': '1',
          'example.com/rack': 'r1',
          plain: 'yes',
        }),
        old: node('n1'),
      }),
      undefined,
    ],
    [
      'a node-restriction label',
      attrs('Node', 'UPDATE', { object: labelled({ 'node-restriction.kubernetes.io/db': 'true' }), old: node('n1') }),
      forbidden('nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/db'),
    ],
    [
      'removing a product label an administrator set',
      attrs('Node', 'UPDATE', { object: node('n1'), old: labelled({ 'kubernetes.io/role': 'db', 'k8s.io/a': 'b' }) }),
      forbidden('nodes "n1" is forbidden: is not allowed to modify labels: k8s.io/a, kubernetes.io/role'),
    ],
    [
      'registering with a restricted label',
      attrs('Node', 'CREATE', {
        object: labelled({ 'x.node-restriction.kubernetes.io/a': '1', 'kubernetes.io/os': 'linux' }),
      }),
      forbidden(
        'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: x.node-restriction.kubernetes.io/a',
      ),
    ],
    [
      'a taint',
      attrs('Node', 'UPDATE', {
        object: node('n1', { taints: [{ key: 'k', effect: 'NoSchedule' }] }),
        old: node('n1'),
      }),
      forbidden('nodes "n1" is forbidden: node "n1" is not allowed to modify taints'),
    ],
    [
      'an empty taint list for none',
      attrs('Node', 'UPDATE', { object: node('n1', { taints: [] }), old: node('n1') }),
      undefined,
    ],
  ])('%s', (_what, a, expected) => {
    expect(decide(a)).toEqual(expected);
  });

  it('uses the flavor’s label domains', () => {
    const a = attrs('Node', 'UPDATE', {
      object: node('n1', { labels: { 'nodeagent.orch.io/a': '1', 'orch.io/role': 'x', 'kubernetes.io/role': 'y' } }),
      old: node('n1'),
    });
    expect(decide(a, orch)).toEqual(
      forbidden('nodes "n1" is forbidden: is not allowed to modify labels: orch.io/role'),
    );
  });
});

describe('nodeRestriction: pods', () => {
  const owner = (o: object = {}) => ({
    apiVersion: 'v1',
    kind: 'Node',
    name: 'n1',
    uid: 'uid-n1',
    controller: true,
    ...o,
  });
  const mirror = (o: { owners?: object[]; nodeName?: string; spec?: object } = {}) =>
    pod(
      'static',
      o.nodeName ?? 'n1',
      {
        annotations: { 'kubernetes.io/config.mirror': 'hash' },
        ownerReferences: (o.owners ?? [owner()]) as never,
      },
      o.spec,
    );
  const deny = (why: string) => forbidden(`pods "static" is forbidden: ${why}`);

  it.each<[string, AdmissionAttributes, ReturnType<typeof decide>]>([
    [
      'status of its own pod',
      attrs('Pod', 'UPDATE', { subresource: 'status', object: pod('mine', 'n1'), old: pod('mine', 'n1') }),
      undefined,
    ],
    [
      'status of another node’s pod',
      attrs('Pod', 'UPDATE', { subresource: 'status', object: pod('theirs', 'n2'), old: pod('theirs', 'n2') }),
      forbidden(
        'pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
      ),
    ],
    [
      'labels through status',
      attrs('Pod', 'UPDATE', {
        subresource: 'status',
        object: pod('mine', 'n1', { labels: { a: 'b' } }),
        old: pod('mine', 'n1'),
      }),
      forbidden('pods "mine" is forbidden: node "n1" cannot update labels through pod status'),
    ],
    ['deleting its own pod', attrs('Pod', 'DELETE', { name: 'mine', old: pod('mine', 'n1') }), undefined],
    [
      'deleting another node’s pod',
      attrs('Pod', 'DELETE', { name: 'theirs', old: pod('theirs', 'n2') }),
      forbidden('pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'),
    ],
    [
      'evicting its own pod',
      attrs('Pod', 'CREATE', { subresource: 'eviction', name: 'mine', namespace: 'default', object: { metadata: {} } }),
      undefined,
    ],
    [
      'evicting another node’s pod',
      attrs('Pod', 'CREATE', {
        subresource: 'eviction',
        name: 'theirs',
        namespace: 'default',
        object: { metadata: {} },
      }),
      forbidden('pods "theirs" is forbidden: node n1 can only evict pods with spec.nodeName set to itself'),
    ],
    [
      'evicting a pod that does not exist',
      attrs('Pod', 'CREATE', { subresource: 'eviction', name: 'gone', namespace: 'default', object: { metadata: {} } }),
      { code: 404, message: 'pods "gone" not found' },
    ],
    [
      'a pod that is not a mirror pod',
      attrs('Pod', 'CREATE', { object: pod('static', 'n1') }),
      deny('pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods'),
    ],
    ['its own mirror pod', attrs('Pod', 'CREATE', { object: mirror() }), undefined],
    [
      'a mirror pod on another node',
      attrs('Pod', 'CREATE', { object: mirror({ nodeName: 'n2' }) }),
      deny('node "n1" can only create pods with spec.nodeName set to itself'),
    ],
    [
      'a mirror pod owned by another node',
      attrs('Pod', 'CREATE', { object: mirror({ owners: [owner({ name: 'n2' })] }) }),
      deny('node "n1" can only create pods with an owner reference set to itself'),
    ],
    [
      'a mirror pod with a stale owner uid',
      attrs('Pod', 'CREATE', { object: mirror({ owners: [owner({ uid: 'old' })] }) }),
      deny('node n1 UID mismatch: expected old got uid-n1'),
    ],
    [
      'a mirror pod not controlled by its node',
      attrs('Pod', 'CREATE', { object: mirror({ owners: [owner({ controller: false })] }) }),
      deny('node "n1" can only create pods with a controller owner reference set to itself'),
    ],
    [
      'a mirror pod using a secret',
      attrs('Pod', 'CREATE', { object: mirror({ spec: { volumes: [{ name: 'v', secret: { secretName: 's' } }] } }) }),
      deny('node "n1" can not create pods that reference secrets'),
    ],
    [
      'a mirror pod using a claim',
      attrs('Pod', 'CREATE', {
        object: mirror({ spec: { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] } }),
      }),
      deny('node "n1" can not create pods that reference persistentvolumeclaims'),
    ],
    [
      'a mirror pod with an account',
      attrs('Pod', 'CREATE', { object: mirror({ spec: { serviceAccountName: 'sa' } }) }),
      deny('node "n1" can not create pods that reference a service account'),
    ],
    [
      'a pod update',
      attrs('Pod', 'UPDATE', { object: pod('mine', 'n1'), old: pod('mine', 'n1') }),
      forbidden(
        'pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods',
      ),
    ],
  ])('%s', (_what, a, expected) => {
    expect(decide(a)).toEqual(expected);
  });
});

describe('nodeRestriction: leases, claims, tokens, others', () => {
  const lease = (name: string, namespace = 'kube-node-lease') => ({ metadata: { namespace, name } });
  const claim = (labels?: Record<string, string>, status: object = {}) => ({
    metadata: { namespace: 'default', name: 'data', resourceVersion: '1', ...(labels ? { labels } : {}) },
    spec: { volumeName: 'pv1' },
    status: { phase: 'Bound', ...status },
  });
  const token = (ref?: object) => ({ metadata: {}, spec: { audiences: [], ...(ref ? { boundObjectRef: ref } : {}) } });
  const tokenFor = (name: string, o: object = {}) =>
    attrs('ServiceAccount', 'CREATE', {
      subresource: 'token',
      name: 'default',
      namespace: 'default',
      object: token({ apiVersion: 'v1', kind: 'Pod', name, uid: `uid-${name}`, ...o }),
    });

  it.each<[string, AdmissionAttributes, ReturnType<typeof decide>]>([
    ['its own lease', attrs('Lease', 'CREATE', { namespace: 'kube-node-lease', object: lease('n1') }), undefined],
    [
      'another node’s lease',
      attrs('Lease', 'DELETE', { namespace: 'kube-node-lease', name: 'n2', old: lease('n2') }),
      forbidden(
        'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
      ),
    ],
    [
      'creating another node’s lease',
      attrs('Lease', 'CREATE', { namespace: 'kube-node-lease', object: lease('n2') }),
      forbidden(
        'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
      ),
    ],
    [
      'a lease elsewhere',
      attrs('Lease', 'CREATE', { namespace: 'kube-system', object: lease('n1', 'kube-system') }),
      forbidden(
        'leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace',
      ),
    ],
    [
      'claim capacity and conditions',
      attrs('PersistentVolumeClaim', 'UPDATE', {
        subresource: 'status',
        object: claim(undefined, { capacity: { storage: '2Gi' } }),
        old: claim(),
      }),
      undefined,
    ],
    [
      'claim phase',
      attrs('PersistentVolumeClaim', 'UPDATE', {
        subresource: 'status',
        object: claim(undefined, { phase: 'Lost' }),
        old: claim(),
      }),
      forbidden(
        'persistentvolumeclaims "data" is forbidden: node "n1" is not allowed to update fields other than status.capacity and status.conditions: status',
      ),
    ],
    [
      'a claim itself',
      attrs('PersistentVolumeClaim', 'UPDATE', { object: claim({ a: 'b' }), old: claim() }),
      forbidden('persistentvolumeclaims "data" is forbidden: may only update PVC status'),
    ],
    ['a token bound to its pod', tokenFor('mine'), undefined],
    [
      'a token bound to another node’s pod',
      tokenFor('theirs'),
      forbidden(
        'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
      ),
    ],
    [
      'a token for a recreated pod',
      tokenFor('mine', { uid: 'old' }),
      forbidden(
        'serviceaccounts "default" is forbidden: the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated',
      ),
    ],
    [
      'an unbound token',
      attrs('ServiceAccount', 'CREATE', {
        subresource: 'token',
        name: 'default',
        namespace: 'default',
        object: token(),
      }),
      forbidden('serviceaccounts "default" is forbidden: node requested token not bound to a pod'),
    ],
    [
      'a config map',
      attrs('ConfigMap', 'CREATE', { namespace: 'default', object: { metadata: { name: 'c' } } }),
      undefined,
    ],
  ])('%s', (_what, a, expected) => {
    expect(decide(a)).toEqual(expected);
  });

  it('refuses a node identity that names no node', () => {
    const a = {
      ...attrs('ConfigMap', 'CREATE', { object: { metadata: { name: 'c' } } }),
      user: { username: 'system:node:', groups: ['system:nodes'] },
    };
    expect(nodeRestriction('', a, facts, k8s)?.message).toBe(
      'configmaps "c" is forbidden: could not determine node from user "system:node:"',
    );
  });
});

describe('nodeRestriction: certificate signing requests', () => {
  let requests: Record<string, string>;
  beforeAll(async () => {
    requests = {};
    for (const cn of ['system:node:n1', 'system:node:n2'])
      requests[cn] = Buffer.from(await csrPem(cn)).toString('base64');
  });
  const csr = (signerName: string, request: string) =>
    attrs('CertificateSigningRequest', 'CREATE', {
      object: { metadata: { name: 'c' }, spec: { signerName, request } },
    });
  const refused = (why: string) => forbidden(`certificatesigningrequests.certificates.k8s.io "c" is forbidden: ${why}`);

  it.each([
    ['its own client certificate', k8s.signers.apiServerClientNodeAgent, 'system:node:n1', undefined],
    ['its own serving certificate', k8s.signers.nodeAgentServing, 'system:node:n1', undefined],
    [
      "another node's client certificate",
      k8s.signers.apiServerClientNodeAgent,
      'system:node:n2',
      refused('can only create a node CSR with CN=system:node:n1'),
    ],
    [
      "another node's serving certificate",
      k8s.signers.nodeAgentServing,
      'system:node:n2',
      refused('can only create a node CSR with CN=system:node:n1'),
    ],
    ['any name for another signer', 'example.com/other', 'system:node:n2', undefined],
  ])('%s', (_what, signer, cn, expected) => {
    expect(decide(csr(signer, requests[cn]))).toEqual(expected);
  });

  it('refuses a request that does not parse', () => {
    expect(decide(csr(k8s.signers.apiServerClientNodeAgent, 'bm90IGEgY3Ny'))).toEqual(refused('unable to parse csr'));
  });
});

describe('nodeRestriction on malformed objects (admission runs before validation)', () => {
  const malformed = (spec: object) =>
    pod(
      'static',
      'n1',
      {
        annotations: { 'kubernetes.io/config.mirror': 'hash' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-n1', controller: true }],
      },
      spec,
    );
  it.each<[string, AdmissionAttributes, ReturnType<typeof decide>]>([
    ['volumes as an object', attrs('Pod', 'CREATE', { object: malformed({ volumes: { a: 1 } }) }), undefined],
    [
      'containers as a string',
      attrs('Pod', 'CREATE', { object: malformed({ containers: 'c', initContainers: [null] }) }),
      undefined,
    ],
    [
      'env as an object and sources as a number',
      attrs('Pod', 'CREATE', {
        object: malformed({
          containers: [{ name: 'c', env: { a: 1 }, envFrom: [null, 3] }],
          volumes: [null, { name: 'v', projected: { sources: 4 } }, { name: 'w', secret: { secretName: 's' } }],
        }),
      }),
      forbidden('pods "static" is forbidden: node "n1" can not create pods that reference secrets'),
    ],
    [
      'labels set to null',
      attrs('Node', 'UPDATE', {
        object: { metadata: { name: 'n1', labels: null } },
        old: node('n1', { labels: { 'kubernetes.io/role': 'x' } }),
      }),
      forbidden('nodes "n1" is forbidden: is not allowed to modify labels: kubernetes.io/role'),
    ],
  ])('%s: answered, not thrown', (_what, a, expected) => {
    expect(decide(a)).toEqual(expected);
  });
});

describe('label helpers', () => {
  it('finds the labels that changed', () => {
    expect(modifiedLabels({ a: '1', b: '2', c: '3' }, { a: '1', b: '0', d: '4' })).toEqual(['b', 'c', 'd']);
    expect(modifiedLabels(undefined, undefined)).toEqual([]);
  });

  it.each([
    ['kubernetes.io/hostname', false],
    ['beta.kubernetes.io/arch', false],
    ['node.kubernetes.io/instance-type', false],
    ['kubelet.kubernetes.io/anything', false],
    ['a.b.node.kubernetes.io/anything', false],
    ['example.com/x', false],
    ['no-namespace', false],
    ['kubernetes.io/role', true],
    ['node-role.kubernetes.io/control-plane', true],
    ['k8s.io/x', true],
    ['x.k8s.io/y', true],
    ['node-restriction.kubernetes.io/x', true],
  ])('%s forbidden: %s', (key, forbiddenKey) => {
    expect(forbiddenNodeLabels(k8s, [key])).toEqual(forbiddenKey ? [key] : []);
  });
});
