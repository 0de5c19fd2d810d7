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

const json = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
  raw.send({
    method,
    path,
    headers: { 'Content-Type': contentType, Accept: 'application/json', 'User-Agent': 'ref-test/1.0' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

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
