/**
 * The real kubectl as three identities against the embedded control plane, RBAC enforced:
 *
 * - the admin (`system:masters`) creates, lists and deletes anything;
 * - a node agent (`system:node:worker-1` in `system:nodes`, bound by the bootstrap policy to the
 *   `system:node` role) creates its CertificateSigningRequest with `kubectl create -f`, finds its own
 *   identity recorded in `spec.username` and `spec.groups`, and is refused approving it;
 * - a restricted user (`dana`, allowed `get` and `list` on configmaps in one namespace by a Role) reads
 *   there and gets readable 403s everywhere else.
 *
 * kubectl 1.32 patches only the `status` and `scale` subresources, so the approval is written with
 * `kubectl replace --raw .../approval -f <file>`. `kubectl auth can-i` always posts its reviews to the
 * reference's `authorization.k8s.io` group, so that part runs in the `kubernetes` naming flavor.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { webcryptoRequest } from '../controllers/certificates/testing.ts';
import type { FlavorName } from '../src/api/naming.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl, type KubectlResult, parseTable } from './support/kubectl.ts';

if (!hasKubectl) {
  console.warn(
    'test/identities-kubectl.test.ts: no kubectl binary (PATH or $KUBECTL); the kubectl identity scenarios are skipped',
  );
}

const NODE = 'system:node:worker-1';
const TEAM = 'team-a';
const OTHER = 'team-b';

/** A running cluster with kubectl bound to the admin, the node agent and the restricted user. */
interface Setup {
  c: TestCluster;
  admin: Kubectl;
  node: Kubectl;
  dana: Kubectl;
  /** `certificates.<suffix>` and `rbac.authorization.<suffix>` of the flavor. */
  certificates: string;
  rbac: string;
}

