/**
 * TLS bootstrap end to end on the embedded control plane: a simulated node agent joins with a bootstrap token,
 * gets a client certificate through an auto-approved CSR, is then seen as `system:node:<name>` in
 * `system:nodes`, and renews with its certificate. kubectl-created CSRs, as the right identities, are approved
 * and issued; as other identities they stay pending. The serving CA is published as a ClusterTrustBundle.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateControllers } from '../controllers/certificates/index.ts';
import {
  eventually,
  type RunningControllers,
  runControllers,
  webcryptoRequest,
} from '../controllers/certificates/testing.ts';
import { bundleName } from '../controllers/certificates/trustbundle/core.ts';
import { group } from '../src/api/naming.ts';
import type { CertificateSigningRequest, ClusterTrustBundle } from '../src/api/types/certificates.ts';
import { StatusError } from '../src/client/errors.ts';
import { writeKubeconfig } from '../src/controlplane/kubeconfig.ts';
import { bootstrapTokenSecret, createBootstrapToken } from '../src/simulation/bootstrap-token.ts';
import { SimulatedNodeAgent } from '../src/simulation/node-agent.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

let c: TestCluster;
let running: RunningControllers;

beforeAll(async () => {
  c = await startTestCluster();
  running = await runControllers(c.client, c.cp.registry, certificateControllers, {
    signing: { ...c.cp.caFiles, perSigner: {}, durationMs: 8760 * 3600_000 },
  });
});

afterAll(async () => {
  await running?.stop();
  await c?.stop();
});

const csrs = () => c.client.kind<CertificateSigningRequest>('CertificateSigningRequest');

function agent(name: string, token?: string): SimulatedNodeAgent {
  return new SimulatedNodeAgent({
    server: c.cp.url,
    caPem: c.cp.caPem,
    registry: c.cp.registry,
    nodeName: name,
    bootstrapToken: token,
    expirationSeconds: 3600,
    timeoutMs: 15_000,
  });
}

function opensslVerify(caPem: string, certPem: string): string {
  writeFileSync(join(c.dir, 'verify-ca.pem'), caPem);
  writeFileSync(join(c.dir, 'verify-leaf.pem'), certPem);
  const r = spawnSync('openssl', ['verify', '-purpose', 'sslclient', '-CAfile', 'verify-ca.pem', 'verify-leaf.pem'], {
    cwd: c.dir,
    encoding: 'utf8',
  });
  return `${r.stdout}${r.stderr}`.trim();
}

describe('TLS bootstrap of a node agent', () => {
  it('joins with a bootstrap token, is approved through nodeclient, then calls the API as the node', async () => {
    const { token } = await createBootstrapToken(c.client, { ttlMs: 3600_000 });
    const node = agent('worker-1', token);

    expect(await node.whoAmI(node.bootstrapClient())).toEqual({
      username: `system:bootstrap:${token.split('.')[0]}`,
      groups: ['system:bootstrappers', 'system:authenticated'],
    });

    const outcome = await node.bootstrap();
    expect(outcome.issued).toBe(true);
    if (!outcome.issued) return;
    const csr = await csrs().get(undefined, outcome.credentials.csrName);
    expect(csr.spec.username).toBe(`system:bootstrap:${token.split('.')[0]}`);
    expect(csr.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Approved',
        status: 'True',
        reason: 'AutoApproved',
        message: `Auto approving ${c.cp.registry.naming.nodeAgent} client certificate after SubjectAccessReview.`,
      }),
    ]);

    const cert = new X509Certificate(outcome.credentials.certPem);
    expect(cert.subject).toBe('O=system:nodes\nCN=system:node:worker-1');
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.checkIssued(new X509Certificate(c.cp.caPem))).toBe(true);
    // One hour asked for: [now - 5 min, now + 1 h] (short lifetimes keep their end).
    const lifetime = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    expect(lifetime).toBe(65 * 60_000);
    expect(opensslVerify(c.cp.caPem, outcome.credentials.certPem)).toBe('verify-leaf.pem: OK');

    expect(await node.whoAmI()).toEqual({
      username: 'system:node:worker-1',
      groups: ['system:nodes', 'system:authenticated'],
    });
  });

  it('renews with its own certificate through selfnodeclient', async () => {
    const { token } = await createBootstrapToken(c.client);
    const node = agent('worker-2', token);
    const first = await node.bootstrap();
    expect(first.issued).toBe(true);
    const renewed = await node.renew();
    expect(renewed.issued).toBe(true);
    if (!first.issued || !renewed.issued) return;
    expect(renewed.credentials.certPem).not.toBe(first.credentials.certPem);
    const csr = await csrs().get(undefined, renewed.credentials.csrName);
    expect(csr.spec.username).toBe('system:node:worker-2');
    expect(csr.spec.groups).toContain('system:nodes');
    expect(csr.status?.conditions?.[0]).toMatchObject({
      reason: 'AutoApproved',
      message: `Auto approving self ${c.cp.registry.naming.nodeAgent} client certificate after SubjectAccessReview.`,
    });
    expect((await node.whoAmI()).username).toBe('system:node:worker-2');
  });

  it('refuses expired, unknown and malformed bootstrap tokens', async () => {
    const expired = bootstrapTokenSecret(c.cp.registry.naming, { ttlMs: -60_000 });
    await c.client.kind('Secret').create(expired.object);
    const unknown = bootstrapTokenSecret(c.cp.registry.naming);
    for (const token of [expired.token, unknown.token, 'abcdef.tooshort', `${expired.id}.${'x'.repeat(16)}`]) {
      const err = await agent('x', token)
        .whoAmI(agent('x', token).bootstrapClient())
        .catch((e) => e);
      expect(err, token).toBeInstanceOf(StatusError);
      expect((err as StatusError).code).toBe(401);
    }
  });

  it('adds the extra groups of the token', async () => {
    const { token } = await createBootstrapToken(c.client, { extraGroups: ['system:bootstrappers:workers'] });
    expect((await agent('x', token).whoAmI(agent('x', token).bootstrapClient())).groups).toEqual([
      'system:bootstrappers',
      'system:bootstrappers:workers',
      'system:authenticated',
    ]);
  });

  it('counts approvals and signatures by signer', async () => {
    const text = await running.metrics.metrics();
    const signer = c.cp.registry.naming.signers.apiServerClientNodeAgent;
    expect(text).toMatch(new RegExp(`certificatesigningrequest_approved_total\\{signer="${signer}"\\} [1-9]`));
    expect(text).toMatch(new RegExp(`certificatesigningrequest_signed_total\\{signer="${signer}"\\} [1-9]`));
    expect(text).toContain('certificatesigningrequest_signing_duration_seconds_bucket');
    expect(text).toContain('certificatesigningrequest_issued_certificate_lifetime_seconds_bucket');
  });
});

describe.skipIf(!hasKubectl)('CSRs created with kubectl', () => {
  let kubectlAs: (who: string) => Promise<Kubectl>;
  beforeAll(() => {
    kubectlAs = async (who) => {
      // KUBECONFIG splits on ':', so the file name must not carry the identity as is.
      const path = join(c.dir, `${who.replace(/[^a-z0-9-]/gi, '_')}.kubeconfig`);
      if (who.startsWith('token:')) {
        await writeKubeconfig(path, {
          server: c.cp.url,
          caPem: c.cp.caPem,
          user: { name: 'bootstrap', token: who.slice('token:'.length) },
          clusterName: 'embedded',
          contextName: 'bootstrap',
        });
      } else {
        const [user, ...groups] = who.split('|');
        await c.cp.writeIdentityKubeconfig(path, { username: user, groups });
      }
      return new Kubectl(path, join(c.dir, 'kubectl-cache'));
    };
  });

  async function manifest(name: string, commonName: string): Promise<string> {
    const { pem } = await webcryptoRequest('ECDSA-P256', { organizations: ['system:nodes'], commonName });
    const n = c.cp.registry.naming;
    return JSON.stringify({
      apiVersion: `${group(n, 'certificates')}/v1`,
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName: n.signers.apiServerClientNodeAgent,
        usages: ['digital signature', 'client auth'],
      },
    });
  }

  const issued = (name: string) =>
    eventually(async () => {
      const csr = await csrs().get(undefined, name);
      return csr.status?.certificate ? csr : undefined;
    });

  it('approves and issues a CSR created by a bootstrap identity', async () => {
    const { token } = await createBootstrapToken(c.client);
    const k = await kubectlAs(`token:${token}`);
    await k.ok(['create', '-f', '-'], { input: await manifest('kubectl-bootstrap', 'system:node:worker-k1') });
    const csr = await issued('kubectl-bootstrap');
    expect(csr.spec.username).toMatch(/^system:bootstrap:/);
    const out = await k.ok(['get', 'csr', 'kubectl-bootstrap']);
    expect(out).toMatch(/Approved,Issued/);
  });

  it('approves and issues a renewal created by the node itself (selfnodeclient)', async () => {
    const k = await kubectlAs('system:node:worker-k2|system:nodes');
    await k.ok(['create', '-f', '-'], { input: await manifest('kubectl-self', 'system:node:worker-k2') });
    const csr = await issued('kubectl-self');
    expect(csr.status?.conditions?.[0].message).toContain('self');
  });

  it('leaves pending a CSR whose requester may not create node client certificates', async () => {
    // mallory may create CSRs, but not node client certificates (no create on certificatesigningrequests/nodeclient).
    const n = c.cp.registry.naming;
    const rbac = group(n, 'rbac.authorization');
    await c.client.request('POST', `/apis/${rbac}/v1/clusterroles`, {
      body: {
        metadata: { name: 'csr-creator' },
        rules: [
          {
            verbs: ['create', 'get'],
            apiGroups: [group(n, 'certificates')],
            resources: ['certificatesigningrequests'],
          },
        ],
      },
    });
    await c.client.request('POST', `/apis/${rbac}/v1/clusterrolebindings`, {
      body: {
        metadata: { name: 'csr-creator-mallory' },
        roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'csr-creator' },
        subjects: [{ kind: 'User', apiGroup: rbac, name: 'mallory' }],
      },
    });
    const k = await kubectlAs('mallory|developers');
    await k.ok(['create', '-f', '-'], { input: await manifest('kubectl-mallory', 'system:node:worker-k3') });
    await new Promise((r) => setTimeout(r, 1500));
    const csr = await csrs().get(undefined, 'kubectl-mallory');
    expect(csr.status?.conditions ?? []).toEqual([]);
    expect(csr.status?.certificate).toBeUndefined();
    // A node impersonating another node is not "self": only nodeclient is tried, and nodes may not use it.
    const other = await kubectlAs('system:node:worker-k4|system:nodes');
    await other.ok(['create', '-f', '-'], { input: await manifest('kubectl-other-node', 'system:node:worker-k5') });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await csrs().get(undefined, 'kubectl-other-node')).status?.conditions ?? []).toEqual([]);

    // Refused requests are retried with backoff: once mallory may create node client certificates, hers is approved.
    await c.client.request('POST', `/apis/${rbac}/v1/clusterrolebindings`, {
      body: {
        metadata: { name: 'nodeclient-mallory' },
        roleRef: {
          apiGroup: rbac,
          kind: 'ClusterRole',
          name: `system:${group(n, 'certificates')}:certificatesigningrequests:nodeclient`,
        },
        subjects: [{ kind: 'User', apiGroup: rbac, name: 'mallory' }],
      },
    });
    const approved = await issued('kubectl-mallory');
    expect(approved.status?.conditions?.[0]).toMatchObject({ type: 'Approved', reason: 'AutoApproved' });
  });
});

describe('the serving trust bundle', () => {
  it('publishes the cluster CA under the serving signer', async () => {
    const n = c.cp.registry.naming;
    const signer = n.signers.apiServerServing;
    const bundles = c.client.kind<ClusterTrustBundle>('ClusterTrustBundle');
    const name = bundleName(signer, c.cp.caPem);
    const byName = async () => {
      const { items } = await bundles.list(undefined, { fieldSelector: `spec.signerName=${signer}` });
      return new Map(items.map((b) => [b.metadata.name!, b]));
    };
    const ctb = await eventually(async () => (await byName()).get(name));
    expect(ctb.spec).toEqual({ signerName: signer, trustBundle: c.cp.caPem });
    expect(ctb.metadata.labels).toBeUndefined();
    expect(ctb.metadata.ownerReferences).toBeUndefined();
    // A stale bundle of the same signer is removed.
    const stale = `${signer.replace('/', ':')}:stale`;
    await bundles.create({ metadata: { name: stale }, spec: { signerName: signer, trustBundle: c.cp.caPem } });
    await eventually(async () => ((await byName()).has(stale) ? undefined : true));
    expect([...(await byName()).keys()]).toEqual([name]);
  });
});
