/**
 * Nodes, volumes and claims, and apply conflicts on atomic structs, answered as kube-apiserver v1.37.2 answers
 * them (`npm run conformance:diff` found each difference), with the parts of kube-controller-manager the embedded
 * plane stands in for: the node lifecycle controller's condition taints and the pv/pvc-protection controllers.
 * Kubernetes flavor, through the HTTPS server as the admin client-certificate user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { RawClient } from './support/raw-https.ts';

let c: TestCluster;
let raw: RawClient;
const NS = 'ref-storage';

const json = (method: string, path: string, body?: unknown, contentType?: string) =>
  raw.sendJson(method, path, body, { contentType, userAgent: 'ref-test/1.0' });

beforeAll(async () => {
  c = await startTestCluster({ flavor: 'kubernetes' });
  raw = await RawClient.fromKubeconfig(c.kubeconfig);
  expect((await json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).code).toBe(201);
});

afterAll(async () => {
  raw?.close();
  await c?.stop();
});

describe('apply conflicts', () => {
  it("conflicts when an apply changes an atomic struct another manager owns (a policy's defaulted matchConstraints)", async () => {
    const path = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
    const rules = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }];
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'atomic' },
      spec: { matchConstraints: { resourceRules: rules }, validations: [{ expression: 'true' }] },
    };
    const created = await json('POST', path, policy);
    expect(created.code).toBe(201);
    // Stored with its defaults (scope, selectors, matchPolicy): the same rules applied are another value.
    expect(created.json.spec.matchConstraints.matchPolicy).toBe('Equivalent');
    const applied = await json('PATCH', `${path}/atomic?fieldManager=applier`, policy, 'application/apply-patch+yaml');
    expect(applied.code).toBe(409);
    expect(applied.json.details.causes).toEqual([
      {
        reason: 'FieldManagerConflict',
        message: 'conflict with "ref-test" using admissionregistration.k8s.io/v1',
        field: '.spec.matchConstraints',
      },
    ]);
    // The value as stored is no change: applying it shares the field without a conflict.
    const same = { ...policy, spec: { ...policy.spec, matchConstraints: created.json.spec.matchConstraints } };
    const shared = await json('PATCH', `${path}/atomic?fieldManager=applier`, same, 'application/apply-patch+yaml');
    expect(shared.code).toBe(200);
  });
});

describe('nodes', () => {
  const status = (type: string, value: string) => ({
    status: { conditions: [{ type, status: value, reason: 'Test', lastHeartbeatTime: new Date().toISOString() }] },
  });
  const taintsOf = async (name: string) => (await json('GET', `/api/v1/nodes/${name}`)).json.spec.taints;

  it("is created with the not-ready taint and the status's zero-valued nodeInfo and daemon endpoints", async () => {
    const created = await json('POST', '/api/v1/nodes', { metadata: { name: 'fresh', labels: { a: 'b' } } });
    expect(created.code).toBe(201);
    expect(created.json.spec.taints).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    expect(created.json.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 0 } });
    expect(created.json.status.nodeInfo).toEqual({
      machineID: '',
      systemUUID: '',
      bootID: '',
      kernelVersion: '',
      osImage: '',
      containerRuntimeVersion: '',
      kubeletVersion: '',
      kubeProxyVersion: '',
      operatingSystem: '',
      architecture: '',
    });
    // Admission's taint is no field of the creator's.
    expect(created.json.metadata.managedFields[0].fieldsV1).not.toHaveProperty('f:spec');
    // A taint of its own with the same key and effect is not doubled.
    const own = { key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' };
    const tainted = await json('POST', '/api/v1/nodes', { metadata: { name: 'own-taint' }, spec: { taints: [own] } });
    expect(tainted.json.spec.taints).toEqual([own]);
  });

  it('loses the not-ready taint when it reports Ready, and is tainted again as its Ready condition says', async () => {
    const name = 'reporting';
    const other = { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' };
    await json('POST', '/api/v1/nodes', { metadata: { name }, spec: { taints: [other] } });
    const merge = (body: unknown) =>
      json('PATCH', `/api/v1/nodes/${name}/status`, body, 'application/strategic-merge-patch+json');
    expect((await merge(status('Ready', 'True'))).code).toBe(200);
    await eventually(async () => (await taintsOf(name))?.length === 1, 5_000, 'the not-ready taint removed');
    expect(await taintsOf(name)).toEqual([other]);

    await merge(status('Ready', 'False'));
    const notReady = await eventually(async () => (await taintsOf(name))?.[1], 5_000, 'a not-ready taint');
    expect(notReady).toEqual({
      key: 'node.kubernetes.io/not-ready',
      effect: 'NoSchedule',
      timeAdded: expect.any(String),
    });

    await merge(status('Ready', 'Unknown'));
    await eventually(
      async () => (await taintsOf(name))?.[1]?.key === 'node.kubernetes.io/unreachable',
      5_000,
      'unreachable',
    );
    expect((await taintsOf(name)).map((t: { key: string }) => t.key)).toEqual([
      other.key,
      'node.kubernetes.io/unreachable',
    ]);
  });

  it('is tainted unschedulable while cordoned', async () => {
    const name = 'cordoned';
    await json('POST', '/api/v1/nodes', { metadata: { name } });
    const keys = async () => ((await taintsOf(name)) ?? []).map((t: { key: string }) => t.key);
    const cordon = (unschedulable: boolean) =>
      json('PATCH', `/api/v1/nodes/${name}`, { spec: { unschedulable } }, 'application/merge-patch+json');
    await cordon(true);
    await eventually(async () => (await keys()).length === 2, 5_000, 'the unschedulable taint');
    expect(await keys()).toEqual(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unschedulable']);
    await cordon(false);
    await eventually(async () => (await keys()).length === 1, 5_000, 'the unschedulable taint removed');
    expect(await keys()).toEqual(['node.kubernetes.io/not-ready']);
  });

  it('owns no spec after an update that leaves the taint out and so empties the spec', async () => {
    await json('POST', '/api/v1/nodes', { metadata: { name: 'emptied', labels: { a: 'b' } } });
    const put = await json('PUT', '/api/v1/nodes/emptied', { metadata: { name: 'emptied', labels: { a: 'c' } } });
    expect(put.code).toBe(200);
    expect(put.json.spec).toEqual({});
    expect(put.json.metadata.managedFields.map((e: { fieldsV1: unknown }) => e.fieldsV1)).toEqual([
      { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } },
    ]);
  });

  it('keeps the not-ready taint of a node that has not reported Ready', async () => {
    await json('POST', '/api/v1/nodes', { metadata: { name: 'silent' } });
    await json('PATCH', '/api/v1/nodes/silent', { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json');
    await c.cp.settled();
    expect(await taintsOf('silent')).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  });
});

describe('volumes and claims', () => {
  const claims = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
  const claim = (name: string) => ({
    metadata: { name },
    spec: { storageClassName: 'manual', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const volume = (name: string) => ({
    metadata: { name },
    spec: {
      storageClassName: 'manual',
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      hostPath: { path: '/tmp/v' },
    },
  });
  const gone = (path: string) => eventually(async () => (await json('GET', path)).code === 404, 5_000, `${path} gone`);

  it('get their protection finalizers at create, not as the creator’s fields', async () => {
    const pvc = await json('POST', claims, {
      ...claim('protected'),
      metadata: { name: 'protected', labels: { a: 'b' } },
    });
    expect(pvc.json.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    expect(pvc.json.metadata.managedFields[0].fieldsV1['f:metadata']).toEqual({ 'f:labels': { '.': {}, 'f:a': {} } });
    const pv = await json('POST', '/api/v1/persistentvolumes', volume('protected'));
    expect(pv.json.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });

  it('deletes an unused claim and an unbound volume once their finalizer is released', async () => {
    await json('POST', claims, claim('unused'));
    const deleted = await json('DELETE', `${claims}/unused`);
    expect(deleted.code).toBe(200);
    await gone(`${claims}/unused`);
    await json('POST', '/api/v1/persistentvolumes', volume('unbound'));
    await json('DELETE', '/api/v1/persistentvolumes/unbound');
    await gone('/api/v1/persistentvolumes/unbound');
  });

  it('keeps a claim a scheduled pod mounts until the pod is gone, and a Bound volume until it is released', async () => {
    await json('POST', claims, claim('mounted'));
    const pod = {
      metadata: { name: 'mounter' },
      spec: {
        nodeName: 'somewhere',
        containers: [{ name: 'c', image: 'registry.example/app:1' }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'mounted' } }],
      },
    };
    expect((await json('POST', `/api/v1/namespaces/${NS}/pods`, pod)).code).toBe(201);
    await json('DELETE', `${claims}/mounted`);
    await c.cp.settled();
    const held = await json('GET', `${claims}/mounted`);
    expect(held.json.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(held.json.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    await json('DELETE', `/api/v1/namespaces/${NS}/pods/mounter?gracePeriodSeconds=0`);
    await gone(`${claims}/mounted`);

    await json('POST', '/api/v1/persistentvolumes', volume('bound'));
    const phase = (value: string) =>
      json(
        'PATCH',
        '/api/v1/persistentvolumes/bound/status',
        { status: { phase: value } },
        'application/merge-patch+json',
      );
    expect((await phase('Bound')).code).toBe(200);
    await json('DELETE', '/api/v1/persistentvolumes/bound');
    await c.cp.settled();
    expect((await json('GET', '/api/v1/persistentvolumes/bound')).json.metadata.finalizers).toEqual([
      'kubernetes.io/pv-protection',
    ]);
    await phase('Released');
    await gone('/api/v1/persistentvolumes/bound');
  });
});
