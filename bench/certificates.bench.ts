/**
 * `npm run bench -- certificates`, two figures, each against its floor measured in the same run, rounds
 * alternating between the figure and its floor; printed as the median and range of the per-round ratios.
 *
 * - Build and sign one certificate (`issue()`) against a bare WebCrypto signature of the same TBS bytes
 *   with the same CA key, RSA-2048 and ECDSA P-256.
 * - Node client CSRs approved and issued end to end on the embedded control plane (approver with its
 *   SubjectAccessReview, signer, both through HTTPS; completion seen by a watch) against the floor of the
 *   two bare writes of the same kind of CSR objects (create, PUT /approval) by one client on the same server.
 */
import 'reflect-metadata';
import { KeyObject, sign, webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
import { createSelfSignedCa } from '../src/pki/certs.ts';
import { generateKeyPair, type KeyAlgorithm } from '../src/pki/keys.ts';
import { inParallel } from './run.ts';

const CA_ALGS: KeyAlgorithm[] = ['RSA-2048', 'ECDSA-P256'];
const ROUNDS = 5;
/** In-flight requests, as `inParallel` runs them by default. */
const CONCURRENCY = 16;
/** The client's rate limit: 0 is none, so that the server and the controllers are what is measured. */
const CLIENT_QPS = 0;
const CSRS_PER_ROUND = 200;
const SIGNATURES_PER_ROUND = 200;

interface Paired {
  name: string;
  unit: string;
  floorName: string;
  /** Per round: our value and the floor's, both in `unit`. */
  rounds: { ours: number; floor: number }[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n >= 1 ? n.toFixed(2) : n.toPrecision(3);
}

function report(title: string, figures: Paired[]): void {
  console.log(`\n## ${title}`);
  for (const f of figures) {
    const ratios = f.rounds.map((r) => r.ours / r.floor);
    const ours = median(f.rounds.map((r) => r.ours));
    const floor = median(f.rounds.map((r) => r.floor));
    console.log(
      `${f.name.padEnd(44)} ${`${fmt(ours)} ${f.unit}`.padStart(14)}  ${f.floorName} ${fmt(floor)} ${f.unit};` +
        `  ratio median ${fmt(median(ratios))}× (range ${fmt(Math.min(...ratios))}–${fmt(Math.max(...ratios))}, ${ratios.length} rounds)`,
    );
  }
}

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

/** The DER of the first element inside a SEQUENCE: a certificate's to-be-signed part. */
function tbsOf(der: Uint8Array): Uint8Array<ArrayBuffer> {
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
  return der.slice(inner, tbs.start + tbs.length) as Uint8Array<ArrayBuffer>;
}

const pemToDer = (pem: string): Uint8Array => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');

async function msPerCall(n: number, fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - started) / n;
}

const signOnThreadPool = promisify(sign);

/**
 * `issue()` against two floors, each a bare signature of the same TBS bytes with the same CA key: WebCrypto's
 * (the issue's floor) and node:crypto's as `issue()` makes it (inline, RSA on the thread pool, DER ECDSA).
 */
async function signing(caAlg: KeyAlgorithm): Promise<Paired[]> {
  const made = await createSelfSignedCa({ commonName: `bench ${caAlg} CA`, keyAlg: caAlg });
  const ca = await toSigningCa({ certPem: made.certPem, keyPem: made.keyPem }, 'ca.crt');
  const parsed = parseRequestPem((await requests(1, 'sign'))[0]);
  const input = {
    parsed,
    usages: ['digital signature', 'client auth'],
    notBefore: new Date(Date.now() - 300_000),
    notAfter: new Date(Date.now() + 86400_000),
  };
  const tbs = tbsOf(pemToDer((await issue(input, ca)).pem));
  const { name, hash } = ca.signingAlgorithm;
  const algorithm = name === 'ECDSA' ? { name, hash } : { name };
  const key = { key: KeyObject.from(ca.privateKey), dsaEncoding: 'der' as const };
  const digest = hash ? hash.replace('-', '').toLowerCase() : null;
  const sides = {
    ours: () => issue(input, ca),
    webcrypto: () => webcrypto.subtle.sign(algorithm, ca.privateKey, tbs),
    node: async () => (name.startsWith('RSA') ? signOnThreadPool(digest, tbs, key) : sign(digest, tbs, key)),
  };
  const order = Object.keys(sides) as (keyof typeof sides)[];
  for (const side of order) await msPerCall(20, sides[side]); // warm-up
  const webcryptoRounds: Paired['rounds'] = [];
  const nodeRounds: Paired['rounds'] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Rotate which side goes first, so that none always runs on a warmer (or more loaded) machine.
    const ms: Partial<Record<keyof typeof sides, number>> = {};
    for (let i = 0; i < order.length; i++) {
      const side = order[(r + i) % order.length];
      ms[side] = await msPerCall(SIGNATURES_PER_ROUND, sides[side]);
    }
    webcryptoRounds.push({ ours: ms.ours!, floor: ms.webcrypto! });
    nodeRounds.push({ ours: ms.ours!, floor: ms.node! });
  }
  const figure = `build+sign one certificate, ${caAlg} CA`;
  return [
    { name: figure, unit: 'ms', floorName: 'bare WebCrypto sign of its TBS', rounds: webcryptoRounds },
    { name: figure, unit: 'ms', floorName: 'bare node:crypto sign of its TBS', rounds: nodeRounds },
  ];
}

