import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSelfSignedCa } from '../../../src/pki/certs.ts';
import { generateKeyPair, type KeyAlgorithm } from '../../../src/pki/keys.ts';
import { type ParsedRequest, parseRequestPem } from '../csr.ts';
import { forgeRequest, opensslRequest, type RequestSpec, webcryptoRequest } from '../testing.ts';
import { toSigningCa } from './ca.ts';
import { issue, type SigningCa, subjectName } from './certificate.ts';
import { EXT_KEY_USAGES, KEY_USAGE_BITS } from './policy.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'signer-cert-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openssl(args: string[], files: Record<string, string> = {}): string {
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

const NODE: RequestSpec = { organizations: ['system:nodes'], commonName: 'system:node:worker-1' };
const HOUR = 3600_000;

const CA_ALGS: [KeyAlgorithm, string][] = [
  ['RSA-2048', 'sha256WithRSAEncryption'],
  ['ECDSA-P256', 'ecdsa-with-SHA256'],
  ['ECDSA-P384', 'ecdsa-with-SHA384'],
  ['Ed25519', 'ED25519'],
];

const REQUESTS: [string, () => Promise<string>][] = [
  ['webcrypto ECDSA P-256', async () => (await webcryptoRequest('ECDSA-P256', NODE)).pem],
  ['webcrypto RSA-2048', async () => (await webcryptoRequest('RSA-2048', NODE)).pem],
  ['webcrypto Ed25519', async () => (await webcryptoRequest('Ed25519', NODE)).pem],
  ['node-forge RSA-2048', async () => (await forgeRequest(NODE)).pem],
  [
    'openssl EC P-384',
    async () =>
      opensslRequest(
        ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:secp384r1'],
        '/O=system:nodes/CN=system:node:worker-1',
      ).pem,
  ],
];

describe.each(CA_ALGS)('certificates signed by a %s CA', (caAlg, sigAlg) => {
  let ca: SigningCa;
  let caPem: string;
  beforeAll(async () => {
    const made = await createSelfSignedCa({ commonName: `test ${caAlg} CA`, keyAlg: caAlg });
    caPem = made.certPem;
    ca = await toSigningCa({ certPem: made.certPem, keyPem: made.keyPem }, 'ca.crt');
  });

  it.each(REQUESTS)('for a %s request: openssl and node:crypto accept the chain and the fields', async (_r, make) => {
    const parsed = await parseRequestPem(await make());
    const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000);
    const notAfter = new Date(notBefore.getTime() + 2 * HOUR);
    const { pem } = await issue(
      { parsed, usages: ['digital signature', 'key encipherment', 'client auth'], notBefore, notAfter },
      ca,
    );
    expect(pem).toMatch(
      /^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/,
    );

    expect(
      openssl(['verify', '-purpose', 'sslclient', '-CAfile', 'ca.pem', 'leaf.pem'], {
        'ca.pem': caPem,
        'leaf.pem': pem,
      }),
    ).toBe('leaf.pem: OK\n');
    const text = openssl(['x509', '-in', 'leaf.pem', '-noout', '-text']);
    expect(text).toContain(`Signature Algorithm: ${sigAlg}`);
    expect(text).toMatch(/X509v3 Key Usage: critical\s*\n\s*Digital Signature, Key Encipherment\n/);
    expect(text).toMatch(/X509v3 Extended Key Usage:\s*\n\s*TLS Web Client Authentication\n/);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s*\n\s*CA:FALSE\n/);
    expect(text).toContain('X509v3 Authority Key Identifier');
    expect(text).not.toContain('Subject Key Identifier');
    expect(text).not.toContain('Subject Alternative Name');

    const leaf = new X509Certificate(pem);
    const caCert = new X509Certificate(caPem);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.subject).toBe('O=system:nodes\nCN=system:node:worker-1');
    expect(new Date(leaf.validFrom).getTime()).toBe(notBefore.getTime());
    expect(new Date(leaf.validTo).getTime()).toBe(notAfter.getTime());
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(leaf.serialNumber.replace(/^00/, '').length).toBeLessThanOrEqual(32);
    // The certificate carries the request's key.
    expect(leaf.publicKey.export({ type: 'spki', format: 'der' })).toEqual(Buffer.from(parsed.spki));
  });

  it('copies DNS, IP, email and URI SANs, sorts extended usages, and drops other requested extensions', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const request = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=web,O=team-b,O=team-a,OU=ops,C=DE',
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [
        new x509.SubjectAlternativeNameExtension([
          { type: 'dns', value: 'web.example.test' },
          { type: 'ip', value: '10.1.2.3' },
          { type: 'ip', value: '2001:db8::7' },
          { type: 'email', value: 'ops@example.test' },
          { type: 'url', value: 'spiffe://cluster/web' },
        ]),
        // Asks to be a CA: must be ignored.
        new x509.BasicConstraintsExtension(true, 3, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      ],
    });
    const parsed = await parseRequestPem(request.toString('pem'));
    const now = Date.now();
    const { pem } = await issue(
      {
        parsed,
        usages: ['client auth', 'server auth', 'digital signature', 'cert sign'],
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + HOUR),
      },
      ca,
    );
    const leaf = new X509Certificate(pem);
    expect(leaf.ca).toBe(false);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(leaf.subjectAltName).toBe(
      'DNS:web.example.test, email:ops@example.test, IP Address:10.1.2.3, IP Address:2001:DB8:0:0:0:0:0:7, URI:spiffe://cluster/web',
    );
    // Standard attributes in the reference's order (C, O, OU, CN), both O values in one RDN, DER-sorted.
    expect(leaf.subject).toBe('C=DE\nO=team-a + O=team-b\nOU=ops\nCN=web');
    const text = openssl(['x509', '-in', 'leaf.pem', '-noout', '-text'], { 'leaf.pem': pem });
    expect(text).toMatch(/X509v3 Key Usage: critical\s*\n\s*Digital Signature, Certificate Sign\n/);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s*\n\s*CA:FALSE\n/);
    expect(text).toMatch(/X509v3 Subject Alternative Name: \n/);
    expect(openssl(['verify', '-CAfile', 'ca.pem', 'leaf.pem'], { 'ca.pem': caPem })).toBe('leaf.pem: OK\n');
  });

  it('marks the SAN extension critical when the subject is empty', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const request = await x509.Pkcs10CertificateRequestGenerator.create({
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'only-san.example.test' }])],
    });
    const parsed = await parseRequestPem(request.toString('pem'));
    expect(parsed.subjectEmpty).toBe(true);
    const { pem } = await issue(
      {
        parsed,
        usages: ['server auth'],
        notBefore: new Date(Date.now() - 1000),
        notAfter: new Date(Date.now() + HOUR),
      },
      ca,
    );
    const text = openssl(['x509', '-in', 'leaf.pem', '-noout', '-text'], { 'leaf.pem': pem });
    expect(text).toMatch(/X509v3 Subject Alternative Name: critical\s*\n\s*DNS:only-san.example.test/);
    // No key usage bits: no keyUsage extension.
    expect(text).not.toContain('X509v3 Key Usage');
  });
});

