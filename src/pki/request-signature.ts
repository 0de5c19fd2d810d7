/**
 * A PKCS#10 request's self-signature, checked by node:crypto: the request's public key imported from its JWK
 * form (OpenSSL 3 imports a JWK faster than the same key as SubjectPublicKeyInfo DER) and the signature, ECDSA's
 * in the DER form the request carries, verified inline. A P-256 verification is ~70–80 µs; the hop to the thread
 * pool saved little of that on this thread and cost more CPU in all: in the kcm bench's CSR runs, 450–550 µs of
 * this thread's time per call (a woken pool thread takes the core), and inline 0.07–0.23 ms less CPU per CSR.
 * That is a fraction of the work of @peculiar/x509's `verify()` (a DER key import through WebCrypto, the
 * signature re-encoded to r‖s, a hop to the thread pool), which still checks what this does not know: RSA-PSS,
 * SHA-1, other curves, compressed points.
 */
import { createPublicKey, verify } from 'node:crypto';
import type { RequestFields } from './request.ts';
import { x509Library } from './x509-library.ts';

/** The signature algorithms checked here: their digest and the JWK key type they need. */
const SIGNATURE_ALGORITHMS: Record<string, { digest: string | null; kty: string }> = {
  '1.2.840.113549.1.1.11': { digest: 'sha256', kty: 'RSA' },
  '1.2.840.113549.1.1.12': { digest: 'sha384', kty: 'RSA' },
  '1.2.840.113549.1.1.13': { digest: 'sha512', kty: 'RSA' },
  '1.2.840.10045.4.3.2': { digest: 'sha256', kty: 'EC' },
  '1.2.840.10045.4.3.3': { digest: 'sha384', kty: 'EC' },
  '1.2.840.10045.4.3.4': { digest: 'sha512', kty: 'EC' },
  '1.3.101.112': { digest: null, kty: 'OKP' },
};

/**
 * Whether the request's signature verifies with its own public key; throws when it cannot be checked. `fields`
 * are what `readCertificationRequest` read of it (undefined: a request it left to the library, which checks it).
 */
export async function verifyRequestSelfSignature(der: Uint8Array, fields: RequestFields | undefined): Promise<boolean> {
  const algorithm =
    fields && Object.hasOwn(SIGNATURE_ALGORITHMS, fields.signatureAlgorithm)
      ? SIGNATURE_ALGORITHMS[fields.signatureAlgorithm]
      : undefined;
  if (!fields || !algorithm || algorithm.kty !== fields.publicKey.kty || fields.signature[0] !== 0) {
    const { Pkcs10CertificateRequest } = await x509Library();
    return new Pkcs10CertificateRequest(der).verify();
  }
  const key = { key: createPublicKey({ key: fields.publicKey, format: 'jwk' }), dsaEncoding: 'der' as const };
  return verify(algorithm.digest, fields.info, key, fields.signature.subarray(1));
}
