/**
 * `kubectl orch`, run the way kubectl runs plugins: `kubectl orch ...` with the `kubectl-orch` bin on
 * PATH, in both naming flavors, against the embedded control plane with the certificate and disruption
 * controllers running. Each subcommand's success, refusal and not-found paths, and the `why` answers.
 */
import { execFile } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvingController } from '../controllers/certificates/approving/controller.ts';
import { signingController } from '../controllers/certificates/signing/controller.ts';
import { csrObject, webcryptoRequest } from '../controllers/certificates/testing.ts';
import { pdbObject, podObject, runningStatus } from '../controllers/disruption/harness.ts';
import { disruptionControllerDefinition } from '../controllers/disruption/index.ts';
import { statefulSetControllerDefinition } from '../controllers/statefulset/index.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { FlavorName } from '../src/api/naming.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import type { Pod } from '../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { DEFAULT_FEATURE_GATES } from '../src/controlplane/validation/context.ts';
import { startSimulatedNodes } from '../src/simulation/nodes.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { runControllers } from './support/controllers.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, KUBECTL, type KubectlResult } from './support/kubectl.ts';

const NS = 'shop';

interface Setup {
  c: TestCluster;
  pluginPath: string;
  /** dana's kubeconfig: a user with no role but creating CSRs. */
  dana: string;
  danaClient: KubeClient;
  stops: (() => Promise<void>)[];
  certificates: string;
  rbac: string;
}

