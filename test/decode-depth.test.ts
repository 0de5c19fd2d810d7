/**
 * Deeply nested request bodies, through the real HTTPS server as a user who may only work with ConfigMaps in
 * one namespace: every content type and patch type refuses nesting deeper than the limit with a 4xx before the
 * body is built into objects (quickly, without growing the heap), accepts the limit itself, and the server is still
 * up after. Also the decoder's other refusals: JSON Patch operation counts, YAML alias bombs, unknown YAML tags
 * and exponents in integer fields.
 */
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { group } from '../src/api/naming.ts';
import { MAX_DEPTH } from '../src/controlplane/depth.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient, type RawResponse } from './support/raw-https.ts';

const NS = 'deep';
const CM = `/api/v1/namespaces/${NS}/configmaps`;

/** `{a: {a: ... b ...}}` in YAML flow style, `depth` mappings deep. */
const flowYaml = (depth: number) => `${'{a: '.repeat(depth)}b${'}'.repeat(depth)}`;
/** `{"a":{"a":...}}`, `depth` objects deep. */
const deepJson = (depth: number) => `${'{"a":'.repeat(depth)}"b"${'}'.repeat(depth)}`;

describe('request bodies nested too deep', () => {
  let c: TestCluster;
  let admin: RawClient;
  let dev: RawClient;

  beforeAll(async () => {
    c = await startTestCluster({ auditLogPath: join(tmpdir(), `orch-deep-audit-${process.pid}-${Date.now()}.jsonl`) });
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    const rbac = `/apis/${group(c.cp.registry.naming, 'rbac.authorization')}/v1`;
    const post = async (path: string, body: unknown) => {
      const r = await admin.postJson(path, body);
      expect(r.code, r.body).toBe(201);
    };
    await post('/api/v1/namespaces', { metadata: { name: NS } });
    await post(`${rbac}/namespaces/${NS}/roles`, {
      metadata: { name: 'configmaps' },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update', 'patch'] },
        { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get', 'create', 'update', 'patch'] },
      ],
    });
    await post(`${rbac}/namespaces/${NS}/rolebindings`, {
      metadata: { name: 'dev-configmaps' },
      roleRef: { apiGroup: group(c.cp.registry.naming, 'rbac.authorization'), kind: 'Role', name: 'configmaps' },
      subjects: [{ kind: 'User', name: 'dev' }],
    });
    dev = await RawClient.fromKubeconfig(
      await c.cp.writeIdentityKubeconfig(join(c.dir, 'dev.kubeconfig'), { username: 'dev', groups: [] }),
    );
    const made = await dev.postJson(CM, { metadata: { name: 'target' }, data: { k: 'v' } });
    expect(made.code, made.body).toBe(201);
  }, 60_000);

  afterAll(async () => {
    dev?.close();
    admin?.close();
    await c?.stop();
    if (c?.cp.options.auditLogPath) await rm(c.cp.options.auditLogPath, { force: true });
  });

  /** Sends as `dev`, measuring the time and the growth of the heap the request costs. */
  async function send(method: string, path: string, contentType: string, body: string) {
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const r = await dev.send({ method, path, headers: { 'Content-Type': contentType }, body, timeoutMs: 30_000 });
    return { r, ms: performance.now() - started, heapMb: (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20 };
  }

  async function alive(): Promise<void> {
    const r = await dev.send({ path: `${CM}/target` });
    expect(r.code, r.body).toBe(200);
  }

  const refusedTooDeep = (r: RawResponse) => {
    expect(r.code, r.body.slice(0, 300)).toBe(400);
    expect(r.json?.kind).toBe('Status');
    expect(r.json?.message).toMatch(/exceeded max depth/);
  };

  it('refuses a 100,000-deep server-side apply (YAML flow mappings in metadata.labels) quickly', async () => {
    const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\n  labels: ${flowYaml(100_000)}\n`;
    const { r, ms, heapMb } = await send(
      'PATCH',
      `${CM}/target?fieldManager=deep`,
      'application/apply-patch+yaml',
      body,
    );
    refusedTooDeep(r);
    expect(r.json.message).toBe(`error converting YAML to JSON: yaml: line 5: exceeded max depth of ${MAX_DEPTH}`);
    expect(ms).toBeLessThan(1_000);
    expect(heapMb).toBeLessThan(40);
    await alive();
  });

  it('refuses a 100,000-deep YAML create quickly', async () => {
    const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata: ${flowYaml(100_000)}\n`;
    const { r, ms, heapMb } = await send('POST', CM, 'application/yaml', body);
    refusedTooDeep(r);
    expect(ms).toBeLessThan(1_000);
    expect(heapMb).toBeLessThan(40);
    await alive();
  });

  it('refuses YAML whose block indentation or sequence entries nest deeper than the limit', async () => {
    const indented = Array.from({ length: MAX_DEPTH + 1 }, (_, i) => `${' '.repeat(i)}a:`).join('\n');
    for (const data of [`${'- '.repeat(MAX_DEPTH + 1)}x`, indented]) {
      refusedTooDeep((await send('POST', CM, 'application/yaml', `metadata:\n  name: z\ndata:\n${data}\n`)).r);
    }
    // One level less is decoded (and refused only because ConfigMap data holds strings).
    const fits = Array.from({ length: MAX_DEPTH - 2 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n');
    const { r } = await send('POST', CM, 'application/yaml', `metadata:\n  name: z\ndata:\n${fits} x\n`);
    expect(r.code, r.body.slice(0, 300)).toBe(400);
    expect(r.json.message).toContain('cannot unmarshal object into Go struct field data.a of type string');
    await alive();
  });

  it('refuses a 50,000-deep JSON value in data of a create with 400, not 500', async () => {
    const body = `{"metadata":{"name":"j"},"data":{"k":${deepJson(50_000)}}}`;
    const { r, ms } = await send('POST', CM, 'application/json', body);
    refusedTooDeep(r);
    expect(r.json.message).toBe(
      'the object provided is unrecognized (must be of type ConfigMap): ' +
        "couldn't get version/kind; json parse error: invalid character '{' exceeded max depth " +
        '({"metadata":{"name":"j"},"data ...)',
    );
    expect(ms).toBeLessThan(1_000);
    await alive();
  });

  it('refuses every patch type nested deeper than the limit', async () => {
    const deep = deepJson(20_000);
    const patches: Array<[string, string]> = [
      ['application/merge-patch+json', `{"metadata":{"labels":${deep}}}`],
      ['application/strategic-merge-patch+json', `{"metadata":{"labels":${deep}}}`],
      ['application/json-patch+json', `[{"op":"add","path":"/data/x","value":${deep}}]`],
      ['application/apply-patch+yaml', `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":${deep}}}`],
    ];
    for (const [type, body] of patches) {
      const { r, ms } = await send('PATCH', `${CM}/target?fieldManager=deep`, type, body);
      refusedTooDeep(r);
      expect(ms, type).toBeLessThan(1_000);
    }
    await alive();
  });

  it('lets nesting of exactly the limit through, answered with a 4xx naming the field, never a 5xx', async () => {
    // ConfigMap data holds strings: the deep value passes the depth limit and is refused as Go's typed decoder
    // refuses it.
    const cases: Array<[string, string, string]> = [
      ['POST', 'application/json', `{"metadata":{"name":"ten"},"data":{"k":${deepJson(MAX_DEPTH - 2)}}}`],
      ['PATCH', 'application/merge-patch+json', `{"data":{"k":${deepJson(MAX_DEPTH - 2)}}}`],
      ['PATCH', 'application/strategic-merge-patch+json', `{"data":{"k":${deepJson(MAX_DEPTH - 2)}}}`],
      ['PATCH', 'application/json-patch+json', `[{"op":"add","path":"/data/k","value":${deepJson(MAX_DEPTH - 2)}}]`],
      [
        'PATCH',
        'application/apply-patch+yaml',
        `{"metadata":{"name":"target"},"data":{"k":${deepJson(MAX_DEPTH - 2)}}}`,
      ],
    ];
    for (const [method, type, body] of cases) {
      const path = method === 'POST' ? CM : `${CM}/target?fieldManager=deep`;
      const { r } = await send(method, path, type, body);
      // A JSON Patch is applied before the result is decoded: its wrong type is found by validation (422).
      expect(r.code, `${type}: ${r.body.slice(0, 300)}`).toBe(type === 'application/json-patch+json' ? 422 : 400);
      expect(r.json.message, type).not.toMatch(/exceeded max depth/);
    }
    const typed = await send('POST', CM, 'application/json', `{"metadata":{"name":"ten"},"data":{"k":{"a":1}}}`);
    expect(typed.r.json.message).toBe('json: cannot unmarshal object into Go struct field data.k of type string');
    await alive();
  });

  it('stores, patches and serves a free-form value (ControllerRevision data) nested as deep as the limit', async () => {
    const revisions = `/apis/apps/v1/namespaces/${NS}/controllerrevisions`;
    // An admission policy whose expressions walk the whole value (CEL equality and size), and an audit log.
    const admission = `/apis/${group(c.cp.registry.naming, 'admissionregistration')}/v1`;
    for (const [path, body] of [
      [
        `${admission}/validatingadmissionpolicies`,
        {
          metadata: { name: 'deep' },
          spec: {
            matchConstraints: {
              resourceRules: [
                { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['*'], resources: ['controllerrevisions'] },
              ],
            },
            validations: [{ expression: 'object.data == object.data && size(object.data) >= 0' }],
          },
        },
      ],
      [
        `${admission}/validatingadmissionpolicybindings`,
        { metadata: { name: 'deep' }, spec: { policyName: 'deep', validationActions: ['Deny'] } },
      ],
    ] as const) {
      const r = await admin.postJson(path, body);
      expect(r.code, r.body).toBe(201);
    }
    // The deepest value every patch type can carry (a JSON Patch's operation list holds it two levels down).
    const deep = deepJson(MAX_DEPTH - 2);
    const created = await send(
      'POST',
      revisions,
      'application/json',
      `{"metadata":{"name":"rev"},"revision":1,"data":${deep}}`,
    );
    const answers = [`create ${created.r.code} ${created.r.body.slice(0, 150)}`];
    const patches: Array<[string, string]> = [
      ['application/merge-patch+json', `{"data":${deep}}`],
      ['application/strategic-merge-patch+json', `{"data":${deep}}`],
      ['application/json-patch+json', `[{"op":"replace","path":"/data","value":${deep}}]`],
      [
        'application/apply-patch+yaml',
        `{"apiVersion":"apps/v1","kind":"ControllerRevision","revision":1,"data":${deep}}`,
      ],
    ];
    for (const [type, body] of patches) {
      const { r } = await send('PATCH', `${revisions}/rev?fieldManager=deep`, type, body);
      answers.push(`${type} ${r.code} ${r.body.slice(0, 150)}`);
    }
    for (const accept of ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']) {
      const read = await dev.send({ path: `${revisions}/rev`, headers: { Accept: accept } });
      answers.push(`get as ${accept} ${read.code} ${read.body.length}`);
    }
    // Managed fields are free-form too: a deep FieldsV1 of a client's own is read back as the server reads them.
    const fields = `{"f:data":${deepJson(MAX_DEPTH - 6)}}`;
    const managed = await send(
      'POST',
      revisions,
      'application/json',
      `{"metadata":{"name":"rev-fields","managedFields":[{"manager":"m","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":${fields}}]},"revision":1,"data":{}}`,
    );
    answers.push(`managedFields ${managed.r.code} ${managed.r.body.slice(0, 150)}`);
    const update = await send(
      'PATCH',
      `${revisions}/rev-fields`,
      'application/merge-patch+json',
      '{"metadata":{"labels":{"a":"b"}}}',
    );
    answers.push(`update ${update.r.code} ${update.r.body.slice(0, 150)}`);
    expect(
      answers.every((a) => / 20\d/.test(a)),
      answers.join('\n'),
    ).toBe(true);
    await c.cp.audit?.flush();
    const audited = (await readFile(c.cp.options.auditLogPath ?? '', 'utf8'))
      .split('\n')
      .filter((l) => l.includes('"rev"'));
    expect(audited.length).toBeGreaterThan(0);
    await alive();
  });

  it('refuses a JSON Patch of more than 10,000 operations with 413', async () => {
    const ops = JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/data/k', value: 'v' })));
    const { r } = await send('PATCH', `${CM}/target`, 'application/json-patch+json', ops);
    expect(r.code, r.body.slice(0, 300)).toBe(413);
    expect(r.json.message).toBe('The allowed maximum operations in a JSON patch is 10000, got 10001');
    await alive();
  });

  it('refuses YAML whose aliases expand too much', async () => {
    const laughs = [
      'metadata: {name: laughs}',
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 6 }, (_, i) => {
        const prev = String.fromCharCode(97 + i);
        return `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${prev}`).join(', ')}]`;
      }),
    ].join('\n');
    const { r, ms, heapMb } = await send('POST', CM, 'application/yaml', laughs);
    expect(r.code, r.body.slice(0, 300)).toBe(400);
    expect(r.json.message).toContain('document contains excessive aliasing');
    expect(ms).toBeLessThan(2_000);
    expect(heapMb).toBeLessThan(100);
    await alive();
  });

  it('refuses an integer field written with an exponent or a fraction, as Go decodes it', async () => {
    const pdbs = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;
    for (const written of ['1e2', '100.0', '1E+2']) {
      const r = await admin.postJson(pdbs, `{"metadata":{"name":"pdb"},"spec":{"minAvailable":${written}}}`);
      expect(r.code, r.body.slice(0, 300)).toBe(400);
      expect(r.json.message).toBe(
        `json: cannot unmarshal number ${written} into Go struct field spec.minAvailable of type int32`,
      );
    }
    // A number field keeps its exponent; a plain integer still decodes.
    const ok = await admin.postJson(pdbs, '{"metadata":{"name":"pdb"},"spec":{"minAvailable":100}}');
    expect(ok.code, ok.body.slice(0, 300)).toBe(201);
    const wrongType = await admin.postJson(pdbs, '{"metadata":{"name":"pdb2"},"spec":{"maxUnavailable":true}}');
    // A value of the wrong JSON type fails the decoding too (400), as the reference's int-or-string decoder.
    expect(wrongType.code, wrongType.body.slice(0, 300)).toBe(400);
    expect(wrongType.json.message).toContain("must be an integer or percentage (e.g '5%')");
  });

  it('refuses an unknown YAML tag such as !!js/function', async () => {
    const body = 'metadata: {name: tagged}\ndata:\n  k: !!js/function "function () { return 1 }"\n';
    const { r } = await send('POST', CM, 'application/yaml', body);
    expect(r.code, r.body.slice(0, 300)).toBe(400);
    expect(r.json.message).toContain('!!js/function');
  });
});
