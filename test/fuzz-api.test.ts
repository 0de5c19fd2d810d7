/**
 * Bad input, property-based: random requests against every endpoint of the embedded control plane (each
 * resource's collection, items and subresources, with every method), with bodies of wrong types, huge strings
 * and numbers, deep nesting and non-objects in every content and patch type; random query parameters
 * (selectors, resourceVersions, limits, continue tokens, options); random headers; random names. Every request
 * must be answered (no hang, no dropped connection) and never with a 5xx; every refusal is a Status naming what
 * was wrong.
 *
 * Each property runs twice: with a fixed seed (the same requests every time) and with a random one, printed by
 * fast-check on failure (`seed: ...` in the error) so that a failure can be replayed with `FUZZ_SEED=<seed>`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import type { ResourceType } from '../src/api/registry.ts';
import { apiVersionOf } from '../src/api/registry.ts';
import { type Node, schemaFor } from '../src/api/schema.ts';
import { decodeKubernetesProtobuf, PROTOBUF_MEDIA_TYPE } from '../src/controlplane/protobuf/index.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient, type RawResponse } from './support/raw-https.ts';

const FIXED_SEED = 20261125;
const RANDOM_SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const NAMESPACE = 'fuzz';
/** The name of the objects made from `examples/` before fuzzing, so that writes reach objects that exist. */
const EXISTING = 'x';
const EXAMPLES = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples');

const CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
  'application/apply-patch+yaml',
  'application/vnd.kubernetes.protobuf',
  'text/plain',
  'application/json; charset=utf-16',
  '',
];

/** Values that break naive handling: extremes, wrong types, lookalikes of valid values. */
const NASTY_VALUES: unknown[] = [
  1e308,
  -1e308,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53 + 2,
  2 ** 64,
  1.5,
  -1,
  0,
  '',
  '1e308',
  '50%',
  '101%',
  '-1%',
  '1e308%',
  'abc%',
  '%',
  'x'.repeat(70_000),
  {},
  [],
  null,
  true,
  [null],
  { $patch: 'delete' },
  { 'a.b': { '': null } },
  '\u0000',
  '\ud800',
];

const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const NASTY_TEXT_BODIES: string[] = [
  '',
  '{',
  '[',
  'null',
  '42',
  '"a string"',
  '[]',
  '[1, 2]',
  'true',
  '1e999',
  '-',
  '{"a":1,"a":2}',
  '\u0000',
  '['.repeat(100_000),
  '{"a":'.repeat(20_000),
  '- '.repeat(5_000),
  // YAML alias expansion ("billion laughs").
  'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  '--- 1\n--- 2\n',
  '!!binary AAAA',
  '\x0a\x08k8s\x00',
];

/** Requests that once answered 500, replayed first by every run. */
const REGRESSIONS = [
  ...['42', '[1]', 'null', '"text"'].map((body) => ({
    method: 'PATCH',
    path: `/api/v1/namespaces/${NAMESPACE}/configmaps/not-there-yet?fieldManager=fuzz`,
    contentType: 'application/apply-patch+yaml',
    headers: {},
    body,
  })),
  {
    method: 'POST',
    path: '/apis/authentication.orch.io/v1/tokenreviews',
    contentType: 'application/json',
    headers: {},
    body: '{"spec":{"token":[false,1e213]}}',
  },
  { method: 'DELETE', path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, contentType: '', headers: {}, body: 'null' },
  {
    method: 'POST',
    path: `/api/v1/namespaces/${NAMESPACE}/pods`,
    contentType: 'application/yaml',
    headers: {},
    body: '!!binary AAAA',
  },
];

/** Every field path of a schema (lists as `[0]`, maps as `.key`), to aim wrong values at real fields. */
function fieldPaths(node: Node | undefined, prefix: string[] = [], depth = 0, out: string[][] = []): string[][] {
  if (!node || typeof node === 'string' || depth > 6) return out;
  if ('object' in node) {
    for (const [name, child] of Object.entries(node.object)) {
      const path = [...prefix, name];
      out.push(path);
      fieldPaths(child, path, depth + 1, out);
    }
  } else if ('list' in node) fieldPaths(node.list, [...prefix, '0'], depth + 1, out);
  else fieldPaths(node.map, [...prefix, 'key'], depth + 1, out);
  return out;
}

