/**
 * What clients nobody here wrote send and expect (the official Python client, @kubernetes/client-node,
 * kubectl), over HTTPS as the admin, answered as kube-apiserver answers them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webcryptoRequest } from '../controllers/certificates/testing.ts';
import { group } from '../src/api/naming.ts';
import {
  decodeProtobufBody,
  encodeKubernetesProtobuf,
  PROTOBUF_MEDIA_TYPE,
} from '../src/controlplane/protobuf/index.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient } from './support/raw-https.ts';

let c: TestCluster;
let admin: RawClient;
const get = (path: string) => admin.send({ path, timeoutMs: 10_000 });
const post = (path: string, body: unknown) => admin.send({ method: 'POST', path, body: JSON.stringify(body) });

beforeAll(async () => {
  c = await startTestCluster();
  admin = await RawClient.fromKubeconfig(c.kubeconfig);
});

afterAll(async () => {
  admin?.close();
  await c?.stop();
});

/** The lines of a watch response, parsed (a list is one JSON document, so one "line"). */
const lines = (body: string) =>
  body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('boolean query parameters, read as the reference converts them', () => {
  const cms = '/api/v1/namespaces/default/configmaps';

  beforeAll(async () => {
    const r = await post(cms, { metadata: { name: 'bools' } });
    expect(r.code, r.body).toBe(201);
  });

  // The Python client sends Python's spelling of its booleans: `watch=True`.
  it.each(['True', 'TRUE', 'true', '1', 't', 'yes', ''])('watch=%s streams events', async (v) => {
    const r = await get(`${cms}?watch=${v}&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(200);
    const events = lines(r.body);
    expect(events.length, r.body).toBeGreaterThan(0);
    expect(
      events.every((e) => e.type === 'ADDED' && e.object?.kind === 'ConfigMap'),
      r.body,
    ).toBe(true);
  });

  it.each(['false', 'False', 'FALSE', '0'])('watch=%s lists', async (v) => {
    const r = await get(`${cms}?watch=${v}&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(200);
    expect(r.json?.kind, r.body).toBe('ConfigMapList');
  });

  it('allowWatchBookmarks=True is honoured: a watch-list ends its initial events with a bookmark', async () => {
    const r = await get(
      `${cms}?watch=True&allowWatchBookmarks=True&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`,
    );
    expect(r.code, r.body).toBe(200);
    const bookmark = lines(r.body).find((e) => e.type === 'BOOKMARK');
    const annotations = Object.entries(bookmark?.object?.metadata?.annotations ?? {});
    expect(annotations, r.body).toContainEqual([expect.stringMatching(/\/initial-events-end$/), 'true']);
  });

  it('a value that is no spelling of false is true, never an error (the reference has none)', async () => {
    const r = await get(`${cms}?watch=1&allowWatchBookmarks=maybe&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(200);
    expect(lines(r.body)[0]?.type, r.body).toBe('ADDED');
  });

  it('sendInitialEvents=False is a value given: without resourceVersionMatch it is the reference 422', async () => {
    const r = await get(`${cms}?watch=True&sendInitialEvents=False&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(422);
    expect(r.json?.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
  });
});

describe('/version', () => {
  // The Python client's VersionApi().get_code() requires every field of version.Info.
  it("answers every field of the reference's version.Info, truthfully", async () => {
    const r = await get('/version');
    expect(r.code, r.body).toBe(200);
    const goArch: Record<string, string> = { x64: 'amd64', ia32: '386' };
    expect(r.json).toEqual({
      major: '1',
      minor: expect.stringMatching(/^\d+$/),
      emulationMajor: '1',
      emulationMinor: r.json.minor,
      minCompatibilityMajor: '1',
      minCompatibilityMinor: String(Number(r.json.minor) - 1),
      gitVersion: expect.stringMatching(/^v1\.\d+\.0\+embedded\./),
      gitCommit: expect.stringMatching(/^[0-9a-f]{40}$/),
      gitTreeState: expect.stringMatching(/^(clean|dirty)$/),
      buildDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      goVersion: process.version,
      compiler: 'node',
      platform: `${process.platform}/${goArch[process.arch] ?? process.arch}`,
    });
  });
});

describe('empty structs, written as the reference writes them', () => {
  const csrPath = () => `/apis/${group(c.cp.registry.naming, 'certificates')}/v1/certificatesigningrequests`;
  let spec: Record<string, unknown>;

  beforeAll(async () => {
    const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: 'someone' });
    spec = {
      request: Buffer.from(pem).toString('base64'),
      signerName: c.cp.registry.naming.signers.apiServerClient,
      usages: ['client auth'],
    };
  });

  // The Python client's `csr.status.conditions = [...]` needs the status object the reference always sends.
  it('a CertificateSigningRequest created without status reads back status: {} in get, list and watch', async () => {
    const created = await post(csrPath(), { metadata: { name: 'no-status' }, spec });
    expect(created.code, created.body).toBe(201);
    expect(created.json.status).toEqual({});
    // Nobody owns the status (nor, as the reference resets it on the main resource, the spec): no entry here.
    expect(created.json.metadata.managedFields).toBeUndefined();
    const one = await get(`${csrPath()}/no-status`);
    expect(one.json?.status, one.body).toEqual({});
    const list = await get(csrPath());
    expect(list.json.items.find((i: any) => i.metadata.name === 'no-status')?.status).toEqual({});
    const watched = lines((await get(`${csrPath()}?watch=true&timeoutSeconds=1`)).body);
    expect(watched.find((e) => e.object.metadata.name === 'no-status')?.object.status).toEqual({});
    const proto = await admin.send({ path: `${csrPath()}/no-status`, headers: { Accept: PROTOBUF_MEDIA_TYPE } });
    expect(proto.headers['content-type']).toBe(PROTOBUF_MEDIA_TYPE);
    expect(decodeProtobufBody(proto.bytes!).status).toEqual({});
  });

  it('a protobuf body without status is stored with status: {}', async () => {
    const apiVersion = `${group(c.cp.registry.naming, 'certificates')}/v1`;
    const body = encodeKubernetesProtobuf({
      apiVersion,
      kind: 'CertificateSigningRequest',
      metadata: { name: 'pb' },
      spec,
    });
    const r = await admin.send({
      method: 'POST',
      path: csrPath(),
      headers: { 'Content-Type': PROTOBUF_MEDIA_TYPE },
      body: Buffer.from(body),
    });
    expect(r.code, r.body).toBe(201);
    expect((await get(`${csrPath()}/pb`)).json.status).toEqual({});
  });

  // The Python client refuses a PodDisruptionBudgetStatus without currentHealthy, a StatefulSetStatus without replicas.
  it('counts the reference tags without omitempty read back 0 before any controller writes them', async () => {
    const selector = { matchLabels: { app: 'zero' } };
    const pdb = await post('/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      metadata: { name: 'zero' },
      spec: { minAvailable: 1, selector },
    });
    expect(pdb.code, pdb.body).toBe(201);
    expect(pdb.json.status).toEqual({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    // Status belongs to the status subresource: the creator's managed fields do not claim it.
    expect(pdb.json.metadata.managedFields[0].fieldsV1).not.toHaveProperty('f:status');
    const template = { metadata: { labels: selector.matchLabels }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    const sts = await post('/apis/apps/v1/namespaces/default/statefulsets', {
      metadata: { name: 'zero' },
      spec: { serviceName: 'zero', selector, template },
    });
    expect(sts.code, sts.body).toBe(201);
    expect((await get('/apis/apps/v1/namespaces/default/statefulsets/zero')).json.status).toEqual({
      replicas: 0,
      availableReplicas: 0,
    });
  });

  it('a Service has status.loadBalancer: {}, a container resources: {}', async () => {
    const svc = await post('/api/v1/namespaces/default/services', {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(svc.code, svc.body).toBe(201);
    expect((await get('/api/v1/namespaces/default/services/web')).json.status).toEqual({ loadBalancer: {} });
    const pod = await post('/api/v1/namespaces/default/pods', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    expect(pod.code, pod.body).toBe(201);
    expect((await get('/api/v1/namespaces/default/pods/p')).json.spec.containers[0].resources).toEqual({});
  });

  it("the OpenAPI says so, as the reference's does: default: {} on a struct held by value", async () => {
    const r = await get(`/openapi/v3/apis/${group(c.cp.registry.naming, 'certificates')}/v1`);
    const csr = r.json.components.schemas['io.k8s.api.certificates.v1.CertificateSigningRequest'];
    expect(csr.properties.status.default).toEqual({});
    expect(csr.properties.spec.default).toEqual({});
    const pod = (await get('/openapi/v3/api/v1')).json.components.schemas['io.k8s.api.core.v1.PodSpec'];
    expect(pod.properties.securityContext.default).toBeUndefined(); // a pointer
  });
});

describe('ValidatingAdmissionPolicy expressions that do not compile', () => {
  const path = () => `/apis/${group(c.cp.registry.naming, 'admissionregistration')}/v1/validatingadmissionpolicies`;
  const policy = (name: string, expression: string) => ({
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
        ],
      },
      validations: [{ expression }],
    },
  });

  it('are refused at create and at update with the 422 naming the field and the compile error', async () => {
    const created = await post(path(), policy('broken', 'object.spec.replicas <='));
    expect(created.code, created.body).toBe(422);
    expect(created.json).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    expect(created.json.details.causes[0]).toMatchObject({
      reason: 'FieldValueInvalid',
      field: 'spec.validations[0].expression',
    });
    expect(created.json.message).toContain(
      'spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:24:',
    );
    expect((await get(`${path()}/broken`)).code).toBe(404);

    const good = await post(path(), policy('fine', 'object.spec.replicas <= 5'));
    expect(good.code, good.body).toBe(201);
    const update = await admin.send({
      method: 'PUT',
      path: `${path()}/fine`,
      body: JSON.stringify({
        ...good.json,
        spec: { ...good.json.spec, validations: [{ expression: 'object.spec.replicas <=' }] },
      }),
    });
    expect(update.code, update.body).toBe(422);
    expect(update.json.details.causes[0].field).toBe('spec.validations[0].expression');
  });

  it('a type error against the kind is no compile error: stored, for the status to warn of', async () => {
    const r = await post(path(), policy('typed', "object.spec.replicas == 'three'"));
    expect(r.code, r.body).toBe(201);
  });
});

describe('server-side apply and metadata, in the reference words', () => {
  const cm = '/api/v1/namespaces/default/configmaps';
  const apply = (name: string, manager: string, data: Record<string, string>) =>
    admin.send({
      method: 'PATCH',
      path: `${cm}/${name}?fieldManager=${manager}`,
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }),
    });

  it('names an applier without a version, an Update manager with it', async () => {
    expect((await apply('applied', 'kubectl', { a: '1' })).code).toBe(201);
    const byApplier = await apply('applied', 'other', { a: '2' });
    expect(byApplier.code, byApplier.body).toBe(409);
    expect(byApplier.json.message).toBe('Apply failed with 1 conflict: conflict with "kubectl": .data.a');
    // The reference's conflict Status names no object, only the causes.
    expect(byApplier.json.details).toEqual({
      causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.data.a' }],
    });

    const created = await post(`${cm}?fieldManager=kubectl`, {
      metadata: { name: 'updated' },
      data: { a: '1', b: '1' },
    });
    expect(created.code, created.body).toBe(201);
    const byUpdater = await apply('updated', 'other', { a: '2', b: '2' });
    expect(byUpdater.code, byUpdater.body).toBe(409);
    expect(byUpdater.json.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "kubectl" using v1:\n- .data.a\n- .data.b',
    );
  });

  it('gives a ConfigMap no metadata.generation, a Deployment one', async () => {
    const created = await post(cm, { metadata: { name: 'no-generation' }, data: { a: '1' } });
    expect(created.json.metadata).not.toHaveProperty('generation');
    const updated = await admin.send({
      method: 'PUT',
      path: `${cm}/no-generation`,
      body: JSON.stringify({ ...created.json, data: { a: '2' } }),
    });
    expect(updated.code, updated.body).toBe(200);
    expect(updated.json.metadata).not.toHaveProperty('generation');
    const deployment = await post('/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
      },
    });
    expect(deployment.code, deployment.body).toBe(201);
    expect(deployment.json.metadata.generation).toBe(1);
  });
});
