/**
 * TLS bootstrap end to end on both substrates: the node-agent example joins with a bootstrap token, our daemon
 * (its own ServiceAccount, the shipped RBAC) approves and issues its client certificate, which `openssl verify`
 * accepts against the cluster CA.
 */
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { CertificateSigningRequest } from '../../src/api/types/certificates.ts';
import { ROOT } from '../support/daemons.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

const EXAMPLE = join(ROOT, 'examples', 'tls-bootstrap', 'node-agent.ts');

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
  const csrs = () => s().admin.kind<CertificateSigningRequest>('CertificateSigningRequest');

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
    await s().startDaemon();
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
});