async function endToEnd(caAlg: KeyAlgorithm): Promise<Paired> {
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
  const client = new KubeClient(kc, cp.registry, { qps: CLIENT_QPS });
  const csrs = client.kind<CertificateSigningRequest>('CertificateSigningRequest');
  const signers = cp.registry.naming.signers;
  const spec = (pem: string, signerName: string) => ({
    request: Buffer.from(pem).toString('base64'),
    signerName,
    usages: ['digital signature' as const, 'client auth' as const],
  });
  const issued = new Set<string>();
  let onIssued = () => {};
  const watching = new AbortController();
  const watch = csrs
    .watch(
      undefined,
      {},
      (e) => {
        if (e.object.status?.certificate && e.object.metadata.name) issued.add(e.object.metadata.name);
        onIssued();
      },
      watching.signal,
    )
    .catch((err) => console.error('bench watch ended:', err));
  const running = await runControllers(client, cp.registry, [approvingController, signingController], {
    signing: { certFile: join(dir, 'ca.crt'), keyFile: join(dir, 'ca.key'), perSigner: {}, durationMs: 86400_000 },
  });

  // The floor: the same two writes (create, approval) per CSR, bare, for a signer nobody handles.
  const bareRound = async (tag: string): Promise<number> => {
    const pems = await requests(CSRS_PER_ROUND, tag);
    const seconds = await inParallel(
      CSRS_PER_ROUND,
      async (i) => {
        const created = await csrs.create({
          metadata: { name: `${tag}-${i}` },
          spec: spec(pems[i], 'example.com/bench'),
        });
        const conditions = [{ type: 'Approved', status: 'True' as const, reason: 'Bench', message: 'bare write' }];
        await csrs.replaceApproval({ ...created, status: { conditions } });
      },
      CONCURRENCY,
    );
    return CSRS_PER_ROUND / seconds;
  };
  const endToEndRound = async (tag: string): Promise<number> => {
    const pems = await requests(CSRS_PER_ROUND, tag);
    const names = pems.map((_, i) => `${tag}-${i}`);
    const allIssued = new Promise<void>((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error(`${tag}: not all issued in 2 minutes`)), 120_000);
      onIssued = () => {
        if (names.every((n) => issued.has(n))) {
          clearTimeout(timeout);
          resolve();
        }
      };
    });
    const started = performance.now();
    await inParallel(
      CSRS_PER_ROUND,
      (i) => csrs.create({ metadata: { name: names[i] }, spec: spec(pems[i], signers.apiServerClientNodeAgent) }),
      CONCURRENCY,
    );
    await allIssued;
    return CSRS_PER_ROUND / ((performance.now() - started) / 1000);
  };

  try {
    await bareRound(`warm-bare-${caAlg}`.toLowerCase());
    await endToEndRound(`warm-e2e-${caAlg}`.toLowerCase());
    const rounds: Paired['rounds'] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const tag = `${caAlg.toLowerCase()}-${r}`;
      // Per second, so that "ours / floor" is the fraction of the floor's rate reached.
      if (r % 2 === 0) {
        const floor = await bareRound(`bare-${tag}`);
        rounds.push({ ours: await endToEndRound(`e2e-${tag}`), floor });
      } else {
        const ours = await endToEndRound(`e2e-${tag}`);
        rounds.push({ ours, floor: await bareRound(`bare-${tag}`) });
      }
    }
    return {
      name: `CSRs approved+issued, ${caAlg} CA`,
      unit: 'CSR/s',
      floorName: 'bare create+approval',
      rounds,
    };
  } finally {
    await running.stop();
    watching.abort();
    await watch;
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const signatures: Paired[] = [];
  for (const alg of CA_ALGS) signatures.push(...(await signing(alg)));
  report(`certificate build+sign (${ROUNDS} paired rounds of ${SIGNATURES_PER_ROUND} sequential calls)`, signatures);
  const e2e: Paired[] = [];
  for (const alg of CA_ALGS) e2e.push(await endToEnd(alg));
  report(
    `CSRs end to end (${ROUNDS} paired rounds of ${CSRS_PER_ROUND} CSRs, ${CONCURRENCY} in flight, client QPS ${CLIENT_QPS || 'unlimited'})`,
    e2e,
  );
}
