import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { certificateParts, goCertificateNotAfter, goParsesCertificate, goParsesCertificates } from './certificate.ts';
import { createSelfSignedCa } from './certs.ts';
import { elementsOf, readElement } from './der.ts';
import { generateKeyPair, type KeyAlgorithm, signingAlgorithmFor } from './keys.ts';
import { pemToDer } from './pem.ts';

/** Whether node:crypto (OpenSSL) parses it: what `status.certificate` was checked with before. */
function opensslParses(der: Uint8Array): boolean {
  try {
    new X509Certificate(der);
    return true;
  } catch {
    return false;
  }
}

/** A self-signed certificate made by the openssl CLI: `newkey` as `req -newkey` takes it, plus extensions. */
function opensslCertificate(newkey: string[], addext: string[] = []): Buffer {
  const args = ['req', '-x509', ...newkey, '-nodes', '-keyout', '-', '-subj', '/O=system:nodes/CN=system:node:a'];
  for (const ext of addext) args.push('-addext', ext);
  return Buffer.from(pemToDer(execFileSync('openssl', args, { encoding: 'utf8' }), 'CERTIFICATE'));
}

/** A certificate made by @peculiar/x509 with these extensions, each a raw OID, criticality and DER value. */
async function withExtensions(extensions: x509.Extension[], keyAlg: KeyAlgorithm = 'ECDSA-P256'): Promise<Buffer> {
  const keys = await generateKeyPair(keyAlg);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=test',
    keys,
    serialNumber: '0101',
    notBefore: new Date('2026-01-01T00:00:00Z'),
    notAfter: new Date('2027-01-01T00:00:00Z'),
    signingAlgorithm: signingAlgorithmFor(keys.privateKey),
    extensions,
  });
  return Buffer.from(cert.rawData);
}

const raw = (oid: string, hex: string, critical = false) => new x509.Extension(oid, critical, Buffer.from(hex, 'hex'));

/** Where `bytes` (hex) first occur in `der`; fails the test when they do not. */
function offsetOf(der: Buffer, hex: string): number {
  const at = der.indexOf(Buffer.from(hex, 'hex'));
  expect(at, `${hex} in the certificate`).toBeGreaterThanOrEqual(0);
  return at;
}

/** One DER element of `tag` around `content`. */
function element(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), content]);
}

/** `der` with the first occurrence of `from` (hex) after `after` (hex, if given) replaced by `to` (hex). */
function patched(der: Buffer, from: string, to: string, after?: string): Buffer {
  const start = after ? der.indexOf(Buffer.from(after, 'hex')) : 0;
  const at = der.indexOf(Buffer.from(from, 'hex'), start);
  if (start < 0 || at < 0) throw new Error(`no ${from} in the certificate`);
  return Buffer.concat([der.subarray(0, at), Buffer.from(to, 'hex'), der.subarray(at + from.length / 2)]);
}

const P256_OID = '06082a8648ce3d030107';

