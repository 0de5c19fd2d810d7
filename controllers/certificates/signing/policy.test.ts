import { describe, expect, it } from 'vitest';
import { naming } from '../../../src/api/naming.ts';
import { csrObject } from '../testing.ts';
import {
  certificateTtlMs,
  DEFAULT_CERT_TTL_MS,
  EXT_KEY_USAGES,
  mapUsages,
  signerValidators,
  signingDecision,
  validityWindow,
} from './policy.ts';

const n = naming();
const H = 3600_000;
const M = 60_000;

describe('signing decision (reference §3.2)', () => {
  const running = new Set([n.signers.apiServerClientNodeAgent, n.signers.nodeAgentServing]);
  const approved = { type: 'Approved', status: 'True' as const };
  const rows: [string, Parameters<typeof csrObject>[1], ReturnType<typeof signingDecision>][] = [
    [
      'issued',
      { signerName: n.signers.apiServerClientNodeAgent, usages: [], conditions: [approved], certificatePem: 'x' },
      { action: 'skip', why: 'issued' },
    ],
    [
      'pending',
      { signerName: n.signers.apiServerClientNodeAgent, usages: [] },
      { action: 'skip', why: 'not approved' },
    ],
    [
      'denied',
      { signerName: n.signers.apiServerClientNodeAgent, usages: [], conditions: [{ type: 'Denied', status: 'True' }] },
      { action: 'skip', why: 'not approved' },
    ],
    [
      'approved and denied',
      {
        signerName: n.signers.apiServerClientNodeAgent,
        usages: [],
        conditions: [approved, { type: 'Denied', status: 'True' }],
      },
      { action: 'skip', why: 'not approved' },
    ],
    [
      'failed',
      {
        signerName: n.signers.apiServerClientNodeAgent,
        usages: [],
        conditions: [approved, { type: 'Failed', status: 'True' }],
      },
      { action: 'skip', why: 'failed' },
    ],
    [
      'failed with an empty status',
      {
        signerName: n.signers.apiServerClientNodeAgent,
        usages: [],
        conditions: [approved, { type: 'Failed', status: '' as never }],
      },
      { action: 'skip', why: 'failed' },
    ],
    [
      'a Failed condition with status False does not stop signing',
      {
        signerName: n.signers.apiServerClientNodeAgent,
        usages: [],
        conditions: [approved, { type: 'Failed', status: 'False' }],
      },
      { action: 'sign', signer: n.signers.apiServerClientNodeAgent },
    ],
    [
      'approved, running signer',
      { signerName: n.signers.nodeAgentServing, usages: [], conditions: [approved] },
      { action: 'sign', signer: n.signers.nodeAgentServing },
    ],
    [
      'approved, built-in signer without a loop',
      { signerName: n.signers.apiServerClient, usages: [], conditions: [approved] },
      { action: 'unhandled', signer: n.signers.apiServerClient },
    ],
    [
      'approved, unknown signer of our domain',
      { signerName: `${n.domain}/typo-signer`, usages: [], conditions: [approved] },
      { action: 'unhandled', signer: `${n.domain}/typo-signer` },
    ],
    [
      'approved, custom signer',
      { signerName: 'example.com/my-signer', usages: [], conditions: [approved] },
      { action: 'skip', why: 'other signer' },
    ],
  ];
  it.each(rows)('%s', (_name, fields, expected) => {
    expect(signingDecision(csrObject('', fields), running, n)).toEqual(expected);
  });

  it('has a validator for each well-known signer, legacy-unknown accepting anything', () => {
    const v = signerValidators(n);
    expect([...v.keys()].sort()).toEqual(
      [
        n.signers.apiServerClient,
        n.signers.apiServerClientNodeAgent,
        n.signers.nodeAgentServing,
        n.signers.legacyUnknown,
      ].sort(),
    );
    expect(
      v.get(n.signers.legacyUnknown)!({} as never, csrObject('', { signerName: '', usages: ['any'] })),
    ).toBeUndefined();
  });
});

describe('certificate TTL (reference §3.4)', () => {
  it.each([
    ['unset', undefined, DEFAULT_CERT_TTL_MS, DEFAULT_CERT_TTL_MS],
    ['longer than the maximum', 2 * 8760 * 3600, DEFAULT_CERT_TTL_MS, DEFAULT_CERT_TTL_MS],
    ['shorter', 3600, DEFAULT_CERT_TTL_MS, H],
    ['exactly 600 s', 600, DEFAULT_CERT_TTL_MS, 10 * M],
    ['below 600 s', 60, DEFAULT_CERT_TTL_MS, 10 * M],
    ['negative', -5, DEFAULT_CERT_TTL_MS, 10 * M],
    ['a shorter cluster duration wins', 86400, 2 * H, 2 * H],
    ['equal to the maximum', 7200, 2 * H, 2 * H],
  ])('%s', (_name, requested, certTtl, expected) => {
    expect(certificateTtlMs(requested, certTtl)).toBe(expected);
  });
});

