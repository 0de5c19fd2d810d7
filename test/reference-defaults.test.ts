/**
 * Defaults and answers that `npm run conformance:diff` found differing from kube-apiserver v1.37 (kubernetes
 * flavor), now as the reference gives them; each through the HTTPS server as the admin client-certificate user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient } from './support/raw-https.ts';

let c: TestCluster;
let raw: RawClient;
const NS = 'refdef';

const json = (method: string, path: string, body?: unknown) =>
  raw.send({
    method,
    path,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'User-Agent': 'refdef-test/1.0' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  c = await startTestCluster({ flavor: 'kubernetes' });
  raw = await RawClient.fromKubeconfig(c.kubeconfig);
  expect((await json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).code).toBe(201);
});

afterAll(async () => {
  raw?.close();
  await c?.stop();
});

describe('defaults as kube-apiserver gives them', () => {
  it('answers an Event’s unset times as null and its reporting fields as empty strings, owned by nobody', async () => {
    const created = await json('POST', `/api/v1/namespaces/${NS}/events`, {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: NS },
      reason: 'Tested',
    });
    expect(created.code).toBe(201);
    for (const field of ['firstTimestamp', 'lastTimestamp', 'eventTime']) expect(created.json[field]).toBeNull();
    expect(created.json.reportingComponent).toBe('');
    expect(created.json.reportingInstance).toBe('');
    const owned = created.json.metadata.managedFields[0].fieldsV1;
    expect(Object.keys(owned)).not.toContain('f:firstTimestamp');
    expect(Object.keys(owned)).not.toContain('f:reportingComponent');
    const viaEvents = await json('GET', `/apis/events.k8s.io/v1/namespaces/${NS}/events/e1`);
    expect(viaEvents.json.deprecatedFirstTimestamp).toBeNull();
    expect(viaEvents.json.deprecatedLastTimestamp).toBeNull();
  });

  it('starts volumes and claims Pending with their volumeMode and hostPath type defaults', async () => {
    const pv = await json('POST', '/api/v1/persistentvolumes', {
      metadata: { name: 'refdef-pv' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
    });
    expect(pv.code).toBe(201);
    expect(pv.json.status.phase).toBe('Pending');
    expect(Number.isNaN(Date.parse(pv.json.status.lastPhaseTransitionTime))).toBe(false);
    expect(pv.json.spec.hostPath).toEqual({ path: '/tmp/x', type: '' });
    const pvc = await json('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
      metadata: { name: 'claim' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    expect(pvc.code).toBe(201);
    expect(pvc.json.status).toEqual({ phase: 'Pending' });
    expect(pvc.json.spec.volumeMode).toBe('Filesystem');
  });

  it('gives Endpoints and EndpointSlice ports TCP, and a slice’s port an empty name', async () => {
    const ep = await json('POST', `/api/v1/namespaces/${NS}/endpoints`, {
      metadata: { name: 'ep' },
      subsets: [{ addresses: [{ ip: '10.1.2.3' }], ports: [{ port: 80 }] }],
    });
    expect(ep.json.subsets[0].ports).toEqual([{ port: 80, protocol: 'TCP' }]);
    const slice = await json('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
      metadata: { name: 'slice' },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.1.2.3'] }],
      ports: [{ port: 80 }],
    });
    expect(slice.code).toBe(201);
    expect(slice.json.ports).toEqual([{ port: 80, protocol: 'TCP', name: '' }]);
  });

  it('leaves a StorageClass without allowedTopologies when none are given', async () => {
    const sc = await json('POST', '/apis/storage.k8s.io/v1/storageclasses', {
      metadata: { name: 'refdef-sc' },
      provisioner: 'example.com/x',
    });
    expect(sc.code).toBe(201);
    expect(sc.json).not.toHaveProperty('allowedTopologies');
  });

  it('allocates a Service a cluster IP of the service range, keeps it on an update that leaves it out', async () => {
    const svc = await json('POST', `/api/v1/namespaces/${NS}/services`, {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    });
    expect(svc.code).toBe(201);
    expect(svc.json.spec.clusterIP).toMatch(/^10\.96\.\d+\.\d+$/);
    expect(svc.json.spec).toMatchObject({
      clusterIPs: [svc.json.spec.clusterIP],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
    });
    const { clusterIP: _ip, clusterIPs: _ips, ...spec } = svc.json.spec;
    const put = await json('PUT', `/api/v1/namespaces/${NS}/services/web`, { metadata: { name: 'web' }, spec });
    expect(put.code).toBe(200);
    expect(put.json.spec.clusterIP).toBe(svc.json.spec.clusterIP);
    const taken = await json('POST', `/api/v1/namespaces/${NS}/services`, {
      metadata: { name: 'twin' },
      spec: { clusterIP: svc.json.spec.clusterIP, ports: [{ port: 80 }] },
    });
    expect(taken.code).toBe(422);
    expect(taken.json.details.causes[0]).toMatchObject({ field: 'spec.clusterIPs[0]' });
  });

  it('answers a DELETE with the deleted object for the kinds whose registry returns it, a Status otherwise', async () => {
    await json('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'gone' } });
    const sa = await json('DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/gone`);
    expect(sa.code).toBe(200);
    expect(sa.json).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'gone' } });
    const sc = await json('DELETE', '/apis/storage.k8s.io/v1/storageclasses/refdef-sc');
    expect(sc.json).toMatchObject({ kind: 'StorageClass', metadata: { name: 'refdef-sc' } });
    await json('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'gone' } });
    const cm = await json('DELETE', `/api/v1/namespaces/${NS}/configmaps/gone`);
    expect(cm.json).toMatchObject({ kind: 'Status', status: 'Success' });
  });
});
