/**
 * `npm run bench -- certificates`: node client CSRs approved and issued per second end to end on the embedded
 * control plane (approver with its SubjectAccessReview, signer, both through HTTPS), with an RSA-2048 and an
 * ECDSA P-256 cluster CA, against the limit of the same API writes done bare by one client in the same run
 * (per CSR: create, PUT /approval, PUT /status); and the time to build and sign one certificate against
 * bare WebCrypto signing of the same bytes with the same key.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { approvingController } from '../controllers/certificates/approving/controller.ts';
import { parseRequestPem } from '../controllers/certificates/csr.ts';
import { toSigningCa } from '../controllers/certificates/signing/ca.ts';
import { issue } from '../controllers/certificates/signing/certificate.ts';
import { signingController } from '../controllers/certificates/signing/controller.ts';
import { runControllers, webcryptoRequestWithKeys } from '../controllers/certificates/testing.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import { KubeClient } from '../src/client/client.ts';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { createSelfSignedCa, issueKeyAndCertificate } from '../src/pki/certs.ts';
import { generateKeyPair, type KeyAlgorithm } from '../src/pki/keys.ts';
import { type Figure, inParallel, print } from './run.ts';

/** In-flight requests, as `inParallel` runs them by default. */
const CONCURRENCY = 64;
const CSRS = 400;
const SIGNATURES = 300;

/** Node client requests, made beforehand so that request generation is not measured. */
async function requests(n: number, tag: string): Promise<string[]> {
  const keys = await generateKeyPair('ECDSA-P256');
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const spec = { organizations: ['system:nodes'], commonName: `system:node:${tag}-${i}` };
    out.push((await webcryptoRequestWithKeys(keys, spec)).pem);
  }
  return out;
}

