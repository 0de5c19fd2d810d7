/**
 * A PKCS#10 request's self-signature, checked by node:crypto: the request's public key imported from its JWK
 * form (OpenSSL 3 imports a JWK several times faster than the same key as SubjectPublicKeyInfo DER) and the
 * signature, ECDSA's in the DER form the request carries, verified inline. That is a fraction of the work of
 * @peculiar/x509's `verify()` (a DER key import through WebCrypto, the signature re-encoded to r‖s, a hop to the
 * thread pool), which still checks what this does not know: RSA-PSS, other curves, compressed points, a key
 * whose type does not match the signature algorithm.
 */
import { createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import type { Pkcs10CertificateRequest } from '@peculiar/x509';

/** One DER element: its tag, its content octets and its whole encoding, as views of the same buffer. */
interface DerElement {
  tag: number;
  content: Uint8Array;
  whole: Uint8Array;
}

function readElement(der: Uint8Array, at: number): DerElement {
  if (at + 2 > der.length) throw new Error('malformed DER: element past the end');
  const first = der[at + 1];
  let start = at + 2;
  let length = first;
  if (first >= 0x80) {
    const bytes = first & 0x7f;
    if (bytes === 0 || bytes > 4) throw new Error('malformed DER length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[start + i];
    start += bytes;
  }
  if (start + length > der.length) throw new Error('malformed DER: element past the end');
  return { tag: der[at], content: der.subarray(start, start + length), whole: der.subarray(at, start + length) };
}

/** The elements inside the constructed element that starts `der`. */
function children(der: Uint8Array): DerElement[] {
  const { content } = readElement(der, 0);
  const out: DerElement[] = [];
  for (let at = 0; at < content.length; at += out[out.length - 1].whole.length) out.push(readElement(content, at));
  return out;
}

/**
 * The DER of the first element inside a SEQUENCE: the signed part of a certificate or a request (its
 * TBSCertificate or CertificationRequestInfo), as bytes of the same buffer.
 */
export function signedPart(der: Uint8Array): Uint8Array {
  return readElement(readElement(der, 0).content, 0).whole;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
const base64url = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');

// Algorithm and curve OIDs, as the hex of their content octets.
const RSA_ENCRYPTION = '2a864886f70d010101';
const EC_PUBLIC_KEY = '2a8648ce3d0201';
const ED25519 = '2b6570';
/** The curves WebCrypto (and Go's x509) accept: JWK name and coordinate size. */
const CURVES: Record<string, { crv: string; size: number }> = {
  '2a8648ce3d030107': { crv: 'P-256', size: 32 },
  '2b81040022': { crv: 'P-384', size: 48 },
  '2b81040023': { crv: 'P-521', size: 66 },
};

/** An INTEGER's magnitude without the sign octet a positive value may carry. */
function unsigned(integer: Uint8Array): Uint8Array {
  let start = 0;
  while (start < integer.length - 1 && integer[start] === 0) start++;
  return integer.subarray(start);
}

/** A SubjectPublicKeyInfo as a JWK, for RSA, uncompressed ECDSA P-256/384/521 and Ed25519 keys; else undefined. */
export function publicJwk(spki: Uint8Array): JsonWebKey | undefined {
  const [algorithm, bits] = children(spki);
  const [oid, parameters] = children(algorithm.whole);
  if (bits?.tag !== 0x03 || bits.content[0] !== 0 || oid?.tag !== 0x06) return undefined;
  const key = bits.content.subarray(1);
  switch (hex(oid.content)) {
    case RSA_ENCRYPTION: {
      const [n, e] = children(key);
      return { kty: 'RSA', n: base64url(unsigned(n.content)), e: base64url(unsigned(e.content)) };
    }
    case EC_PUBLIC_KEY: {
      const curve = parameters?.tag === 0x06 ? CURVES[hex(parameters.content)] : undefined;
      if (!curve || key[0] !== 0x04 || key.length !== 1 + 2 * curve.size) return undefined;
      const x = key.subarray(1, 1 + curve.size);
      return { kty: 'EC', crv: curve.crv, x: base64url(x), y: base64url(key.subarray(1 + curve.size)) };
    }
    case ED25519:
      return key.length === 32 ? { kty: 'OKP', crv: 'Ed25519', x: base64url(key) } : undefined;
    default:
      return undefined;
  }
}

/** A request's CertificationRequestInfo, its SubjectPublicKeyInfo and its signature BIT STRING's content. */
function signedParts(der: Uint8Array): { info: Uint8Array; spki: Uint8Array; signature: Uint8Array } | undefined {
  try {
    const [info, , signature] = children(der);
    const spki = children(info.whole)[2];
    return spki && signature ? { info: info.whole, spki: spki.whole, signature: signature.content } : undefined;
  } catch {
    return undefined; // the library's path reports it
  }
}

/** The JWK key type each signature algorithm handled here needs. */
const KEY_TYPES: Record<string, string> = { 'RSASSA-PKCS1-v1_5': 'RSA', ECDSA: 'EC', Ed25519: 'OKP' };

/** Whether the request's signature verifies with its own public key; throws when neither path can check it. */
export async function verifyRequestSelfSignature(csr: Pkcs10CertificateRequest): Promise<boolean> {
  const { name, hash } = csr.signatureAlgorithm as { name: string; hash?: { name: string } };
  const parts = signedParts(new Uint8Array(csr.rawData));
  const jwk = parts && publicJwk(parts.spki);
  const handled =
    parts !== undefined &&
    jwk !== undefined &&
    Object.hasOwn(KEY_TYPES, name) &&
    KEY_TYPES[name] === jwk.kty &&
    (name === 'Ed25519' || hash !== undefined) &&
    parts.signature[0] === 0;
  if (!handled) return csr.verify();
  const key = { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'der' as const };
  const digest = hash ? hash.name.replace('-', '').toLowerCase() : null;
  return verify(digest, parts.info, key, parts.signature.subarray(1));
}
