/**
 * The CSR cleaner on the embedded control plane: its first pass, at start, deletes what the rules select, over more
 * CSRs than it judges between two turns of the event loop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanerController } from '../controllers/certificates/cleaner/controller.ts';
import {
  eventually,
  type RunningControllers,
  runControllers,
  webcryptoRequest,
} from '../controllers/certificates/testing.ts';
import { group } from '../src/api/naming.ts';
import type { CertificateSigningRequestCondition } from '../src/api/types/certificates.ts';
import { createSelfSignedCa, issueKeyAndCertificate } from '../src/pki/certs.ts';
import { rfc3339 } from '../src/util/time.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let c: TestCluster;
let running: RunningControllers;
const H = 3600_000;
const ago = (ms: number) => rfc3339(new Date(Date.now() - ms));
const cond = (type: string, at: string): CertificateSigningRequestCondition => ({
  type,
  status: 'True',
  lastUpdateTime: at,
  lastTransitionTime: at,
});

describe('CSR cleaner', () => {
  beforeAll(async () => {
    c = await startTestCluster();
    const n = c.cp.registry.naming;
    const { pem } = await webcryptoRequest('ECDSA-P256', { commonName: 'x' });
    const ca = await createSelfSignedCa({ commonName: 'ca', now: new Date(Date.now() - 10 * 86400_000) });
    const cert = (notAfter: Date) =>
      issueKeyAndCertificate({
        ca,
        subject: { commonName: 'x' },
        usages: ['client auth'],
        notBefore: new Date(Date.now() - 5 * 86400_000),
        notAfter,
      });
    const valid = (await cert(new Date(Date.now() + 86400_000))).certPem;
    const expired = (await cert(new Date(Date.now() - 60_000))).certPem;
    const seed = (name: string, creation: string, conditions: CertificateSigningRequestCondition[], certPem?: string) =>
      c.cp.seed({
        apiVersion: `${group(n, 'certificates')}/v1`,
        kind: 'CertificateSigningRequest',
        metadata: { name, creationTimestamp: creation },
        spec: { request: Buffer.from(pem).toString('base64'), signerName: 'example.com/x', usages: ['client auth'] },
        status: { conditions, ...(certPem ? { certificate: Buffer.from(certPem).toString('base64') } : {}) },
      });
    // Enough CSRs to keep, first by name (the order the pass meets them), that it yields to the event loop before it
    // reaches those it deletes.
    for (let i = 0; i < 450; i++) await seed(`0-kept-${String(i).padStart(3, '0')}`, ago(60_000), []);
    await seed('issued-old', ago(3 * H), [cond('Approved', ago(2 * H))], valid);
    await seed('issued-new', ago(30 * 60_000), [cond('Approved', ago(20 * 60_000))], valid);
    await seed('issued-expired', ago(10 * 60_000), [cond('Approved', ago(5 * 60_000))], expired);
    await seed('denied-old', ago(3 * H), [cond('Denied', ago(2 * H))]);
    await seed('failed-old', ago(3 * H), [cond('Approved', ago(3 * H)), cond('Failed', ago(2 * H))]);
    await seed('pending-old', ago(25 * H), []);
    await seed('pending-new', ago(23 * H), []);
    await seed('approved-never-issued', ago(25 * H), [cond('Approved', ago(30 * 60_000))]);
    running = await runControllers(c.client, c.cp.registry, [cleanerController]);
  });
  afterAll(async () => {
    await running?.stop();
    await c?.stop();
  });

  it('deletes past-deadline and expired CSRs, keeps the others', async () => {
    const names = async () =>
      (await c.client.kind('CertificateSigningRequest').list()).items.map((x) => x.metadata.name);
    const left = await eventually(async () => {
      const now = (await names()).filter((name) => !name?.startsWith('0-kept-'));
      return now.length === 2 ? now : undefined;
    });
    expect(left.sort()).toEqual(['issued-new', 'pending-new']);
    expect((await names()).length).toBe(452);
    const metrics = await running.metrics.metrics();
    for (const reason of ['issued', 'expired', 'denied', 'failed', 'pending', 'approved-unissued']) {
      expect(metrics).toContain(`certificatesigningrequest_cleaned_total{reason="${reason}"} 1`);
    }
  });
});
