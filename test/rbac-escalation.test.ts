/**
 * RBAC escalation prevention end to end, over HTTPS with client-certificate identities: a user who may write
 * roles and bindings in one namespace cannot use that to grant herself (or anyone) more than she holds, by
 * any write path (POST, PUT, merge / JSON / strategic merge patch, server-side apply), and cannot re-point a
 * binding (`roleRef` is immutable). Holding `escalate` or `bind`, or holding the permissions, still works.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerDefinitions } from '../controllers/index.ts';
import { FLAVORS, type FlavorName, group } from '../src/api/naming.ts';
import type { PolicyRule } from '../src/api/types/index.ts';
import { KubeClient } from '../src/client/client.ts';
import { StatusError } from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { controllerManagerRbac, controllerManagerUser } from '../src/deploy/rbac.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

const NOT_HELD = 'is attempting to grant RBAC permissions not currently held';
const NS = 'team';

const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

describe.each(FLAVORS)('RBAC escalation checks (%s flavor)', (flavor: FlavorName) => {
  let c: TestCluster;
  let rbac: string;
  let base: string;
  const clients: Record<string, KubeClient> = {};
  const kubeconfigs: Record<string, string> = {};

  /** The HTTP code and message of a call. */
  async function call(
    who: string,
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ code: number; message: string }> {
    try {
      return { code: (await clients[who].request(method, path, { body, contentType })).status, message: '' };
    } catch (err) {
      if (!(err instanceof StatusError)) throw err;
      return { code: err.code, message: err.message };
    }
  }

  const code = async (...args: Parameters<typeof call>) => (await call(...args)).code;

  const roles = (ns = NS) => `${base}/namespaces/${ns}/roles`;
  const bindings = (ns = NS) => `${base}/namespaces/${ns}/rolebindings`;
  const ref = (kind: string, name: string) => ({ apiGroup: rbac, kind, name });
  const role = (name: string, rules: PolicyRule[]) => ({
    apiVersion: `${rbac}/v1`,
    kind: 'Role',
    metadata: { name },
    rules,
  });
  const binding = (name: string, kind: string, roleName: string, user: string) => ({
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: ref(kind, roleName),
    subjects: [{ kind: 'User', apiGroup: rbac, name: user }],
  });
  const clusterRole = (name: string, rules: PolicyRule[], extra: Record<string, unknown> = {}) => ({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRole',
    metadata: { name },
    rules,
    ...extra,
  });
  const RBAC_WRITER = (): PolicyRule => ({
    verbs: ['create', 'update', 'patch', 'get', 'list'],
    apiGroups: [rbac],
    resources: ['roles', 'rolebindings'],
  });
  const CM_READ: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] };
  const CM_GET: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] };
  const SECRET_GET: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };

  async function asAdmin(method: string, path: string, body: unknown): Promise<void> {
    const r = await call('admin', method, path, body);
    expect(r.code, r.message).toBeLessThan(300);
  }

  async function identity(name: string, groups: string[] = []): Promise<void> {
    kubeconfigs[name] = await c.cp.writeIdentityKubeconfig(join(c.dir, `${name}.kubeconfig`), {
      username: name,
      groups,
    });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigs[name]);
    clients[name] = new KubeClient(kc, c.cp.registry, { qps: 0, maxRetries: 0 });
  }

  /** A Role in `NS` with `rules`, bound to `user`. */
  async function grant(user: string, name: string, rules: PolicyRule[]): Promise<void> {
    await asAdmin('POST', roles(), role(name, rules));
    await asAdmin('POST', bindings(), binding(name, 'Role', name, user));
  }

  beforeAll(async () => {
    c = await startTestCluster({ flavor });
    rbac = group(c.cp.registry.naming, 'rbac.authorization');
    base = `/apis/${rbac}/v1`;
    clients.admin = new KubeClient(c.kc, c.cp.registry, { qps: 0, maxRetries: 0 });
    kubeconfigs.admin = c.kubeconfig;
    for (const who of ['mallory', 'esc', 'binder', 'narrow', 'carol']) await identity(who);

    await asAdmin('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await asAdmin('POST', `/api/v1/namespaces/${NS}/secrets`, { metadata: { name: 'db' }, stringData: { pw: 'x' } });
    // mallory: create/update/patch/get/list on roles and rolebindings in NS, and reads configmaps there.
    await grant('mallory', 'rbac-writer', [RBAC_WRITER()]);
    await grant('mallory', 'cm-reader', [CM_READ]);
    await asAdmin('POST', roles(), role('cm-reader-2', [CM_READ]));
    await asAdmin('POST', roles(), role('ns-admin', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]));
    // esc may escalate roles in NS; binder may bind any role in NS; narrow may bind only the Role `ns-admin`.
    await grant('esc', 'esc', [RBAC_WRITER(), { verbs: ['escalate'], apiGroups: [rbac], resources: ['roles'] }]);
    await grant('binder', 'binder', [
      RBAC_WRITER(),
      { verbs: ['bind'], apiGroups: [rbac], resources: ['roles', 'clusterroles'] },
    ]);
    await grant('narrow', 'narrow', [
      RBAC_WRITER(),
      { verbs: ['bind'], apiGroups: [rbac], resources: ['roles'], resourceNames: ['ns-admin'] },
    ]);
    // carol writes cluster roles and cluster role bindings, and holds nothing else.
    await asAdmin(
      'POST',
      `${base}/clusterroles`,
      clusterRole('cluster-rbac-writer', [
        {
          verbs: ['create', 'update', 'patch', 'get', 'list'],
          apiGroups: [rbac],
          resources: ['clusterroles', 'clusterrolebindings'],
        },
      ]),
    );
    await asAdmin('POST', `${base}/clusterrolebindings`, {
      metadata: { name: 'carol' },
      roleRef: ref('ClusterRole', 'cluster-rbac-writer'),
      subjects: [{ kind: 'User', apiGroup: rbac, name: 'carol' }],
    });
    // An aggregating ClusterRole whose stored rules are still empty (no aggregation controller runs here),
    // and the role it gathers: binding it grants reading secrets as soon as the controller catches up.
    await asAdmin(
      'POST',
      `${base}/clusterroles`,
      clusterRole('gatherer', [], {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/gather': 'true' } }] },
      }),
    );
    await asAdmin('POST', `${base}/clusterroles`, {
      ...clusterRole('secret-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }]),
      metadata: { name: 'secret-reader', labels: { 'example.com/gather': 'true' } },
    });
  }, 60_000);

  afterAll(async () => {
    await c?.stop();
  });

  describe('refused', () => {
    const refused = (r: { code: number; message: string }, ...missing: string[]) => {
      expect(r.code, r.message).toBe(403);
      expect(r.message).toContain(NOT_HELD);
      for (const m of missing) expect(r.message).toContain(m);
    };

    it('a RoleBinding of cluster-admin (a ClusterRole) to herself', async () => {
      const r = await call('mallory', 'POST', bindings(), binding('pwn-1', 'ClusterRole', 'cluster-admin', 'mallory'));
      refused(r, '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}');
      expect(r.message).toContain('user "mallory" (groups=["system:authenticated"])');
      expect(r.message).toMatch(/^rolebindings\.\S+ "pwn-1" is forbidden: user "mallory"/);
    });

    it('a RoleBinding of an admin Role of the namespace', async () => {
      refused(await call('mallory', 'POST', bindings(), binding('pwn-2', 'Role', 'ns-admin', 'mallory')));
    });

    it('a ClusterRoleBinding of cluster-admin (by a user who may create cluster role bindings)', async () => {
      const body = {
        metadata: { name: 'pwn-3' },
        roleRef: ref('ClusterRole', 'cluster-admin'),
        subjects: [{ kind: 'User', apiGroup: rbac, name: 'carol' }],
      };
      refused(await call('carol', 'POST', `${base}/clusterrolebindings`, body));
      // A ClusterRoleBinding cannot be made from namespaced rights at all.
      expect(await code('mallory', 'POST', `${base}/clusterrolebindings`, body)).toBe(403);
    });

    it('a Role with * on secrets', async () => {
      const r = await call(
        'mallory',
        'POST',
        roles(),
        role('pwn-4', [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }]),
      );
      refused(r, '{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}');
    });

    it('a Role with * verbs on what she may only read', async () => {
      refused(await call('mallory', 'POST', roles(), role('pwn-5', [{ ...CM_READ, verbs: ['*'] }])), 'Verbs:["*"]');
    });

    it('a Role with nonResourceURLs', async () => {
      const r = await call(
        'mallory',
        'POST',
        roles(),
        role('pwn-6', [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }]),
      );
      refused(r, '{NonResourceURLs:["/metrics"], Verbs:["get"]}');
    });

    it('a ClusterRole with more than she holds, and one with an aggregationRule', async () => {
      const r = await call('carol', 'POST', `${base}/clusterroles`, clusterRole('pwn-7', [SECRET_GET]));
      refused(r, '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
      const gathering = clusterRole('pwn-7b', [], {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/gather': 'true' } }] },
      });
      const g = await call('carol', 'POST', `${base}/clusterroles`, gathering);
      expect(g.code, g.message).toBe(403);
      expect(g.message).toContain('must have cluster-admin privileges to use the aggregationRule');
    });

    // Built when run: the RBAC group is known only once the cluster is up.
    const withEscalate = () => ({ rules: [{ ...RBAC_WRITER(), verbs: [...RBAC_WRITER().verbs, 'escalate'] }] });
    it.each<[string, string, () => unknown]>([
      ['merge', MERGE, withEscalate],
      ['JSON', JSON_PATCH, () => [{ op: 'add', path: '/rules/0/verbs/-', value: 'escalate' }]],
      ['strategic merge', STRATEGIC, withEscalate],
    ])('patching her own Role to add escalate (%s patch)', async (_kind, contentType, patch) => {
      const r = await call('mallory', 'PATCH', `${roles()}/rbac-writer`, patch(), contentType);
      refused(r, `{APIGroups:["${rbac}"], Resources:["roles"], Verbs:["escalate"]}`);
    });

    it('patching her own Role to add escalate (server-side apply, new object and existing one)', async () => {
      const applied = {
        ...role('rbac-writer', [{ ...RBAC_WRITER(), verbs: ['escalate'] }]),
        metadata: { name: 'rbac-writer', namespace: NS },
      };
      const q = '?fieldManager=mallory&force=true';
      refused(
        await call('mallory', 'PATCH', `${roles()}/rbac-writer${q}`, JSON.stringify(applied), APPLY),
        'Verbs:["escalate"]',
      );
      const fresh = { ...applied, metadata: { name: 'pwn-8', namespace: NS } };
      refused(await call('mallory', 'PATCH', `${roles()}/pwn-8${q}`, JSON.stringify(fresh), APPLY));
    });

    it('PUT of her own Role with more rules', async () => {
      const current = (await clients.mallory.request<Record<string, unknown>>('GET', `${roles()}/rbac-writer`)).body;
      const r = await call('mallory', 'PUT', `${roles()}/rbac-writer`, {
        ...current,
        rules: [RBAC_WRITER(), SECRET_GET],
      });
      refused(r, '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
    });

    it("changing an existing binding's roleRef: 403 to a role she lacks, 422 to any other", async () => {
      const toAdmin = { roleRef: ref('ClusterRole', 'cluster-admin') };
      refused(await call('mallory', 'PATCH', `${bindings()}/cm-reader`, toAdmin, MERGE));
      const r = await call(
        'mallory',
        'PATCH',
        `${bindings()}/cm-reader`,
        { roleRef: ref('Role', 'cm-reader-2') },
        MERGE,
      );
      expect(r.code, r.message).toBe(422);
      expect(r.message).toContain('roleRef: Invalid value');
      expect(r.message).toContain('cannot change roleRef');
      // Not even system:masters may re-point a binding.
      const a = await call('admin', 'PATCH', `${bindings()}/cm-reader`, toAdmin, STRATEGIC);
      expect(a.code, a.message).toBe(422);
      expect(a.message).toContain('cannot change roleRef');
    });

    it('a binding of a role that does not exist', async () => {
      refused(await call('mallory', 'POST', bindings(), binding('pwn-9', 'Role', 'later', 'mallory')), 'not found');
      refused(
        await call('mallory', 'POST', bindings(), binding('pwn-10', 'ClusterRole', 'later', 'mallory')),
        'not found',
      );
    });

    it('a binding of an aggregated ClusterRole, judged on the rules it gathers', async () => {
      const r = await call('mallory', 'POST', bindings(), binding('pwn-11', 'ClusterRole', 'gatherer', 'mallory'));
      refused(r, '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}');
      refused(await call('mallory', 'POST', bindings(), binding('pwn-12', 'ClusterRole', 'admin', 'mallory')));
    });

    it('after every attempt, she still cannot read the secrets', async () => {
      expect(await code('mallory', 'GET', `/api/v1/namespaces/${NS}/secrets`)).toBe(403);
      expect(await code('mallory', 'GET', `/api/v1/namespaces/${NS}/secrets/db`)).toBe(403);
      const list = (await clients.admin.request<{ items: { metadata: { name: string } }[] }>('GET', bindings())).body;
      expect(list.items.map((b) => b.metadata.name).filter((n) => n.startsWith('pwn'))).toEqual([]);
    });
  });

  describe('allowed', () => {
    it('granting what she holds: a Role, its binding, and an update of her own Role', async () => {
      expect(await code('mallory', 'POST', roles(), role('ok-1', [CM_GET]))).toBe(201);
      expect(await code('mallory', 'POST', bindings(), binding('ok-1', 'Role', 'ok-1', 'someone'))).toBe(201);
      // A Role with names narrower than what she holds.
      const named = role('ok-2', [{ ...CM_GET, resourceNames: ['a'] }]);
      expect(await code('mallory', 'POST', roles(), named)).toBe(201);
      const r = await call('mallory', 'PATCH', `${roles()}/ok-1`, { rules: [CM_READ] }, MERGE);
      expect(r.code, r.message).toBe(200);
      // Labels on a role she holds everything of.
      expect(await code('mallory', 'PATCH', `${roles()}/ok-1`, { metadata: { labels: { a: 'b' } } }, MERGE)).toBe(200);
    });

    it('holding escalate on roles: any Role, by POST, PUT and every patch', async () => {
      const star = [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }];
      expect(await code('esc', 'POST', roles(), role('esc-1', star))).toBe(201);
      const current = (await clients.esc.request<Record<string, unknown>>('GET', `${roles()}/esc-1`)).body;
      expect(await code('esc', 'PUT', `${roles()}/esc-1`, { ...current, rules: [...star, CM_READ] })).toBe(200);
      // Everything in the namespace (a Role holds no non-resource URLs: the reference refuses those as invalid).
      const everything = { rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] };
      expect(await code('esc', 'PATCH', `${roles()}/esc-1`, everything, MERGE)).toBe(200);
      const applied = { ...role('esc-2', star), metadata: { name: 'esc-2', namespace: NS } };
      expect(await code('esc', 'PATCH', `${roles()}/esc-2?fieldManager=esc`, JSON.stringify(applied), APPLY)).toBe(201);
      // escalate is no bind: binding what esc does not hold is still refused.
      const b = await call('esc', 'POST', bindings(), binding('esc-b', 'Role', 'esc-1', 'esc'));
      expect(b.code).toBe(403);
      expect(b.message).toContain(NOT_HELD);
    });

    it('holding bind: a binding of any role, cluster-admin among them', async () => {
      expect(
        await code('binder', 'POST', bindings(), binding('bind-1', 'ClusterRole', 'cluster-admin', 'someone')),
      ).toBe(201);
      expect(await code('binder', 'POST', bindings(), binding('bind-2', 'Role', 'ns-admin', 'someone'))).toBe(201);
      // bind allows binding a role that does not exist yet.
      expect(await code('binder', 'POST', bindings(), binding('bind-3', 'Role', 'later', 'someone'))).toBe(201);
      // bind is no escalate: a Role beyond what binder holds is still refused.
      expect(await code('binder', 'POST', roles(), role('bind-r', [SECRET_GET]))).toBe(403);
    });

    it('holding bind on one role name: that role only', async () => {
      expect(await code('narrow', 'POST', bindings(), binding('narrow-1', 'Role', 'ns-admin', 'someone'))).toBe(201);
      const other = await call('narrow', 'POST', bindings(), binding('narrow-2', 'Role', 'esc', 'someone'));
      expect(other.code).toBe(403);
      expect(other.message).toContain(NOT_HELD);
      // bind on a Role is no bind on any ClusterRole.
      const cluster = binding('narrow-3', 'ClusterRole', 'admin', 'someone');
      expect(await code('narrow', 'POST', bindings(), cluster)).toBe(403);
    });

    it('the aggregation controller, as its own user with the shipped RBAC, writes aggregated rules', async () => {
      const n = c.cp.registry.naming;
      for (const obj of controllerManagerRbac(n, controllerDefinitions)) await c.cp.seed(obj);
      const kc = new KubeConfig();
      kc.loadFromFile(
        await c.cp.writeIdentityKubeconfig(join(c.dir, 'cm.kubeconfig'), {
          username: controllerManagerUser(),
          groups: [],
        }),
      );
      const controller = new KubeClient(kc, c.cp.registry, { qps: 0, maxRetries: 0 });
      // Its write: a forced apply of the gathered rules onto the aggregating role.
      const rules = [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }];
      const res = await controller.request(
        'PATCH',
        `${base}/clusterroles/gatherer?fieldManager=clusterrole-aggregation-controller&force=true`,
        {
          body: JSON.stringify({
            apiVersion: `${rbac}/v1`,
            kind: 'ClusterRole',
            metadata: { name: 'gatherer' },
            rules,
          }),
          contentType: APPLY,
        },
      );
      expect(res.status).toBe(200);
      expect((res.body as { rules: PolicyRule[] }).rules).toEqual(rules);
    });
  });

  describe.skipIf(!hasKubectl || flavor !== 'kubernetes')('kubectl create role', () => {
    async function kubectl(who: string, ...args: string[]): Promise<{ code: number | null; out: string }> {
      const { code, stdout, stderr } = await new Kubectl(kubeconfigs[who], join(c.dir, 'kubectl-cache', who)).run(args);
      return { code, out: stdout + stderr };
    }

    it('works for what the user holds and reports what she does not', async () => {
      const ok = await kubectl(
        'mallory',
        'create',
        'role',
        'kc-ok',
        '--verb=get,list',
        '--resource=configmaps',
        '-n',
        NS,
      );
      expect(ok.out).toContain('created');
      expect(ok.code).toBe(0);
      const no = await kubectl('mallory', 'create', 'role', 'kc-no', '--verb=get', '--resource=secrets', '-n', NS);
      expect(no.code).not.toBe(0);
      expect(no.out).toContain(NOT_HELD);
      const admin = await kubectl('admin', 'create', 'role', 'kc-admin', '--verb=*', '--resource=secrets', '-n', NS);
      expect(admin.code, admin.out).toBe(0);
    });
  });
});
