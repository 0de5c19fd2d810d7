import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { opensslRequest, webcryptoRequest } from '../../controllers/certificates/testing.ts';
import { checkCertificateRequest } from '../controlplane/validation/x509.ts';
import { oidText } from './der.ts';
import { generateKeyPair, type KeyAlgorithm, signingAlgorithmFor } from './keys.ts';
import { pemToDer } from './pem.ts';
import { readAltNames, readCertificationRequest } from './request.ts';

x509.cryptoProvider.set(webcrypto);

const SPEC = { organizations: ['system:nodes'], commonName: 'system:node:worker-1' };

/** A request with a challengePassword attribute besides its extension request. */
async function withChallengePassword(): Promise<Uint8Array> {
  const keys = await generateKeyPair('ECDSA-P256');
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'CN=system:node:worker-1, O=system:nodes',
    keys,
    signingAlgorithm: signingAlgorithmFor(keys.privateKey),
    attributes: [new x509.ChallengePasswordAttribute('secret')],
  });
  return new Uint8Array(csr.rawData);
}

/** The same request with its outer length written in `bytes` length octets (not DER's shortest form). */
function longerOuterLength(der: Uint8Array, bytes: number): Uint8Array {
  const lengthOctets = der[1] & 0x7f;
  const length = der.subarray(2, 2 + lengthOctets);
  const padded = [...new Array(bytes - lengthOctets).fill(0), ...length];
  return Uint8Array.from([der[0], 0x80 | bytes, ...padded, ...der.subarray(2 + lengthOctets)]);
}

describe('readCertificationRequest', () => {
  it.each<KeyAlgorithm>(['ECDSA-P256', 'ECDSA-P384', 'RSA-2048', 'Ed25519'])(
    'reads a %s request as @peculiar/x509 does',
    async (alg) => {
      const der = pemToDer((await webcryptoRequest(alg, { ...SPEC, dnsNames: ['a.test'] })).pem);
      const fields = readCertificationRequest(der)!;
      const csr = new x509.Pkcs10CertificateRequest(der);
      expect(fields.subject).toEqual([
        { oid: '2.5.4.10', value: 'system:nodes' },
        { oid: '2.5.4.3', value: 'system:node:worker-1' },
      ]);
      expect(Buffer.from(fields.spki)).toEqual(Buffer.from(csr.publicKey.rawData));
      expect(fields.keyAlgorithm).toBe(csr.publicKey.algorithm.name);
      expect(fields.extensions.map((e) => e.oid)).toEqual(['2.5.29.17']);
      expect(readAltNames(fields.extensions[0].value)?.dnsNames).toEqual(['a.test']);
    },
  );

  it('reads what openssl writes, its SAN cross-checked with openssl', () => {
    const { pem } = opensslRequest(['-newkey', 'rsa:2048'], '/O=system:nodes/CN=x', 'DNS:a.test,IP:10.0.0.1');
    const fields = readCertificationRequest(pemToDer(pem))!;
    expect(fields.signatureAlgorithm).toBe('1.2.840.113549.1.1.11');
    expect(readAltNames(fields.extensions[0].value)).toEqual({
      dnsNames: ['a.test'],
      emailAddresses: [],
      ipAddresses: ['10.0.0.1'],
      uris: [],
    });
  });

  it('leaves to the library what is not DER or not in the usual shape', async () => {
    const der = pemToDer((await webcryptoRequest('ECDSA-P256', SPEC)).pem);
    expect(readCertificationRequest(der)).toBeDefined();
    const variants = {
      truncated: der.subarray(0, der.length - 1),
      'a trailing byte': Uint8Array.from([...der, 0]),
      'a length not in its shortest form': longerOuterLength(der, 3),
      'a challengePassword attribute': await withChallengePassword(),
      garbage: Uint8Array.from([1, 2, 3, 4]),
    };
    for (const [name, variant] of Object.entries(variants)) {
      expect(readCertificationRequest(variant), name).toBeUndefined();
    }
  });

  it('leaves a GeneralName of another kind to the library', () => {
    // SEQUENCE { [8] registeredID 1.2.3 }
    expect(readAltNames(Uint8Array.from([0x30, 0x04, 0x88, 0x02, 0x2a, 0x03]))).toBeUndefined();
  });

  it('leaves a malformed SAN value to the library', () => {
    expect(readAltNames(Uint8Array.from([0x30, 0x05, 0x82, 0x01]))).toBeUndefined();
    expect(readAltNames(Uint8Array.from([0x30, 0x00, 0x00]))).toBeUndefined();
  });
});

describe('checkCertificateRequest', () => {
  /** A copy of the DER with the byte at `at` flipped. */
  const flipped = (der: Uint8Array, at: number) => {
    const out = Uint8Array.from(der);
    out[at] ^= 0x01;
    return out;
  };

  it.each<[KeyAlgorithm, string]>([
    ['ECDSA-P256', 'x509: ECDSA verification failure'],
    ['RSA-2048', 'crypto/rsa: verification error'],
    ['Ed25519', 'x509: Ed25519 verification failure'],
  ])('accepts a %s request and names the failure of a tampered one', async (alg, failure) => {
    const der = pemToDer((await webcryptoRequest(alg, SPEC)).pem);
    expect(await checkCertificateRequest(der)).toBeUndefined();
    expect(await checkCertificateRequest(flipped(der, Buffer.from(der).indexOf('worker-1')))).toBe(failure);
  });

  it('gives the library the requests the DER walk leaves: same verdicts', async () => {
    const challenged = await withChallengePassword();
    expect(await checkCertificateRequest(challenged)).toBeUndefined();
    expect(await checkCertificateRequest(flipped(challenged, Buffer.from(challenged).indexOf('secret')))).toBe(
      'x509: ECDSA verification failure',
    );
    expect(await checkCertificateRequest(Uint8Array.from([1, 2, 3, 4]))).toBe('x509: malformed certificate request');
  });
});

describe('oidText', () => {
  it.each<[number[], string]>([
    [[0x55, 0x04, 0x03], '2.5.4.3'],
    [[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0e], '1.2.840.113549.1.9.14'],
    [[0x88, 0x37], '2.999'],
  ])('reads %j as %s', (bytes, text) => {
    expect(oidText(Uint8Array.from(bytes))).toBe(text);
  });

  it.each<[string, number[]]>([
    ['empty', []],
    ['a padded subidentifier', [0x55, 0x80, 0x04]],
    ['a cut subidentifier', [0x55, 0x84]],
  ])('refuses %s', (_name, bytes) => {
    expect(() => oidText(Uint8Array.from(bytes))).toThrow('malformed OID');
  });
});
