/**
 * Differences from kube-apiserver that `npm run conformance:diff` found and the embedded plane now answers as the
 * reference does (kubernetes flavor), each through the HTTPS server as the admin client-certificate user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient } from './support/raw-https.ts';

let c: TestCluster;
let raw: RawClient;
const NS = 'ref';

const json = (method: string, path: string, body?: unknown, contentType?: string) =>
  raw.sendJson(method, path, body, { contentType, userAgent: 'ref-test/1.0' });

const template = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
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

describe('answers as kube-apiserver does', () => {
  it('names a server-side Table application/json, without the as=Table it was asked for', async () => {
    const res = await raw.send({
      path: `/api/v1/namespaces/${NS}/configmaps`,
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(res.code).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json.kind).toBe('Table');
  });

  it("leaves a Table column undescribed where the reference's field has no doc comment", async () => {
    expect(
      (await json('POST', '/apis/node.k8s.io/v1/runtimeclasses', { metadata: { name: 'rc' }, handler: 'h' })).code,
    ).toBe(201);
    const res = await raw.send({
      path: '/apis/node.k8s.io/v1/runtimeclasses/rc',
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    const described = Object.fromEntries(
      res.json.columnDefinitions.map((c: { name: string; description: string }) => [c.name, c.description !== '']),
    );
    expect(described).toEqual({ Name: true, Handler: false, Age: true });
  });

  it('marks a deleted namespace Terminating without a grace period', async () => {
    expect((await json('POST', '/api/v1/namespaces', { metadata: { name: 'going' } })).code).toBe(201);
    const deleted = await json('DELETE', '/api/v1/namespaces/going');
    expect(deleted.code).toBe(200);
    expect(deleted.json.status.phase).toBe('Terminating');
    expect(deleted.json.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(deleted.json.metadata).not.toHaveProperty('deletionGracePeriodSeconds');
  });

  it('leaves the core group and an empty name out of Status details', async () => {
    await json('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'gone' } });
    const deleted = await json('DELETE', `/api/v1/namespaces/${NS}/configmaps/gone`);
    expect(deleted.json.details).toEqual({ name: 'gone', kind: 'configmaps', uid: expect.any(String) });
    const invalid = await json('GET', `/api/v1/namespaces/${NS}/configmaps?resourceVersionMatch=NotOlderThan`);
    expect(invalid.code).toBe(422);
    expect(invalid.json.details).not.toHaveProperty('name');
  });

  it('defaults a pod template, records the defaults as the creator’s fields, and keeps generation on a label change', async () => {
    const created = await json('POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, {
      metadata: { name: 'web' },
      spec: { replicas: 0, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: template('web') },
    });
    expect(created.code).toBe(201);
    const podSpec = created.json.spec.template.spec;
    expect(podSpec).toMatchObject({ dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler' });
    expect(podSpec.containers[0]).toMatchObject({ imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' });
    const fields = created.json.metadata.managedFields[0].fieldsV1;
    // The selector is atomic: owned whole, not label by label.
    expect(fields['f:spec']['f:selector']).toEqual({});
    expect(fields['f:spec']['f:template']['f:spec']['f:dnsPolicy']).toEqual({});
    const patched = await json(
      'PATCH',
      `/apis/apps/v1/namespaces/${NS}/statefulsets/web`,
      { metadata: { labels: { tier: 'x' } } },
      'application/merge-patch+json',
    );
    expect(patched.json.metadata.generation).toBe(1);
    const put = await json('PUT', `/apis/apps/v1/namespaces/${NS}/statefulsets/web`, {
      metadata: { name: 'web', labels: { tier: 'y' } },
      spec: { replicas: 0, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: template('web') },
    });
    expect(put.code).toBe(200);
    expect(put.json.metadata.generation).toBe(1);
  });

  it("records an Update's fields as the reference compares them: new objects and lists as members, atomic selectors, defaulted port keys", async () => {
    const service = await json('POST', `/api/v1/namespaces/${NS}/services`, {
      metadata: { name: 'front' },
      spec: { selector: { app: 'front' }, ports: [{ port: 80 }] },
    });
    expect(service.code).toBe(201);
    // The ports list is absent from a Service's zero value: it appears, so it is a member; the selector is atomic.
    expect(service.json.metadata.managedFields[0].fieldsV1['f:spec']).toMatchObject({
      'f:ports': { '.': {}, 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:protocol': {} } },
      'f:selector': {},
    });
    // An applied port without its protocol is the same item (keyed by the default), not a second one.
    const applied = await raw.send({
      method: 'PATCH',
      path: `/api/v1/namespaces/${NS}/services/front?fieldManager=applier`,
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: 'apiVersion: v1\nkind: Service\nmetadata:\n  name: front\nspec:\n  ports:\n  - port: 80\n',
    });
    expect(applied.code).toBe(200);
    expect(applied.json.spec.ports).toHaveLength(1);
    expect(applied.json.metadata.managedFields[0].fieldsV1['f:spec']['f:ports']).toEqual({
      'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} },
    });

    // A StatefulSet's rolling update and retention policy are pointers (absent from the zero value), its update
    // strategy a value struct (always there): only the former are members.
    const sts = await json('POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, {
      metadata: { name: 'members' },
      spec: { replicas: 0, serviceName: 'm', selector: { matchLabels: { app: 'm' } }, template: template('m') },
    });
    expect(sts.code).toBe(201);
    const spec = sts.json.metadata.managedFields[0].fieldsV1['f:spec'];
    expect(spec['f:updateStrategy']).toEqual({
      'f:rollingUpdate': { '.': {}, 'f:maxUnavailable': {}, 'f:partition': {} },
      'f:type': {},
    });
    expect(spec['f:persistentVolumeClaimRetentionPolicy']).toEqual({
      '.': {},
      'f:whenDeleted': {},
      'f:whenScaled': {},
    });
    expect(Object.keys(spec['f:template'])).not.toContain('.');
  });

  it("bumps a Deployment's generation on an annotation change and an EndpointSlice's on a label change", async () => {
    const merge = (path: string, body: unknown) => json('PATCH', path, body, 'application/merge-patch+json');
    const deploy = `/apis/apps/v1/namespaces/${NS}/deployments`;
    const created = await json('POST', deploy, {
      metadata: { name: 'gen' },
      spec: { selector: { matchLabels: { app: 'gen' } }, template: template('gen') },
    });
    expect(created.json.metadata.generation).toBe(1);
    expect((await merge(`${deploy}/gen`, { metadata: { labels: { a: 'b' } } })).json.metadata.generation).toBe(1);
    expect((await merge(`${deploy}/gen`, { metadata: { annotations: { a: 'b' } } })).json.metadata.generation).toBe(2);

    const slices = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
    const slice = await json('POST', slices, { metadata: { name: 'gen' }, addressType: 'IPv4', endpoints: [] });
    expect(slice.json.metadata.generation).toBe(1);
    expect((await merge(`${slices}/gen`, { metadata: { annotations: { a: 'b' } } })).json.metadata.generation).toBe(1);
    expect((await merge(`${slices}/gen`, { metadata: { labels: { a: 'b' } } })).json.metadata.generation).toBe(2);
  });

  it("writes the scale subresource's managed fields entry without a time, so it lists first", async () => {
    const sts = `/apis/apps/v1/namespaces/${NS}/statefulsets`;
    await json('POST', sts, {
      metadata: { name: 'scaled' },
      spec: { replicas: 1, serviceName: 's', selector: { matchLabels: { app: 's' } }, template: template('s') },
    });
    const scaled = await json('PUT', `${sts}/scaled/scale`, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'scaled', namespace: NS },
      spec: { replicas: 2 },
    });
    expect(scaled.code).toBe(200);
    const entries = (await json('GET', `${sts}/scaled`)).json.metadata.managedFields;
    expect(entries[0]).toEqual({
      manager: 'ref-test',
      operation: 'Update',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      subresource: 'scale',
    });
    expect(entries[1]).toHaveProperty('time');
  });

  it('takes a CertificateSigningRequest PUT through the main resource as a metadata change, keeping the spec', async () => {
    const csrs = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
    // A P-256 request for CN system:node:conform-node1, O system:nodes.
    const request =
      'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIMU1JR2NBZ0VBTURveElUQWZCZ05WQkFNTUdITjVjM1JsYlRwdWIyUmxPbU52Ym1admNtMHRibTlrWlRFVgpNQk1HQTFVRUNnd01jM2x6ZEdWdE9tNXZaR1Z6TUZrd0V3WUhLb1pJemowQ0FRWUlLb1pJemowREFRY0RRZ0FFClNkaStJSldrcGVwQW5rTmRiN1ZTQ09ydS9oUG5SY3E5QVFlY0JkMVNWa0pVR0FyOFNCWXpNVW02N1pYc2wwTGYKK3Ayem9PN2E1Rk95TVNiN0JiWHZSYUFBTUFvR0NDcUdTTTQ5QkFNQ0EwZ0FNRVVDSVFETWZaWFhkUUZzaDRQbApzZ2p0c2JkZGdreU5Hemt4QUVVRHhZdXpnVzUvSHdJZ1UvSTVGRnNYODN1cWdGU1A5MWY5bENNU2kyc2U0Vjc1CitHTTl2TFJpU2dzPQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K';
    const spec = { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], request };
    const created = await json('POST', csrs, { metadata: { name: 'ref-csr' }, spec });
    expect(created.code, created.body).toBe(201);
    // The body leaves out what the server set (username, groups): the reference keeps the stored spec.
    const put = await json('PUT', `${csrs}/ref-csr`, {
      metadata: { name: 'ref-csr', labels: { put: 'done' }, resourceVersion: created.json.metadata.resourceVersion },
      spec: { ...spec, usages: ['digital signature', 'client auth'] },
    });
    expect(put.code, put.body).toBe(200);
    expect(put.json.metadata.labels).toEqual({ put: 'done' });
    expect(put.json.spec).toEqual(created.json.spec);
  });

  it('lists managed fields as the reference orders them: Apply entries first', async () => {
    await json('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'owned' }, data: { a: '1' } });
    const applied = await raw.send({
      method: 'PATCH',
      path: `/api/v1/namespaces/${NS}/configmaps/owned?fieldManager=applier`,
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\ndata:\n  b: "2"\n',
    });
    expect(applied.json.metadata.managedFields.map((e: any) => e.operation)).toEqual(['Apply', 'Update']);
  });

  it('warns of a deprecated resource on every answer about it', async () => {
    const res = await json('GET', `/api/v1/namespaces/${NS}/endpoints`);
    expect(res.code).toBe(200);
    expect(res.headers.warning).toBe(
      '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"',
    );
  });

  it('gives a client certificate user the credential id extra', async () => {
    const res = await json('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    expect(res.json.status.userInfo.extra['authentication.kubernetes.io/credential-id'][0]).toMatch(
      /^X509SHA256=[0-9a-f]{64}$/,
    );
  });

  it('discovery: namespaces without deletecollection (refused 405), api-extensions, stored versions, core list', async () => {
    const core = await json('GET', '/api/v1');
    expect(core.json.apiVersion).toBeUndefined();
    const namespaces = core.json.resources.find((r: any) => r.name === 'namespaces');
    expect(namespaces.verbs).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    expect((await json('DELETE', '/api/v1/namespaces')).code).toBe(405);
    const admission = await json('GET', '/apis/admissionregistration.k8s.io/v1');
    expect(admission.json.apiVersion).toBe('v1');
    expect(admission.json.resources.find((r: any) => r.name === 'validatingadmissionpolicies').categories).toEqual([
      'api-extensions',
    ]);
    const apiservices = (await json('GET', '/apis/apiregistration.k8s.io/v1')).json.resources[0];
    expect(apiservices).toMatchObject({ name: 'apiservices', categories: ['api-extensions'] });
    // ClusterTrustBundles are stored as v1beta1 by the reference: the hash of certificates.k8s.io/v1beta1/ClusterTrustBundle.
    const certificates = (await json('GET', '/apis/certificates.k8s.io/v1')).json.resources;
    expect(certificates.find((r: any) => r.name === 'clustertrustbundles').storageVersionHash).toBe('v5yhuVertL4=');
  });

  it('answers metadata only when asked for PartialObjectMetadata or PartialObjectMetadataList', async () => {
    expect(
      (await json('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'pom' }, data: { k: 'v' } })).code,
    ).toBe(201);
    const ask = (path: string, as: string) =>
      raw.send({ path, headers: { Accept: `application/json;as=${as};g=meta.k8s.io;v=v1, application/json` } });
    const one = await ask(`/api/v1/namespaces/${NS}/configmaps/pom`, 'PartialObjectMetadata');
    expect(one.json).toMatchObject({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'pom' },
    });
    expect(one.json.data).toBeUndefined();
    const list = await ask(
      `/api/v1/namespaces/${NS}/configmaps?fieldSelector=metadata.name=pom`,
      'PartialObjectMetadataList',
    );
    expect(list.json).toMatchObject({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
    expect(list.json.items).toEqual([
      expect.objectContaining({ kind: 'PartialObjectMetadata', metadata: expect.objectContaining({ name: 'pom' }) }),
    ]);
    const none = await ask(`/api/v1/namespaces/${NS}/configmaps?labelSelector=nothing`, 'PartialObjectMetadataList');
    expect(none.json.items).toBeNull();
    // A Table without objects says so with a null object per row.
    const table = await ask(
      `/api/v1/namespaces/${NS}/configmaps?fieldSelector=metadata.name=pom&includeObject=None`,
      'Table',
    );
    expect(table.json.rows).toEqual([expect.objectContaining({ object: null })]);
  });

  it('lists "nil" among the supported propagation policies, as the reference does', async () => {
    expect((await json('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'pp' } })).code).toBe(201);
    const res = await json('DELETE', `/api/v1/namespaces/${NS}/configmaps/pp?propagationPolicy=Sideways`);
    expect(res.code).toBe(422);
    expect(res.json.details.causes[0].message).toBe(
      'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
  });

  it('serves discovery in name order with storage version hashes, and aggregated discovery only as v2', async () => {
    const core = await json('GET', '/api/v1');
    const names = core.json.resources.map((r: any) => r.name);
    expect(names).toEqual([...names].sort());
    expect(core.json.resources.find((r: any) => r.name === 'configmaps').storageVersionHash).toBe('qFsyl6wFWjQ=');
    const old = await raw.send({
      path: '/apis',
      headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json' },
    });
    expect(old.json.kind).toBe('APIGroupList');
  });

  it('words selector and option errors as the reference, lists everything for a negative limit, and errs in YAML', async () => {
    const selector = await json('GET', `/api/v1/namespaces/${NS}/configmaps?fieldSelector=data.k%3Da`);
    expect(selector.json.message).toBe(
      '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    const notNumber = await json('GET', `/api/v1/namespaces/${NS}/configmaps?limit=ten`);
    expect(notNumber.json.message).toBe('strconv.ParseInt: parsing "ten": invalid syntax');
    expect((await json('GET', `/api/v1/namespaces/${NS}/configmaps?limit=-1`)).code).toBe(200);
    const cm = { metadata: { name: 'strict' }, bogus: 1 };
    const strict = await json('POST', `/api/v1/namespaces/${NS}/configmaps?fieldValidation=Strict`, cm);
    expect(strict.json.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"',
    );
    const loud = await json('POST', `/api/v1/namespaces/${NS}/configmaps?fieldValidation=Loud`, cm);
    expect(loud.json.message).toContain('supported values: "", "Ignore", "Strict", "Warn"');
    const dry = await json('POST', `/api/v1/namespaces/${NS}/configmaps?dryRun=Some`, cm);
    expect(dry.json.message).toContain('dryRun: Unsupported value: ["Some"]: supported values: "All"');
    const yaml = await raw.send({
      path: `/api/v1/namespaces/${NS}/configmaps/absent`,
      headers: { Accept: 'application/yaml' },
    });
    expect(yaml.code).toBe(404);
    expect(yaml.headers['content-type']).toBe('application/yaml');
    expect(yaml.body).toContain('reason: NotFound');
  });

  it("stores a Secret's stringData in data", async () => {
    const res = await json('POST', `/api/v1/namespaces/${NS}/secrets`, {
      metadata: { name: 's' },
      stringData: { k: 'v' },
    });
    expect(res.json).toMatchObject({ type: 'Opaque', data: { k: 'dg==' } });
    expect(res.json).not.toHaveProperty('stringData');
  });

  it('serves the OpenAPI v3 index as text/plain, as the reference', async () => {
    const index = await raw.send({ path: '/openapi/v3' });
    expect(index.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(JSON.parse(index.body).paths['api/v1']).toBeDefined();
  });
});

describe('defaults and DELETE answers as kube-apiserver gives them', () => {
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
    await json('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'gone-too' } });
    const sa = await json('DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/gone-too`);
    expect(sa.code).toBe(200);
    expect(sa.json).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'gone-too' } });
    const sc = await json('DELETE', '/apis/storage.k8s.io/v1/storageclasses/refdef-sc');
    expect(sc.json).toMatchObject({ kind: 'StorageClass', metadata: { name: 'refdef-sc' } });
    await json('POST', `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: 'gone-too' } });
    const cm = await json('DELETE', `/api/v1/namespaces/${NS}/configmaps/gone-too`);
    expect(cm.json).toMatchObject({ kind: 'Status', status: 'Success' });
  });
});
