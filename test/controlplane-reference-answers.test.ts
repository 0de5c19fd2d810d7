/**
 * Answers of the embedded plane (kubernetes flavor) that `npm run conformance:diff` found to differ from
 * kube-apiserver v1.37.2, each held to the reference's answer through the real HTTPS server: the reviews' managed
 * fields and errors, subresource edge cases (a PodDisruptionBudget's unconditional status write, a Scale's
 * validation, a TokenRequest's metadata, a pod's log without a node), authorization before routing, Tables and
 * protobuf Status errors.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webcryptoRequest } from '../controllers/certificates/testing.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient } from './support/raw-https.ts';

const NS = 'answers';

describe('answers held to kube-apiserver (kubernetes flavor)', () => {
  let c: TestCluster;
  let admin: RawClient;
  let limited: RawClient;

  const json = (method: string, path: string, body?: unknown, contentType?: string) =>
    admin.sendJson(method, path, body, { contentType, userAgent: 'answers-test/v1.0' });

  beforeAll(async () => {
    c = await startTestCluster({ flavor: 'kubernetes' });
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    const path = await c.cp.writeIdentityKubeconfig(join(c.dir, 'limited.kubeconfig'), {
      username: 'limited-user',
      groups: [],
    });
    limited = await RawClient.fromKubeconfig(path);
    expect((await json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).code).toBe(201);
  });

  afterAll(async () => {
    admin?.close();
    limited?.close();
    await c?.stop();
  });

  describe('reviews', () => {
    it('an access review answered as the request carries the managed fields of its spec', async () => {
      const r = await json('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'someone', resourceAttributes: { verb: 'get', resource: 'pods', namespace: NS } },
      });
      expect(r.code).toBe(201);
      expect(r.json.status.allowed).toBe(false);
      const [entry, ...rest] = r.json.metadata.managedFields;
      expect(rest).toEqual([]);
      expect(entry).toMatchObject({
        manager: 'answers-test',
        operation: 'Update',
        apiVersion: 'authorization.k8s.io/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:user': {},
            'f:resourceAttributes': { '.': {}, 'f:verb': {}, 'f:resource': {}, 'f:namespace': {} },
          },
        },
      });
    });

    it('a TokenReview of a token nobody issued says why in status.error, with its managed fields', async () => {
      const r = await json('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: 'not-a-token' },
      });
      expect(r.code).toBe(201);
      expect(r.json.status).toEqual({ user: {}, error: 'invalid bearer token' });
      expect(r.json.metadata.managedFields[0].fieldsV1).toEqual({ 'f:spec': { 'f:token': {} } });
    });

    it('a rules review is a new object: no managed fields', async () => {
      const r = await json('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectRulesReview',
        spec: { namespace: NS },
      });
      expect(r.code).toBe(201);
      expect(r.json.metadata.managedFields).toBeUndefined();
    });

    it('a SelfSubjectAccessReview without attributes is refused on spec, named by no kind', async () => {
      const r = await limited.postJson('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {},
      });
      expect(r.code).toBe(422);
      expect(r.json.message).toBe(
        '.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
      );
      expect(r.json.details).toEqual({
        group: 'authorization.k8s.io',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message:
              'Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
            field: 'spec',
          },
        ],
      });
    });
  });

  describe('subresources', () => {
    const pdbPath = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;
    const template = (app: string) => ({
      metadata: { labels: { app } },
      spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
    });

    it("a negative count through the scale subresource is the Scale's Invalid", async () => {
      const sts = {
        metadata: { name: 'scaled' },
        spec: {
          replicas: 1,
          serviceName: 's',
          selector: { matchLabels: { app: 'scaled' } },
          template: template('scaled'),
        },
      };
      expect((await json('POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, sts)).code).toBe(201);
      const r = await json('PUT', `/apis/apps/v1/namespaces/${NS}/statefulsets/scaled/scale`, {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'scaled', namespace: NS },
        spec: { replicas: -1 },
      });
      expect(r.code).toBe(422);
      expect(r.json.message).toBe(
        'Scale.autoscaling "scaled" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      );
      expect(r.json.details).toMatchObject({ name: 'scaled', group: 'autoscaling', kind: 'Scale' });
    });

    it('a TokenRequest is answered as a new object with its managed fields; a too short one names no object', async () => {
      expect((await json('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'bot' } })).code).toBe(
        201,
      );
      const path = `/api/v1/namespaces/${NS}/serviceaccounts/bot/token`;
      const kind = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest' };
      const r = await json('POST', path, { ...kind, spec: { audiences: ['answers'], expirationSeconds: 3600 } });
      expect(r.code).toBe(201);
      const meta = r.json.metadata;
      expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(Date.parse(meta.creationTimestamp)).not.toBeNaN();
      expect(meta.managedFields).toEqual([
        {
          manager: 'answers-test',
          operation: 'Update',
          apiVersion: 'authentication.k8s.io/v1',
          time: expect.any(String),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:audiences': {}, 'f:expirationSeconds': {} } },
          subresource: 'token',
        },
      ]);
      const short = await json('POST', path, { ...kind, spec: { expirationSeconds: 60 } });
      expect(short.code).toBe(422);
      expect(short.json.message).toBe(
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
      );
      expect(short.json.details.name).toBeUndefined();
    });

    it("a ReplicationController takes its labels and selector from its template's labels", async () => {
      const r = await json('POST', `/api/v1/namespaces/${NS}/replicationcontrollers`, {
        metadata: { name: 'legacy' },
        spec: { replicas: 1, template: template('legacy') },
      });
      expect(r.code).toBe(201);
      expect(r.json.metadata.labels).toEqual({ app: 'legacy' });
      expect(r.json.spec.selector).toEqual({ app: 'legacy' });
      expect(r.json.metadata.managedFields[0].fieldsV1['f:metadata']).toEqual({ 'f:labels': { '.': {}, 'f:app': {} } });
    });

    it("a CSR's Denied next to Approved breaks one union over the list, as the reference's declarative check", async () => {
      const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: 'answers' });
      const csr = {
        metadata: { name: 'decided' },
        spec: {
          signerName: 'example.com/answers',
          usages: ['client auth'],
          request: Buffer.from(pem).toString('base64'),
        },
      };
      const base = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
      expect((await json('POST', base, csr)).code).toBe(201);
      const decision = (type: string) => ({ type, status: 'True', reason: 'Answers', message: type });
      const approved = await json(
        'PATCH',
        `${base}/decided/approval`,
        { metadata: { labels: { decided: 'yes' } }, status: { conditions: [decision('Approved')] } },
        'application/merge-patch+json',
      );
      expect(approved.code).toBe(200);
      // As through /status, the request's metadata changes are taken with the decision.
      expect(approved.json.metadata.labels).toEqual({ decided: 'yes' });
      const both = await json(
        'PATCH',
        `${base}/decided/approval`,
        [{ op: 'add', path: '/status/conditions/-', value: decision('Denied') }],
        'application/json-patch+json',
      );
      expect(both.code).toBe(422);
      const members = '`conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`';
      expect(both.json.details.causes).toEqual([
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: "{conditions[{\\"type\\": \\"Approved\\"}], conditions[{\\"type\\": \\"Denied\\"}]}": must specify at most one of: ${members}`,
          field: 'status.conditions',
        },
      ]);
    });

    it("a status write keeps the request's metadata changes (but a pod's owners) and writes a condition's zero times as null", async () => {
      const pod = { metadata: { name: 'status-meta', labels: { app: 's' } }, spec: template('s').spec };
      expect((await json('POST', `/api/v1/namespaces/${NS}/pods`, pod)).code).toBe(201);
      const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: '6b1a3c1e-8c4f-4f43-9d0e-0c2f4b7e1a11' };
      const r = await json(
        'PATCH',
        `/api/v1/namespaces/${NS}/pods/status-meta/status`,
        {
          metadata: { labels: { via: 'status' }, ownerReferences: [owner] },
          spec: { activeDeadlineSeconds: 5 },
          status: { conditions: [{ type: 'Ready', status: 'True' }] },
        },
        'application/merge-patch+json',
      );
      expect(r.code).toBe(200);
      expect(r.json.metadata.labels).toEqual({ app: 's', via: 'status' });
      expect(r.json.metadata.ownerReferences).toBeUndefined();
      expect(r.json.spec.activeDeadlineSeconds).toBeUndefined();
      expect(r.json.status.conditions).toEqual([
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: null },
      ]);
      const entry = r.json.metadata.managedFields.find((e: { subresource?: string }) => e.subresource === 'status');
      expect(entry.fieldsV1['f:metadata']).toEqual({ 'f:labels': { 'f:via': {} } });
      expect(entry.fieldsV1['f:status']['f:conditions']['k:{"type":"Ready"}']).toEqual({
        '.': {},
        'f:lastProbeTime': {},
        'f:lastTransitionTime': {},
        'f:status': {},
        'f:type': {},
      });
      const bad = await json(
        'PATCH',
        `/api/v1/namespaces/${NS}/pods/status-meta/status`,
        { metadata: { labels: { 'not a key!': 'x' } } },
        'application/merge-patch+json',
      );
      expect(bad.code).toBe(422);

      const ns = await json(
        'PATCH',
        `/api/v1/namespaces/${NS}/status`,
        { status: { conditions: [{ type: 'NamespaceDeletionDiscoveryFailure', status: 'False' }] } },
        'application/merge-patch+json',
      );
      expect(ns.code).toBe(200);
      expect(ns.json.status.conditions).toEqual([
        { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', lastTransitionTime: null },
      ]);
    });

    it("a Deployment's status write leaves its labels, as the reference's strategy resets them", async () => {
      const deployment = {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: template('web') },
      };
      expect((await json('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deployment)).code).toBe(201);
      const r = await json(
        'PATCH',
        `/apis/apps/v1/namespaces/${NS}/deployments/web/status`,
        { metadata: { labels: { via: 'status' }, annotations: { note: 'kept' } }, status: { replicas: 1 } },
        'application/merge-patch+json',
      );
      expect(r.code).toBe(200);
      expect(r.json.metadata.labels).toEqual({ app: 'web' });
      expect(r.json.metadata.annotations).toEqual({ note: 'kept' });
      expect(r.json.status.replicas).toBe(1);
    });

    it('the log of a pod no node runs yet is an empty answer, 204', async () => {
      const pod = { metadata: { name: 'unscheduled' }, spec: template('x').spec };
      expect((await json('POST', `/api/v1/namespaces/${NS}/pods`, pod)).code).toBe(201);
      const r = await admin.send({ path: `/api/v1/namespaces/${NS}/pods/unscheduled/log` });
      expect(r.code).toBe(204);
      expect(r.headers['content-type']).toBeUndefined();
      expect(r.body).toBe('');
      // A container the pod does not have is still refused first, as the reference checks it before the node.
      const wrong = await admin.send({ path: `/api/v1/namespaces/${NS}/pods/unscheduled/log?container=nope` });
      expect(wrong.code).toBe(400);
    });

    it("a PodDisruptionBudget's status PUT must name its resourceVersion; a patch need not", async () => {
      const spec = { maxUnavailable: 0, selector: { matchLabels: { app: 'guarded' } } };
      expect((await json('POST', pdbPath, { metadata: { name: 'guard' }, spec })).code).toBe(201);
      const status = {
        currentHealthy: 1,
        desiredHealthy: 1,
        expectedPods: 1,
        disruptionsAllowed: 0,
        observedGeneration: 1,
      };
      const put = await json('PUT', `${pdbPath}/guard/status`, { metadata: { name: 'guard' }, spec, status });
      expect(put.code).toBe(422);
      expect(put.json.message).toBe(
        'poddisruptionbudgets.policy "guard" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
      );
      expect(put.json.details).toEqual({
        name: 'guard',
        group: 'policy',
        kind: 'poddisruptionbudgets',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 0: must be specified for an update',
            field: 'metadata.resourceVersion',
          },
        ],
      });
      const current = (await json('GET', `${pdbPath}/guard`)).json;
      const pinned = await json('PUT', `${pdbPath}/guard/status`, { ...current, status });
      expect(pinned.code).toBe(200);
      expect(pinned.json.status.observedGeneration).toBe(1);
      const patched = await json(
        'PATCH',
        `${pdbPath}/guard/status`,
        { status: { currentHealthy: 2 } },
        'application/merge-patch+json',
      );
      expect(patched.code).toBe(200);
      expect(patched.json.status.currentHealthy).toBe(2);
    });
  });

  it("OpenAPI shapes follow the reference's types, not only the structural schema", async () => {
    const r = await json('GET', '/openapi/v2');
    expect(r.code).toBe(200);
    const defs = r.json.definitions;
    const ref = (name: string) => `#/definitions/${name}`;
    const core = 'io.k8s.api.core.v1';
    expect(defs[`${core}.EnvVarSource`].properties.fileKeyRef.$ref).toBe(ref(`${core}.FileKeySelector`));
    expect(Object.keys(defs[`${core}.FileKeySelector`].properties).sort()).toEqual([
      'key',
      'optional',
      'path',
      'volumeName',
    ]);
    const hints = defs['io.k8s.api.discovery.v1.EndpointHints'].properties;
    expect(hints.forNodes.items.$ref).toBe(ref('io.k8s.api.discovery.v1.ForNode'));
    const hostIPs = defs[`${core}.PodStatus`].properties.hostIPs;
    expect(hostIPs['x-kubernetes-list-type']).toBe('atomic');
    expect(hostIPs['x-kubernetes-patch-merge-key']).toBe('ip');
    expect(defs[`${core}.PodStatus`].properties.podIPs['x-kubernetes-list-type']).toBe('map');
    expect(defs[`${core}.ReplicationControllerStatus`].properties.terminatingReplicas).toBeUndefined();
    expect(defs['io.k8s.api.apps.v1.ReplicaSetStatus'].properties.terminatingReplicas).toEqual(expect.any(Object));
    expect(defs['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions'].properties.metadata).toBeUndefined();
    const data = defs['io.k8s.api.apps.v1.ControllerRevision'].properties.data;
    expect(data.$ref).toBe(ref('io.k8s.apimachinery.pkg.runtime.RawExtension'));
    expect(data.type).toBeUndefined();
  });

  it('authorizes before routing: a path naming no resource is 403 to a user without rights, 404 to the admin', async () => {
    const path = `/api/v1/namespaces/${NS}/frobnicators`;
    const denied = await limited.send({ path });
    expect(denied.code).toBe(403);
    expect(denied.json.message).toBe(
      `frobnicators is forbidden: User "limited-user" cannot list resource "frobnicators" in API group "" in the namespace "${NS}"`,
    );
    expect(denied.json.details).toEqual({ kind: 'frobnicators' });
    const sub = await limited.send({ path: `/apis/apps/v1/namespaces/${NS}/statefulsets/x/frobnicate` });
    expect(sub.code).toBe(403);
    expect(sub.json.message).toContain('cannot get resource "statefulsets/frobnicate" in API group "apps"');
    expect((await admin.send({ path })).code).toBe(404);
    expect((await admin.send({ path: `/apis/apps/v1/namespaces/${NS}/statefulsets/x/frobnicate` })).code).toBe(404);
  });

  describe('Tables', () => {
    const cms = `/api/v1/namespaces/${NS}/configmaps`;

    it('a v1beta1 Table is answered as v1beta1, its rows too', async () => {
      expect((await json('POST', cms, { metadata: { name: 'tab-a', labels: { tab: 'x' } } })).code).toBe(201);
      const r = await admin.send({
        path: `${cms}?labelSelector=tab`,
        headers: { Accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json' },
      });
      expect(r.code).toBe(200);
      expect(r.json.kind).toBe('Table');
      expect(r.json.apiVersion).toBe('meta.k8s.io/v1beta1');
      expect(r.json.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1' });
      const v1 = await admin.send({ path: cms, headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
      expect(v1.json.apiVersion).toBe('meta.k8s.io/v1');
    });

    it("a watch of Tables: each event at its object's resourceVersion, metadata rows, column definitions once", async () => {
      const start = (await json('GET', cms)).json.metadata.resourceVersion;
      for (const name of ['tab-b', 'tab-c']) {
        expect((await json('POST', cms, { metadata: { name }, data: { k: name } })).code).toBe(201);
      }
      const r = await admin.send({
        path: `${cms}?watch=true&resourceVersion=${start}&timeoutSeconds=1`,
        headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      });
      expect(r.code).toBe(200);
      const events = r.body
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
      const [first, second] = events.map((e) => e.object);
      expect(first.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Data', 'Age']);
      expect(second.columnDefinitions).toBeNull();
      for (const [i, table] of [first, second].entries()) {
        const row = table.rows[0].object;
        expect(row).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
        expect(row.data).toBeUndefined();
        expect(table.metadata).toEqual({ resourceVersion: row.metadata.resourceVersion });
        expect(row.metadata.name).toBe(['tab-b', 'tab-c'][i]);
      }
    });
  });

  it('a Status asked for in protobuf is answered in protobuf, every field written as the reference writes it', async () => {
    const r = await admin.send({
      path: `/api/v1/namespaces/${NS}/configmaps/absent`,
      headers: { Accept: 'application/vnd.kubernetes.protobuf' },
    });
    expect(r.code).toBe(404);
    expect(r.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    const bytes = r.bytes as Buffer;
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from('k8s\0', 'latin1'));
    const unknown = fields(bytes.subarray(4));
    expect(fields(unknown[0][1] as Buffer).map(([n, v]) => [n, String(v)])).toEqual([
      [1, 'v1'],
      [2, 'Status'],
    ]);
    const status = fields(unknown[1][1] as Buffer);
    expect(status.map(([n]) => n)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(fields(status[0][1] as Buffer).map(([n, v]) => [n, String(v)])).toEqual([
      [1, ''],
      [2, ''],
      [3, ''],
    ]);
    expect(status.slice(1, 4).map(([, v]) => String(v))).toEqual([
      'Failure',
      'configmaps "absent" not found',
      'NotFound',
    ]);
    expect(fields(status[4][1] as Buffer).map(([n, v]) => [n, String(v)])).toEqual([
      [1, 'absent'],
      [2, ''],
      [3, 'configmaps'],
      [5, '0'],
      [6, ''],
    ]);
    expect(status[5]).toEqual([6, 404]);
    // The reference's answer to this request is 113 bytes long.
    expect(bytes.length).toBe(113);
  });
});

/** The fields of a protobuf message in order: varints as numbers, length-delimited values as their bytes. */
function fields(message: Buffer): [number, number | Buffer][] {
  const out: [number, number | Buffer][] = [];
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = message[at++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
  };
  while (at < message.length) {
    const tag = varint();
    if ((tag & 7) === 0) out.push([tag >> 3, varint()]);
    else {
      const size = varint();
      out.push([tag >> 3, message.subarray(at, at + size)]);
      at += size;
    }
  }
  return out;
}
