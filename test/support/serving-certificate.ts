/** A self-signed serving certificate for 127.0.0.1 and `dnsNames` (ECDSA P-256, one day), made by the openssl CLI. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function servingCertificate(dnsNames: string[] = []): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'serving-cert-'));
  try {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'];
    const names = ['IP:127.0.0.1', ...dnsNames.map((name) => `DNS:${name}`)].join(',');
    args.push('-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=test', '-addext', `subjectAltName=${names}`);
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl req failed: ${r.stderr}`);
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
