/**
 * Authorization of the embedded control plane end to end: RBAC over real HTTPS requests from several
 * identities (client certificates and static tokens), the review endpoints, and kubectl's `auth can-i`.
 * The wiring is done here the way the control plane does it: the authorizer is passed as the `authorize`
 * option, the default policy is seeded, and the reviewer is set on the API server. Every flavor is exercised;
 * kubectl only in the `kubernetes` one, since its typed clients post reviews to the reference's own groups.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { FLAVORS, type FlavorName, group } from '../src/api/naming.ts';
import { KubeClient } from '../src/client/client.ts';
import { StatusError } from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { defaultPolicy, RbacAuthorizer, requestAuthorizer } from '../src/controlplane/authz/rbac.ts';
import { createReviewer } from '../src/controlplane/authz/reviews.ts';
import { writeKubeconfig } from '../src/controlplane/kubeconfig.ts';
import type { RequestAuthorizer } from '../src/controlplane/request-info.ts';
import { createLogger } from '../src/log/logger.ts';
import { createSelfSignedCa, issueKeyAndCertificate } from '../src/pki/certs.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, KUBECTL } from './support/kubectl.ts';

const TOKEN = 'tok-3nv9-q7';

describe.each(FLAVORS)('authorization (%s flavor)', (flavor: FlavorName) => {
  let c: TestCluster;
  let dir: string;
  let rbac: string;
  let certificates: string;
  let authorization: string;
  let authentication: string;
  const kubeconfigs: Record<string, string> = {};
  const clients: Record<string, KubeClient> = {};

  function clientFor(kc: KubeConfig): KubeClient {
    return new KubeClient(kc, c.cp.registry, { qps: 0, maxRetries: 0 });
  }

  function fromFile(path: string): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    return clientFor(kc);
  }

  /** A client with no client certificate, and a bearer token when given. */
  function bare(token?: string): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'c', server: c.cp.url, caData: Buffer.from(c.cp.caPem).toString('base64'), skipTLSVerify: false },
      ],
      users: [{ name: 'u', ...(token ? { token } : {}) }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return clientFor(kc);
  }

  /** The HTTP code and message of a call: 2xx codes as they come, failures from their Status. */
  async function outcome(p: Promise<{ status: number }>): Promise<{ code: number; message?: string }> {
    try {
      return { code: (await p).status };
    } catch (err) {
      if (!(err instanceof StatusError)) throw err;
      return { code: err.code, message: err.message };
    }
  }

  /** A GET over plain HTTPS with an identity's kubeconfig credentials, for non-JSON answers. */
  async function rawGet(who: string, path: string): Promise<{ code: number; body: string }> {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigs[who]);
    const options: RequestOptions = {};
    Object.assign(options, (await kc.credentials()).tls);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(`${c.cp.url}${path}`, options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** A client presenting a client certificate (and trusting the cluster's serving CA). */
  function withCertificate(cert: { certPem: string; keyPem: string }): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: c.cp.url, caData: Buffer.from(c.cp.caPem).toString('base64') }],
      users: [
        {
          name: 'u',
          certData: Buffer.from(cert.certPem).toString('base64'),
          keyData: Buffer.from(cert.keyPem).toString('base64'),
        },
      ],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return clientFor(kc);
  }

  const get = (who: string, path: string) => outcome(clients[who].request('GET', path));
  const post = (who: string, path: string, body: unknown) => outcome(clients[who].request('POST', path, { body }));

  async function create<T = KubeObject>(who: string, path: string, body: unknown): Promise<T> {
    return (await clients[who].request<T>('POST', path, { body })).body;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `authz-${flavor}-`));
    const tokenAuthFile = join(dir, 'tokens.csv');
    await writeFile(tokenAuthFile, `${TOKEN},tina,uid-77,"qa,testers"\n`);
    let authorize: RequestAuthorizer = async () => {
      throw new Error('the authorizer is not wired yet');
    };
    c = await startTestCluster({
      flavor,
      tokenAuthFile,
      authorize: (user, info, method) => authorize(user, info, method),
    });
    const { cp } = c;
    const n = cp.registry.naming;
    rbac = group(n, 'rbac.authorization');
    certificates = group(n, 'certificates');
    authorization = group(n, 'authorization');
    authentication = group(n, 'authentication');

    // The wiring under test.
    // (skipping what the control plane may already have seeded itself)
    for (const obj of defaultPolicy(n)) {
      if (!cp.storage.get(cp.registry.kind(obj.apiVersion!, obj.kind!)!, obj.metadata.name!)) await cp.seed(obj);
    }
    const authz = new RbacAuthorizer(cp.storage, cp.registry);
    authorize = requestAuthorizer(authz);
    cp.api.reviewer = createReviewer({ authorizer: authz, naming: n, lookup: (t) => cp.tokens.lookup(t) });

    kubeconfigs.admin = c.kubeconfig;
    kubeconfigs.alice = await cp.writeIdentityKubeconfig(join(dir, 'alice.kubeconfig'), {
      username: 'alice',
      groups: [],
    });
    kubeconfigs.bob = await cp.writeIdentityKubeconfig(join(dir, 'bob.kubeconfig'), {
      username: 'bob',
      groups: ['devs'],
    });
    kubeconfigs.tina = join(dir, 'tina.kubeconfig');
    await writeKubeconfig(kubeconfigs.tina, {
      server: cp.url,
      caPem: cp.caPem,
      user: { name: 'tina', token: TOKEN },
      clusterName: 'embedded',
      contextName: 'tina@embedded',
    });
    for (const who of ['admin', 'alice', 'bob', 'tina']) clients[who] = fromFile(kubeconfigs[who]);

    const rbacPath = `/apis/${rbac}/v1`;
    for (const name of ['team-a', 'team-b']) await create('admin', '/api/v1/namespaces', { metadata: { name } });
    await create('admin', '/api/v1/namespaces/team-a/pods', {
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'c', image: 'img' }] },
    });
    await create('admin', `${rbacPath}/namespaces/team-a/roles`, {
      metadata: { name: 'pod-reader' },
      rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }],
    });
    await create('admin', `${rbacPath}/namespaces/team-a/rolebindings`, {
      metadata: { name: 'alice-pods' },
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'alice' }],
    });
    await create('admin', `${rbacPath}/clusterroles`, {
      metadata: { name: 'pod-lister' },
      rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }],
    });
    await create('admin', `${rbacPath}/namespaces/team-a/rolebindings`, {
      metadata: { name: 'qa-pods' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'pod-lister' },
      subjects: [{ kind: 'Group', apiGroup: rbac, name: 'qa' }],
    });
  });

  afterAll(async () => {
    await c?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('RBAC over HTTPS', () => {
    it('lets the admin (system:masters) do everything', async () => {
      expect(await get('admin', '/api/v1/pods')).toEqual({ code: 200 });
      expect(await post('admin', '/api/v1/namespaces/team-b/configmaps', { metadata: { name: 'cm' } })).toEqual({
        code: 201,
      });
      expect(await get('admin', `/apis/${certificates}/v1/certificatesigningrequests`)).toEqual({ code: 200 });
      expect(await get('admin', '/version')).toEqual({ code: 200 });
      // authorized, merely not served
      expect((await get('admin', '/metrics')).code).toBe(404);
      const roles = await clients.admin.request<{ items: KubeObject[] }>('GET', `/apis/${rbac}/v1/clusterroles`);
      expect(roles.body.items.map((r) => r.metadata.name)).toEqual(
        expect.arrayContaining(['cluster-admin', 'system:discovery', 'system:basic-user', 'pod-lister']),
      );
    });

    it('lets a user bound to a Role list pods in its namespace only, with the reference messages elsewhere', async () => {
      expect(await get('alice', '/api/v1/namespaces/team-a/pods')).toEqual({ code: 200 });
      expect(await get('alice', '/api/v1/namespaces/team-a/pods/web')).toEqual({ code: 200 });
      expect(await get('alice', '/api/v1/namespaces/team-a/pods/missing')).toMatchObject({ code: 404 });
      expect(await get('alice', '/api/v1/namespaces/team-b/pods')).toEqual({
        code: 403,
        message:
          'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"',
      });
      expect(await get('alice', '/api/v1/pods')).toEqual({
        code: 403,
        message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope',
      });
      expect(await get('alice', '/api/v1/namespaces/team-b/pods/web')).toEqual({
        code: 403,
        message:
          'pods "web" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"',
      });
      expect(await post('alice', '/api/v1/namespaces/team-a/pods', { metadata: { name: 'x' } })).toEqual({
        code: 403,
        message:
          'pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "team-a"',
      });
      expect(await get('alice', '/api/v1/namespaces/team-a')).toEqual({
        code: 403,
        message:
          'namespaces "team-a" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "team-a"',
      });
      expect(await get('alice', '/apis/apps/v1/namespaces/team-a/deployments')).toEqual({
        code: 403,
        message:
          'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" in the namespace "team-a"',
      });
      const approval = `/apis/${certificates}/v1/certificatesigningrequests/csr-1/approval`;
      expect(await outcome(clients.alice.request('PUT', approval, { body: { metadata: { name: 'csr-1' } } }))).toEqual({
        code: 403,
        message: `certificatesigningrequests.${certificates} "csr-1" is forbidden: User "alice" cannot update resource "certificatesigningrequests/approval" in API group "${certificates}" at the cluster scope`,
      });
      expect(await get('alice', '/metrics')).toEqual({
        code: 403,
        message: 'forbidden: User "alice" cannot get path "/metrics"',
      });
    });

    it('answers with the reference Status body', async () => {
      const err = await clients.alice
        .request('GET', '/api/v1/namespaces/team-b/pods/web')
        .catch((e) => e as StatusError);
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).status).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'pods "web" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"',
        reason: 'Forbidden',
        details: { name: 'web', kind: 'pods' },
        code: 403,
      });
    });

    it('lets every authenticated user do discovery and health checks', async () => {
      for (const path of ['/api', '/api/v1', '/apis', '/apis/apps/v1', '/version', '/openapi/v3']) {
        expect([path, await get('bob', path)]).toEqual([path, { code: 200 }]);
      }
      // health answers plain text, so it is read raw
      expect(await rawGet('bob', '/healthz')).toEqual({ code: 200, body: 'ok' });
      expect(await rawGet('bob', '/livez')).toEqual({ code: 200, body: 'ok' });
    });

    it('applies grants and revocations to the very next request', async () => {
      const message =
        'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "team-b"';
      expect(await get('bob', '/api/v1/namespaces/team-b/pods')).toEqual({ code: 403, message });
      const bindings = `/apis/${rbac}/v1/namespaces/team-b/rolebindings`;
      await create('admin', bindings, {
        metadata: { name: 'devs-pods' },
        roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'pod-lister' },
        subjects: [{ kind: 'Group', apiGroup: rbac, name: 'devs' }],
      });
      expect(await get('bob', '/api/v1/namespaces/team-b/pods')).toEqual({ code: 200 });
      // the ClusterRole is granted only inside the binding's namespace
      expect((await get('bob', '/api/v1/namespaces/team-a/pods')).code).toBe(403);
      await clients.admin.request('DELETE', `${bindings}/devs-pods`);
      expect(await get('bob', '/api/v1/namespaces/team-b/pods')).toEqual({ code: 403, message });
    });
  });

  describe('authentication', () => {
    it('serves requests without credentials as system:anonymous: public health and version only', async () => {
      const anonymous = bare();
      expect(await outcome(anonymous.request('GET', '/api/v1/namespaces'))).toEqual({
        code: 403,
        message:
          'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      });
      expect(await outcome(anonymous.request('GET', '/api/v1/namespaces/team-a/pods/web'))).toEqual({
        code: 403,
        message:
          'pods "web" is forbidden: User "system:anonymous" cannot get resource "pods" in API group "" in the namespace "team-a"',
      });
      // Discovery and OpenAPI are for authenticated users (system:discovery), as in the reference.
      for (const path of ['/api', '/apis', '/api/v1', '/openapi/v2']) {
        expect(await outcome(anonymous.request('GET', path)), path).toEqual({
          code: 403,
          message: `forbidden: User "system:anonymous" cannot get path "${path}"`,
        });
      }
      const whoami = () =>
        outcome(
          anonymous.request('POST', `/apis/${authentication}/v1/selfsubjectreviews`, {
            body: { apiVersion: `${authentication}/v1`, kind: 'SelfSubjectReview' },
          }),
        );
      expect(await whoami()).toEqual({
        code: 403,
        message: `selfsubjectreviews.${authentication} is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "${authentication}" at the cluster scope`,
      });
      // Of the bootstrap bindings, only system:public-info-viewer names anonymous requests, as in the reference.
      type Binding = { metadata: { name: string }; subjects?: Array<{ name: string }> };
      const bindings = await clients.admin.request<{ items: Binding[] }>('GET', `/apis/${rbac}/v1/clusterrolebindings`);
      const anonymousOnes = bindings.body.items.filter((b) =>
        b.subjects?.some((s) => s.name === 'system:unauthenticated' || s.name === 'system:anonymous'),
      );
      expect(anonymousOnes.map((b) => b.metadata.name)).toEqual(['system:public-info-viewer']);
      for (const path of ['/version', '/healthz', '/livez', '/readyz']) {
        expect(await outcome(anonymous.request('GET', path, { decode: String })), path).toEqual({ code: 200 });
      }
    });

    it('answers 401, not anonymous, to credentials it refuses: an unknown token, a certificate of another CA', async () => {
      for (const path of ['/api', '/healthz', '/version']) {
        expect(await outcome(bare('not-a-token').request('GET', path)), path).toEqual({
          code: 401,
          message: 'Unauthorized',
        });
      }
      const otherCa = await createSelfSignedCa({ commonName: 'other-ca' });
      const mallory = await issueKeyAndCertificate({
        ca: otherCa,
        subject: { commonName: 'mallory', organizations: ['system:masters'] },
        usages: ['client auth'],
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 3600_000),
      });
      for (const path of ['/api/v1/namespaces', '/healthz']) {
        expect(await outcome(withCertificate(mallory).request('GET', path)), path).toEqual({
          code: 401,
          message: 'Unauthorized',
        });
      }
    });

    it('serves a certificate of the cluster CA without a common name as system:anonymous, its groups ignored', async () => {
      const nameless = await issueKeyAndCertificate({
        ca: c.cp.clusterCa,
        subject: { commonName: '', organizations: ['system:masters'] },
        usages: ['client auth'],
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 3600_000),
      });
      const client = withCertificate(nameless);
      expect(await outcome(client.request('GET', '/api/v1/namespaces'))).toEqual({
        code: 403,
        message:
          'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      });
      expect(await outcome(client.request('GET', '/healthz', { decode: String }))).toEqual({ code: 200 });
    });

    it('who anonymous is: system:anonymous in system:unauthenticated, once allowed to ask', async () => {
      const name = 'anonymous-whoami';
      await create('admin', `/apis/${rbac}/v1/clusterrolebindings`, {
        metadata: { name },
        roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'system:basic-user' },
        subjects: [{ kind: 'Group', apiGroup: rbac, name: 'system:unauthenticated' }],
      });
      try {
        const review = await bare().request<{ status: { userInfo: unknown } }>(
          'POST',
          `/apis/${authentication}/v1/selfsubjectreviews`,
          { body: { apiVersion: `${authentication}/v1`, kind: 'SelfSubjectReview' } },
        );
        expect(review.body.status.userInfo).toEqual({
          username: 'system:anonymous',
          groups: ['system:unauthenticated'],
        });
      } finally {
        await clients.admin.request('DELETE', `/apis/${rbac}/v1/clusterrolebindings/${name}`);
      }
    });

    it('accepts a bearer token from the token file, authorizing its user and groups', async () => {
      expect(await outcome(bare(TOKEN).request('GET', '/api/v1/namespaces/team-a/pods'))).toEqual({ code: 200 });
      expect(await get('tina', '/api/v1/namespaces/team-b/pods')).toEqual({
        code: 403,
        message: 'pods is forbidden: User "tina" cannot list resource "pods" in API group "" in the namespace "team-b"',
      });
    });
  });

  describe('review resources over HTTPS', () => {
    const authzPath = () => `/apis/${authorization}/v1`;

    it('SelfSubjectAccessReview answers for the caller', async () => {
      const review = await create<{ status: unknown }>('alice', `${authzPath()}/selfsubjectaccessreviews`, {
        spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } },
      });
      expect(review.status).toEqual({
        allowed: true,
        reason: 'RBAC: allowed by RoleBinding "alice-pods/team-a" of Role "pod-reader" to User "alice"',
      });
      const denied = await create<{ status: unknown }>('alice', `${authzPath()}/selfsubjectaccessreviews`, {
        spec: { resourceAttributes: { verb: 'delete', resource: 'pods', namespace: 'team-a', name: 'web' } },
      });
      expect(denied.status).toEqual({ allowed: false });
    });

    it('SubjectAccessReview needs permission of its own, and answers for the named subject', async () => {
      const spec = { user: 'alice', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } };
      expect(await post('alice', `${authzPath()}/subjectaccessreviews`, { spec })).toEqual({
        code: 403,
        message: `subjectaccessreviews.${authorization} is forbidden: User "alice" cannot create resource "subjectaccessreviews" in API group "${authorization}" at the cluster scope`,
      });
      const review = await create<{ status: { allowed: boolean } }>('admin', `${authzPath()}/subjectaccessreviews`, {
        spec,
      });
      expect(review.status.allowed).toBe(true);
      const local = await create<{ status: unknown }>(
        'admin',
        `${authzPath()}/namespaces/team-b/localsubjectaccessreviews`,
        {
          spec: { ...spec, resourceAttributes: { ...spec.resourceAttributes, namespace: 'team-b' } },
        },
      );
      expect(local.status).toEqual({ allowed: false });
    });

    it('TokenReview authenticates tokens the control plane knows', async () => {
      const path = `/apis/${authentication}/v1/tokenreviews`;
      const known = await create<{ status: unknown }>('admin', path, { spec: { token: TOKEN } });
      expect(known.status).toEqual({
        authenticated: true,
        user: { username: 'tina', uid: 'uid-77', groups: ['qa', 'testers', 'system:authenticated'] },
      });
      const unknown = await create<{ status: unknown }>('admin', path, { spec: { token: 'nope' } });
      expect(unknown.status).toEqual({ user: {}, error: 'invalid bearer token' });
    });

    it('SelfSubjectReview tells the caller who it is', async () => {
      const review = await create<{ status: unknown }>('tina', `/apis/${authentication}/v1/selfsubjectreviews`, {});
      expect(review.status).toEqual({
        userInfo: { username: 'tina', uid: 'uid-77', groups: ['qa', 'testers', 'system:authenticated'] },
      });
    });
  });

  describe.skipIf(!hasKubectl || flavor !== 'kubernetes')('kubectl auth', () => {
    const run = promisify(execFile);
    async function kubectl(who: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
      const argv = ['--kubeconfig', kubeconfigs[who], '--cache-dir', join(dir, 'kubectl-cache', who), ...args];
      try {
        const { stdout, stderr } = await run(KUBECTL, argv, { env: { ...process.env, HOME: dir } });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
      }
    }
    const canI = async (who: string, ...args: string[]) => {
      const r = await kubectl(who, 'auth', 'can-i', ...args);
      return `${r.stdout.trim()} (exit ${r.code})`;
    };

    it.each([
      ['alice', ['list', 'pods', '-n', 'team-a'], 'yes (exit 0)'],
      ['alice', ['get', 'pods/web', '-n', 'team-a'], 'yes (exit 0)'],
      ['alice', ['list', 'pods', '-n', 'team-b'], 'no (exit 1)'],
      ['alice', ['create', 'pods', '-n', 'team-a'], 'no (exit 1)'],
      ['alice', ['list', 'pods', '--all-namespaces'], 'no (exit 1)'],
      ['alice', ['get', '/healthz'], 'yes (exit 0)'],
      ['alice', ['get', '/metrics'], 'no (exit 1)'],
      ['admin', ['*', '*', '--all-namespaces'], 'yes (exit 0)'],
      ['admin', ['get', '/metrics'], 'yes (exit 0)'],
      ['tina', ['list', 'pods', '-n', 'team-a'], 'yes (exit 0)'],
      ['tina', ['watch', 'pods', '-n', 'team-a'], 'no (exit 1)'],
    ])('%s can-i %j → %s', async (who, args, want) => {
      expect(await canI(who, ...args)).toBe(want);
    });

    it('lists the rules of the caller (SelfSubjectRulesReview)', async () => {
      const inA = await kubectl('alice', 'auth', 'can-i', '--list', '-n', 'team-a');
      expect(inA.code).toBe(0);
      expect(inA.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m);
      expect(inA.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
      expect(inA.stdout).toMatch(
        new RegExp(
          `^selfsubjectaccessreviews\\.${authorization.replaceAll('.', '\\.')}\\s+\\[\\]\\s+\\[\\]\\s+\\[create\\]$`,
          'm',
        ),
      );
      expect(inA.stdout).toMatch(/^\s+\[\/api\/\*\]\s+\[\]\s+\[get\]$/m);
      const inB = await kubectl('alice', 'auth', 'can-i', '--list', '-n', 'team-b');
      expect(inB.code).toBe(0);
      expect(inB.stdout).not.toMatch(/^pods\s/m);
    });

    it('whoami answers from SelfSubjectReview', async () => {
      const r = await kubectl('tina', 'auth', 'whoami', '-o', 'json');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).status.userInfo).toEqual({
        username: 'tina',
        uid: 'uid-77',
        groups: ['qa', 'testers', 'system:authenticated'],
      });
    });
  });
});

