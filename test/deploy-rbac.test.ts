/**
 * The shipped RBAC is exactly what the daemon needs: the files in `deploy/` match a fresh render of
 * the controllers' declared permissions, and the real daemon, run as its own user with nothing but
 * that ClusterRole, does its work (leader lease, events, CSR approval and signing, trust
 * bundle, budget status, default service accounts, root CA ConfigMaps) with no forbidden request, while anything beyond stays denied.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerDefinitions } from '../controllers/index.ts';
import { DAEMON_NAME, FLAVORS, group } from '../src/api/naming.ts';
import type { PolicyRule } from '../src/api/types/rbac.ts';
import { CHART_RBAC, rbacPath, renderChartRbac, renderRbac } from '../src/cli/manifests.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { controllerManagerRbac, controllerManagerRules, controllerManagerUser } from '../src/deploy/rbac.ts';
import { createBootstrapToken } from '../src/simulation/bootstrap-token.ts';
import { SimulatedNodeAgent } from '../src/simulation/node-agent.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';

describe('deploy/<flavor>/rbac.yaml and the chart', () => {
  it("the chart's RBAC template has the kubernetes flavor's rules under the release's names", () => {
    expect(readFileSync(CHART_RBAC, 'utf8')).toBe(renderChartRbac());
    expect(renderChartRbac()).toContain('name: "{{ .Release.Name }}-{{ .Chart.Name }}"');
  });

  for (const flavor of FLAVORS) {
    it(`${flavor}: matches the controllers' declared permissions (run \`npm run manifests\` after changing them)`, () => {
      expect(readFileSync(rbacPath(flavor), 'utf8')).toBe(renderRbac(flavor));
    });
  }
});

describe('the daemon as its own user, with exactly the shipped RBAC', () => {
  let c: TestCluster;
  let daemon: ChildProcess;
  let log = '';
  let client: KubeClient;
  const n = () => c.cp.registry.naming;

  beforeAll(async () => {
    c = await startTestCluster();
    for (const obj of controllerManagerRbac(n(), controllerDefinitions)) await c.cp.seed(obj);
    const kubeconfig = join(c.dir, 'controller-manager.kubeconfig');
    await c.cp.writeIdentityKubeconfig(kubeconfig, { username: controllerManagerUser(), groups: [] });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    client = new KubeClient(kc, c.cp.registry, { qps: 0 });
    const { certFile, keyFile } = c.cp.caFiles;
    daemon = spawn(
      process.execPath,
      [
        'bin/orch-controller-manager.js',
        `--kubeconfig=${kubeconfig}`,
        '--api-flavor=orch',
        '--secure-port=0',
        '--logging-format=json',
        `--cluster-signing-cert-file=${certFile}`,
        `--cluster-signing-key-file=${keyFile}`,
        '--leader-elect-lease-duration=2s',
        '--leader-elect-renew-deadline=1500ms',
        '--leader-elect-retry-period=250ms',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    daemon.stdout!.on('data', (d) => (log += d));
    daemon.stderr!.on('data', (d) => (log += d));
  }, 60_000);

  /** Waits for the daemon to do something; a timeout shows its log. */
  const waitFor = <T>(what: string, probe: () => Promise<T | undefined>) =>
    eventually(probe, 30_000, () => `${what}; daemon log:\n${log}`, 200);

  afterAll(async () => {
    daemon?.kill('SIGTERM');
    await new Promise((r) => daemon?.once('exit', r));
    await c?.stop();
  });

  it('takes the lease and publishes the serving CA bundle', async () => {
    await waitFor('the lease', async () => {
      const l = await c.client.kind('Lease').get(n().systemNamespace, DAEMON_NAME);
      return (l.spec as { holderIdentity?: string }).holderIdentity ? l : undefined;
    });
    await waitFor('a trust bundle of the serving signer', async () => {
      const list = await c.client
        .kind('ClusterTrustBundle')
        .list(undefined, { fieldSelector: `spec.signerName=${n().signers.apiServerServing}` });
      return list.items[0];
    });
    // Without the CoordinatedLeaderElection gate no LeaseCandidate, as kube-controller-manager: one would draw a real
    // API server's election controller into this classic election.
    expect((await c.client.kind('LeaseCandidate').list(n().systemNamespace)).items).toEqual([]);
  });

  it('approves and issues a node-agent client certificate', async () => {
    const { token } = await createBootstrapToken(c.client, { ttlMs: 3600_000 });
    const agent = new SimulatedNodeAgent({
      server: c.cp.url,
      caPem: c.cp.caPem,
      registry: c.cp.registry,
      nodeName: 'rbac-node',
      bootstrapToken: token,
      timeoutMs: 30_000,
    });
    const outcome = await agent.bootstrap();
    expect(outcome.issued, log).toBe(true);
  });

  it('computes a disruption budget status', async () => {
    await c.client.kind('PodDisruptionBudget').create({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'rbac-pdb', namespace: 'default' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'rbac' } } },
    });
    const pdb = await waitFor('the budget status', async () => {
      const p = await c.client.kind('PodDisruptionBudget').get('default', 'rbac-pdb');
      return (p.status as { observedGeneration?: number } | undefined)?.observedGeneration ? p : undefined;
    });
    expect(pdb.status).toMatchObject({ expectedPods: 0, currentHealthy: 0, desiredHealthy: 1, disruptionsAllowed: 0 });
  });

  it('aggregates the user-facing roles (its writes of ClusterRole rules pass the escalation check)', async () => {
    const admin = await waitFor('the rules of the admin ClusterRole', async () => {
      const role = (await c.client.kind('ClusterRole').get(undefined, 'admin')) as { rules?: PolicyRule[] };
      return role.rules?.length ? role : undefined;
    });
    expect(admin.rules).toContainEqual(expect.objectContaining({ resources: ['roles', 'rolebindings'] }));
  });

  it('gives the namespaces their default ServiceAccount and the root CA ConfigMap', async () => {
    for (const ns of n().initialNamespaces) {
      await waitFor(`the default ServiceAccount of ${ns}`, () =>
        c.client
          .kind('ServiceAccount')
          .get(ns, 'default')
          .catch(() => undefined),
      );
      const cm = await waitFor(`the root CA ConfigMap of ${ns}`, () =>
        c.client
          .kind('ConfigMap')
          .get(ns, n().rootCAConfigMap)
          .catch(() => undefined),
      );
      expect((cm as { data?: Record<string, string> }).data).toEqual({ 'ca.crt': c.cp.caPem });
    }
  });

  it('never met a forbidden request', () => {
    expect(log).not.toMatch(/forbidden|cannot (get|list|watch|create|update|patch|delete)/i);
  });

  it('is granted every declared rule and nothing beyond (its own rules review)', async () => {
    const review = await client.kind('SelfSubjectRulesReview').create({
      apiVersion: `${group(n(), 'authorization')}/v1`,
      kind: 'SelfSubjectRulesReview',
      metadata: {},
      spec: { namespace: 'default' },
    });
    const granted = (review.status as { resourceRules: PolicyRule[] }).resourceRules;
    const key = (r: PolicyRule) =>
      JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], [...r.verbs].sort()]);
    // Everyone authenticated may create self reviews; beyond those, the grant is exactly the ClusterRole.
    const declared = controllerManagerRules(n(), controllerDefinitions).map(key);
    const beyond = granted.map(key).filter((k) => !declared.includes(k) && !k.includes('selfsubject'));
    expect(beyond).toEqual([]);
    for (const k of declared) expect(granted.map(key)).toContain(k);
  });

  it('is denied what it does not need', async () => {
    const can = async (attrs: Record<string, string>) => {
      const r = await client.kind('SelfSubjectAccessReview').create({
        apiVersion: `${group(n(), 'authorization')}/v1`,
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: { resourceAttributes: attrs },
      });
      return (r.status as { allowed: boolean }).allowed;
    };
    const certificates = group(n(), 'certificates');
    expect(await can({ verb: 'delete', resource: 'nodes' })).toBe(false);
    expect(await can({ verb: 'create', resource: 'secrets', namespace: 'default' })).toBe(false);
    expect(await can({ verb: 'update', group: 'policy', resource: 'poddisruptionbudgets', namespace: 'default' })).toBe(
      false,
    );
    expect(await can({ verb: 'approve', group: certificates, resource: 'signers', name: 'example.com/other' })).toBe(
      false,
    );
    expect(
      await can({ verb: 'approve', group: certificates, resource: 'signers', name: n().signers.nodeAgentServing }),
    ).toBe(false);
    expect(
      await can({ verb: 'sign', group: certificates, resource: 'signers', name: n().signers.apiServerClientNodeAgent }),
    ).toBe(true);
  });
});