function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let cursor: Record<string, unknown> = target;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) {
      cursor[key] = value;
      return;
    }
    const next = cursor[key];
    if (next === null || typeof next !== 'object') cursor[key] = /^\d+$/.test(path[i + 1]) ? [] : {};
    cursor = cursor[key] as Record<string, unknown>;
  }
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

function describeRequest(r: FuzzRequest): string {
  const shown = Buffer.isBuffer(r.body) ? `0x${r.body.toString('hex')}` : r.body;
  const body = shown === undefined ? '' : ` body(${r.body?.length}): ${shown.slice(0, 300)}`;
  return `${r.method} ${r.path.slice(0, 300)} ${JSON.stringify(r.headers).slice(0, 300)}${body}`;
}

describe('bad input, property-based, over every endpoint', () => {
  let c: TestCluster;
  let admin: RawClient;
  let resources: ResourceType[];

  beforeAll(async () => {
    c = await startTestCluster({ flavor: 'orch' });
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    resources = c.cp.registry.all.filter((rt) => rt.verbs.length > 0 || rt.virtual);
    const r = await admin.send({
      method: 'POST',
      path: '/api/v1/namespaces',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: NAMESPACE } }),
    });
    expect(r.code, r.body).toBe(201);
    // One object named `x` of each example kind (APIServices left out: one would take its group off this server).
    let created = 0;
    for (const file of (await readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml'))) {
      for (const doc of parseAllDocuments(await readFile(join(EXAMPLES, file), 'utf8'))) {
        const obj = doc.toJS() as { apiVersion: string; kind: string; metadata: Record<string, unknown> };
        const rt = c.cp.registry.kind(obj.apiVersion, obj.kind);
        if (!rt || rt.kind === 'Namespace' || rt.kind === 'APIService') continue;
        obj.metadata = { ...obj.metadata, name: EXISTING, namespace: rt.namespaced ? NAMESPACE : undefined };
        const base = rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
        const made = await admin.send({
          method: 'POST',
          path: `${base}${rt.namespaced ? `/namespaces/${NAMESPACE}` : ''}/${rt.plural}`,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(obj),
        });
        if (made.code === 201) created++;
      }
    }
    expect(created).toBeGreaterThan(10);
  });

  afterAll(async () => {
    admin?.close();
    await c?.stop();
  });

  const name = () =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constant(EXISTING) },
      fc.constantFrom(
        'x',
        'fz-1',
        'default',
        '.',
        '..',
        '%2e%2e',
        '%2F',
        'a%00b',
        '%C3%28',
        '%',
        'A_B',
        '-x',
        'x'.repeat(300),
      ),
      fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s)),
      fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/),
    );

  /** Mostly the content types a method takes, sometimes any. */
  const contentType = (method: string) =>
    fc.oneof(
      {
        weight: 4,
        arbitrary: fc.constantFrom(...(method === 'PATCH' ? CONTENT_TYPES.slice(2, 6) : CONTENT_TYPES.slice(0, 2))),
      },
      { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    );

  /** A path naming an endpoint: a collection, an item or a subresource of a resource, in a random namespace. */
  const endpoint = () =>
    fc
      .record({
        rt: fc.constantFrom(...resources),
        shape: fc.constantFrom('collection', 'item', 'item', 'subresource', 'watch'),
        namespace: fc.oneof({ weight: 8, arbitrary: fc.constant(NAMESPACE) }, { weight: 1, arbitrary: name() }),
        name: name(),
        subresource: fc.oneof(fc.constantFrom('status', 'scale', 'approval', 'eviction', 'token', 'bogus'), name()),
        served: fc.nat(9),
      })
      .map(({ rt, shape, namespace, name, subresource, served }) => {
        const base = rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
        const scope = rt.namespaced ? `/namespaces/${namespace}` : '';
        const watch = shape === 'watch' ? '/watch' : '';
        let path = `${base}${watch}${scope}/${rt.plural}`;
        if (shape === 'item' || shape === 'subresource') path += `/${name}`;
        // Mostly a subresource the resource serves, sometimes another.
        const own = rt.subresources.length && served < 7 ? rt.subresources[served % rt.subresources.length] : undefined;
        if (shape === 'subresource') path += `/${own ?? subresource}`;
        return { rt, path, name, shape };
      });

  /** A body for a resource: a plausible object with one field set to a nasty value, or nasty text. */
  const body = (rt: ResourceType, objectName: string) =>
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .record({
            path: fc.constantFrom(...fieldPaths(schemaFor(rt.kind, apiVersionOf(rt))), ['spec'], ['metadata']),
            value: fc.oneof(fc.constantFrom(...NASTY_VALUES), fc.jsonValue({ maxDepth: 3 })),
          })
          .map(({ path, value }) => {
            const obj: Record<string, unknown> = {
              apiVersion: apiVersionOf(rt),
              kind: rt.kind,
              metadata: { name: decodeURIComponentSafe(objectName) },
            };
            setAt(obj, path, value);
            return JSON.stringify(obj);
          }),
      },
      { weight: 1, arbitrary: fc.constantFrom(...NASTY_TEXT_BODIES) },
      // Protobuf: the envelope's magic, then random bytes.
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.concat([PROTOBUF_MAGIC, b])) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
      {
        weight: 1,
        arbitrary: fc
          .array(
            fc.record({
              op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', ''),
              path: fc.constantFrom(
                '/spec',
                '/metadata/name',
                '/metadata/labels/a',
                '/x/0',
                '/',
                '',
                '~2',
                '/a~1b',
                'no-slash',
                '/metadata/finalizers/-',
              ),
              from: fc.constantFrom('/spec', '/metadata', '', '/nope'),
              value: fc.constantFrom(...NASTY_VALUES),
            }),
            { maxLength: 4 },
          )
          .map((ops) => JSON.stringify(ops)),
      },
    );

  const query = () =>
    fc
      .dictionary(
        fc.constantFrom(
          'labelSelector',
          'fieldSelector',
          'resourceVersion',
          'resourceVersionMatch',
          'limit',
          'continue',
          'timeoutSeconds',
          'watch',
          'allowWatchBookmarks',
          'sendInitialEvents',
          'dryRun',
          'fieldManager',
          'fieldValidation',
          'propagationPolicy',
          'gracePeriodSeconds',
          'orphanDependents',
          'force',
          'pretty',
          'includeObject',
          'shardRange',
          'bogus',
        ),
        fc.oneof(
          fc.constantFrom(
            '',
            '-1',
            '0',
            '1',
            'abc',
            '1e3',
            '99999999999999999999',
            'true',
            'All',
            'Strict',
            'Exact',
            'NotOlderThan',
            'Orphan',
            'a=b',
            'a in (',
            '!a,b notin (x,y)',
            'a==b,c!=d',
            'metadata.name=x',
            'spec.nodeName!=',
            'eyJydiI6MSwic3RhcnQiOiJ4In0',
            '%%%',
            'x'.repeat(10_000),
          ),
          fc.string({ maxLength: 40 }),
        ),
        { maxKeys: 3 },
      )
      .map((q) => {
        // A watch is an endless stream: keep it short, the answer that matters is its first response.
        if (q.watch !== undefined) q.timeoutSeconds = '1';
        return new URLSearchParams(q).toString();
      });

  /** An Accept header, impersonation headers (allowed, refused or malformed), or both. */
  const headers = () =>
    fc
      .record({
        accept: fc.option(
          fc.constantFrom(
            'application/json',
            'application/yaml',
            'application/json;as=Table;v=v1;g=meta.k8s.io',
            'application/json;as=Table;v=v1;g=meta.orch.io',
            'application/vnd.kubernetes.protobuf',
            'text/html',
            '*/*',
            ',,;;',
          ),
          { nil: undefined },
        ),
        impersonation: fc.option(
          fc.constantFrom<Record<string, string>[]>(
            { 'Impersonate-User': 'bob' },
            { 'Impersonate-User': 'system:serviceaccount:fuzz:x', 'Impersonate-Group': 'system:masters' },
            { 'Impersonate-User': 'system:anonymous' },
            { 'Impersonate-User': 'fz', 'Impersonate-Extra-%zz': 'v', 'Impersonate-Uid': '1' },
            { 'Impersonate-Group': 'devs' },
          ),
          { nil: {}, freq: 2 },
        ),
      })
      .map(({ accept, impersonation }) => ({ ...(accept ? { Accept: accept } : {}), ...impersonation }));

  /** Discovery, OpenAPI, health and version, with a random tail sometimes. */
  const nonResourcePath = () =>
    fc
      .tuple(
        fc.constantFrom(
          '/api',
          '/api/v1',
          '/apis',
          '/apis/apps',
          '/apis/apps/v1',
          '/openapi/v3',
          '/openapi/v3/api/v1',
          '/openapi/v2',
          '/version',
          '/healthz',
          '/livez',
          '/readyz',
          '/metrics',
          '/',
        ),
        fc.option(name(), { nil: undefined, freq: 2 }),
      )
      .map(([base, tail]) => (tail === undefined ? base : `${base}/${tail}`));

  const request = () =>
    fc.oneof(
      { weight: 12, arbitrary: resourceRequest() },
      {
        weight: 1,
        arbitrary: fc.record({
          method: fc.constantFrom(...METHODS),
          path: fc
            .tuple(nonResourcePath(), fc.option(query(), { nil: '', freq: 2 }))
            .map(([p, q]) => (q ? `${p}?${q}` : p)),
          contentType: fc.constantFrom(...CONTENT_TYPES),
          headers: fc.option(headers(), { nil: {}, freq: 3 }),
          body: fc.option(fc.constantFrom(...NASTY_TEXT_BODIES), { nil: undefined, freq: 3 }),
        }),
      },
    );

  const resourceRequest = () =>
    fc.tuple(endpoint(), fc.nat(99)).chain(([{ rt, path, name, shape }, dice]) => {
      // Mostly the methods the path serves (writes to collections, reads and writes to items), sometimes any.
      const served =
        shape === 'item' || shape === 'subresource' ? ['GET', 'PUT', 'PATCH', 'DELETE'] : ['GET', 'POST', 'DELETE'];
      const method = dice < 85 ? served[dice % served.length] : METHODS[dice % METHODS.length];
      return fc.record({
        method: fc.constant(method),
        path: fc.option(query(), { nil: '', freq: 2 }).map((q) => (q ? `${path}?${q}` : path)),
        contentType: contentType(method),
        headers: fc.option(headers(), { nil: {}, freq: 4 }),
        body: fc.option(body(rt, name), { nil: undefined, freq: 8 }),
      });
    });

  /** A 5xx, a dropped or unanswered request, or a refusal that is not a Status naming a reason. */
  async function misbehaves(r: FuzzRequest): Promise<string | undefined> {
    let res: RawResponse;
    try {
      res = await admin.send({ ...r, headersOnly: true, timeoutMs: 15_000 });
    } catch (err) {
      return `no answer: ${(err as Error).message}`;
    }
    const status = statusOf(res);
    // The one 5xx the contract asks for: a resourceVersion ahead of the store is a 504 to retry (spec §4).
    const aheadOfStore = res.code === 504 && status?.details?.causes?.[0]?.reason === 'ResourceVersionTooLarge';
    if (res.code >= 500 && !aheadOfStore) return `${res.code}: ${res.body.slice(0, 500)}`;
    // A path no API serves gets the reference's plain-text answer, an OpenAPI document it lacks an empty 404.
    const pageNotFound =
      res.code === 404 && (res.body === '404 page not found\n' || (r.path.startsWith('/openapi/') && res.body === ''));
    if (res.code >= 400 && !pageNotFound && (status?.kind !== 'Status' || !status.message || !status.reason)) {
      return `${res.code} without a Status naming what was wrong: ${res.body.slice(0, 300)}`;
    }
    return undefined;
  }

  it('refuses known bad values naming the field and the rule', async () => {
    const cases: Array<{ path: string; body: object; code: number; message: string }> = [
      // Written with an exponent, 1e308 is no integer to Go's decoder: refused as it decodes, before validation.
      ...['minAvailable', 'maxUnavailable'].map((field) => ({
        path: `/apis/policy/v1/namespaces/${NAMESPACE}/poddisruptionbudgets`,
        body: { metadata: { name: 'pdb-out-of-range' }, spec: { [field]: 1e308 } },
        code: 400,
        message: `json: cannot unmarshal number 1e+308 into Go struct field spec.${field} of type int32`,
      })),
      ...[2 ** 31, -(2 ** 31) - 1].flatMap((n) =>
        ['minAvailable', 'maxUnavailable'].map((field) => ({
          path: `/apis/policy/v1/namespaces/${NAMESPACE}/poddisruptionbudgets`,
          body: { metadata: { name: 'pdb-out-of-range' }, spec: { [field]: n } },
          // Out of int32 is refused as the object decodes, as the reference's decoder does.
          code: 400,
          message: `spec.${field}: Invalid value: ${n}: must be a 32-bit integer`,
        })),
      ),
      {
        path: `/apis/policy/v1/namespaces/${NAMESPACE}/poddisruptionbudgets`,
        body: { metadata: { name: 'pdb-malformed' }, spec: { minAvailable: '1e308%' } },
        code: 422,
        message: 'spec.minAvailable: Invalid value: "1e308%": a valid percent string must be',
      },
      {
        path: `/apis/rbac.authorization.orch.io/v1/clusterrolebindings`,
        body: {
          metadata: { name: 'crb-typed', finalizers: 'not-a-list' },
          roleRef: { kind: 'ClusterRole', name: 'x' },
        },
        code: 400,
        message: 'metadata.finalizers: Invalid value: "not-a-list": must be of type array',
      },
    ];
    for (const k of cases) {
      const r = await admin.send({
        method: 'POST',
        path: k.path,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(k.body),
      });
      expect(r.code, r.body).toBe(k.code);
      expect(r.json.message).toContain(k.message);
    }
    const apply = await admin.send({
      method: 'PATCH',
      path: `/api/v1/namespaces/${NAMESPACE}/configmaps/fresh?fieldManager=fuzz`,
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: '42',
    });
    expect(apply.code).toBe(400);
    expect(apply.json.message).toBe('the apply configuration must be an object');
    const deleteOptions = await admin.send({
      method: 'DELETE',
      path: `/api/v1/namespaces/${NAMESPACE}/configmaps`,
      headers: { 'Content-Type': 'application/json' },
      body: '{"gracePeriodSeconds":"soon"}',
    });
    expect(deleteOptions.code).toBe(422);
    expect(deleteOptions.json.message).toContain('gracePeriodSeconds: Invalid value: "soon": must be of type integer');
  });

  for (const [label, seed] of [
    ['fixed', FIXED_SEED],
    ['random', RANDOM_SEED],
  ] as const) {
    it(`answers every request with a 2xx or a 4xx Status (${label} seed ${seed})`, { timeout: 120_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(request(), async (q) => {
          // Binary bodies are protobuf envelopes: sent as such, so that they reach the protobuf decoder.
          const type = Buffer.isBuffer(q.body) ? 'application/vnd.kubernetes.protobuf' : q.contentType;
          const headersWithType = type ? { ...q.headers, 'Content-Type': type } : q.headers;
          const r: FuzzRequest = { method: q.method, path: q.path, headers: headersWithType, body: q.body };
          const problem = await misbehaves(r);
          if (problem) throw new Error(`${describeRequest(r)}\n→ ${problem}`);
        }),
        { seed, numRuns: RUNS, endOnFailure: true, examples: REGRESSIONS.map((r) => [r] as [typeof r]) },
      );
      // The server is still up and answers.
      expect((await admin.send({ path: '/readyz' })).code).toBe(200);
    });
  }
});

/**
 * The answer's body in its JSON form: a client that asked for YAML or protobuf first gets its Status so, as from the
 * reference; undefined for a body that is none of them.
 */
function statusOf(res: RawResponse): any {
  const type = String(res.headers['content-type']);
  try {
    if (type.startsWith('application/yaml')) return parseYaml(res.body);
    if (type.startsWith(PROTOBUF_MEDIA_TYPE)) return decodeKubernetesProtobuf(res.bytes ?? Buffer.alloc(0));
  } catch {
    return undefined;
  }
  return res.json;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
