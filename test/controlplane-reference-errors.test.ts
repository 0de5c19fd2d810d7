/**
 * Error answers of the embedded control plane (kubernetes flavor) that clients see and match, held to what
 * kube-apiserver v1.37.2 answers (the differences `npm run conformance:diff` found): status, reason and the
 * reference's words, over real HTTPS as the admin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient, type RawResponse } from './support/raw-https.ts';

const NS = 'errs';
const CONFIGMAPS = `/api/v1/namespaces/${NS}/configmaps`;

describe('error answers as the reference words them (kubernetes flavor)', () => {
  let c: TestCluster;
  let admin: RawClient;

  /** Status fields of an error answer. */
  const status = (r: RawResponse) => ({
    code: r.code,
    reason: r.json?.reason,
    message: r.json?.message,
    details: r.json?.details,
  });

  async function configMap(name: string): Promise<void> {
    const r = await admin.postJson(CONFIGMAPS, { metadata: { name }, data: { k: 'v' } });
    expect(r.code, r.body).toBe(201);
  }

  beforeAll(async () => {
    c = await startTestCluster({ flavor: 'kubernetes' });
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    expect((await admin.postJson('/api/v1/namespaces', { metadata: { name: NS } })).code).toBe(201);
  });

  afterAll(async () => {
    admin?.close();
    await c?.stop();
  });

  it('406 lists the representations it could answer with', async () => {
    await configMap('accept');
    const r = await admin.send({ path: `${CONFIGMAPS}/accept`, headers: { Accept: 'text/html' } });
    expect(status(r)).toEqual({
      code: 406,
      reason: 'NotAcceptable',
      message:
        '406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      details: {},
    });
  });

  it('415 names every body type a create accepts, and a patch of an unknown type is the bare status text', async () => {
    const create = await admin.send({
      method: 'POST',
      path: CONFIGMAPS,
      headers: { 'Content-Type': 'text/plain' },
      body: 'x',
    });
    expect(status(create)).toEqual({
      code: 415,
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      details: undefined,
    });
    await configMap('patched');
    const patch = await admin.send({
      method: 'PATCH',
      path: `${CONFIGMAPS}/patched`,
      headers: { 'Content-Type': 'application/x-unknown-patch' },
      body: '{}',
    });
    expect(status(patch)).toEqual({
      code: 415,
      reason: 'UnsupportedMediaType',
      message: '415: Unsupported Media Type',
      details: {},
    });
  });

  it('a JSON Patch that cannot be applied is the reference generic 422', async () => {
    await configMap('json-patched');
    for (const op of [
      { op: 'test', path: '/data/k', value: 'other' },
      { op: 'replace', path: '/data/absent/deeper', value: 'x' },
    ]) {
      const r = await admin.send({
        method: 'PATCH',
        path: `${CONFIGMAPS}/json-patched`,
        headers: { 'Content-Type': 'application/json-patch+json' },
        body: JSON.stringify([op]),
      });
      expect(status(r), op.op).toEqual({
        code: 422,
        reason: 'Invalid',
        message: 'the server rejected our request due to an error in our request',
        details: {},
      });
    }
  });

  it('a negative grace period is accepted on delete and means one second', async () => {
    await configMap('graceless');
    const deleted = await admin.send({ method: 'DELETE', path: `${CONFIGMAPS}/graceless?gracePeriodSeconds=-1` });
    expect(deleted.code, deleted.body).toBe(200);
    expect(deleted.json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'graceless' } });
    expect((await admin.send({ path: `${CONFIGMAPS}/graceless` })).code).toBe(404);

    const pod = await admin.postJson(`/api/v1/namespaces/${NS}/pods`, {
      metadata: { name: 'graceful' },
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'registry.example/c:1' }] },
    });
    expect(pod.code, pod.body).toBe(201);
    const marked = await admin.send({
      method: 'DELETE',
      path: `/api/v1/namespaces/${NS}/pods/graceful`,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ gracePeriodSeconds: -5 }),
    });
    expect(marked.code, marked.body).toBe(200);
    expect(marked.json.metadata.deletionGracePeriodSeconds).toBe(1);
    // Not an integer is still refused, naming the field.
    const bad = await admin.send({ method: 'DELETE', path: `${CONFIGMAPS}/x?gracePeriodSeconds=1.5` });
    expect(bad.code).toBe(422);
    expect(bad.json.details.causes[0].field).toBe('gracePeriodSeconds');
  });
});