describe('subject re-encoding', () => {
  it('uses PrintableString where every character allows it, UTF8String otherwise', async () => {
    const parsed = await parseRequestPem(
      (await webcryptoRequest('ECDSA-P256', { organizations: ['system:nodes'], commonName: 'Zoë_1' })).pem,
    );
    const der = new Uint8Array(subjectName(parsed));
    const printable = [0x13, 12, ...Buffer.from('system:nodes')];
    const utf8 = [0x0c, Buffer.byteLength('Zoë_1'), ...Buffer.from('Zoë_1')];
    const hex = Buffer.from(der).toString('hex');
    expect(hex).toContain(Buffer.from(printable).toString('hex'));
    expect(hex).toContain(Buffer.from(utf8).toString('hex'));
  });
});

describe('serials and validity', () => {
  let ca: SigningCa;
  let parsed: ParsedRequest;
  beforeAll(async () => {
    const made = await createSelfSignedCa({ commonName: 'serials CA', keyAlg: 'Ed25519' });
    ca = await toSigningCa({ certPem: made.certPem, keyPem: made.keyPem }, 'ca.crt');
    parsed = await parseRequestPem((await webcryptoRequest('ECDSA-P256', NODE)).pem);
  });

  it('gives every certificate its own random serial, past many refills of the random pool', async () => {
    const serials = new Set<string>();
    const notBefore = new Date();
    const notAfter = new Date(notBefore.getTime() + HOUR);
    for (let i = 0; i < 600; i++) {
      const { pem } = await issue({ parsed, usages: ['client auth'], notBefore, notAfter }, ca);
      serials.add(new X509Certificate(pem).serialNumber);
    }
    expect(serials.size).toBe(600);
  });

  it('writes UTCTime through 2049 and GeneralizedTime from 2050, to the second', async () => {
    const notBefore = new Date('2049-12-31T23:59:58Z');
    const notAfter = new Date('2050-01-01T00:00:09Z');
    const { pem } = await issue({ parsed, usages: ['client auth'], notBefore, notAfter }, ca);
    const text = openssl(['asn1parse', '-in', 'leaf.pem'], { 'leaf.pem': pem });
    expect(text).toContain('UTCTIME           :491231235958Z');
    expect(text).toContain('GENERALIZEDTIME   :20500101000009Z');
    const leaf = new X509Certificate(pem);
    expect(new Date(leaf.validFrom).getTime()).toBe(notBefore.getTime());
    expect(new Date(leaf.validTo).getTime()).toBe(notAfter.getTime());
  });
});

