import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { naming } from '../../../src/api/naming.ts';
import type { ClusterTrustBundle } from '../../../src/api/types/certificates.ts';
import { createSelfSignedCa } from '../../../src/pki/certs.ts';
import { bundleName, bundleProblem, publishPlan } from './core.ts';

const signer = naming().signers.apiServerServing;
let ca1: string;
let ca2: string;
beforeAll(async () => {
  ca1 = (await createSelfSignedCa({ commonName: 'one' })).certPem;
  ca2 = (await createSelfSignedCa({ commonName: 'two' })).certPem;
});

const ctb = (name: string, trustBundle: string, signerName = signer): ClusterTrustBundle => ({
  metadata: { name, resourceVersion: '7' },
  spec: { signerName, trustBundle },
});

describe('trust bundle naming (reference §5.2)', () => {
  it('is the signer with colons, then 24 hex characters of the SHA-256 of the bytes', () => {
    const name = bundleName(signer, ca1);
    const digest = createHash('sha256').update(ca1).digest('hex');
    expect(name).toBe(`${signer.replace('/', ':')}:${digest.slice(0, 24)}`);
    expect(name).toMatch(/:[0-9a-f]{24}$/);
    expect(bundleName(signer, ca2)).not.toBe(name);
  });

  it('checks that the bytes hold certificates', () => {
    expect(bundleProblem(ca1 + ca2)).toBeUndefined();
    expect(bundleProblem('')).toBe('no certificate found');
    expect(bundleProblem('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toBe(
      'certificate 0 does not parse',
    );
  });
});

describe('publish plan', () => {
  it('creates the bundle when missing, with no labels or owners, the bytes verbatim', () => {
    expect(publishPlan(signer, ca1, [])).toEqual({
      create: { metadata: { name: bundleName(signer, ca1) }, spec: { signerName: signer, trustBundle: ca1 } },
      delete: [],
    });
  });

  it('does nothing when the bundle is current', () => {
    expect(publishPlan(signer, ca1, [ctb(bundleName(signer, ca1), ca1)])).toEqual({ delete: [] });
  });

  it('replaces only the trust bundle of an edited object', () => {
    const name = bundleName(signer, ca1);
    expect(publishPlan(signer, ca1, [ctb(name, `${ca1}\n`)])).toEqual({ update: ctb(name, ca1), delete: [] });
  });

  it('deletes stale bundles of the signer after a CA change', () => {
    const plan = publishPlan(signer, ca2, [
      ctb(bundleName(signer, ca1), ca1),
      ctb(`${signer.replace('/', ':')}:old`, ca1),
    ]);
    expect(plan.create?.metadata.name).toBe(bundleName(signer, ca2));
    expect(plan.delete).toEqual([bundleName(signer, ca1), `${signer.replace('/', ':')}:old`]);
  });

  it("leaves other signers' bundles alone", () => {
    expect(publishPlan(signer, ca1, [ctb('example.com:x:1', ca2, 'example.com/x')]).delete).toEqual([]);
  });
});
