/**
 * The API refuses names that are not names. Every variant of a dot segment or a separator (raw, percent-encoded,
 * double-encoded, mixed case) is sent on the wire exactly as written, in the namespace, name and subresource
 * positions, with every method: each answer is a 400 naming the segment (or a 404 where a raw `/` makes the path
 * name nothing, and in the subresource position, where no such subresource is served: the reference's router has no
 * route for it), and afterwards nothing in the store has changed.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteAPIService } from '../controllers/apiservice/testing.ts';
import { group } from '../src/api/naming.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient, type RawResponse } from './support/raw-https.ts';

/** Segments that are not names, each with the decoded value the server must see and refuse. */
const BAD_SEGMENTS: Array<{ wire: string; decoded: string }> = [
  { wire: '.', decoded: '.' },
  { wire: '..', decoded: '..' },
  { wire: '%2e', decoded: '.' },
  { wire: '%2E%2E', decoded: '..' },
  { wire: '.%2e', decoded: '..' },
  { wire: '%2e.', decoded: '..' },
  { wire: '%252e%252e', decoded: '%2e%2e' },
  { wire: '%252E', decoded: '%2E' },
  { wire: 'a%2Fb', decoded: 'a/b' },
  { wire: '..%2F..', decoded: '../..' },
  { wire: 'a%252Fb', decoded: 'a%2Fb' },
  { wire: '%25', decoded: '%' },
  { wire: 'x%25y', decoded: 'x%y' },
];

/** The reference's answer to a path under a served group version that names nothing it serves. */
const NOT_SERVED = 'the server could not find the requested resource';

interface Target {
  what: 'Namespace' | 'Name' | 'Subresource';
  methods: string[];
  path: (segment: string) => string;
}