describe('goParsesCertificate: certificates Go parses', () => {
  it.each([
    ['RSA-2048', ['-newkey', 'rsa:2048']],
    ['P-256', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']],
    ['P-384', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384']],
    ['P-521', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-521']],
    ['Ed25519', ['-newkey', 'ed25519']],
  ])('reads a %s certificate from the openssl CLI, with names, usages and key identifiers', (_name, newkey) => {
    const der = opensslCertificate(newkey, [
      'subjectAltName=DNS:node-a.example,IP:10.0.0.1,IP:fd00::1,email:a@example.com',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=clientAuth,serverAuth',
      'basicConstraints=critical,CA:FALSE',
    ]);
    expect(goParsesCertificate(der)).toBe(true);
    expect(opensslParses(der)).toBe(true);
  });

  it.each<KeyAlgorithm>(['RSA-2048', 'ECDSA-P256', 'ECDSA-P384', 'Ed25519'])(
    'reads a %s CA of ours (basic constraints with a CA flag)',
    async (keyAlg) => {
      const ca = await createSelfSignedCa({ commonName: 'test CA', keyAlg });
      expect(goParsesCertificate(pemToDer(ca.certPem))).toBe(true);
    },
  );
});

describe('goParsesCertificate: certificates Go refuses', () => {
  it('refuses a point off its curve, which OpenSSL takes, and a point not in the uncompressed form', () => {
    const der = opensslCertificate(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    // The curve's OID, then the key's BIT STRING header (03 42 00) and the form octet (04).
    const form = offsetOf(der, `${P256_OID}03420004`) + P256_OID.length / 2 + 3;
    const offCurve = Buffer.from(der);
    offCurve[form + 5] ^= 0x01;
    expect(opensslParses(offCurve)).toBe(true);
    expect(goParsesCertificate(offCurve)).toBe(false);
    const compressed = Buffer.from(der);
    compressed[form] = 0x02;
    expect(goParsesCertificate(compressed)).toBe(false);
  });

  it.each([
    ['a key usage with more than 7 unused bits', raw('2.5.29.15', '03020880', true)],
    ['a key usage whose unused bits are set', raw('2.5.29.15', '030201ff', true)],
    ['basic constraints with a malformed boolean', raw('2.5.29.19', '3003010101', true)],
    ['basic constraints that are not a sequence', raw('2.5.29.19', '0101ff', true)],
    ['an extended key usage that is not an OID', raw('2.5.29.37', '30030201ff')],
    ['a subject key identifier that is not an OCTET STRING', raw('2.5.29.14', '020101')],
    ['an authority key identifier that is not a sequence', raw('2.5.29.35', '0401ff')],
    ['an IP address of 5 bytes', raw('2.5.29.17', '30078705010203040a')],
    ['a dNSName that is not ASCII', raw('2.5.29.17', '30048202c3a9')],
    ['an rfc822Name that is not ASCII', raw('2.5.29.17', '30048102c3a9')],
  ])('refuses %s', async (_name, extension) => {
    expect(goParsesCertificate(await withExtensions([extension]))).toBe(false);
  });

  it('refuses an extension that comes twice', async () => {
    const usage = raw('2.5.29.37', '300a06082b06010505070302');
    expect(goParsesCertificate(await withExtensions([usage, usage]))).toBe(false);
    expect(goParsesCertificate(await withExtensions([usage]))).toBe(true);
  });

  it('refuses an extension with a critical flag other than 0 or 0xff', async () => {
    const der = await withExtensions([raw('2.5.29.37', '300a06082b06010505070302', true)]);
    expect(goParsesCertificate(patched(der, '0101ff', '010101', '0603551d25'))).toBe(false);
  });

  it('refuses other signature algorithms inside and outside, trailing bytes, a version past 3', async () => {
    const der = await withExtensions([]);
    const sha256 = '06082a8648ce3d040302'; // ecdsa-with-SHA256, twice: in the TBS and after it
    const outer = der.lastIndexOf(Buffer.from(sha256, 'hex'));
    const mismatched = Buffer.from(der);
    mismatched[outer + sha256.length / 2 - 1] = 0x03; // ecdsa-with-SHA384
    expect(goParsesCertificate(mismatched)).toBe(false);
    expect(goParsesCertificate(Buffer.concat([der, Buffer.from([0])]))).toBe(false);
    expect(goParsesCertificate(patched(der, 'a003020102', 'a003020103'))).toBe(false);
    expect(goParsesCertificate(Buffer.alloc(0))).toBe(false);
    expect(goParsesCertificate(Buffer.from([1, 2, 3]))).toBe(false);
  });

  it('refuses a time that is not an instant', () => {
    const der = opensslCertificate(['-newkey', 'ed25519']);
    // The first UTCTime, YYMMDDHHMMSSZ: tag, length 13, and Z last.
    const at = der.findIndex((byte, i) => byte === 0x17 && der[i + 1] === 0x0d && der[i + 14] === 0x5a);
    expect(at).toBeGreaterThanOrEqual(0);
    const notBefore = at + 2;
    const month13 = Buffer.from(der);
    month13.write('13', notBefore + 2, 'latin1');
    expect(goParsesCertificate(month13)).toBe(false);
    const february30 = Buffer.from(der);
    february30.write('0230', notBefore + 2, 'latin1');
    expect(goParsesCertificate(february30)).toBe(false);
    expect(goParsesCertificate(der)).toBe(true);
  });

  it('refuses a PrintableString out of its set, bad UTF-8, a serial number not in its shortest form', async () => {
    const der = await withExtensions([]);
    const printable = `1304${Buffer.from('test', 'latin1').toString('hex')}`; // CN=test
    expect(goParsesCertificate(patched(der, printable, `1304${Buffer.from('te@t', 'latin1').toString('hex')}`))).toBe(
      false,
    );
    expect(goParsesCertificate(patched(der, printable, '0c047465c374'))).toBe(false);
    expect(goParsesCertificate(patched(der, printable, '0c047465c3a9'))).toBe(true);
    expect(goParsesCertificate(patched(der, '02020101', '02020001'))).toBe(false);
  });
});

describe('goParsesCertificate: shapes it leaves to the caller', () => {
  it.each([
    ['a P-224 key', () => opensslCertificate(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-224'])],
    ['a URI name', () => opensslCertificate(['-newkey', 'ed25519'], ['subjectAltName=URI:spiffe://example/a'])],
    ['name constraints', () => opensslCertificate(['-newkey', 'ed25519'], ['nameConstraints=permitted;DNS:example'])],
  ])('leaves %s', (_name, make) => {
    const der = make();
    expect(goParsesCertificate(der)).toBeUndefined();
    expect(opensslParses(der)).toBe(true);
  });

  it('leaves a negative serial number, which Go takes or refuses by GODEBUG', async () => {
    const der = await withExtensions([]);
    expect(goParsesCertificate(patched(der, '02020101', '02028101'))).toBeUndefined();
  });
});

describe('goParsesCertificate: what Go reads and what it leaves', () => {
  it('refuses a header cut short, and takes no bytes past the certificate', async () => {
    expect(goParsesCertificate(Buffer.from('30023081', 'hex'))).toBe(false);
    expect(goParsesCertificate(Buffer.from('3081', 'hex'))).toBe(false);
    const der = await withExtensions([]);
    expect(goParsesCertificate(Buffer.concat([der, der]))).toBe(false);
  });

  it('leaves bytes inside the certificate that Go never reads, even when they are not DER', async () => {
    const der = await withExtensions([]);
    const top = readElement(der, 0);
    const withJunk = element(0x30, Buffer.concat([top.content, Buffer.from([0x00])]));
    expect(goParsesCertificate(withJunk)).toBeUndefined();
  });

  it.each([
    ['a critical authority key identifier', raw('2.5.29.35', '30048002abcd', true)],
    ['a critical subject key identifier', raw('2.5.29.14', '0402abcd', true)],
    ['a negative path length', raw('2.5.29.19', '30060101ff0201ff', true)],
    ['an IPv4-mapped IPv6 address', raw('2.5.29.17', '3012871000000000000000000000ffff0a000001')],
    ['policy constraints, whatever their value', raw('2.5.29.36', '0500', true)],
    ['an extension OID with an arc past 2³¹', raw('1.2.2147483648', '0500')],
  ])('leaves %s, on which Go versions differ or which Go reads and this does not', async (_name, extension) => {
    expect(goParsesCertificate(await withExtensions([extension]))).toBeUndefined();
  });

  it('takes an authority key identifier whose key identifier is followed by what Go does not read', async () => {
    expect(goParsesCertificate(await withExtensions([raw('2.5.29.35', '30068002abcd8200')]))).toBe(true);
  });
});

describe('goParsesCertificates', () => {
  it('reads certificates back to back, as one PEM block may hold them', async () => {
    const one = await withExtensions([]);
    const p224 = opensslCertificate(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-224']);
    expect(goParsesCertificates(Buffer.concat([one, one]))).toEqual([]);
    expect(goParsesCertificates(Buffer.concat([one, p224]))).toEqual([Uint8Array.from(p224)]);
    expect(goParsesCertificates(Buffer.concat([one, Buffer.from([0x30])]))).toBe(false);
    const offCurve = Buffer.from(one);
    offCurve[offsetOf(one, `${P256_OID}03420004`) + 20] ^= 0x01;
    expect(goParsesCertificates(Buffer.concat([one, offCurve]))).toBe(false);
  });
});

describe('goParsesCertificate: never takes what OpenSSL refuses', () => {
  it('holds for any one byte changed or any truncation of real certificates', async () => {
    const certificates = [
      opensslCertificate(['-newkey', 'rsa:2048'], ['subjectAltName=DNS:a.example,IP:10.0.0.1']),
      opensslCertificate(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], ['keyUsage=digitalSignature']),
      await withExtensions([raw('2.5.29.37', '300a06082b06010505070302')], 'ECDSA-P384'),
    ];
    let read = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...certificates),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.boolean(),
        (der, position, byte, truncate) => {
          const at = position % der.length;
          const changed = truncate ? der.subarray(0, at) : Buffer.from(der);
          if (!truncate) changed[at] = byte;
          const verdict = goParsesCertificate(changed);
          if (verdict !== undefined) read++;
          if (verdict === true) expect(opensslParses(changed)).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
    // Most changes are read here, not left to the caller: the property says something.
    expect(read).toBeGreaterThan(2000);
  });
});

describe('goCertificateNotAfter', () => {
  it.each([
    ['a UTCTime', 1],
    ['a GeneralizedTime, from 2050 on', 40_000],
  ])('reads the end of validity written as %s, as OpenSSL does', (_name, days) => {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', '-'];
    const pem = execFileSync('openssl', [...args, '-subj', '/CN=a', '-days', String(days)], { encoding: 'utf8' });
    const der = pemToDer(pem, 'CERTIFICATE');
    expect(goCertificateNotAfter(der)).toEqual(new Date(new X509Certificate(der).validTo));
  });

  it('is null for a certificate Go refuses and undefined for a shape not read here', async () => {
    const der = opensslCertificate(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    expect(goCertificateNotAfter(der.subarray(0, 40))).toBeNull();
    expect(goCertificateNotAfter(await withExtensions([raw('2.5.29.19', '3003010101', true)]))).toBeNull();
    expect(goCertificateNotAfter(await withExtensions([raw('2.5.29.99', '0500')]))).toBeUndefined();
  });
});

describe('certificateParts', () => {
  it('reads the subject, the public key and the extensions as @peculiar/x509 does', async () => {
    const made = await createSelfSignedCa({ commonName: 'parts CA' });
    const parts = certificateParts(new Uint8Array(made.cert.rawData));
    expect(Buffer.from(parts.subject)).toEqual(Buffer.from(made.cert.subjectName.toArrayBuffer()));
    // SubjectPublicKeyInfo ::= SEQUENCE { algorithm, subjectPublicKey BIT STRING }: its bits after the unused count.
    const [, bits] = elementsOf(readElement(new Uint8Array(made.cert.publicKey.rawData), 0).content);
    expect(Buffer.from(parts.subjectPublicKey)).toEqual(Buffer.from(bits.content.subarray(1)));
    const ski = made.cert.getExtension(x509.SubjectKeyIdentifierExtension);
    const value = parts.extensions.get('2.5.29.14');
    expect(Buffer.from(value?.value ?? []).toString('hex')).toBe(`0414${ski?.keyId}`);
    expect(parts.extensions.get('2.5.29.19')?.critical).toBe(true);
    expect(parts.extensions.get('2.5.29.14')?.critical).toBe(false);
    expect([...parts.extensions.keys()].sort()).toEqual(made.cert.extensions.map((e) => e.type).sort());
  });

  it('finds the subject of a certificate without a version field (v1)', () => {
    const der = opensslCertificate(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    const v3 = certificateParts(der);
    // The same TBSCertificate without its [0] version (a0 03 02 01 02).
    const tbs = readElement(readElement(der, 0).content, 0);
    expect(Buffer.from(tbs.content.subarray(0, 5)).toString('hex')).toBe('a003020102');
    const withoutVersion = tbs.content.subarray(5);
    const v1 = certificateParts(element(0x30, element(0x30, Buffer.from(withoutVersion))));
    expect(Buffer.from(v1.subject)).toEqual(Buffer.from(v3.subject));
    expect(Buffer.from(v1.subjectPublicKey)).toEqual(Buffer.from(v3.subjectPublicKey));
  });
});
