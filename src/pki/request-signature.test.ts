import 'reflect-metadata';
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { opensslRequest, webcryptoRequest } from '../../controllers/certificates/testing.ts';
import { signedPart } from './der.ts';
import type { KeyAlgorithm } from './keys.ts';
import { pemToDer } from './pem.ts';
import { publicJwk, readCertificationRequest } from './request.ts';
import { verifyRequestSelfSignature } from './request-signature.ts';

/** The check as its callers make it: with the fields the DER walk read, if any. */
const selfSignatureOf = (der: Uint8Array) => verifyRequestSelfSignature(der, readCertificationRequest(der));

x509.cryptoProvider.set(webcrypto);

const SPEC = { organizations: ['system:nodes'], commonName: 'system:node:worker-1' };
const request = (der: Uint8Array) => new x509.Pkcs10CertificateRequest(der);

/** A copy of the DER with the byte at `at` flipped. */
function flipped(der: Uint8Array, at: number): Uint8Array {
  const out = Uint8Array.from(der);
  out[at] ^= 0x01;
  return out;
}

/** What a check answers, a throw included. */
const outcome = (check: Promise<boolean>): Promise<boolean | 'throws'> =>
  check.then(
    (ok) => ok,
    () => 'throws',
  );

const ALGS: KeyAlgorithm[] = ['ECDSA-P256', 'ECDSA-P384', 'RSA-2048', 'Ed25519'];

describe('verifyRequestSelfSignature', () => {
  it.each(ALGS)('agrees with @peculiar/x509 on a %s request, intact and tampered with', async (alg) => {
    const der = pemToDer((await webcryptoRequest(alg, SPEC)).pem);
    const inSubject = Buffer.from(der).indexOf('worker-1');
    const variants = [der, flipped(der, der.length - 3), flipped(der, inSubject)];
    const answers = [];
    for (const v of variants) {
      const ours = await outcome(selfSignatureOf(v));
      expect(ours).toBe(await outcome(request(v).verify()));
      answers.push(ours);
    }
    expect(answers).toEqual([true, false, false]);
  });

  it('verifies an openssl EC P-521 request', async () => {
    const { pem } = opensslRequest(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:secp521r1'], '/CN=x');
    expect(await selfSignatureOf(pemToDer(pem))).toBe(true);
  });

  it('leaves a curve WebCrypto does not know to the library, which refuses it', async () => {
    const { pem } = opensslRequest(['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:secp256k1'], '/CN=x');
    await expect(selfSignatureOf(pemToDer(pem))).rejects.toThrow();
  });

  it('leaves RSA-PSS to the library', async () => {
    const { pem } = opensslRequest(['-newkey', 'rsa:2048', '-sigopt', 'rsa_padding_mode:pss'], '/CN=x');
    const der = pemToDer(pem);
    const csr = request(der);
    expect((csr.signatureAlgorithm as unknown as { name: string }).name).toBe('RSA-PSS');
    expect(await outcome(selfSignatureOf(der))).toBe(await outcome(csr.verify()));
  });
});

describe('publicJwk', () => {
  const keys: [string, () => ReturnType<typeof generateKeyPairSync>][] = [
    ['RSA-2048', () => generateKeyPairSync('rsa', { modulusLength: 2048 })],
    ['EC P-256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' })],
    ['EC P-384', () => generateKeyPairSync('ec', { namedCurve: 'P-384' })],
    ['EC P-521', () => generateKeyPairSync('ec', { namedCurve: 'P-521' })],
    ['Ed25519', () => generateKeyPairSync('ed25519')],
  ];

  it.each(keys)('gives the JWK node:crypto exports for a %s key', (_name, make) => {
    const { publicKey } = make();
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    expect(publicJwk(spki)).toEqual(publicKey.export({ format: 'jwk' }));
  });

  it('leaves compressed points and other curves to the library', () => {
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const spki = Buffer.from(p256.export({ type: 'spki', format: 'der' }));
    // The same SPKI with the point's form octet changed: 0x04 (uncompressed) to 0x02 (compressed).
    const point = spki.length - 65;
    expect(spki[point]).toBe(0x04);
    spki[point] = 0x02;
    expect(publicJwk(spki)).toBeUndefined();
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey;
    expect(publicJwk(k1.export({ type: 'spki', format: 'der' }))).toBeUndefined();
  });
});

describe('signedPart', () => {
  it('is the first element of the outer SEQUENCE, long lengths included', () => {
    const inner = new Uint8Array(300).fill(7);
    const element = Uint8Array.from([0x30, 0x82, 0x01, 0x2c, ...inner]);
    const outer = Uint8Array.from([0x30, 0x82, 0x01, 0x33, ...element, 0x05, 0x00, 0x03, 0x01, 0x00]);
    expect(signedPart(outer)).toEqual(element);
  });

  it('refuses an element that runs past the end', () => {
    expect(() => signedPart(Uint8Array.from([0x30, 0x05, 0x30, 0x09, 0x00]))).toThrow('past the end');
  });
});