/** `kubectl orch ARGS` as kubectl runs plugins: found on PATH, flags after the plugin name. */
function orch(s: Setup, args: string[], kubeconfig = s.c.kubeconfig): Promise<KubectlResult> {
  return new Promise((done, fail) => {
    execFile(
      KUBECTL,
      ['orch', ...args],
      { env: { ...process.env, PATH: `${s.pluginPath}:${process.env.PATH}`, KUBECONFIG: kubeconfig }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return fail(error);
        done({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

async function setUp(flavor: FlavorName): Promise<Setup> {
  const c = await startTestCluster({ flavor });
  const pluginPath = join(c.dir, 'bin');
  await mkdir(pluginPath);
  await symlink(resolve('bin/kubectl-orch'), join(pluginPath, 'kubectl-orch'));
  const n = c.cp.registry.naming;
  const dana = await c.cp.writeIdentityKubeconfig(join(c.dir, 'dana.kubeconfig'), { username: 'dana', groups: [] });
  const nodes = await startSimulatedNodes(c.cp, 1);
  c.cp.attach(nodes);
  const controllers = await runControllers(
    c.client,
    c.cp.registry,
    [approvingController, signingController, disruptionControllerDefinition, statefulSetControllerDefinition],
    {
      config: { certificates: { signing: { ...c.cp.caFiles, perSigner: {}, durationMs: 3600_000 } } },
      features: DEFAULT_FEATURE_GATES,
    },
  );
  await c.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const rbac = `rbac.authorization.${n.groupSuffix}`;
  await c.client.kind('ClusterRole').create({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRole',
    metadata: { name: 'csr-creator' },
    rules: [
      {
        apiGroups: [`certificates.${n.groupSuffix}`],
        resources: ['certificatesigningrequests'],
        verbs: ['create', 'get'],
      },
    ],
  } as KubeObject);
  await c.client.kind('ClusterRoleBinding').create({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'dana-creates-csrs' },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'csr-creator' },
    subjects: [{ apiGroup: rbac, kind: 'User', name: 'dana' }],
  } as KubeObject);
  const danaConfig = new KubeConfig();
  danaConfig.loadFromFile(dana);
  return {
    c,
    pluginPath,
    dana,
    danaClient: new KubeClient(danaConfig, c.cp.registry, { qps: 0 }),
    stops: [() => controllers.stop(), () => c.stop()],
    certificates: `certificates.${n.groupSuffix}`,
    rbac,
  };
}

async function createCsr(
  s: Setup,
  name: string,
  o: { cn: string; org?: string[]; signer: string; usages: string[] },
  client = s.c.client,
) {
  const req = await webcryptoRequest('ECDSA-P256', { commonName: o.cn, organizations: o.org });
  const csr = csrObject(req.pem, { name, signerName: o.signer, usages: o.usages });
  csr.apiVersion = `${s.certificates}/v1`;
  const { uid, resourceVersion, ...metadata } = csr.metadata;
  return client.kind<CertificateSigningRequest>('CertificateSigningRequest').create({ ...csr, metadata });
}

async function readyPod(s: Setup, name: string, ready: boolean): Promise<void> {
  const pods = s.c.client.kind<Pod>('Pod');
  // On a node no simulated agent runs, so its readiness is the test's alone.
  await pods.create(podObject(NS, name, { app: 'web' }, { nodeName: 'unsimulated' }));
  await pods.patchStatus(NS, name, { status: runningStatus(ready) }, 'merge');
}

describe.skipIf(!hasKubectl).each<FlavorName>(['orch', 'kubernetes'])('kubectl orch (%s flavor)', (flavor) => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(flavor);
  }, 300_000);
  afterAll(async () => {
    for (const stop of s?.stops ?? []) await stop();
  });

  it('certificate approve and deny with kubectl semantics', async () => {
    const signers = s.c.cp.registry.naming.signers;
    await createCsr(s, 'client-a', { cn: 'alice', signer: signers.apiServerClient, usages: ['client auth'] });
    const approved = await orch(s, ['certificate', 'approve', 'client-a']);
    expect(approved).toMatchObject({
      code: 0,
      stdout: `certificatesigningrequest.${s.certificates}/client-a approved\n`,
    });
    const csrs = s.c.client.kind<CertificateSigningRequest>('CertificateSigningRequest');
    const stored = await csrs.get(undefined, 'client-a');
    expect(stored.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Approved',
        reason: 'KubectlApprove',
        message: 'This CSR was approved by kubectl certificate approve.',
      }),
    ]);
    // Already approved: left alone, still reported; -o name prints the name only.
    expect(await orch(s, ['certificate', 'approve', 'client-a', '-o', 'name'])).toMatchObject({
      code: 0,
      stdout: `certificatesigningrequest.${s.certificates}/client-a\n`,
    });
    expect((await csrs.get(undefined, 'client-a')).status?.conditions).toHaveLength(1);
    const deny = await orch(s, ['certificate', 'deny', 'client-a']);
    expect(deny.code).toBe(1);
    expect(deny.stderr).toContain('error: certificate signing request "client-a" is already Approved');
    const missing = await orch(s, ['certificate', 'approve', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `Error from server (NotFound): certificatesigningrequests.${s.certificates} "nope" not found`,
    );
    await createCsr(s, 'client-b', { cn: 'bob', signer: signers.apiServerClient, usages: ['client auth'] });
    const refused = await orch(s, ['certificate', 'approve', 'client-b'], s.dana);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error from server \(Forbidden\): .*dana/m);
    expect(await orch(s, ['certificate', 'deny', 'client-b'])).toMatchObject({ code: 0 });
    expect((await csrs.get(undefined, 'client-b')).status?.conditions?.[0]).toMatchObject({
      type: 'Denied',
      reason: 'KubectlDeny',
    });
  }, 300_000);

  it('create role and rolebinding, then auth can-i and whoami answer for the bound user', async () => {
    expect(
      await orch(s, ['create', 'role', 'reader', '-n', NS, '--verb=get,list', '--resource=pods,deployments.apps']),
    ).toMatchObject({
      code: 0,
      stdout: `role.${s.rbac}/reader created\n`,
    });
    const bad = await orch(s, ['create', 'role', 'broken', '-n', NS, '--verb=fly', '--resource=pods']);
    expect(bad).toMatchObject({ code: 1, stderr: "error: invalid verb: 'fly'\n" });
    const noVerb = await orch(s, ['create', 'clusterrole', 'empty', '--resource=pods']);
    expect(noVerb).toMatchObject({ code: 1, stderr: 'error: at least one verb must be specified\n' });
    expect(
      (
        await orch(s, [
          'create',
          'rolebinding',
          'dana-reads',
          '-n',
          NS,
          '--role=reader',
          '--user=dana',
          '--dry-run=client',
          '-o',
          'json',
        ])
      ).stdout,
    ).toContain('"kind": "RoleBinding"');
    expect(await orch(s, ['auth', 'can-i', 'list', 'pods', '-n', NS], s.dana)).toMatchObject({
      code: 1,
      stdout: 'no\n',
    });
    expect(
      await orch(s, ['create', 'rolebinding', 'dana-reads', '-n', NS, '--role=reader', '--user=dana']),
    ).toMatchObject({
      code: 0,
      stdout: `rolebinding.${s.rbac}/dana-reads created\n`,
    });
    expect(await orch(s, ['create', 'clusterrolebinding', 'x', '--role=reader', '--user=dana'])).toMatchObject({
      code: 1,
    });
    await eventually(async () => {
      expect(await orch(s, ['auth', 'can-i', 'list', 'pods', '-n', NS], s.dana)).toMatchObject({
        code: 0,
        stdout: 'yes\n',
      });
      return true;
    }, 60_000);
    expect(await orch(s, ['auth', 'can-i', 'get', 'deployments.apps', '-n', NS], s.dana)).toMatchObject({ code: 0 });
    expect(await orch(s, ['auth', 'can-i', 'delete', 'pods', '-n', NS], s.dana)).toMatchObject({
      code: 1,
      stdout: 'no\n',
    });
    const list = await orch(s, ['auth', 'can-i', '--list', '-n', NS], s.dana);
    expect(list.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list\]$/m);
    expect(list.stdout).toMatch(/^deployments\.apps\s+\[\]\s+\[\]\s+\[get list\]$/m);
    const whoami = await orch(s, ['auth', 'whoami'], s.dana);
    expect(whoami.stdout).toMatch(/^Username\s+dana$/m);
    expect(JSON.parse((await orch(s, ['auth', 'whoami', '-o', 'json'])).stdout).status.userInfo.username).toBe('admin');
  }, 300_000);

  it('describe csr shows the decoded request, the conditions and the issued certificate', async () => {
    const signers = s.c.cp.registry.naming.signers;
    await createCsr(s, 'described', {
      cn: 'carol',
      org: ['dev'],
      signer: signers.apiServerClient,
      usages: ['client auth', 'digital signature'],
    });
    await orch(s, ['certificate', 'approve', 'described']);
    await eventually(async () => {
      const out = (await orch(s, ['describe', 'csr', 'described'])).stdout;
      expect(out).toMatch(/^Status:\s+Approved,Issued$/m);
      expect(out).toMatch(/^Key:\s+ECDSA P-256$/m);
      expect(out).toMatch(/^ {2}Common Name:\s+carol$/m);
      expect(out).toMatch(/^ {2}Organization:\s+dev$/m);
      expect(out).toMatch(/^Usages:\s+client auth, digital signature$/m);
      expect(out).toMatch(/^ {2}Approved=True {2}KubectlApprove/m);
      expect(out).toMatch(/^ {2}Subject:\s+O=dev, CN=carol$/m);
      expect(out).toMatch(/^ {2}Issuer:\s+CN=/m);
      expect(out).toMatch(/^ {2}Not After:/m);
      return true;
    }, 60_000);
    expect(await orch(s, ['describe', 'csr', 'gone'])).toMatchObject({ code: 1 });
  }, 300_000);

  it('why csr names the refusal of each kind of pending request', async () => {
    const signers = s.c.cp.registry.naming.signers;
    // A node agent client request from a user who may not create it: recognized, the review says no.
    await createCsr(
      s,
      'node-not-allowed',
      {
        cn: 'system:node:n1',
        org: ['system:nodes'],
        signer: signers.apiServerClientNodeAgent,
        usages: ['client auth', 'digital signature'],
      },
      s.danaClient,
    );
    const notAllowed = (await orch(s, ['why', 'csr/node-not-allowed'])).stdout;
    expect(notAllowed).toContain('recognized as nodeclient');
    expect(notAllowed).toContain('may not create any of the recognized subresources');
    expect(notAllowed).toMatch(/SubjectAccessReview: may dana create certificatesigningrequests\/nodeclient\? no/);
    // Not a node agent request at all: the x509 rule that failed.
    await createCsr(s, 'node-wrong-org', {
      cn: 'system:node:n1',
      signer: signers.apiServerClientNodeAgent,
      usages: ['client auth'],
    });
    const wrongOrg = (await orch(s, ['why', 'csr', 'node-wrong-org'])).stdout;
    expect(wrongOrg).toContain('not recognized as a node agent client request');
    expect(wrongOrg).toMatch(/x509 rule failed: .*organization/i);
    // A signer nobody here approves.
    await createCsr(s, 'custom', { cn: 'x', signer: 'example.com/custom', usages: ['client auth'] });
    expect((await orch(s, ['why', 'csr/custom'])).stdout).toContain('no controller here approves this signer');
    // Approved, but the signer's policy refuses it.
    await createCsr(s, 'bad-usage', { cn: 'y', signer: signers.apiServerClient, usages: ['server auth'] });
    const badUsage = await orch(s, ['why', 'csr/bad-usage', '-o', 'json']);
    expect(JSON.parse(badUsage.stdout).summary).toMatch(/^pending/);
    await orch(s, ['certificate', 'approve', 'bad-usage']);
    await eventually(async () => {
      expect((await orch(s, ['why', 'csr/bad-usage'])).stdout).toContain('failed: the signer refused it');
      return true;
    }, 60_000);
    expect(await orch(s, ['why', 'csr/absent'])).toMatchObject({ code: 1 });
  }, 300_000);

  // Budgets, pods and StatefulSets are named alike in both flavors: their `why` runs once, in orch (the plugin
  // starts in about two seconds, and this suite is the longest of the repository).
  const flavorFree = flavor === 'kubernetes';

  it.skipIf(flavorFree)(
    'why pdb and why pod explain the counts and a blocked eviction',
    async () => {
      for (const [name, ready] of [
        ['web-1', true],
        ['web-2', true],
        ['web-3', false],
      ] as const)
        await readyPod(s, name, ready);
      await s.c.client
        .kind<PodDisruptionBudget>('PodDisruptionBudget')
        .create(pdbObject(NS, 'web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } }));
      await eventually(async () => {
        const pdb = await s.c.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, 'web');
        return pdb.status?.observedGeneration === 1;
      }, 60_000);
      const blocked = await orch(s, ['why', 'pdb/web', '-n', NS]);
      expect(blocked.stdout).toContain(
        `poddisruptionbudget/web in namespace ${NS}: no disruption is allowed: 2 healthy and 2 must stay healthy`,
      );
      expect(blocked.stdout).toContain('minAvailable 2: that many must stay healthy');
      expect(blocked.stdout).toContain('pod web-3 is not counted as healthy: not Ready (Running');
      expect(blocked.stdout).toMatch(
        /an eviction of a Ready pod such as web-\d would be refused now: Cannot evict pod .* needs 2 healthy pods and has 2 currently/,
      );
      const pod = await orch(s, ['why', 'pod/web-1', '-n', NS]);
      expect(pod.stdout).toContain('eviction refused now');
      expect(pod.stdout).toContain('covered by poddisruptionbudget/web: 0 allowed');
      // web-3 turns Ready: one disruption may be spent, and the answers say so.
      const pods = s.c.client.kind<Pod>('Pod');
      await pods.replaceStatus({ ...(await pods.get(NS, 'web-3')), status: runningStatus(true) as Pod['status'] });
      await eventually(async () => {
        expect((await orch(s, ['why', 'pdb/web', '-n', NS])).stdout).toContain(
          '1 disruption allowed: 3 healthy, 2 must stay healthy',
        );
        return true;
      }, 60_000);
      expect((await orch(s, ['why', 'pod/web-1', '-n', NS])).stdout).toContain(
        'eviction allowed now: the budget web has a disruption to spend',
      );
      expect(await orch(s, ['why', 'pdb/missing', '-n', NS])).toMatchObject({ code: 1 });
      expect((await orch(s, ['why', 'secret/x'])).stderr).toContain('"why" has no answer for "secret"');
    },
    300_000,
  );

  it.skipIf(flavorFree)(
    'why sts names the pod a stalled rollout waits on, why it is not Ready and what unblocks it',
    async () => {
      const labels = { app: 'db' };
      await s.c.client.kind('StatefulSet').create({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db', namespace: NS },
        spec: {
          replicas: 2,
          serviceName: 'db',
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'db', image: 'db:broken' }] } },
        },
      } as KubeObject);
      await eventually(async () => {
        const out = (await orch(s, ['why', 'sts/db', '-n', NS])).stdout;
        expect(out).toMatch(/^statefulset\/db in namespace shop: .*db-0/m);
        expect(out).toContain('0 of 2 ready');
        // Why db-0 is not Ready, as its simulated node reported it, and what unblocks the rollout, last.
        expect(out).toContain('db-0: ContainersNotReady: containers with unready status: [db]');
        expect(out.trimEnd().split('\n').at(-1)).toMatch(
          /to unblock: fix the template or revert it \(kubectl rollout undo sts\/db\), then delete pod db-0\b/,
        );
        return true;
      }, 120_000);
    },
    300_000,
  );
});
