/** X.509 parsing and CSR signature checks on DER bytes, with the reference's error texts. */
import 'reflect-metadata';
import { BasicConstraintsExtension, Pkcs10CertificateRequest, X509Certificate } from '@peculiar/x509';
import { readCertificationRequest } from '../../pki/request.ts';
import { verifyRequestSelfSignature } from '../../pki/request-signature.ts';

function arrayBuffer(der: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(der.byteLength);
  new Uint8Array(out).set(der);
  return out;
}

/** A parsed certificate, or the reference's parse error text. */
export function parseCertificate(der: Uint8Array): { ok: true; cert: X509Certificate } | { ok: false; error: string } {
  if (der.byteLength === 0) return { ok: false, error: 'x509: malformed certificate' };
  try {
    return { ok: true, cert: new X509Certificate(arrayBuffer(der)) };
  } catch {
    return { ok: false, error: 'x509: malformed certificate' };
  }
}

/** The basic constraints of a certificate: absent, or present with the CA flag. */
export function basicConstraints(cert: X509Certificate): { present: boolean; ca: boolean } {
  try {
    const ext = cert.getExtension(BasicConstraintsExtension);
    return ext ? { present: true, ca: ext.ca } : { present: false, ca: false };
  } catch {
    return { present: true, ca: false };
  }
}

/**
 * Parses a PKCS#10 request and checks its self-signature; answers the reference's error text on failure. A
 * request in the shape {@link readCertificationRequest} reads skips @peculiar/x509's parse; any other gets it.
 */
export async function checkCertificateRequest(der: Uint8Array): Promise<string | undefined> {
  const fields = readCertificationRequest(der);
  const algorithm = fields ? fields.keyAlgorithm : parsedKeyAlgorithm(der);
  if (algorithm === undefined) return 'x509: malformed certificate request';
  let verified: boolean;
  try {
    verified = await verifyRequestSelfSignature(der, fields);
  } catch {
    return 'x509: cannot verify signature: algorithm unimplemented';
  }
  if (verified) return undefined;
  switch (algorithm) {
    case 'ECDSA':
      return 'x509: ECDSA verification failure';
    case 'Ed25519':
      return 'x509: Ed25519 verification failure';
    case 'RSASSA-PKCS1-v1_5':
    case 'RSA-PSS':
      return 'crypto/rsa: verification error';
    default:
      return 'x509: signature verification failure';
  }
}

/** The request's key algorithm by @peculiar/x509's parse ('' when it has none), or undefined when it does not parse. */
function parsedKeyAlgorithm(der: Uint8Array): string | undefined {
  let csr: Pkcs10CertificateRequest;
  try {
    csr = new Pkcs10CertificateRequest(arrayBuffer(der));
    // Touch the lazily parsed members so that malformed content fails here.
    void csr.subject;
    void csr.publicKey.algorithm;
  } catch {
    return undefined;
  }
  try {
    return csr.publicKey.algorithm.name;
  } catch {
    return ''; // treated as unimplemented
  }
}
