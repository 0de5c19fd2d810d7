/**
 * Impersonation end to end, in both flavors, with kubectl 1.32 (`--as`, `--as-group`, `--as-uid`) and raw HTTPS
 * for the headers kubectl cannot send (`Impersonate-Extra-*`) and the reviews it cannot reach in the orch flavor:
 *
 * - the admin acting as bob is authorized as bob: bob may read configmaps in one namespace and nothing more, so
 *   `--as bob delete` is refused and the object stays;
 * - alice may impersonate users, groups, service accounts, uids and the `scopes` extra, and reads as bob what
 *   she may not read herself; eve may impersonate nothing and frank only users: each refusal is a 403 naming
 *   the impersonation refused;
 * - the impersonated identity is the one the reviews answer for and the one a CSR records.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { webcryptoRequest } from '../controllers/certificates/testing.ts';
import { FLAVORS, type FlavorName, group } from '../src/api/naming.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl, type KubectlResult } from './support/kubectl.ts';
import { RawClient } from './support/raw-https.ts';

const NS = 'imp';

/** The `Error from server (...)` line of a failed kubectl run. */
function serverError(r: KubectlResult): string {
  expect(r.code, `kubectl should fail\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).not.toBe(0);
  return r.stderr.split('\n').find((l) => l.startsWith('Error from server')) ?? r.stderr;
}

describe.skipIf(!hasKubectl).each(FLAVORS)('impersonation (%s flavor)', (flavor: FlavorName) => {
  let c: TestCluster;
  let rbac: string;
  let authentication: string;
  let authorization: string;
  const kubectl: Record<string, Kubectl> = {};
  const raw: Record<string, RawClient> = {};

  beforeAll(async () => {
    c = await startTestCluster({ flavor });
    const n = c.cp.registry.naming;
    rbac = group(n, 'rbac.authorization');
    authentication = group(n, 'authentication');
    authorization = group(n, 'authorization');
    // One discovery cache for every identity, as on one workstation: warmed by the admin's first command.
    const cache = join(c.dir, 'kubectl-cache');
    kubectl.admin = new Kubectl(c.kubeconfig, cache);
    raw.admin = await RawClient.fromKubeconfig(c.kubeconfig);
    for (const name of ['alice', 'eve', 'frank']) {
      const path = await c.cp.writeIdentityKubeconfig(join(c.dir, `${name}.kubeconfig`), {
        username: name,
        groups: [],
      });
      kubectl[name] = new Kubectl(path, cache);
      raw[name] = await RawClient.fromKubeconfig(path);
    }
    const clusterRole = (name: string, rules: object[]) => ({
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name },
      rules,
    });
    const bind = (role: string, user: string) => ({
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: `${role}-${user}` },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'User', apiGroup: rbac, name: user }],
    });
    const objects = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: NS }, data: { a: 'b' } },
      {
        apiVersion: `${rbac}/v1`,
        kind: 'Role',
        metadata: { name: 'configmap-reader', namespace: NS },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
      {
        apiVersion: `${rbac}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'bob-reads', namespace: NS },
        roleRef: { apiGroup: rbac, kind: 'Role', name: 'configmap-reader' },
        subjects: [{ kind: 'User', apiGroup: rbac, name: 'bob' }],
      },
      clusterRole('impersonator', [
        { apiGroups: [''], resources: ['users', 'groups', 'serviceaccounts'], verbs: ['impersonate'] },
        { apiGroups: [authentication], resources: ['uids', 'userextras/scopes'], verbs: ['impersonate'] },
      ]),
      clusterRole('user-impersonator', [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'] }]),
      bind('impersonator', 'alice'),
      bind('user-impersonator', 'frank'),
    ];
    await kubectl.admin.ok(['create', '-f', '-'], { input: objects.map((o) => stringify(o)).join('---\n') });
  });

  afterAll(async () => {
    for (const client of Object.values(raw)) client.close();
    await c?.stop();
  });

  it('the admin acting as bob is authorized as bob, not as the admin', async () => {
    const denied = await kubectl.admin.run(['delete', 'configmap', 'settings', '-n', NS, '--as', 'bob']);
    expect(serverError(denied)).toBe(
      `Error from server (Forbidden): configmaps "settings" is forbidden: User "bob" cannot delete resource "configmaps" in API group "" in the namespace "${NS}"`,
    );
    expect(await kubectl.admin.ok(['get', 'configmap', 'settings', '-n', NS, '-o', 'name'])).toBe(
      'configmap/settings\n',
    );
    // Out of bob's namespace, bob reads nothing either.
    const elsewhere = await kubectl.admin.run(['get', 'configmaps', '-n', 'default', '--as', 'bob']);
    expect(serverError(elsewhere)).toContain('User "bob" cannot list resource "configmaps"');
  });

  it('a user allowed to impersonate reads as bob what she may not read herself', async () => {
    const own = await kubectl.alice.run(['get', 'configmap', 'settings', '-n', NS]);
    expect(serverError(own)).toContain('User "alice" cannot get resource "configmaps"');
    const asBob = await kubectl.alice.json(['get', 'configmap', 'settings', '-n', NS, '--as', 'bob']);
    expect(asBob.data).toEqual({ a: 'b' });
  });

  it('a user not allowed to impersonate gets a 403 naming the refused impersonation', async () => {
    const r = await kubectl.eve.run(['get', 'configmap', 'settings', '-n', NS, '--as', 'bob']);
    expect(serverError(r)).toBe(
      'Error from server (Forbidden): users "bob" is forbidden: User "eve" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const group = await kubectl.frank.run([
      'get',
      'configmap',
      'settings',
      '-n',
      NS,
      '--as',
      'bob',
      '--as-group',
      'devs',
    ]);
    expect(serverError(group)).toBe(
      'Error from server (Forbidden): groups "devs" is forbidden: User "frank" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    const sa = await kubectl.frank.run(['get', 'configmaps', '-n', NS, '--as', `system:serviceaccount:${NS}:builder`]);
    expect(serverError(sa)).toBe(
      `Error from server (Forbidden): serviceaccounts "builder" is forbidden: User "frank" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "${NS}"`,
    );
    const uid = await kubectl.frank.run(['get', 'configmaps', '-n', NS, '--as', 'bob', '--as-uid', 'u-1']);
    expect(serverError(uid)).toBe(
      `Error from server (Forbidden): uids.${authentication} "u-1" is forbidden: User "frank" cannot impersonate resource "uids" in API group "${authentication}" at the cluster scope`,
    );
  });

  /** The identity a SelfSubjectReview reports for a raw request with these headers. */
  async function whoami(who: string, headers: Record<string, string | string[]>) {
    const r = await raw[who].send({
      method: 'POST',
      path: `/apis/${authentication}/v1/selfsubjectreviews`,
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ apiVersion: `${authentication}/v1`, kind: 'SelfSubjectReview' }),
    });
    expect(r.code, r.body).toBe(201);
    return r.json.status.userInfo;
  }

  it('the reviews answer for the impersonated identity, extras and uid included', async () => {
    // Alice's own identity carries her certificate's credential id; an impersonated one only what it names.
    expect(await whoami('alice', {})).toEqual({
      username: 'alice',
      groups: ['system:authenticated'],
      extra: {
        [`authentication.${c.cp.registry.naming.domain}/credential-id`]: [
          expect.stringMatching(/^X509SHA256=[0-9a-f]{64}$/),
        ],
      },
    });
    expect(
      await whoami('alice', {
        'Impersonate-User': 'bob',
        'Impersonate-Group': ['devs', 'ops, and more'],
        'Impersonate-Uid': 'u-42',
        'Impersonate-Extra-Scopes': ['view', 'edit'],
      }),
    ).toEqual({
      username: 'bob',
      uid: 'u-42',
      groups: ['devs', 'ops, and more', 'system:authenticated'],
      extra: { scopes: ['view', 'edit'] },
    });
    // A service account gets its namespace's groups when no groups are asked for.
    expect(await whoami('alice', { 'Impersonate-User': `system:serviceaccount:${NS}:builder` })).toEqual({
      username: `system:serviceaccount:${NS}:builder`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
    });
    // Asking for system:unauthenticated keeps system:authenticated out.
    expect(
      await whoami('alice', {
        'Impersonate-User': 'bob',
        'Impersonate-Group': ['system:unauthenticated', 'system:masters'],
      }),
    ).toEqual({ username: 'bob', groups: ['system:unauthenticated', 'system:masters'] });

    const access = await raw.alice.send({
      method: 'POST',
      path: `/apis/${authorization}/v1/selfsubjectaccessreviews`,
      headers: { 'Content-Type': 'application/json', 'Impersonate-User': 'bob' },
      body: JSON.stringify({
        apiVersion: `${authorization}/v1`,
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: NS } },
      }),
    });
    expect(access.json.status.allowed).toBe(true);
  });

  it('refuses extras not allowed, and impersonation headers without a user', async () => {
    const extra = await raw.alice.send({
      path: `/api/v1/namespaces/${NS}/configmaps`,
      headers: { 'Impersonate-User': 'bob', 'Impersonate-Extra-Tenant': 'acme' },
    });
    expect(extra.code).toBe(403);
    expect(extra.json.message).toBe(
      `userextras.${authentication} "acme" is forbidden: User "alice" cannot impersonate resource "userextras/tenant" in API group "${authentication}" at the cluster scope`,
    );
    const noUser = await raw.admin.send({
      path: `/api/v1/namespaces/${NS}/configmaps`,
      headers: { 'Impersonate-Group': 'devs' },
    });
    expect(noUser.code).toBe(400);
    expect(noUser.json.message).toBe('requested [Group devs] without impersonating a user');
  });

  it('a CSR records the impersonated requester', async () => {
    const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: 'carol' });
    const csr = {
      apiVersion: `${group(c.cp.registry.naming, 'certificates')}/v1`,
      kind: 'CertificateSigningRequest',
      metadata: { name: 'carol-csr' },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName: c.cp.registry.naming.signers.apiServerClient,
        usages: ['digital signature', 'client auth'],
      },
    };
    await kubectl.admin.ok(['create', '-f', '-', '--as', 'carol', '--as-group', 'system:masters'], {
      input: stringify(csr),
    });
    const stored = await kubectl.admin.json(['get', 'csr', 'carol-csr']);
    expect(stored.spec.username).toBe('carol');
    expect(stored.spec.groups).toEqual(['system:masters', 'system:authenticated']);
  });

  it.runIf(flavor === 'kubernetes')('kubectl auth can-i and auth whoami answer for the impersonated user', async () => {
    expect((await kubectl.alice.run(['auth', 'can-i', 'get', 'configmaps', '-n', NS, '--as', 'bob'])).stdout).toBe(
      'yes\n',
    );
    const no = await kubectl.alice.run(['auth', 'can-i', 'delete', 'configmaps', '-n', NS, '--as', 'bob']);
    expect(no.stdout).toBe('no\n');
    expect((await kubectl.alice.run(['auth', 'can-i', 'get', 'configmaps', '-n', NS])).stdout).toBe('no\n');
    const who = await kubectl.alice.json(['auth', 'whoami', '--as', 'bob', '--as-group', 'devs']);
    expect(who.status.userInfo).toEqual({ username: 'bob', groups: ['devs', 'system:authenticated'] });
    const refused = await kubectl.eve.run(['auth', 'can-i', 'get', 'configmaps', '-n', NS, '--as', 'bob']);
    expect(serverError(refused)).toBe(
      'Error from server (Forbidden): users "bob" is forbidden: User "eve" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });
});
