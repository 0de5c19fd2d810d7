/**
 * Signing keys: generation and PEM export on WebCrypto, and PEM import as a node:crypto or a WebCrypto key, with the
 * signature algorithm detected from the key.
 */
import { createPrivateKey, type KeyObject, webcrypto } from 'node:crypto';
import { derToPem, splitPemBlocks } from './pem.ts';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type Algorithm = webcrypto.Algorithm;

const { subtle } = webcrypto;

export type KeyAlgorithm = 'ECDSA-P256' | 'ECDSA-P384' | 'RSA-2048' | 'RSA-3072' | 'RSA-4096' | 'Ed25519';

/** A WebCrypto signature algorithm, as `subtle.sign` and @peculiar/x509 take it. */
export interface SigningAlgorithm {
  name: string;
  hash?: string;
}

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]) };

const GENERATE_PARAMS: Record<KeyAlgorithm, webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams | Algorithm> = {
  'ECDSA-P256': { name: 'ECDSA', namedCurve: 'P-256' },
  'ECDSA-P384': { name: 'ECDSA', namedCurve: 'P-384' },
  'RSA-2048': { ...RSA, modulusLength: 2048 },
  'RSA-3072': { ...RSA, modulusLength: 3072 },
  'RSA-4096': { ...RSA, modulusLength: 4096 },
  Ed25519: { name: 'Ed25519' },
};

/** The WebCrypto names of the curves supported, by their OpenSSL names. */
const OPENSSL_CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384' };
/** The hash each supported curve signs with. */
const CURVE_HASHES: Record<string, string> = { 'P-256': 'SHA-256', 'P-384': 'SHA-384' };

/** Generates an extractable key pair for signing. */
export async function generateKeyPair(alg: KeyAlgorithm): Promise<CryptoKeyPair> {
  if (!Object.hasOwn(GENERATE_PARAMS, alg)) throw new Error(`unsupported key algorithm "${alg}"`);
  return (await subtle.generateKey(GENERATE_PARAMS[alg], true, ['sign', 'verify'])) as CryptoKeyPair;
}

/** Encodes a private key as a PKCS#8 `PRIVATE KEY` PEM block. */
export async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  return derToPem(await subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

const PEM_KEY_ENCODINGS: Record<string, 'pkcs8' | 'sec1' | 'pkcs1'> = {
  'PRIVATE KEY': 'pkcs8',
  'EC PRIVATE KEY': 'sec1',
  'RSA PRIVATE KEY': 'pkcs1',
};

/**
 * Reads an unencrypted private key from a PKCS#8 `PRIVATE KEY`, SEC1 `EC PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`
 * PEM block: exactly one such block.
 */
export function readPrivateKeyPem(pem: string): KeyObject {
  const blocks = splitPemBlocks(pem).filter((block) => Object.hasOwn(PEM_KEY_ENCODINGS, block.type));
  if (blocks.length !== 1) {
    throw new Error(
      `expected exactly one PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY PEM block, found ${blocks.length}`,
    );
  }
  const [{ type, headers, der }] = blocks;
  if (headers['Proc-Type']?.includes('ENCRYPTED')) throw new Error('encrypted private keys are not supported');
  return createPrivateKey({ key: Buffer.from(der), format: 'der', type: PEM_KEY_ENCODINGS[type] });
}

/**
 * Imports a private key PEM (see {@link readPrivateKeyPem}) as an extractable WebCrypto signing key:
 * RSASSA-PKCS1-v1_5 with SHA-256, ECDSA on P-256 or P-384, or Ed25519.
 */
export async function importPrivateKeyPem(pem: string): Promise<CryptoKey> {
  return importSigningKey(readPrivateKeyPem(pem));
}

/** A node:crypto private key as an extractable WebCrypto signing key (see {@link importPrivateKeyPem}). */
export async function importSigningKey(keyObject: KeyObject): Promise<CryptoKey> {
  const { name, namedCurve } = signingAlgorithmOf(keyObject);
  const pkcs8 = keyObject.export({ type: 'pkcs8', format: 'der' });
  const params = name === RSA.name ? { name, hash: RSA.hash } : namedCurve ? { name, namedCurve } : { name };
  return subtle.importKey('pkcs8', pkcs8, params, true, ['sign']);
}

/**
 * The signature algorithm a node:crypto key signs with here: RSASSA-PKCS1-v1_5 with SHA-256, ECDSA with SHA-256 on
 * P-256 and SHA-384 on P-384 (`namedCurve` its WebCrypto name), or Ed25519. Throws for any other key.
 */
export function signingAlgorithmOf(key: KeyObject): SigningAlgorithm & { namedCurve?: string } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { name: RSA.name, hash: RSA.hash };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
      if (!Object.hasOwn(OPENSSL_CURVES, curve)) {
        throw new Error(`unsupported EC curve "${curve}": expected P-256 or P-384`);
      }
      const namedCurve = OPENSSL_CURVES[curve];
      return { name: 'ECDSA', hash: CURVE_HASHES[namedCurve], namedCurve };
    }
    case 'ed25519':
      return { name: 'Ed25519' };
    default:
      throw new Error(`unsupported private key type "${key.asymmetricKeyType}"`);
  }
}

/** The signature algorithm to sign with `key`: its own RSA hash, SHA-256 on P-256, SHA-384 on P-384, or Ed25519. */
export function signingAlgorithmFor(key: CryptoKey): SigningAlgorithm {
  const algorithm = key.algorithm as webcrypto.KeyAlgorithm & { hash?: webcrypto.KeyAlgorithm; namedCurve?: string };
  switch (algorithm.name) {
    case 'RSASSA-PKCS1-v1_5':
      return { name: algorithm.name, hash: algorithm.hash?.name };
    case 'ECDSA': {
      const curve = algorithm.namedCurve ?? '';
      if (Object.hasOwn(CURVE_HASHES, curve)) return { name: 'ECDSA', hash: CURVE_HASHES[curve] };
      throw new Error(`unsupported ECDSA curve "${curve}": expected P-256 or P-384`);
    }
    case 'Ed25519':
      return { name: 'Ed25519' };
    default:
      throw new Error(`unsupported signing key algorithm "${algorithm.name}"`);
  }
}
