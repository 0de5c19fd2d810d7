import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyExportOptions,
  type KeyObject,
  verify,
  webcrypto,
} from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  exportPrivateKeyPem,
  generateKeyPair,
  importPrivateKeyPem,
  type KeyAlgorithm,
  signingAlgorithmFor,
} from './keys.ts';

const { subtle } = webcrypto;
const data = Buffer.from('signed by the test');

/** Exports a node:crypto private key as PEM, in the encoding given by `options`. */
const toPem = (key: KeyObject, options: Omit<KeyExportOptions<'pem'>, 'format'>) =>
  key.export({ ...options, format: 'pem' }).toString();

/** The Node.js digest for a signature algorithm (null for Ed25519), to verify signatures with node:crypto. */
const nodeDigest = (algorithm: { hash?: string }) => algorithm.hash?.replace('-', '').toLowerCase() ?? null;

/** Signs with WebCrypto and verifies with node:crypto against the public key derived from the private key PEM. */
async function signsVerifiably(privateKey: webcrypto.CryptoKey, pem: string): Promise<boolean> {
  const algorithm = signingAlgorithmFor(privateKey);
  const signature = Buffer.from(await subtle.sign(algorithm, privateKey, data));
  const publicKey = createPublicKey(pem);
  return verify(nodeDigest(algorithm), data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);
}

describe('generateKeyPair', () => {
  it.each([
    ['ECDSA-P256', { name: 'ECDSA', namedCurve: 'P-256' }, 'ec', { namedCurve: 'prime256v1' }],
    ['ECDSA-P384', { name: 'ECDSA', namedCurve: 'P-384' }, 'ec', { namedCurve: 'secp384r1' }],
    ['RSA-2048', { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048 }, 'rsa', { modulusLength: 2048 }],
    ['RSA-3072', { name: 'RSASSA-PKCS1-v1_5', modulusLength: 3072 }, 'rsa', { modulusLength: 3072 }],
    ['RSA-4096', { name: 'RSASSA-PKCS1-v1_5', modulusLength: 4096 }, 'rsa', { modulusLength: 4096 }],
    ['Ed25519', { name: 'Ed25519' }, 'ed25519', {}],
  ] as const)('generates %s keys that export as PKCS#8 and import back', async (alg, webAlgorithm, type, details) => {
    const keys = await generateKeyPair(alg);
    expect(keys.privateKey.algorithm).toMatchObject(webAlgorithm);
    expect(keys.privateKey.usages).toEqual(['sign']);

    const pem = await exportPrivateKeyPem(keys.privateKey);
    expect(pem).toMatch(
      /^-----BEGIN PRIVATE KEY-----\n(?:[A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END PRIVATE KEY-----\n$/,
    );
    const keyObject = createPrivateKey(pem);
    expect(keyObject.asymmetricKeyType).toBe(type);
    expect(keyObject.asymmetricKeyDetails).toMatchObject(details);
    expect(createPublicKey(keyObject).export({ type: 'spki', format: 'der' })).toEqual(
      Buffer.from(await subtle.exportKey('spki', keys.publicKey)),
    );

    const imported = await importPrivateKeyPem(pem);
    expect(imported.algorithm).toMatchObject(webAlgorithm);
    expect(await exportPrivateKeyPem(imported)).toBe(pem);
    expect(await signsVerifiably(imported, pem)).toBe(true);
  });

  it('rejects an unknown algorithm', async () => {
    await expect(generateKeyPair('DSA-1024' as KeyAlgorithm)).rejects.toThrow('unsupported key algorithm "DSA-1024"');
  });
});

describe('importPrivateKeyPem', () => {
  it.each([
    ['SEC1 P-256', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'sec1', 'EC PRIVATE KEY'],
    ['SEC1 P-384', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey, 'sec1', 'EC PRIVATE KEY'],
    ['PKCS#1 RSA', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'pkcs1', 'RSA PRIVATE KEY'],
  ] as const)('imports a %s key', async (_name, keyObject, type, label) => {
    const pem = toPem(keyObject, { type });
    expect(pem.startsWith(`-----BEGIN ${label}-----\n`)).toBe(true);

    const imported = await importPrivateKeyPem(`explanatory text\n${pem}`);
    expect(await exportPrivateKeyPem(imported)).toBe(toPem(keyObject, { type: 'pkcs8' }));
    expect(await signsVerifiably(imported, pem)).toBe(true);
  });

  it('rejects encrypted, unsupported and missing keys', async () => {
    const { privateKey: ec } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const encrypted = { cipher: 'aes-128-cbc', passphrase: 'secret' };
    await expect(importPrivateKeyPem(toPem(ec, { type: 'sec1', ...encrypted }))).rejects.toThrow(
      'encrypted private keys are not supported',
    );
    await expect(importPrivateKeyPem(toPem(ec, { type: 'pkcs8', ...encrypted }))).rejects.toThrow(
      'expected exactly one PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY PEM block, found 0',
    );
    const pkcs8 = toPem(ec, { type: 'pkcs8' });
    await expect(importPrivateKeyPem(pkcs8 + pkcs8)).rejects.toThrow('found 2');

    const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey;
    await expect(importPrivateKeyPem(toPem(p521, { type: 'pkcs8' }))).rejects.toThrow(
      'unsupported EC curve "secp521r1"',
    );
    const ed448 = generateKeyPairSync('ed448').privateKey;
    await expect(importPrivateKeyPem(toPem(ed448, { type: 'pkcs8' }))).rejects.toThrow(
      'unsupported private key type "ed448"',
    );
  });
});

describe('signingAlgorithmFor', () => {
  it.each([
    ['RSA-2048', { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }],
    ['ECDSA-P256', { name: 'ECDSA', hash: 'SHA-256' }],
    ['ECDSA-P384', { name: 'ECDSA', hash: 'SHA-384' }],
    ['Ed25519', { name: 'Ed25519' }],
  ] as const)('signs with %s as %o', async (alg, expected) => {
    const { privateKey, publicKey } = await generateKeyPair(alg);
    expect(signingAlgorithmFor(privateKey)).toEqual(expected);
    expect(signingAlgorithmFor(publicKey)).toEqual(expected);
  });

  it('rejects keys it cannot sign certificates with', async () => {
    const p521 = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-521' }, false, ['sign']);
    expect(() => signingAlgorithmFor(p521.privateKey)).toThrow('unsupported ECDSA curve "P-521"');
    const hmac = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    expect(() => signingAlgorithmFor(hmac)).toThrow('unsupported signing key algorithm "HMAC"');
  });
});