/** A client that presents no credentials at all. */
function noCredentials(c: TestCluster): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: c.cp.url, caData: Buffer.from(c.cp.caPem).toString('base64') }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeClient(kc, c.cp.registry, { qps: 0, maxRetries: 0 });
}

/** The HTTP code of each GET; failures from their Status. */
async function codes(client: KubeClient, paths: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const path of paths) {
    const answer = await client.request('GET', path, { decode: String }).catch((e: unknown) => e);
    out[path] = answer instanceof StatusError ? answer.code : (answer as { status: number }).status;
  }
  return out;
}

describe('--anonymous-auth=false', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ anonymousAuth: false });
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('answers requests without credentials 401, even on the public paths', async () => {
    expect(await codes(noCredentials(c), ['/healthz', '/version', '/api/v1/namespaces'])).toEqual({
      '/healthz': 401,
      '/version': 401,
      '/api/v1/namespaces': 401,
    });
    // Credentials still work.
    expect((await c.client.request('GET', '/healthz', { decode: String })).status).toBe(200);
  });
});

describe('--authorization-mode=AlwaysAllow', () => {
  let c: TestCluster;
  const lines: { level: string; msg: string }[] = [];
  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
        callback();
      },
    });
    c = await startTestCluster({
      authorizationMode: 'AlwaysAllow',
      log: createLogger({ verbosity: 0, format: 'json', destination }),
    });
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('turns anonymous off, as the reference (else anyone could do anything): no credentials is 401, with one warning', async () => {
    expect(await codes(noCredentials(c), ['/healthz', '/api/v1/namespaces'])).toEqual({
      '/healthz': 401,
      '/api/v1/namespaces': 401,
    });
    expect((await c.client.request('GET', '/api/v1/namespaces')).status).toBe(200);
    expect(lines.filter((l) => l.msg.startsWith('AnonymousAuth is not allowed'))).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer',
      }),
    ]);
  });
});
