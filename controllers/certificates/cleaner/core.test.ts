import { beforeAll, describe, expect, it } from 'vitest';
import type { CertificateSigningRequestCondition } from '../../../src/api/types/certificates.ts';
import { statedNotAfter } from '../../../src/pki/certificate.ts';
import { createSelfSignedCa, derToPem, issueKeyAndCertificate, pemToDer } from '../../../src/pki/certs.ts';
import { rfc3339 } from '../../../src/util/time.ts';
import { csrObject } from '../testing.ts';
import { cleanDecision, expiredAt } from './core.ts';

const now = new Date('2026-06-01T12:00:00Z');
const ago = (ms: number) => rfc3339(new Date(now.getTime() - ms));
const M = 60_000;
const H = 3600_000;
const cond = (type: string, lastUpdateTime?: string): CertificateSigningRequestCondition => ({
  type,
  status: 'True',
  lastUpdateTime,
});

let validCert: string;
let expiredCert: string;
beforeAll(async () => {
  const ca = await createSelfSignedCa({ commonName: 'ca', now: new Date('2025-01-01T00:00:00Z') });
  const issued = (notBefore: Date, notAfter: Date) =>
    issueKeyAndCertificate({ ca, subject: { commonName: 'x' }, usages: ['client auth'], notBefore, notAfter });
  validCert = (await issued(new Date('2026-05-01T00:00:00Z'), new Date('2027-01-01T00:00:00Z'))).certPem;
  expiredCert = (await issued(new Date('2026-05-01T00:00:00Z'), new Date('2026-06-01T11:59:00Z'))).certPem;
});

describe('cleaner rules (reference §4, plus approved-never-issued)', () => {
  type Row = [string, () => Parameters<typeof csrObject>[1], string | false];
  const base = { signerName: 's.example/x', usages: ['client auth'], creationTimestamp: ago(30 * M) };
  const rows: Row[] = [
    ['fresh pending', () => base, false],
    ['pending 24h exactly: not yet (strict)', () => ({ ...base, creationTimestamp: ago(24 * H) }), false],
    ['pending over 24h', () => ({ ...base, creationTimestamp: ago(24 * H + 1000) }), 'pending'],
    ['pending without a creation time', () => ({ ...base, creationTimestamp: undefined }), false],
    [
      'issued, approved 59m ago',
      () => ({ ...base, conditions: [cond('Approved', ago(59 * M))], certificatePem: validCert }),
      false,
    ],
    [
      'issued, approved over 1h ago',
      () => ({ ...base, conditions: [cond('Approved', ago(H + 1000))], certificatePem: validCert }),
      'issued',
    ],
    [
      'issued, approval without lastUpdateTime',
      () => ({ ...base, conditions: [cond('Approved')], certificatePem: validCert }),
      false,
    ],
    [
      'issued and expired: at once',
      () => ({ ...base, conditions: [cond('Approved', ago(M))], certificatePem: expiredCert }),
      'expired',
    ],
    [
      'issued with an unparseable certificate: not expired',
      () => ({ ...base, conditions: [cond('Approved', ago(M))], certificatePem: 'garbage' }),
      false,
    ],
    ['denied 30m ago', () => ({ ...base, conditions: [cond('Denied', ago(30 * M))] }), false],
    ['denied over 1h ago', () => ({ ...base, conditions: [cond('Denied', ago(H + 1000))] }), 'denied'],
    [
      'denied without lastUpdateTime',
      () => ({ ...base, creationTimestamp: ago(48 * H), conditions: [cond('Denied')] }),
      false,
    ],
    [
      'failed over 1h ago',
      () => ({ ...base, conditions: [cond('Approved', ago(2 * M)), cond('Failed', ago(H + 1000))] }),
      'failed',
    ],
    [
      'failed 10m ago',
      () => ({ ...base, conditions: [cond('Approved', ago(20 * M)), cond('Failed', ago(10 * M))] }),
      false,
    ],
    [
      'approved, never issued, created 23h ago',
      () => ({ ...base, creationTimestamp: ago(23 * H), conditions: [cond('Approved', ago(23 * H))] }),
      false,
    ],
    [
      'approved, never issued, created over 24h ago',
      () => ({ ...base, creationTimestamp: ago(24 * H + 1000), conditions: [cond('Approved', ago(24 * H))] }),
      'approved-unissued',
    ],
    [
      'approved without a timestamp, never issued, old: the creation time decides',
      () => ({ ...base, creationTimestamp: ago(25 * H), conditions: [cond('Approved')] }),
      'approved-unissued',
    ],
    [
      'a custom condition only: not pending, never cleaned by time',
      () => ({ ...base, creationTimestamp: ago(48 * H), conditions: [cond('Acknowledged', ago(48 * H))] }),
      false,
    ],
    [
      'denied and old: the denied rule comes before the pending one',
      () => ({ ...base, creationTimestamp: ago(48 * H), conditions: [cond('Denied', ago(2 * H))] }),
      'denied',
    ],
  ];
  it.each(rows)('%s', (_name, fields, expected) => {
    const d = cleanDecision(csrObject('', fields()), now);
    if (expected === false) expect(d).toEqual({ delete: false });
    else expect(d).toMatchObject({ delete: true, reason: expected });
  });

  it('reads the NotAfter of the first block only', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    expect(expiredAt(b64(expiredCert + validCert), now)?.toISOString()).toBe('2026-06-01T11:59:00.000Z');
    expect(expiredAt(b64(validCert + expiredCert), now)).toBeUndefined();
    expect(expiredAt(b64('no pem'), now)).toBeUndefined();
  });

  it('keeps an expired certificate Go refuses, and one that expires at the very instant', () => {
    const b64 = (der: Uint8Array) => Buffer.from(derToPem(der, 'CERTIFICATE')).toString('base64');
    const der = Buffer.from(pemToDer(expiredCert, 'CERTIFICATE'));
    expect(expiredAt(b64(der), now)?.toISOString()).toBe('2026-06-01T11:59:00.000Z');
    expect(expiredAt(b64(der), new Date('2026-06-01T11:59:00Z'))).toBeUndefined();
    // The key's point moved off its curve: OpenSSL reads the certificate, Go refuses it.
    const point = der.indexOf(Buffer.from('06082a8648ce3d03010703420004', 'hex')) + 14;
    expect(point).toBeGreaterThan(14);
    der[point + 5] ^= 0x01;
    expect(statedNotAfter(der)?.toISOString()).toBe('2026-06-01T11:59:00.000Z');
    expect(expiredAt(b64(der), now)).toBeUndefined();
  });
});
