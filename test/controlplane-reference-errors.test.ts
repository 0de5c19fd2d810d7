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

  const write = (method: string, path: string, contentType: string, body: string) =>
    admin.send({ method, path, headers: { 'Content-Type': contentType }, body });

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
    const create = await write('POST', CONFIGMAPS, 'text/plain', 'x');
    expect(status(create)).toEqual({
      code: 415,
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      details: undefined,
    });
    await configMap('patched');
    const patch = await write('PATCH', `${CONFIGMAPS}/patched`, 'application/x-unknown-patch', '{}');
    expect(status(patch)).toEqual({
      code: 415,
      reason: 'UnsupportedMediaType',
      message: '415: Unsupported Media Type',
      details: {},
    });
  });

  it("a JSON Patch that cannot be applied is the reference's 422 Invalid, its message naming the path", async () => {
    await configMap('json-patched');
    for (const op of [
      { op: 'test', path: '/data/k', value: 'other' },
      { op: 'replace', path: '/data/absent/deeper', value: 'x' },
    ]) {
      const r = await write('PATCH', `${CONFIGMAPS}/json-patched`, 'application/json-patch+json', JSON.stringify([op]));
      expect(status(r), op.op).toMatchObject({
        code: 422,
        reason: 'Invalid',
        message: expect.stringContaining(op.path),
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
    const marked = await write(
      'DELETE',
      `/api/v1/namespaces/${NS}/pods/graceful`,
      'application/json',
      JSON.stringify({ gracePeriodSeconds: -5 }),
    );
    expect(marked.code, marked.body).toBe(200);
    expect(marked.json.metadata.deletionGracePeriodSeconds).toBe(1);
    // Not an integer is still refused, naming the field.
    const bad = await admin.send({ method: 'DELETE', path: `${CONFIGMAPS}/x?gracePeriodSeconds=1.5` });
    expect(bad.code).toBe(422);
    expect(bad.json.details.causes[0].field).toBe('gracePeriodSeconds');
  });

  it('a watch with a negative timeoutSeconds is 200 and at once the ERROR event of an expired deadline', async () => {
    const r = await admin.send({ path: `${CONFIGMAPS}?watch=true&timeoutSeconds=-1`, timeoutMs: 5_000 });
    expect(r.code, r.body).toBe(200);
    expect(
      r.body
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'context deadline exceeded',
          reason: 'InternalError',
          code: 500,
        },
      },
    ]);
    // A list has no deadline of its own there: the parameter does not change it.
    expect((await admin.send({ path: `${CONFIGMAPS}?timeoutSeconds=-1` })).code).toBe(200);
  });

  it('a watch timeoutSeconds past what a timer holds keeps the watch open, without a TimeoutOverflowWarning', async () => {
    const overflows: Error[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'TimeoutOverflowWarning') overflows.push(w);
    };
    process.on('warning', onWarning);
    try {
      // 2147484 s is just past 2^31-1 ms: an uncapped timer would end the watch after 1 ms, with an empty 200.
      const watch = admin.send({ path: `${CONFIGMAPS}?watch=true&timeoutSeconds=2147484`, timeoutMs: 1_000 });
      await expect(watch).rejects.toThrow('no answer in 1000 ms');
    } finally {
      process.off('warning', onWarning);
    }
    expect(overflows).toEqual([]);
  });

  it("an integer parameter past a safe integer is 400 as Go's ParseInt answers one past int64", async () => {
    for (const [query, value, why] of [
      ['timeoutSeconds=9007199254740992', '9007199254740992', 'value out of range'],
      ['watch=1&timeoutSeconds=99999999999999999999', '99999999999999999999', 'value out of range'],
      ['limit=-99999999999999999999', '-99999999999999999999', 'value out of range'],
      ['limit=1e3', '1e3', 'invalid syntax'],
    ]) {
      expect(status(await admin.send({ path: `${CONFIGMAPS}?${query}` })), query).toEqual({
        code: 400,
        reason: 'BadRequest',
        message: `strconv.ParseInt: parsing "${value}": ${why}`,
        details: undefined,
      });
    }
    // The largest safe integer is still a number.
    expect((await admin.send({ path: `${CONFIGMAPS}?limit=9007199254740991` })).code).toBe(200);
  });

  it('a value of the wrong JSON type fails decoding on create (400), YAML 1.1 `yes` included; apply stays a 4xx', async () => {
    const created = await write(
      'POST',
      CONFIGMAPS,
      'application/yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-bool\ndata:\n  flag: yes\n',
    );
    expect(status(created)).toEqual({
      code: 400,
      reason: 'BadRequest',
      message:
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: data[flag]: Invalid value: true: must be of type string',
      details: undefined,
    });
    expect((await admin.send({ path: `${CONFIGMAPS}/yaml-bool` })).code).toBe(404);
    await configMap('replaced');
    const replaced = await write(
      'PUT',
      `${CONFIGMAPS}/replaced`,
      'application/json',
      JSON.stringify({ metadata: { name: 'replaced' }, data: { n: 1 } }),
    );
    expect(replaced.code, replaced.body).toBe(400);
    // The reference answers the same apply 500 (a typed-patch failure); here it stays the client's error.
    const applied = await write(
      'PATCH',
      `${CONFIGMAPS}/replaced?fieldManager=yaml`,
      'application/apply-patch+yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: replaced\ndata:\n  flag: yes\n',
    );
    expect(applied.code, applied.body).toBe(422);
    expect(applied.json.details.causes[0].field).toBe('data[flag]');
  });

  it("a body that is no JSON is refused in the words of the reference's decoder, with the body's start", async () => {
    const r = await write('POST', CONFIGMAPS, 'application/json', '{"metadata": {"name": "broken"');
    expect(status(r)).toEqual({
      code: 400,
      reason: 'BadRequest',
      message:
        'the object provided is unrecognized (must be of type ConfigMap): ' +
        'couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"metadata": {"name": "broken")',
      details: undefined,
    });
    const put = await write('PUT', `${CONFIGMAPS}/x`, 'application/json', `[${'1,'.repeat(20)}x]`);
    expect(put.json.message).toBe(
      'the object provided is unrecognized (must be of type ConfigMap): ' +
        "couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value " +
        // Not an object: its first 30 bytes in hex.
        `(${Buffer.from(`[${'1,'.repeat(14)}1`).toString('hex')} ...)`,
    );
  });

  it('an unreadable continue token is refused in the words of the reference decoders', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) await configMap(name);
    const first = await admin.send({ path: `${CONFIGMAPS}?limit=1` });
    expect(first.json.metadata.continue).toMatch(/^[A-Za-z0-9_-]+$/);
    const next = await admin.send({ path: `${CONFIGMAPS}?limit=1&continue=${first.json.metadata.continue}` });
    expect(next.code, next.body).toBe(200);
    for (const [token, why] of [
      ['%3Cunset%3E', 'illegal base64 data at input byte 0'],
      ['not-a-token', "invalid character '\\u009e' looking for beginning of value"],
    ]) {
      const r = await admin.send({ path: `${CONFIGMAPS}?limit=1&continue=${token}` });
      expect(status(r), token).toEqual({
        code: 400,
        reason: 'BadRequest',
        message: `invalid continue token: continue key is not valid: ${why}`,
        details: undefined,
      });
    }
  });
});
