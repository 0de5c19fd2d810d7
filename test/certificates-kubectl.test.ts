/**
 * `kubectl certificate approve` and `deny` against the embedded control plane with the certificate controllers
 * running. kubectl only speaks the reference's groups, so this runs the `kubernetes` naming flavor.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateControllers } from '../controllers/certificates/index.ts';
import {
  eventually,
  type RequestSpec,
  type RunningControllers,
  runControllers,
  webcryptoRequest,
} from '../controllers/certificates/testing.ts';
import { group } from '../src/api/naming.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import { writeKubeconfig } from '../src/controlplane/kubeconfig.ts';
import { createBootstrapToken } from '../src/simulation/bootstrap-token.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

describe.skipIf(!hasKubectl)('kubectl certificate approve and deny (kubernetes flavor)', () => {
  let c: TestCluster;
  let running: RunningControllers;
  let admin: Kubectl;

  beforeAll(async () => {
    c = await startTestCluster({ flavor: 'kubernetes' });
    running = await runControllers(c.client, c.cp.registry, certificateControllers, {
      signing: { ...c.cp.caFiles, perSigner: {}, durationMs: 24 * 3600_000 },
    });
    admin = new Kubectl(c.kubeconfig, join(c.dir, 'kubectl-cache'));
  });

  afterAll(async () => {
    await running?.stop();
    await c?.stop();
  });

  const get = (name: string) =>
    c.client.kind<CertificateSigningRequest>('CertificateSigningRequest').get(undefined, name);

  async function manifest(name: string, signerName: string, usages: string[], spec: RequestSpec): Promise<string> {
    const { pem } = await webcryptoRequest('ECDSA-P256', spec);
    return JSON.stringify({
      apiVersion: `${group(c.cp.registry.naming, 'certificates')}/v1`,
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: Buffer.from(pem).toString('base64'), signerName, usages, expirationSeconds: 7200 },
    });
  }

  const condition = (out: string, name: string) =>
    out
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.trim()
      .split(/\s+/)
      .pop();

  it('approve: an API client certificate is then issued and verifies against the cluster CA', async () => {
    const signer = c.cp.registry.naming.signers.apiServerClient;
    await admin.ok(['create', '-f', '-'], {
      input: await manifest('dev-alice', signer, ['digital signature', 'key encipherment', 'client auth'], {
        organizations: ['developers'],
        commonName: 'alice',
      }),
    });
    // Never auto-approved.
    await new Promise((r) => setTimeout(r, 500));
    expect(condition(await admin.ok(['get', 'csr']), 'dev-alice')).toBe('Pending');

    expect(await admin.ok(['certificate', 'approve', 'dev-alice'])).toMatch(/approved/);
    const csr = await eventually(async () => {
      const x = await get('dev-alice');
      return x.status?.certificate ? x : undefined;
    });
    expect(csr.status?.conditions?.[0]).toMatchObject({ type: 'Approved', status: 'True', reason: 'KubectlApprove' });
    expect(condition(await admin.ok(['get', 'csr']), 'dev-alice')).toBe('Approved,Issued');

    const pem = Buffer.from(csr.status!.certificate!, 'base64').toString('utf8');
    writeFileSync(join(c.dir, 'ca.pem'), c.cp.caPem);
    writeFileSync(join(c.dir, 'alice.pem'), pem);
    const verify = spawnSync('openssl', ['verify', '-purpose', 'sslclient', '-CAfile', 'ca.pem', 'alice.pem'], {
      cwd: c.dir,
      encoding: 'utf8',
    });
    expect(verify.stdout.trim()).toBe('alice.pem: OK');
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('O=developers\nCN=alice');
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(7200_000 + 5 * 60_000);
  });

  it('deny: the certificate is never issued', async () => {
    const signer = c.cp.registry.naming.signers.apiServerClient;
    await admin.ok(['create', '-f', '-'], {
      input: await manifest('dev-bob', signer, ['client auth'], { commonName: 'bob' }),
    });
    expect(await admin.ok(['certificate', 'deny', 'dev-bob'])).toMatch(/denied/);
    await new Promise((r) => setTimeout(r, 800));
    const csr = await get('dev-bob');
    expect(csr.status?.certificate).toBeUndefined();
    expect(csr.status?.conditions).toEqual([expect.objectContaining({ type: 'Denied', reason: 'KubectlDeny' })]);
    expect(condition(await admin.ok(['get', 'csr']), 'dev-bob')).toBe('Denied');
  });

  it('approve of a request the signer refuses: Failed, with the reason', async () => {
    const signer = c.cp.registry.naming.signers.apiServerClient;
    await admin.ok(['create', '-f', '-'], {
      input: await manifest('dev-carol', signer, ['server auth', 'client auth'], { commonName: 'carol' }),
    });
    await admin.ok(['certificate', 'approve', 'dev-carol']);
    const csr = await eventually(async () => {
      const x = await get('dev-carol');
      return x.status?.conditions?.some((k) => k.type === 'Failed') ? x : undefined;
    });
    expect(csr.status?.conditions?.[1]).toMatchObject({
      type: 'Failed',
      status: 'True',
      reason: 'SignerValidationFailure',
      message: 'invalid usage for client certificate: server auth',
    });
    expect(condition(await admin.ok(['get', 'csr']), 'dev-carol')).toBe('Approved,Failed');
  });

  it("auto-approves the node agent's client CSR with the reference's words", async () => {
    const { token } = await createBootstrapToken(c.client);
    const path = join(c.dir, 'bootstrap.kubeconfig');
    await writeKubeconfig(path, {
      server: c.cp.url,
      caPem: c.cp.caPem,
      user: { name: 'bootstrap', token },
      clusterName: 'embedded',
      contextName: 'bootstrap',
    });
    const k = new Kubectl(path, join(c.dir, 'kubectl-cache-bootstrap'));
    const n = c.cp.registry.naming;
    await k.ok(['create', '-f', '-'], {
      input: await manifest('node-csr-k8s', n.signers.apiServerClientNodeAgent, ['digital signature', 'client auth'], {
        organizations: ['system:nodes'],
        commonName: 'system:node:k8s-worker',
      }),
    });
    const csr = await eventually(async () => {
      const x = await get('node-csr-k8s');
      return x.status?.certificate ? x : undefined;
    });
    expect(csr.status?.conditions?.[0].message).toBe(
      `Auto approving ${n.nodeAgent} client certificate after SubjectAccessReview.`,
    );
    expect(condition(await admin.ok(['get', 'csr']), 'node-csr-k8s')).toBe('Approved,Issued');
  });
});