async function endToEnd(caAlg: KeyAlgorithm): Promise<Figure[]> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-certs-'));
  const ca = await createSelfSignedCa({ commonName: `bench ${caAlg} CA`, keyAlg: caAlg });
  await writeFile(join(dir, 'ca.crt'), ca.certPem);
  await writeFile(join(dir, 'ca.key'), ca.keyPem);
  const cp = new ControlPlane({
    port: 0,
    dataDir: dir,
    storage: 'memory',
    caCertFile: join(dir, 'ca.crt'),
    caKeyFile: join(dir, 'ca.key'),
    historySize: 20_000,
  });
  await cp.start();
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const client = new KubeClient(kc, cp.registry, { qps: 0 });
  const csrs = client.kind<CertificateSigningRequest>('CertificateSigningRequest');
  const n = cp.registry.naming;
  const spec = (pem: string, signerName: string) => ({
    request: Buffer.from(pem).toString('base64'),
    signerName,
    usages: ['digital signature' as const, 'client auth' as const],
  });
  try {
    // The limit: the same writes, bare, for a signer nobody handles.
    const bare = await requests(CSRS, 'bare');
    const leaf = await issueKeyAndCertificate({
      ca,
      subject: { commonName: 'x', organizations: ['system:nodes'] },
      usages: ['client auth'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 3600_000),
    });
    const certificate = Buffer.from(leaf.certPem).toString('base64');
    const bareSeconds = await inParallel(CSRS, async (i) => {
      const created = await csrs.create({ metadata: { name: `bare-${i}` }, spec: spec(bare[i], 'example.com/bench') });
      const conditions = [{ type: 'Approved', status: 'True' as const, reason: 'Bench', message: 'bare write' }];
      const approved = await csrs.replaceApproval({ ...created, status: { conditions } });
      await csrs.replaceStatus({ ...approved, status: { ...approved.status, certificate } });
    });

    const pems = await requests(CSRS, 'e2e');
    const running = await runControllers(client, cp.registry, [approvingController, signingController], {
      signing: { certFile: join(dir, 'ca.crt'), keyFile: join(dir, 'ca.key'), perSigner: {}, durationMs: 86400_000 },
    });
    const rt = csrs.rt;
    const started = performance.now();
    await inParallel(CSRS, (i) =>
      csrs.create({ metadata: { name: `e2e-${i}` }, spec: spec(pems[i], n.signers.apiServerClientNodeAgent) }),
    );
    const issued = () =>
      cp.storage
        .list(rt)
        .filter((o) => o.metadata.name?.startsWith('e2e-') && (o.status as { certificate?: string })?.certificate)
        .length;
    while (issued() < CSRS) {
      if (performance.now() - started > 120_000) throw new Error(`only ${issued()} of ${CSRS} issued in 2 minutes`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const e2eSeconds = (performance.now() - started) / 1000;
    await running.stop();
    return [
      {
        name: `CSRs approved and issued/s, ${caAlg} CA`,
        value: CSRS / e2eSeconds,
        unit: 'CSR/s',
        against: { name: 'bare writes (create+approval+status)', value: CSRS / bareSeconds },
      },
    ];
  } finally {
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The DER of the first element inside a SEQUENCE: a certificate's to-be-signed part. */
function tbsOf(der: Uint8Array): Uint8Array {
  const header = (at: number): { start: number; length: number } => {
    const first = der[at + 1];
    if (first < 0x80) return { start: at + 2, length: first };
    const bytes = first & 0x7f;
    let length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[at + 2 + i];
    return { start: at + 2 + bytes, length };
  };
  const inner = header(0).start;
  const tbs = header(inner);
  return der.slice(inner, tbs.start + tbs.length);
}

async function signing(caAlg: KeyAlgorithm): Promise<Figure[]> {
  const made = await createSelfSignedCa({ commonName: `bench ${caAlg} CA`, keyAlg: caAlg });
  const ca = await toSigningCa({ certPem: made.certPem, keyPem: made.keyPem }, 'ca.crt');
  const parsed = parseRequestPem((await requests(1, 'sign'))[0]);
  const input = {
    parsed,
    usages: ['digital signature', 'client auth'],
    notBefore: new Date(Date.now() - 300_000),
    notAfter: new Date(Date.now() + 86400_000),
  };
  let tbs = new Uint8Array() as Uint8Array<ArrayBuffer>;
  for (let i = 0; i < 20; i++)
    tbs = tbsOf(new Uint8Array((await issue(input, ca)).cert.rawData)) as Uint8Array<ArrayBuffer>;
  let t = performance.now();
  for (let i = 0; i < SIGNATURES; i++) await issue(input, ca);
  const issueMs = (performance.now() - t) / SIGNATURES;
  const algorithm =
    ca.signingAlgorithm.name === 'ECDSA' ? { name: 'ECDSA', hash: ca.signingAlgorithm.hash } : ca.signingAlgorithm;
  for (let i = 0; i < 20; i++) await webcrypto.subtle.sign(algorithm, ca.privateKey, tbs);
  t = performance.now();
  for (let i = 0; i < SIGNATURES; i++) await webcrypto.subtle.sign(algorithm, ca.privateKey, tbs);
  const bareMs = (performance.now() - t) / SIGNATURES;
  return [
    {
      name: `build and sign one certificate, ${caAlg} CA`,
      value: issueMs,
      unit: 'ms',
      against: { name: 'bare WebCrypto sign of its TBS bytes', value: bareMs },
    },
  ];
}

export async function run(): Promise<void> {
  await signing('ECDSA-P256'); // warm-up: JIT
  const figures: Figure[] = [];
  for (const alg of ['RSA-2048', 'ECDSA-P256'] as KeyAlgorithm[]) figures.push(...(await endToEnd(alg)));
  for (const alg of ['RSA-2048', 'ECDSA-P256'] as KeyAlgorithm[]) figures.push(...(await signing(alg)));
  print(`certificates (${CSRS} CSRs, ${CONCURRENCY} concurrent clients; ${SIGNATURES} sequential signatures)`, figures);
}