describe('validity window (reference §3.4)', () => {
  const now = new Date('2026-03-01T12:00:00.000Z');
  const farCa = new Date('2036-01-01T00:00:00Z');
  const at = (ms: number) => new Date(now.getTime() + ms);
  it.each([
    ['1h: start backdated, end not', H, farCa, at(-5 * M), at(H)],
    ['10m', 10 * M, farCa, at(-5 * M), at(10 * M)],
    ['just under 8h: end not backdated', 8 * H - 1000, farCa, at(-5 * M), at(8 * H - 1000)],
    ['8h: end backdated', 8 * H, farCa, at(-5 * M), at(8 * H - 5 * M)],
    ['24h', 24 * H, farCa, at(-5 * M), at(24 * H - 5 * M)],
    ['default 8760h', DEFAULT_CERT_TTL_MS, farCa, at(-5 * M), at(DEFAULT_CERT_TTL_MS - 5 * M)],
    ['48h with the CA ending in 24h: clamped', 48 * H, at(24 * H), at(-5 * M), at(24 * H)],
    ['end exactly at the CA end: the CA end', 2 * H, at(2 * H), at(-5 * M), at(2 * H)],
  ])('%s', (_name, ttl, caEnd, notBefore, notAfter) => {
    expect(validityWindow(now, ttl, caEnd)).toEqual({ notBefore, notAfter });
  });

  it('truncates to whole seconds', () => {
    const w = validityWindow(new Date('2026-03-01T12:00:00.750Z'), H, farCa);
    expect(w).toEqual({ notBefore: new Date('2026-03-01T11:55:00Z'), notAfter: new Date('2026-03-01T13:00:00Z') });
  });

  it('refuses with an expired CA, the long-expired case first', () => {
    expect(validityWindow(now, H, at(-10 * M))).toEqual({
      error: 'the signer has expired: NotAfter=2026-03-01 11:50:00 +0000 UTC',
    });
    expect(validityWindow(now, H, at(-5 * M))).toEqual({
      error: 'the signer has expired: NotAfter=2026-03-01 11:55:00 +0000 UTC',
    });
    expect(validityWindow(now, H, at(-M))).toEqual({
      error: 'refusing to sign a certificate that expired in the past: NotAfter=2026-03-01 11:59:00 +0000 UTC',
    });
    expect(validityWindow(now, H, now)).toEqual({
      error: 'refusing to sign a certificate that expired in the past: NotAfter=2026-03-01 12:00:00 +0000 UTC',
    });
  });
});

describe('usage mapping (reference §3.5)', () => {
  const oid = (u: string) => EXT_KEY_USAGES.find((e) => e.usages.includes(u))!.oid;
  it.each([
    ['signing', 1],
    ['digital signature', 1],
    ['content commitment', 2],
    ['key encipherment', 4],
    ['data encipherment', 8],
    ['key agreement', 16],
    ['cert sign', 32],
    ['crl sign', 64],
    ['encipher only', 128],
    ['decipher only', 256],
  ])('%s → keyUsage bit %i', (usage, bit) => {
    expect(mapUsages([usage])).toEqual({ keyUsage: bit, extKeyUsages: [] });
  });

  it.each([
    ['any', '2.5.29.37.0'],
    ['server auth', '1.3.6.1.5.5.7.3.1'],
    ['client auth', '1.3.6.1.5.5.7.3.2'],
    ['code signing', '1.3.6.1.5.5.7.3.3'],
    ['email protection', '1.3.6.1.5.5.7.3.4'],
    ['s/mime', '1.3.6.1.5.5.7.3.4'],
    ['ipsec end system', '1.3.6.1.5.5.7.3.5'],
    ['ipsec tunnel', '1.3.6.1.5.5.7.3.6'],
    ['ipsec user', '1.3.6.1.5.5.7.3.7'],
    ['timestamping', '1.3.6.1.5.5.7.3.8'],
    ['ocsp signing', '1.3.6.1.5.5.7.3.9'],
    ['microsoft sgc', '1.3.6.1.4.1.311.10.3.3'],
    ['netscape sgc', '2.16.840.1.113730.4.1'],
  ])('%s → extKeyUsage %s', (usage, expected) => {
    expect(mapUsages([usage])).toEqual({ keyUsage: 0, extKeyUsages: [expected] });
  });

  it('combines bits, de-duplicates and sorts extended usages by the enum order', () => {
    expect(mapUsages(['client auth', 'server auth', 'digital signature', 'key encipherment', 'signing'])).toEqual({
      keyUsage: 5,
      extKeyUsages: [oid('server auth'), oid('client auth')],
    });
    expect(mapUsages(['s/mime', 'email protection', 'any', 'netscape sgc'])).toEqual({
      keyUsage: 0,
      extKeyUsages: [oid('any'), oid('email protection'), oid('netscape sgc')],
    });
  });

  it('names every unknown usage', () => {
    expect(mapUsages(['client auth', 'x', 'teleport'])).toEqual({
      error: 'unrecognized usage values: ["x" "teleport"]',
    });
  });
});