describe('names that are not names', () => {
  let c: TestCluster;
  let admin: RawClient;
  let targets: Target[];

  /** Everything the store holds, as one comparable snapshot (object keys and resourceVersions). */
  async function snapshot(): Promise<string[]> {
    const paths = [
      '/api/v1/namespaces',
      '/api/v1/configmaps',
      '/api/v1/secrets',
      '/api/v1/pods',
      `/apis/${group(c.cp.registry.naming, 'rbac.authorization')}/v1/clusterroles`,
    ];
    const keys: string[] = [];
    for (const path of paths) {
      const r = await admin.send({ path });
      expect(r.code, r.body).toBe(200);
      for (const o of r.json.items) {
        keys.push(`${path} ${o.metadata.namespace ?? ''}/${o.metadata.name}@${o.metadata.resourceVersion}`);
      }
    }
    return keys.sort();
  }

  beforeAll(async () => {
    c = await startTestCluster();
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    const rbac = group(c.cp.registry.naming, 'rbac.authorization');
    const create = async (path: string, body: object) => {
      const r = await admin.send({
        method: 'POST',
        path,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.code, r.body).toBe(201);
    };
    await create('/api/v1/namespaces', { metadata: { name: 'other' } });
    await create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'keep' }, data: { a: 'b' } });
    await create('/api/v1/namespaces/other/secrets', { metadata: { name: 'hidden' }, stringData: { k: 'v' } });
    await create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'registry.example.com/app:1' }] },
    });
    const all = ['GET', 'DELETE', 'PUT', 'PATCH', 'POST'];
    targets = [
      { what: 'Namespace', methods: all, path: (s) => `/api/v1/namespaces/${s}/configmaps` },
      { what: 'Namespace', methods: ['GET'], path: (s) => `/api/v1/namespaces/${s}/secrets` },
      { what: 'Namespace', methods: ['GET'], path: (s) => `/api/v1/watch/namespaces/${s}/configmaps` },
      { what: 'Namespace', methods: all, path: (s) => `/api/v1/namespaces/${s}/configmaps/keep` },
      { what: 'Name', methods: all, path: (s) => `/api/v1/namespaces/default/configmaps/${s}` },
      { what: 'Name', methods: all, path: (s) => `/api/v1/namespaces/${s}` },
      { what: 'Name', methods: all, path: (s) => `/apis/${rbac}/v1/clusterroles/${s}` },
      { what: 'Name', methods: ['GET', 'PUT', 'PATCH'], path: (s) => `/api/v1/namespaces/default/pods/${s}/status` },
      { what: 'Subresource', methods: all, path: (s) => `/api/v1/namespaces/default/pods/p/${s}` },
      // The Namespace object's own subresources.
      { what: 'Subresource', methods: all, path: (s) => `/api/v1/namespaces/default/${s}` },
    ];
  });

  afterAll(async () => {
    admin?.close();
    await c?.stop();
  });

  function send(method: string, path: string): Promise<RawResponse> {
    const body = method === 'GET' || method === 'DELETE' ? undefined : '{"metadata":{"name":"keep"},"data":{"x":"y"}}';
    const contentType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    return admin.send({ method, path, headers: { 'Content-Type': contentType }, body, timeoutMs: 5_000 });
  }

  it('answers 400 naming the segment (404 as a subresource), in every position and for every method, and changes nothing', async () => {
    const before = await snapshot();
    const unexpected: string[] = [];
    for (const target of targets) {
      for (const { wire, decoded } of BAD_SEGMENTS) {
        for (const method of target.methods) {
          const path = target.path(wire);
          const r = await send(method, path);
          const [code, expected] =
            target.what === 'Subresource'
              ? [404, NOT_SERVED]
              : [400, `${target.what} parameter invalid: ${JSON.stringify(decoded)}`];
          if (r.code !== code || !String(r.json?.message).startsWith(expected)) {
            unexpected.push(`${method} ${path}: ${r.code} ${r.json?.message ?? r.body}`);
          }
        }
      }
    }
    expect(unexpected).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('names the rule broken', async () => {
    const dots = await send('DELETE', '/api/v1/namespaces/default/configmaps/..');
    expect(dots.json).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: `Name parameter invalid: "..": may not be '..'`,
    });
    const listing = await send('GET', '/api/v1/namespaces/%2e%2e/secrets');
    expect(listing.json.message).toBe(`Namespace parameter invalid: "..": may not be '..'`);
    const both = await send('GET', '/api/v1/namespaces/default/configmaps/a%252F');
    expect(both.json.message).toBe(`Name parameter invalid: "a%2F": may not contain '%'`);
    const sub = await send('GET', '/api/v1/namespaces/default/pods/p/.');
    expect(sub.json).toMatchObject({ code: 404, reason: 'NotFound', message: NOT_SERVED });
  });

  it('a raw slash or an empty segment names nothing: 404, nothing touched', async () => {
    const before = await snapshot();
    for (const path of [
      '/api/v1/namespaces/default/configmaps/keep/../keep',
      '/api/v1/namespaces/default/configmaps/a/b/c',
      '/api/v1/namespaces//configmaps/keep',
      '/api/v1/namespaces/default/configmaps//keep',
    ]) {
      for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
        const r = await send(method, path);
        expect([400, 404], `${method} ${path}: ${r.body}`).toContain(r.code);
      }
    }
    expect(await snapshot()).toEqual(before);
    // The object is still there under its own name.
    expect((await send('GET', '/api/v1/namespaces/default/configmaps/keep')).code).toBe(200);
  });
  it('judges a path only for a user who may make the request: others get 403 first, as the reference authorizes before routing', async () => {
    const remote = 'widgets.remote.example';
    const made = await admin.postJson(
      `/apis/${group(c.cp.registry.naming, 'apiregistration')}/v1/apiservices`,
      remoteAPIService(`${group(c.cp.registry.naming, 'apiregistration')}/v1`, remote, 'v1', {
        namespace: 'default',
        name: 'widgets',
      }),
    );
    expect(made.code, made.body).toBe(201);
    const paths = {
      servedDots: '/apis/apps/v1/namespaces/default/deployments/%2e%2e',
      unservedDots: '/apis/nothing.example.com/v1/namespaces/default/widgets/%2e%2e',
      servedEmpty: '/apis/apps/v1/namespaces//deployments',
      coreEmpty: '/api/v1/namespaces/default/configmaps//keep',
      unservedEmpty: '/apis/nothing.example.com/v1/namespaces//widgets',
      proxiedDots: `/apis/${remote}/v1/namespaces/default/widgets/%2e%2e`,
    };
    const anonymous = RawClient.anonymous(c.cp.url);
    const nobody = await RawClient.fromKubeconfig(
      await c.cp.writeIdentityKubeconfig(join(c.dir, 'nobody.kubeconfig'), { username: 'nobody', groups: [] }),
    );
    const refused: string[] = [];
    const expected: string[] = [];
    try {
      for (const [username, client] of [
        ['system:anonymous', anonymous],
        ['nobody', nobody],
      ] as const) {
        for (const path of Object.values(paths)) {
          const r = await client.send({ path });
          const named = String(r.json?.message).includes(`User "${username}" cannot`);
          refused.push(`${username} ${path}: ${r.code} ${r.json?.reason}${named ? '' : ` ${r.body}`}`);
          expected.push(`${username} ${path}: 403 Forbidden`);
        }
      }
    } finally {
      anonymous.close();
      nobody.close();
    }
    expect(refused).toEqual(expected);
    // The admin, who may, is told what is wrong with each path, as before.
    const plain404 = { code: 404, body: '404 page not found\n' };
    const answers = Object.fromEntries(
      await Promise.all(
        Object.entries(paths).map(async ([what, path]) => {
          const r = await admin.send({ path });
          return [what, { code: r.code, body: r.json?.message ?? r.body }];
        }),
      ),
    );
    expect(answers).toEqual({
      servedDots: { code: 400, body: `Name parameter invalid: "..": may not be '..'` },
      unservedDots: plain404,
      servedEmpty: { code: 404, body: NOT_SERVED },
      coreEmpty: { code: 404, body: NOT_SERVED },
      unservedEmpty: plain404,
      proxiedDots: { code: 400, body: `the path "${paths.proxiedDots}" is not in its normal form` },
    });
    // A proxied path is read as the backend will read it: `namespaces//widgets` lists widgets everywhere, which a
    // user who may get the remote group's `namespaces` (not a step of that path) may not do.
    const rbac = `/apis/${group(c.cp.registry.naming, 'rbac.authorization')}/v1`;
    const role = {
      metadata: { name: 'remote-namespaces' },
      rules: [{ verbs: ['get'], apiGroups: [remote], resources: ['namespaces'] }],
    };
    expect((await admin.postJson(`${rbac}/clusterroles`, role)).code).toBe(201);
    const binding = {
      metadata: { name: 'remote-namespaces' },
      roleRef: {
        apiGroup: group(c.cp.registry.naming, 'rbac.authorization'),
        kind: 'ClusterRole',
        name: role.metadata.name,
      },
      subjects: [{ kind: 'User', apiGroup: group(c.cp.registry.naming, 'rbac.authorization'), name: 'getter' }],
    };
    expect((await admin.postJson(`${rbac}/clusterrolebindings`, binding)).code).toBe(201);
    const getter = await RawClient.fromKubeconfig(
      await c.cp.writeIdentityKubeconfig(join(c.dir, 'getter.kubeconfig'), { username: 'getter', groups: [] }),
    );
    try {
      const everywhere = await getter.send({ path: `/apis/${remote}/v1/namespaces//widgets` });
      expect(everywhere.json?.message, everywhere.body).toBe(
        `widgets.${remote} is forbidden: User "getter" cannot list resource "widgets" in API group "${remote}" at the cluster scope`,
      );
    } finally {
      getter.close();
    }
  });
});
