/**
 * TLS bootstrap end to end on both substrates, our daemon (its own ServiceAccount, the shipped RBAC) approving and
 * signing: the node-agent example joins with a bootstrap token and its certificate passes `openssl verify` against
 * the cluster CA; a node agent is seen as `system:node:<name>` in `system:nodes` and renews with its certificate;
 * the API server refuses bad tokens and adds a token's extra groups; kubectl-created CSRs, as the right identities,
 * are approved and issued, as other identities they stay pending; the daemon counts what it approved and signed.
 * It publishes the serving CA as a ClusterTrustBundle (GA and on by default in 1.37, on both substrates).
 */
import { execFile, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { webcryptoRequest } from '../../controllers/certificates/testing.ts';
import { bundleName } from '../../controllers/certificates/trustbundle/core.ts';
import { group } from '../../src/api/naming.ts';
import type { CertificateSigningRequest, ClusterTrustBundle } from '../../src/api/types/certificates.ts';
import type { PolicyRule, Subject } from '../../src/api/types/rbac.ts';
import { StatusError } from '../../src/client/errors.ts';
import { writeKubeconfig } from '../../src/controlplane/kubeconfig.ts';
import { bootstrapTokenSecret } from '../../src/simulation/bootstrap-token.ts';
import { ROOT } from '../support/daemons.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { Kubectl } from '../support/kubectl.ts';
import { RawClient } from '../support/raw-https.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

const EXAMPLE = join(ROOT, 'examples', 'tls-bootstrap', 'node-agent.ts');
const WAIT_MS = 30_000;

/** Runs the example as a user does (asynchronously: the embedded plane answers from this process). */
function runExample(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`the example failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

describeOnSubstrate('certificates', (s) => {
  let metricsPort: number;
  const n = () => s().naming;
  const csrs = () => s().admin.kind<CertificateSigningRequest>('CertificateSigningRequest');
  const tokenId = (token: string) => token.split('.')[0];
  const rbac = () => group(n(), 'rbac.authorization');
  const clusterRole = (name: string, rules: PolicyRule[]) =>
    s()
      .admin.kind('ClusterRole')
      .create({ apiVersion: `${rbac()}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
  const bind = (name: string, role: string, subject: Subject) =>
    s()
      .admin.kind('ClusterRoleBinding')
      .create({
        apiVersion: `${rbac()}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name },
        roleRef: { apiGroup: rbac(), kind: 'ClusterRole', name: role },
        subjects: [subject],
      });

  function opensslVerify(certPem: string): string {
    writeFileSync(join(s().dir, 'verify-ca.pem'), s().caPem);
    writeFileSync(join(s().dir, 'verify-leaf.pem'), certPem);
    const r = spawnSync('openssl', ['verify', '-purpose', 'sslclient', '-CAfile', 'verify-ca.pem', 'verify-leaf.pem'], {
      cwd: s().dir,
      encoding: 'utf8',
    });
    return `${r.stdout}${r.stderr}`.trim();
  }

  beforeAll(async () => {
    // Diagnostics served on a port of its own, for its metrics.
    metricsPort = await freePort();
    await s().startDaemon({ args: [`--secure-port=${metricsPort}`] });
  });

  it('the node-agent example joins: its CSR approved and issued by the daemon, the certificate verified', async () => {
    const node = s().name('worker-1');
    const out = await runExample(['--import', 'tsx', EXAMPLE, `--kubeconfig=${s().kubeconfig}`, `--node=${node}`]);
    expect(out).toMatch(
      /^with the token, the API sees: system:bootstrap:[a-z0-9]{6} in \[system:bootstrappers, system:authenticated\]$/m,
    );
    expect(out).toContain(
      `with the certificate, the API sees: system:node:${node} in [system:nodes, system:authenticated]`,
    );
    const [, name] = /^bootstrap: CSR (\S+) issued: /m.exec(out) ?? [];
    const csr = await csrs().get(undefined, name);
    expect(csr.status?.conditions?.[0]).toMatchObject({ type: 'Approved', status: 'True', reason: 'AutoApproved' });
    const certPem = Buffer.from(csr.status?.certificate ?? '', 'base64').toString('utf8');
    expect(opensslVerify(certPem)).toBe('verify-leaf.pem: OK');
    expect(out).toMatch(/^renewal: CSR \S+ issued: /m);
  }, 90_000);

  it('joins with a bootstrap token, is approved through nodeclient, then calls the API as the node', async () => {
    const token = await s().bootstrapToken();
    const node = s().nodeAgent(s().name('worker-2'), token);
    expect(await node.whoAmI(node.bootstrapClient())).toEqual({
      username: `system:bootstrap:${tokenId(token)}`,
      groups: ['system:bootstrappers', 'system:authenticated'],
    });

    const outcome = await node.bootstrap();
    expect(outcome.issued).toBe(true);
    if (!outcome.issued) return;
    const csr = await csrs().get(undefined, outcome.credentials.csrName);
    expect(csr.spec.username).toBe(`system:bootstrap:${tokenId(token)}`);
    expect(csr.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Approved',
        status: 'True',
        reason: 'AutoApproved',
        message: `Auto approving ${n().nodeAgent} client certificate after SubjectAccessReview.`,
      }),
    ]);
    const cert = new X509Certificate(outcome.credentials.certPem);
    expect(cert.subject).toBe(`O=system:nodes\nCN=system:node:${s().name('worker-2')}`);
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.checkIssued(new X509Certificate(s().caPem))).toBe(true);
    // One hour asked for: [now - 5 min, now + 1 h] (short lifetimes keep their end).
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(65 * 60_000);
    expect(opensslVerify(outcome.credentials.certPem)).toBe('verify-leaf.pem: OK');
    expect(await node.whoAmI()).toEqual({
      username: `system:node:${s().name('worker-2')}`,
      groups: ['system:nodes', 'system:authenticated'],
    });
  });

  it('renews with its own certificate through selfnodeclient', async () => {
    const name = s().name('worker-3');
    const node = s().nodeAgent(name, await s().bootstrapToken());
    const first = await node.bootstrap();
    const renewed = await node.renew();
    expect(first.issued && renewed.issued).toBe(true);
    if (!first.issued || !renewed.issued) return;
    expect(renewed.credentials.certPem).not.toBe(first.credentials.certPem);
    const csr = await csrs().get(undefined, renewed.credentials.csrName);
    expect(csr.spec.username).toBe(`system:node:${name}`);
    expect(csr.spec.groups).toContain('system:nodes');
    expect(csr.status?.conditions?.[0]).toMatchObject({
      reason: 'AutoApproved',
      message: `Auto approving self ${n().nodeAgent} client certificate after SubjectAccessReview.`,
    });
    expect((await node.whoAmI()).username).toBe(`system:node:${name}`);
  });

  it('refuses expired, unknown and malformed bootstrap tokens', async () => {
    const expired = bootstrapTokenSecret(n(), { ttlMs: -60_000 });
    await s().admin.kind('Secret').create(expired.object);
    const unknown = bootstrapTokenSecret(n());
    for (const token of [expired.token, unknown.token, 'abcdef.tooshort', `${expired.id}.${'x'.repeat(16)}`]) {
      const agent = s().nodeAgent('x', token);
      const err = await agent.whoAmI(agent.bootstrapClient()).catch((e) => e);
      expect(err, token).toBeInstanceOf(StatusError);
      expect((err as StatusError).code).toBe(401);
    }
  });

  it('adds the extra groups of the token', async () => {
    const token = await s().bootstrapToken({ extraGroups: ['system:bootstrappers:workers'] });
    const agent = s().nodeAgent('x', token);
    expect((await agent.whoAmI(agent.bootstrapClient())).groups).toEqual([
      'system:bootstrappers',
      'system:bootstrappers:workers',
      'system:authenticated',
    ]);
  });

  describe('CSRs created with kubectl', () => {
    const kubectlWithToken = async (token: string) => {
      const path = join(s().dir, `token-${tokenId(token)}.kubeconfig`);
      await writeKubeconfig(path, {
        server: s().server,
        caPem: s().caPem,
        user: { name: 'bootstrap', token },
        clusterName: s().kind,
        contextName: 'bootstrap',
      });
      return new Kubectl(path, join(s().dir, 'kubectl-cache'));
    };
    const kubectlAs = async (username: string, groups: string[]) =>
      new Kubectl(await s().identityKubeconfig({ username, groups }), join(s().dir, 'kubectl-cache'));

    async function manifest(name: string, commonName: string): Promise<string> {
      const { pem } = await webcryptoRequest('ECDSA-P256', { organizations: ['system:nodes'], commonName });
      return JSON.stringify({
        apiVersion: `${group(n(), 'certificates')}/v1`,
        kind: 'CertificateSigningRequest',
        metadata: { name },
        spec: {
          request: Buffer.from(pem).toString('base64'),
          signerName: n().signers.apiServerClientNodeAgent,
          usages: ['digital signature', 'client auth'],
        },
      });
    }
    const issued = (name: string) =>
      eventually(
        async () => {
          const csr = await csrs().get(undefined, name);
          return csr.status?.certificate ? csr : undefined;
        },
        WAIT_MS,
        `CSR ${name} issued`,
        100,
      );
    const user = (name: string): Subject => ({ kind: 'User', apiGroup: rbac(), name });

    it('approves and issues a CSR created by a bootstrap identity', async () => {
      const k = await kubectlWithToken(await s().bootstrapToken());
      const name = s().name('kubectl-bootstrap');
      await k.ok(['create', '-f', '-'], { input: await manifest(name, `system:node:${s().name('worker-k1')}`) });
      const csr = await issued(name);
      expect(csr.spec.username).toMatch(/^system:bootstrap:/);
      expect(await k.ok(['get', 'csr', name])).toMatch(/Approved,Issued/);
    });

    it('approves and issues a renewal created by the node itself (selfnodeclient)', async () => {
      const node = `system:node:${s().name('worker-k2')}`;
      const k = await kubectlAs(node, ['system:nodes']);
      const name = s().name('kubectl-self');
      await k.ok(['create', '-f', '-'], { input: await manifest(name, node) });
      expect((await issued(name)).status?.conditions?.[0].message).toContain('self');
    });

    it('leaves pending a CSR whose requester may not create node client certificates', async () => {
      // mallory may create CSRs, but not node client certificates (no create on certificatesigningrequests/nodeclient).
      const mallory = s().name('mallory');
      await clusterRole(s().name('csr-creator'), [
        {
          verbs: ['create', 'get'],
          apiGroups: [group(n(), 'certificates')],
          resources: ['certificatesigningrequests'],
        },
      ]);
      await bind(s().name('csr-creator-mallory'), s().name('csr-creator'), user(mallory));
      const k = await kubectlAs(mallory, ['developers']);
      const name = s().name('kubectl-mallory');
      await k.ok(['create', '-f', '-'], { input: await manifest(name, `system:node:${s().name('worker-k3')}`) });
      // A node may ask for a node certificate in its own name only (NodeRestriction).
      const other = await kubectlAs(`system:node:${s().name('worker-k4')}`, ['system:nodes']);
      const refused = await other.run(['create', '-f', '-'], {
        input: await manifest(s().name('kubectl-other-node'), `system:node:${s().name('worker-k5')}`),
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `is forbidden: can only create a node CSR with CN=system:node:${s().name('worker-k4')}`,
      );
      await new Promise((r) => setTimeout(r, 1500));
      const pending = await csrs().get(undefined, name);
      expect(pending.status?.conditions ?? []).toEqual([]);
      expect(pending.status?.certificate).toBeUndefined();
      // Refused requests are retried with backoff: once mallory may create node client certificates, hers is approved.
      await bind(
        s().name('nodeclient-mallory'),
        `system:${group(n(), 'certificates')}:certificatesigningrequests:nodeclient`,
        user(mallory),
      );
      const approved = await issued(name);
      expect(approved.status?.conditions?.[0]).toMatchObject({ type: 'Approved', reason: 'AutoApproved' });
    });
  });

  it('counts approvals and signatures by signer on its metrics endpoint', async () => {
    // A reader of /metrics, authenticated and authorized by the API server on the daemon's behalf.
    const ns = await s().namespace('metrics');
    await s()
      .admin.kind('ServiceAccount')
      .create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: ns, name: 'scraper' } });
    await clusterRole(s().name('metrics-reader'), [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }]);
    await bind(s().name('metrics-reader'), s().name('metrics-reader'), {
      kind: 'ServiceAccount',
      name: 'scraper',
      namespace: ns,
    });
    const token = (await s().kubectl.ok(['create', 'token', 'scraper', '-n', ns])).trim();
    const scraper = RawClient.anonymous(`https://127.0.0.1:${metricsPort}`);
    try {
      const res = await eventually(
        async () => {
          const r = await scraper.send({ path: '/metrics', headers: { Authorization: `Bearer ${token}` } });
          return r.code === 200 ? r : undefined;
        },
        WAIT_MS,
        '/metrics answering the scraper',
        200,
      );
      const signer = n().signers.apiServerClientNodeAgent;
      expect(res.body).toMatch(new RegExp(`certificatesigningrequest_approved_total\\{signer="${signer}"\\} [1-9]`));
      expect(res.body).toMatch(new RegExp(`certificatesigningrequest_signed_total\\{signer="${signer}"\\} [1-9]`));
      expect(res.body).toContain('certificatesigningrequest_signing_duration_seconds_bucket');
      expect(res.body).toContain('certificatesigningrequest_issued_certificate_lifetime_seconds_bucket');
    } finally {
      scraper.close();
    }
  });

  it('publishes the serving CA as a ClusterTrustBundle', { timeout: 60_000 }, async () => {
    const signer = n().signers.apiServerServing;
    const bundles = s().admin.kind<ClusterTrustBundle>('ClusterTrustBundle');
    const name = bundleName(signer, s().caPem);
    const byName = async () => {
      const { items } = await bundles.list(undefined, { fieldSelector: `spec.signerName=${signer}` });
      return new Map(items.map((b) => [b.metadata.name!, b]));
    };
    const ctb = await eventually(
      async () => (await byName()).get(name),
      WAIT_MS,
      () => `the serving CA bundle; daemon log:\n${s().daemons[0].log()}`,
      100,
    );
    expect(ctb.spec).toEqual({ signerName: signer, trustBundle: s().caPem });
    expect(ctb.metadata.labels).toBeUndefined();
    expect(ctb.metadata.ownerReferences).toBeUndefined();
    // A stale bundle of the same signer is removed.
    const stale = `${signer.replace('/', ':')}:stale`;
    await bundles.create({ metadata: { name: stale }, spec: { signerName: signer, trustBundle: s().caPem } });
    await eventually(
      async () => ((await byName()).has(stale) ? undefined : true),
      WAIT_MS,
      'the stale bundle gone',
      100,
    );
    expect([...(await byName()).keys()]).toEqual([name]);
  });
});
