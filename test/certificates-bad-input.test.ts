/**
 * Bad input: malformed PEM, wrong block type, bad signature, unknown usage, huge request, unknown signer. The API
 * refuses what it validates; CSRs that reach the controllers anyway (stored by an older or laxer server, here
 * seeded past validation) get a clear condition or Event, and neither crash nor hold up a worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateControllers } from '../controllers/certificates/index.ts';
import {
  eventually,
  type RunningControllers,
  runControllers,
  webcryptoRequest,
} from '../controllers/certificates/testing.ts';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import type { StatusError } from '../src/client/errors.ts';
import { derToPem } from '../src/pki/pem.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let c: TestCluster;
let running: RunningControllers;
let goodPem: string;
let nodePem: string;

beforeAll(async () => {
  c = await startTestCluster();
  running = await runControllers(c.client, c.cp.registry, certificateControllers, {
    signing: { ...c.cp.caFiles, perSigner: {}, durationMs: 86400_000 },
  });
  goodPem = (await webcryptoRequest('ECDSA-P256', { commonName: 'someone' })).pem;
  nodePem = (await webcryptoRequest('ECDSA-P256', { organizations: ['system:nodes'], commonName: 'system:node:w' }))
    .pem;
});
afterAll(async () => {
  await running?.stop();
  await c?.stop();
});

const b64 = (s: string) => Buffer.from(s).toString('base64');
const csrs = () => c.client.kind<CertificateSigningRequest>('CertificateSigningRequest');

function tampered(pem: string): string {
  const der = Buffer.from(pem.split('\n').slice(1, -2).join(''), 'base64');
  der[der.length - 3] ^= 0x55;
  return derToPem(der, 'CERTIFICATE REQUEST');
}

function eventsAbout(name: string): KubeObject[] {
  const rt = c.cp.registry.resource(group(c.cp.registry.naming, 'events'), 'v1', 'events')!;
  return c.cp.storage.list(rt).filter((e) => (e.regarding as { name?: string }).name === name);
}

/** Condition timestamps as the server fills them on `/approval`. */
const stamps = () => {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { lastUpdateTime: now, lastTransitionTime: now };
};

/** Stores a CSR past validation and admission, as if an older server had accepted it. */
async function seed(name: string, requestPem: string, signerName: string, usages: string[], approved = true) {
  await c.cp.seed({
    apiVersion: `${group(c.cp.registry.naming, 'certificates')}/v1`,
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: b64(requestPem), signerName, usages, username: 'admin', groups: ['system:masters'] },
    ...(approved
      ? { status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Seeded', ...stamps() }] } }
      : {}),
  });
}

describe('the API refuses bad requests at create', () => {
  const create = (
    request: string,
    usages = ['client auth'],
    signerName = c.cp.registry.naming.signers.apiServerClient,
  ) =>
    csrs()
      .create({ metadata: { generateName: 'bad-' }, spec: { request, signerName, usages: usages as never } })
      .then(
        () => ({ code: 201 as number | string, message: '' }),
        (e: StatusError & { code: number | string }) => ({ code: e.code, message: e.message }),
      );

  it.each([
    ['malformed PEM', () => b64('-----BEGIN CERTIFICATE REQUEST-----\n!!!\n-----END CERTIFICATE REQUEST-----\n'), 422],
    ['a CERTIFICATE block', () => b64(derToPem(new Uint8Array([48, 0]), 'CERTIFICATE')), 422],
    ['a bad signature', () => b64(tampered(goodPem)), 422],
  ])('%s', async (_name, request, code) => {
    const r = await create(request());
    expect(r.code).toBe(code);
    expect(r.message).toContain('spec.request');
  });

  it('an unknown usage', async () => {
    const r = await create(b64(goodPem), ['client auth', 'teleport']);
    expect(r).toMatchObject({ code: 422 });
    expect(r.message).toContain('teleport');
  });

  it('a huge request', async () => {
    const r = await create(b64(`${goodPem}${'#'.repeat(4 * 1024 * 1024)}`));
    // The server answers 413 over its 3 MiB limit, but closes the connection while the client is still
    // sending, so the client may only see the reset.
    expect([413, 'ECONNRESET', 'EPIPE']).toContain(r.code);
    const { items } = await csrs().list();
    expect(items.filter((x) => x.metadata.name?.startsWith('bad-'))).toEqual([]);
  });
});