async function setUp(flavor: FlavorName): Promise<Setup> {
  const c = await startTestCluster({ flavor });
  const n = c.cp.registry.naming;
  const kubectlAs = async (username: string, groups: string[]) => {
    const file = `${username.replaceAll(':', '_')}.kubeconfig`;
    const path = await c.cp.writeIdentityKubeconfig(join(c.dir, file), { username, groups });
    return new Kubectl(path, join(c.dir, `kubectl-cache-${file}`));
  };
  const s: Setup = {
    c,
    admin: new Kubectl(c.kubeconfig, join(c.dir, 'kubectl-cache-admin')),
    node: await kubectlAs(NODE, ['system:nodes']),
    dana: await kubectlAs('dana', []),
    certificates: `certificates.${n.groupSuffix}`,
    rbac: `rbac.authorization.${n.groupSuffix}`,
  };
  // Namespaces, a configmap in each, and dana's Role and RoleBinding in the first one.
  await s.admin.ok(['create', '-f', '-'], {
    input: manifests([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: TEAM } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OTHER } },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'app-config', namespace: TEAM },
        data: { mode: 'blue' },
      },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'their-config', namespace: OTHER }, data: { a: 'b' } },
      {
        apiVersion: `${s.rbac}/v1`,
        kind: 'Role',
        metadata: { name: 'configmap-reader', namespace: TEAM },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
      {
        apiVersion: `${s.rbac}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'dana-reads-configmaps', namespace: TEAM },
        roleRef: { apiGroup: s.rbac, kind: 'Role', name: 'configmap-reader' },
        subjects: [{ kind: 'User', apiGroup: s.rbac, name: 'dana' }],
      },
    ]),
  });
  return s;
}

/** Objects as one multi-document YAML stream (kubectl's validation does not accept a `List` from this server). */
function manifests(objects: object[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}

/** The `Error from server (...)` line kubectl printed (warnings on stderr are skipped). */
function serverError(r: KubectlResult): string {
  const line = r.stderr.split('\n').find((l) => l.startsWith('Error from server'));
  if (!line)
    throw new Error(`kubectl printed no server error (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return line;
}

/** Runs kubectl expecting it to fail with exit code 1 and a server error; answers that error line. */
async function refused(k: Kubectl, args: string[], input?: string): Promise<string> {
  const r = await k.run(args, input === undefined ? {} : { input });
  expect(r.code, `kubectl ${args.join(' ')} should fail\nstdout: ${r.stdout}`).toBe(1);
  return serverError(r);
}

describe.skipIf(!hasKubectl)('kubectl as the admin, a node agent and a restricted user (orch flavor)', () => {
  let s: Setup;

  beforeAll(async () => {
    s = await setUp('orch');
  });

  afterAll(async () => {
    await s?.c.stop();
  });

  describe('the admin', () => {
    it('creates, lists and deletes objects of every scope', async () => {
      const n = s.c.cp.registry.naming;
      const objects = [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'admin-cm', namespace: OTHER }, data: { k: 'v' } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'admin-secret', namespace: OTHER },
          stringData: { k: 'v' },
        },
        {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'admin-limits', namespace: OTHER },
          spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] },
        },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'admin-pod', namespace: OTHER },
          spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1' }] },
        },
        {
          apiVersion: `${s.rbac}/v1`,
          kind: 'ClusterRole',
          metadata: { name: 'admin-made-role' },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
        },
        {
          apiVersion: `node.${n.groupSuffix}/v1`,
          kind: 'RuntimeClass',
          metadata: { name: 'admin-runtime' },
          handler: 'runc',
        },
      ];
      const created = await s.admin.ok(['create', '-f', '-'], { input: manifests(objects) });
      expect(created.trim().split('\n')).toEqual([
        'configmap/admin-cm created',
        'secret/admin-secret created',
        'limitrange/admin-limits created',
        'pod/admin-pod created',
        `clusterrole.${s.rbac}/admin-made-role created`,
        `runtimeclass.node.${n.groupSuffix}/admin-runtime created`,
      ]);

      // The pod went through admission: the LimitRange created just before it gave it a default limit.
      const pod = await s.admin.json(['get', 'pod', 'admin-pod', '-n', OTHER]);
      expect(pod.spec.containers[0].resources).toEqual({ requests: { cpu: '2' }, limits: { cpu: '2' } });

      const listed = await s.admin.ok(['get', 'configmaps,secrets,pods,limitranges', '-A', '-o', 'name']);
      for (const name of [
        'configmap/app-config',
        'configmap/their-config',
        'configmap/admin-cm',
        'secret/admin-secret',
        'pod/admin-pod',
        'limitrange/admin-limits',
      ]) {
        expect(listed.split('\n')).toContain(name);
      }
      expect(await s.admin.ok(['get', 'clusterroles', '-o', 'name'])).toContain(`clusterrole.${s.rbac}/system:node\n`);
      expect(await s.admin.ok(['get', 'clusterrolebindings', 'cluster-admin', '-o', 'name'])).toBe(
        `clusterrolebinding.${s.rbac}/cluster-admin\n`,
      );

      const deleted = await s.admin.ok(['delete', '-f', '-'], { input: manifests(objects) });
      expect(deleted.trim().split('\n')).toHaveLength(objects.length);
      expect(await refused(s.admin, ['get', 'pod', 'admin-pod', '-n', OTHER])).toBe(
        'Error from server (NotFound): pods "admin-pod" not found',
      );
      expect(await refused(s.admin, ['get', 'clusterrole', 'admin-made-role'])).toBe(
        `Error from server (NotFound): clusterroles.${s.rbac} "admin-made-role" not found`,
      );
    });
  });

  describe('a node agent', () => {
    const CSR = 'node-csr-worker-1';
    let approvalFile: string;

    beforeAll(async () => {
      const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: NODE, organizations: ['system:nodes'] });
      const csr = {
        apiVersion: `${s.certificates}/v1`,
        kind: 'CertificateSigningRequest',
        metadata: { name: CSR },
        spec: {
          request: Buffer.from(pem).toString('base64'),
          signerName: s.c.cp.registry.naming.signers.apiServerClientNodeAgent,
          usages: ['digital signature', 'client auth'],
          // Claims the node cannot make: the server records the real requester instead.
          username: 'admin',
          groups: ['system:masters'],
        },
      };
      const out = await s.node.ok(['create', '-f', '-'], { input: JSON.stringify(csr) });
      expect(out.trim()).toBe(`certificatesigningrequest.${s.certificates}/${CSR} created`);
    });

    it('finds its own identity recorded in the CSR', async () => {
      const csr = await s.node.json(['get', 'csr', CSR]);
      expect(csr.spec.username).toBe(NODE);
      expect(csr.spec.groups).toEqual(['system:nodes', 'system:authenticated']);
      const table = parseTable(await s.node.ok(['get', 'csr']));
      expect(table.rows.find((r) => r.NAME === CSR)).toMatchObject({ REQUESTOR: NODE, CONDITION: 'Pending' });
    });

    it('is refused approving its CSR, which stays pending; the admin may approve it', async () => {
      const csr = await s.node.json(['get', 'csr', CSR]);
      csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'SelfApproved', message: 'by myself' }] };
      approvalFile = join(s.c.dir, 'approval.json');
      await writeFile(approvalFile, JSON.stringify(csr));
      const path = `/apis/${s.certificates}/v1/certificatesigningrequests/${CSR}/approval`;

      expect(await refused(s.node, ['replace', '--raw', path, '-f', approvalFile])).toBe(
        `Error from server (Forbidden): certificatesigningrequests.${s.certificates} "${CSR}" is forbidden: ` +
          `User "${NODE}" cannot update resource "certificatesigningrequests/approval" in API group "${s.certificates}" at the cluster scope`,
      );
      expect((await s.admin.json(['get', 'csr', CSR])).status?.conditions ?? []).toEqual([]);

      const approved = JSON.parse(await s.admin.ok(['replace', '--raw', path, '-f', approvalFile]));
      expect(approved.status.conditions.map((x: { type: string }) => x.type)).toEqual(['Approved']);
    });

    it('may not delete its CSR or read other resources', async () => {
      expect(await refused(s.node, ['delete', 'csr', CSR])).toBe(
        `Error from server (Forbidden): certificatesigningrequests.${s.certificates} "${CSR}" is forbidden: ` +
          `User "${NODE}" cannot delete resource "certificatesigningrequests" in API group "${s.certificates}" at the cluster scope`,
      );
      expect(await refused(s.node, ['get', 'secrets', '-A'])).toBe(
        'Error from server (Forbidden): secrets is forbidden: User "system:node:worker-1" cannot list resource "secrets" in API group "" at the cluster scope: can only read namespaced object of this type',
      );
    });
  });

  describe('a restricted user', () => {
    it('gets and lists configmaps in its namespace', async () => {
      expect(await s.dana.ok(['get', 'configmaps', '-n', TEAM, '-o', 'name'])).toBe('configmap/app-config\n');
      expect(await s.dana.ok(['get', 'configmap', 'app-config', '-n', TEAM, '-o', 'jsonpath={.data.mode}'])).toBe(
        'blue',
      );
    });

    it('is refused elsewhere with messages naming the user, verb, resource and scope', async () => {
      expect(await refused(s.dana, ['get', 'configmaps', '-n', OTHER])).toBe(
        `Error from server (Forbidden): configmaps is forbidden: User "dana" cannot list resource "configmaps" in API group "" in the namespace "${OTHER}"`,
      );
      expect(await refused(s.dana, ['get', 'configmap', 'their-config', '-n', OTHER])).toBe(
        `Error from server (Forbidden): configmaps "their-config" is forbidden: User "dana" cannot get resource "configmaps" in API group "" in the namespace "${OTHER}"`,
      );
      expect(await refused(s.dana, ['get', 'pods', '-n', TEAM])).toBe(
        `Error from server (Forbidden): pods is forbidden: User "dana" cannot list resource "pods" in API group "" in the namespace "${TEAM}"`,
      );
      expect(await refused(s.dana, ['get', 'nodes'])).toBe(
        'Error from server (Forbidden): nodes is forbidden: User "dana" cannot list resource "nodes" in API group "" at the cluster scope',
      );
      expect(await refused(s.dana, ['get', 'csr'])).toBe(
        `Error from server (Forbidden): certificatesigningrequests.${s.certificates} is forbidden: User "dana" cannot list resource "certificatesigningrequests" in API group "${s.certificates}" at the cluster scope`,
      );
    });

    it('is refused writes in its own namespace, and nothing changes', async () => {
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dana-cm', namespace: TEAM } };
      expect(await refused(s.dana, ['create', '-f', '-'], JSON.stringify(cm))).toBe(
        `Error from server (Forbidden): error when creating "STDIN": configmaps is forbidden: User "dana" cannot create resource "configmaps" in API group "" in the namespace "${TEAM}"`,
      );
      expect(await refused(s.dana, ['delete', 'configmap', 'app-config', '-n', TEAM])).toBe(
        `Error from server (Forbidden): configmaps "app-config" is forbidden: User "dana" cannot delete resource "configmaps" in API group "" in the namespace "${TEAM}"`,
      );
      expect(await s.admin.ok(['get', 'configmaps', '-n', TEAM, '-o', 'name'])).toBe('configmap/app-config\n');
    });
  });

  it('kubectl auth can-i does not work in this flavor: kubectl posts to authorization.k8s.io', async () => {
    expect(await refused(s.dana, ['auth', 'can-i', 'list', 'configmaps', '-n', TEAM])).toBe(
      // The group is not served, and authorization comes before routing as in the reference: nobody here is granted
      // anything in that group, so the answer is a 403 (the 404 only to whom may make the request).
      'Error from server (Forbidden): selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "dana" cannot create resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope',
    );
  });
});

