/**
 * The signing CA and the published serving CA come from files that are watched: swapping them takes effect
 * without a restart; a broken swap keeps the previous pair; an expired CA is an Event and a metric, and the
 * waiting CSRs are issued as soon as a good CA arrives. Per-signer pairs start only their own loops.
 */
import 'reflect-metadata';
import { renameSync, writeFileSync } from 'node:fs';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateControllers } from '../controllers/certificates/index.ts';
import {
  eventually,
  type RunningControllers,
  runControllers,
  tempFiles,
  webcryptoRequest,
} from '../controllers/certificates/testing.ts';
import { bundleName } from '../controllers/certificates/trustbundle/core.ts';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import type { CertificateSigningRequest, ClusterTrustBundle } from '../src/api/types/certificates.ts';
import { type CertificateWithKey, createSelfSignedCa } from '../src/pki/certs.ts';
import { rfc3339 } from '../src/util/time.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster();
});
afterAll(async () => {
  await c?.stop();
});

const csrs = () => c.client.kind<CertificateSigningRequest>('CertificateSigningRequest');
let seq = 0;

/** Creates and approves (as the admin) a CSR for the API client signer; returns its name. */
async function approvedCsr(signerName = c.cp.registry.naming.signers.apiServerClient): Promise<string> {
  const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: `user-${++seq}` });
  const created = await csrs().create({
    metadata: { name: `rotation-${seq}` },
    spec: { request: Buffer.from(pem).toString('base64'), signerName, usages: ['client auth'] },
  });
  const conditions = [{ type: 'Approved', status: 'True' as const, reason: 'Test', message: 'approved by the test' }];
  await csrs().replaceApproval({ ...created, status: { ...created.status, conditions } });
  return created.metadata.name!;
}

const issuerOf = (name: string) =>
  eventually(async () => {
    const csr = await csrs().get(undefined, name);
    const cert = csr.status?.certificate;
    return cert ? new x509.X509Certificate(Buffer.from(cert, 'base64').toString('utf8')).issuer : undefined;
  });

function eventsAbout(name: string): KubeObject[] {
  const rt = c.cp.registry.resource(group(c.cp.registry.naming, 'events'), 'v1', 'events')!;
  return c.cp.storage.list(rt).filter((e) => (e.regarding as { name?: string }).name === name);
}

/** Replaces a file the way an operator's tooling would: write aside, then rename over. */
function swap(path: string, content: string): void {
  writeFileSync(`${path}.new`, content);
  renameSync(`${path}.new`, path);
}