describe('what reaches the controllers anyway', () => {
  const n = () => c.cp.registry.naming;

  it.each([
    [
      'malformed PEM',
      'seeded-malformed',
      () => '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n',
      ['client auth'],
      'InvalidRequest',
      'unable to parse csr "seeded-malformed": x509: malformed certificate request',
    ],
    [
      'a wrong block type',
      'seeded-block',
      () => derToPem(new Uint8Array([48, 0]), 'CERTIFICATE'),
      ['client auth'],
      'InvalidRequest',
      'unable to parse csr "seeded-block": PEM block type must be CERTIFICATE REQUEST',
    ],
    [
      'a bad signature',
      'seeded-signature',
      () => tampered(goodPem),
      ['client auth'],
      'InvalidRequest',
      'error auto signing csr: unable to verify certificate request signature',
    ],
    [
      'an unknown usage (legacy-unknown signer: no policy stops it)',
      'seeded-usage',
      () => goodPem,
      ['client auth', 'teleport'],
      'UnrecognizedUsage',
      'error auto signing csr: unrecognized usage values: ["teleport"]',
    ],
    [
      'a huge request',
      'seeded-huge',
      () => `${goodPem}${'#'.repeat(300 * 1024)}`,
      ['client auth'],
      'InvalidRequest',
      'unable to parse csr "seeded-huge": request is',
    ],
  ])('%s: a Warning Event on the CSR, no certificate', async (_n, name, pem, usages, reason, note) => {
    const signer = name === 'seeded-usage' ? n().signers.legacyUnknown : n().signers.apiServerClient;
    await seed(name, pem(), signer, usages);
    const event = await eventually(() => eventsAbout(name).find((e) => e.reason === reason));
    expect(event.type).toBe('Warning');
    expect(event.note).toContain(note);
    const csr = await csrs().get(undefined, name);
    expect(csr.status?.certificate).toBeUndefined();
    expect(csr.status?.conditions?.map((k) => k.type)).toEqual(['Approved']);
  });

  it('a pending node client CSR that does not parse: the approver says so', async () => {
    await seed('seeded-pending-garbage', 'garbage', n().signers.apiServerClientNodeAgent, ['client auth'], false);
    const event = await eventually(() =>
      eventsAbout('seeded-pending-garbage').find((e) => e.reason === 'InvalidRequest'),
    );
    expect(event.note).toBe('unable to parse csr "seeded-pending-garbage": PEM block type must be CERTIFICATE REQUEST');
  });

  it('an approved CSR for an unknown signer of our domain: an Event, no certificate', async () => {
    await seed('seeded-unknown-signer', goodPem, `${n().domain}/no-such-signer`, ['client auth']);
    const event = await eventually(() => eventsAbout('seeded-unknown-signer')[0]);
    expect(event).toMatchObject({ type: 'Warning', reason: 'SignerNotRunning' });
  });

  it('a policy failure: Failed/True/SignerValidationFailure with the reason, written once', async () => {
    await seed('seeded-policy', goodPem, n().signers.apiServerClientNodeAgent, ['digital signature', 'client auth']);
    const csr = await eventually(async () => {
      const x = await csrs().get(undefined, 'seeded-policy');
      return x.status?.conditions?.length === 2 ? x : undefined;
    });
    expect(csr.status!.conditions![1]).toMatchObject({
      type: 'Failed',
      status: 'True',
      reason: 'SignerValidationFailure',
      message: 'subject organization is not system:nodes',
    });
    expect(csr.status!.conditions![1].lastUpdateTime).toBeTruthy();
    await new Promise((r) => setTimeout(r, 300));
    expect((await csrs().get(undefined, 'seeded-policy')).status?.conditions).toHaveLength(2);
  });

  it('the workers are free: a good CSR is still approved and issued at once', async () => {
    const created = await csrs().create({
      metadata: { name: 'good-after-bad' },
      spec: {
        request: b64(nodePem),
        signerName: n().signers.apiServerClientNodeAgent,
        usages: ['digital signature', 'client auth'],
      },
    });
    const started = Date.now();
    await eventually(async () =>
      (await csrs().get(undefined, created.metadata.name!)).status?.certificate ? true : undefined,
    );
    expect(Date.now() - started).toBeLessThan(3000);
    const metrics = await running.metrics.metrics();
    expect(metrics).toMatch(/certificatesigningrequest_failed_total\{signer="[^"]+",reason="InvalidRequest"\} [1-9]/);
    expect(metrics).toMatch(/certificatesigningrequest_failed_total\{signer="[^"]+",reason="UnrecognizedUsage"\} 1/);
    expect(metrics).toMatch(
      /certificatesigningrequest_failed_total\{signer="[^"]+",reason="SignerValidationFailure"\} 1/,
    );
    expect(running.manager.controllerHealth().every((h) => h.ok)).toBe(true);
  });
});