describe('extensions written by hand, byte for byte as @peculiar/x509 writes them', () => {
  let ca: SigningCa;
  let caCert: x509.X509Certificate;
  beforeAll(async () => {
    const made = await createSelfSignedCa({ commonName: 'encoding CA' });
    caCert = made.cert;
    ca = await toSigningCa({ certPem: made.certPem, keyPem: made.keyPem }, 'ca.crt');
  });

  const extensionsOf = async (parsed: ParsedRequest, usages: string[]) => {
    const now = Date.now();
    const { der } = await issue({ parsed, usages, notBefore: new Date(now), notAfter: new Date(now + HOUR) }, ca);
    return new Map(new x509.X509Certificate(der).extensions.map((e) => [e.type, Buffer.from(e.rawData)]));
  };
  const raw = (e: x509.Extension) => Buffer.from(e.rawData);

  it('keyUsage for each of the 511 sets of usage bits, and basicConstraints and authorityKeyIdentifier', async () => {
    const parsed = await parseRequestPem((await webcryptoRequest('ECDSA-P256', NODE)).pem);
    const names = Object.entries(KEY_USAGE_BITS).filter(([name]) => name !== 'signing');
    for (let bits = 1; bits < 512; bits++) {
      const usages = names.filter(([, bit]) => bits & bit).map(([name]) => name);
      const got = await extensionsOf(parsed, usages);
      expect(got.get('2.5.29.15'), usages.join(', ')).toEqual(raw(new x509.KeyUsagesExtension(bits, true)));
      if (bits === 1) {
        expect(got.get('2.5.29.19')).toEqual(raw(new x509.BasicConstraintsExtension(false, undefined, true)));
        const ski = caCert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId ?? '';
        expect(got.get('2.5.29.35')).toEqual(raw(new x509.AuthorityKeyIdentifierExtension(ski)));
      }
    }
  });

  it('extKeyUsage of every extended usage, in the reference order', async () => {
    const parsed = await parseRequestPem((await webcryptoRequest('ECDSA-P256', NODE)).pem);
    const got = await extensionsOf(parsed, EXT_KEY_USAGES.map((e) => e.usages[0]).reverse());
    const expected = new x509.ExtendedKeyUsageExtension(EXT_KEY_USAGES.map((e) => e.oid));
    expect(got.get('2.5.29.37')).toEqual(raw(expected));
  });

  it.each([
    ['with a subject: not critical', 'CN=web', false],
    ['without a subject: critical', '', true],
  ])('subjectAltName of every kind of name %s', async (_name, subject, critical) => {
    const names: x509.JsonGeneralName[] = [
      { type: 'dns', value: 'web.example.test' },
      { type: 'dns', value: '*.example.test' },
      { type: 'email', value: 'ops@example.test' },
      { type: 'ip', value: '10.1.2.3' },
      { type: 'ip', value: '::' },
      { type: 'ip', value: '2001:db8::7' },
      { type: 'ip', value: 'fe80:0:0:1::' },
      { type: 'ip', value: '1:2:3:4:5:6:7:8' },
      { type: 'url', value: 'spiffe://cluster/web' },
    ];
    const keys = await generateKeyPair('ECDSA-P256');
    const request = await x509.Pkcs10CertificateRequestGenerator.create({
      ...(subject ? { name: subject } : {}),
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.SubjectAlternativeNameExtension(names)],
    });
    const got = await extensionsOf(await parseRequestPem(request.toString('pem')), ['server auth']);
    expect(got.get('2.5.29.17')).toEqual(raw(new x509.SubjectAlternativeNameExtension(names, critical)));
  });
});
