/**
 * A PKCS#10 request's self-signature, checked by node:crypto: the request's SubjectPublicKeyInfo becomes a
 * KeyObject and the signature, ECDSA's in the DER form the request carries, is verified inline. That is about
 * half the work of @peculiar/x509's `verify()` (a WebCrypto key import, the signature re-encoded to r‖s, a hop to
 * the thread pool), which still checks what this does not know: RSA-PSS, other curves, a key whose type does not
 * match the signature algorithm.
 */
import { createPublicKey, verify } from 'node:crypto';
import type { Pkcs10CertificateRequest } from '@peculiar/x509';

/** node:crypto's key type for each signature algorithm handled here. */
const KEY_TYPES: Record<string, string> = { 'RSASSA-PKCS1-v1_5': 'rsa', ECDSA: 'ec', Ed25519: 'ed25519' };
/** The curves WebCrypto (and Go's x509) accept, by their OpenSSL names. */
const CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

/** Whether the request's signature verifies with its own public key; throws when neither path can check it. */
export async function verifyRequestSelfSignature(csr: Pkcs10CertificateRequest): Promise<boolean> {
  const { name, hash } = csr.signatureAlgorithm as { name: string; hash?: { name: string } };
  const keyType = Object.hasOwn(KEY_TYPES, name) ? KEY_TYPES[name] : undefined;
  const key = keyType
    ? createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' })
    : undefined;
  const supported =
    key?.asymmetricKeyType === keyType &&
    (keyType !== 'ec' || CURVES.has(key?.asymmetricKeyDetails?.namedCurve ?? '')) &&
    (keyType === 'ed25519' || hash !== undefined);
  if (!key || !supported) return csr.verify();
  const digest = hash ? hash.name.replace('-', '').toLowerCase() : null;
  return verify(
    digest,
    signedPart(new Uint8Array(csr.rawData)),
    { key, dsaEncoding: 'der' },
    new Uint8Array(csr.signature),
  );
}

/**
 * The DER of the first element inside a SEQUENCE: the signed part of a certificate or a request (its
 * TBSCertificate or CertificationRequestInfo), as bytes of the same buffer.
 */
export function signedPart(der: Uint8Array): Uint8Array {
  const header = (at: number): { start: number; length: number } => {
    const first = der[at + 1];
    if (first < 0x80) return { start: at + 2, length: first };
    const bytes = first & 0x7f;
    if (bytes > 4 || at + 2 + bytes > der.length) throw new Error('malformed DER length');
    let length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[at + 2 + i];
    return { start: at + 2 + bytes, length };
  };
  const inner = header(0).start;
  const signed = header(inner);
  if (signed.start + signed.length > der.length) throw new Error('malformed DER: element past the end');
  return der.subarray(inner, signed.start + signed.length);
}