describe('a single signing pair from files', () => {
  let running: RunningControllers;
  let files: ReturnType<typeof tempFiles>;
  let ca: Record<string, CertificateWithKey>;

  beforeAll(async () => {
    ca = {
      first: await createSelfSignedCa({ commonName: 'first signing CA' }),
      second: await createSelfSignedCa({ commonName: 'second signing CA', keyAlg: 'RSA-2048' }),
      expired: await createSelfSignedCa({
        commonName: 'expired signing CA',
        now: new Date(Date.now() - 3 * 86400_000),
        validityDays: 1,
      }),
      third: await createSelfSignedCa({ commonName: 'third signing CA', keyAlg: 'ECDSA-P384' }),
    };
    files = tempFiles({ 'ca.crt': ca.first.certPem, 'ca.key': ca.first.keyPem, 'root.crt': ca.first.certPem });
    running = await runControllers(c.client, c.cp.registry, certificateControllers, {
      signing: { certFile: files.path('ca.crt'), keyFile: files.path('ca.key'), perSigner: {}, durationMs: 86400_000 },
      rootCaFile: files.path('root.crt'),
    });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('signs with the new CA after a swap of both files, without a restart', async () => {
    expect(await issuerOf(await approvedCsr())).toBe('CN=first signing CA');
    swap(files.path('ca.key'), ca.second.keyPem);
    swap(files.path('ca.crt'), ca.second.certPem);
    await new Promise((r) => setTimeout(r, 400));
    expect(await issuerOf(await approvedCsr())).toBe('CN=second signing CA');
  });

  it('keeps the previous pair when the new files are broken', async () => {
    swap(files.path('ca.crt'), 'not a certificate');
    await new Promise((r) => setTimeout(r, 400));
    expect(await issuerOf(await approvedCsr())).toBe('CN=second signing CA');
    swap(files.path('ca.crt'), ca.second.certPem);
  });

  it('refuses to sign with an expired CA, says so, and issues once a good CA arrives', async () => {
    swap(files.path('ca.key'), ca.expired.keyPem);
    swap(files.path('ca.crt'), ca.expired.certPem);
    await new Promise((r) => setTimeout(r, 400));
    const name = await approvedCsr();
    const event = await eventually(() => eventsAbout(name).find((e) => e.reason === 'SignerCAExpired'));
    expect(event.type).toBe('Warning');
    expect(event.note).toMatch(
      /^error auto signing csr: the signer has expired: NotAfter=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/,
    );
    expect(await running.metrics.metrics()).toMatch(
      /certificatesigningrequest_failed_total\{signer="[^"]+",reason="SignerCAExpired"\} [1-9]/,
    );
    expect((await csrs().get(undefined, name)).status?.conditions?.map((k) => k.type)).toEqual(['Approved']);
    swap(files.path('ca.key'), ca.third.keyPem);
    swap(files.path('ca.crt'), ca.third.certPem);
    // No need to wait out the backoff: a new CA looks at the waiting CSRs again.
    expect(await issuerOf(name)).toBe('CN=third signing CA');
  });

  it('republishes the serving trust bundle when the root CA file changes, removing the old one', async () => {
    const signer = c.cp.registry.naming.signers.apiServerServing;
    const names = async () =>
      (
        await c.client
          .kind<ClusterTrustBundle>('ClusterTrustBundle')
          .list(undefined, { fieldSelector: `spec.signerName=${signer}` })
      ).items.map((b) => b.metadata.name);
    await eventually(async () => ((await names()).join() === bundleName(signer, ca.first.certPem) ? true : undefined));
    const bundle = ca.first.certPem + ca.second.certPem;
    swap(files.path('root.crt'), bundle);
    await eventually(async () => ((await names()).join() === bundleName(signer, bundle) ? true : undefined));
  });
});

describe('per-signer pairs', () => {
  let running: RunningControllers;
  beforeAll(async () => {
    const own = await createSelfSignedCa({ commonName: 'node client CA', keyAlg: 'Ed25519' });
    const files = tempFiles({ 'client.crt': own.certPem, 'client.key': own.keyPem });
    running = await runControllers(c.client, c.cp.registry, certificateControllers, {
      signing: {
        perSigner: {
          apiServerClientNodeAgent: { certFile: files.path('client.crt'), keyFile: files.path('client.key') },
        },
        durationMs: 86400_000,
      },
    });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('issues only for signers with their own pair; an approved CSR for another says why it waits', async () => {
    const n = c.cp.registry.naming;
    const { pem } = await webcryptoRequest('ECDSA-P256', {
      organizations: ['system:nodes'],
      commonName: 'system:node:p1',
    });
    const created = await csrs().create({
      metadata: { name: 'per-signer-node' },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName: n.signers.apiServerClientNodeAgent,
        usages: ['digital signature', 'client auth'],
      },
    });
    // The admin may create node client CSRs: auto-approved, then signed with the Ed25519 CA.
    expect(await issuerOf(created.metadata.name!)).toBe('CN=node client CA');

    const other = await approvedCsr(n.signers.apiServerClient);
    const event = await eventually(() => eventsAbout(other).find((e) => e.reason === 'SignerNotRunning'));
    expect(event.note).toContain(`no signing loop runs for signer "${n.signers.apiServerClient}"`);
    expect((await csrs().get(undefined, other)).status?.certificate).toBeUndefined();
  });

  it('never touches custom signers', async () => {
    const name = await approvedCsr('example.com/my-signer');
    await new Promise((r) => setTimeout(r, 500));
    expect(eventsAbout(name)).toEqual([]);
    const csr = await csrs().get(undefined, name);
    expect(csr.status?.conditions?.map((k) => k.type)).toEqual(['Approved']);
    expect(rfc3339(new Date(csr.metadata.creationTimestamp!))).toBe(csr.metadata.creationTimestamp);
  });
});