describe.skipIf(!hasKubectl)('kubectl auth can-i (kubernetes flavor)', () => {
  let s: Setup;

  beforeAll(async () => {
    s = await setUp('kubernetes');
  });

  afterAll(async () => {
    await s?.c.stop();
  });

  /** `kubectl auth can-i` answers `yes` with exit 0 and `no` with exit 1. */
  async function canI(k: Kubectl, ...args: string[]): Promise<string> {
    const r = await k.run(['auth', 'can-i', ...args]);
    const answer = r.stdout.trim();
    expect(r.code, `can-i ${args.join(' ')}: ${r.stderr}`).toBe(answer === 'yes' ? 0 : 1);
    return answer;
  }

  it('answers for the restricted user', async () => {
    expect(await canI(s.dana, 'list', 'configmaps', '-n', TEAM)).toBe('yes');
    expect(await canI(s.dana, 'get', 'configmap/app-config', '-n', TEAM)).toBe('yes');
    expect(await canI(s.dana, 'watch', 'configmaps', '-n', TEAM)).toBe('no');
    expect(await canI(s.dana, 'delete', 'configmaps', '-n', TEAM)).toBe('no');
    expect(await canI(s.dana, 'create', 'configmaps', '-n', TEAM)).toBe('no');
    expect(await canI(s.dana, 'list', 'configmaps', '-n', OTHER)).toBe('no');
    expect(await canI(s.dana, 'list', 'pods', '-n', TEAM)).toBe('no');
    expect(await canI(s.dana, 'list', 'nodes')).toBe('no');
  });

  it("lists the restricted user's rules in its namespace", async () => {
    const table = parseTable(await s.dana.ok(['auth', 'can-i', '--list', '-n', TEAM]));
    expect(table.columns).toEqual(['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']);
    expect(table.rows.find((r) => r.Resources === 'configmaps')).toEqual({
      Resources: 'configmaps',
      'Non-Resource URLs': '[]',
      'Resource Names': '[]',
      Verbs: '[get list]',
    });
    const elsewhere = parseTable(await s.dana.ok(['auth', 'can-i', '--list', '-n', OTHER]));
    expect(elsewhere.rows.find((r) => r.Resources === 'configmaps')).toBeUndefined();
  });

  it('answers for the node agent and the admin', async () => {
    expect(await canI(s.node, 'create', 'certificatesigningrequests')).toBe('yes');
    expect(await canI(s.node, 'list', 'certificatesigningrequests')).toBe('yes');
    expect(await canI(s.node, 'update', 'certificatesigningrequests', '--subresource=approval')).toBe('no');
    expect(await canI(s.node, 'delete', 'certificatesigningrequests')).toBe('no');
    // The Node authorizer says why, as the reference's does.
    expect(await canI(s.node, 'list', 'secrets', '-A')).toBe('no - can only read namespaced object of this type');
    expect(await canI(s.admin, '*', '*')).toBe('yes');
    expect(await canI(s.admin, 'update', 'certificatesigningrequests', '--subresource=approval')).toBe('yes');
  });

  it('kubectl auth whoami shows each identity', async () => {
    const who = async (k: Kubectl) => (await k.json(['auth', 'whoami'])).status.userInfo;
    // Each a client certificate user: as the reference, its certificate's SHA-256 is its credential id.
    const credential = {
      'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^X509SHA256=[0-9a-f]{64}$/)],
    };
    expect(await who(s.dana)).toEqual({ username: 'dana', groups: ['system:authenticated'], extra: credential });
    expect(await who(s.node)).toEqual({
      username: NODE,
      groups: ['system:nodes', 'system:authenticated'],
      extra: credential,
    });
    expect(await who(s.admin)).toEqual({
      username: 'admin',
      groups: ['system:masters', 'system:authenticated'],
      extra: credential,
    });
  });
});
