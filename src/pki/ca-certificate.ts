/**
 * A CA certificate checked for signing with a given key, and what every certificate it signs takes from it, read
 * with node:crypto and by hand (no ASN.1 library: the daemon reads its CA at start).
 */
import { createHash, type KeyObject, X509Certificate } from 'node:crypto';
import { type CertificateParts, certificateParts } from './certificate.ts';
import { type DerElement, readElement, TAG } from './der.ts';

export interface CaCertificate {
  /** The subject, DER-encoded: the issuer of every certificate the CA signs. */
  subject: Uint8Array;
  notAfter: Date;
  /**
   * The key identifier certificates it signs name it by: its subjectKeyIdentifier, or without one the SHA-1 of its
   * public key's bits (RFC 5280 §4.2.1.2, as openssl computes it).
   */
  keyId: Uint8Array;
}

const SUBJECT_KEY_IDENTIFIER = '2.5.29.14';
const KEY_USAGE = '2.5.29.15';
const BASIC_CONSTRAINTS = '2.5.29.19';
/** keyCertSign, bit 5 of keyUsage: in the first octet of the BIT STRING's bits. */
const KEY_CERT_SIGN = 0x80 >> 5;

/**
 * Reads a CA certificate for signing with `privateKey`; throws, naming the certificate, when it is no CA, when its
 * keyUsage forbids signing certificates, or when the key is not its own.
 */
export function readCaCertificate(der: Uint8Array, privateKey: KeyObject): CaCertificate {
  const cert = new X509Certificate(der);
  const name = cert.subject.split('\n').join(', ');
  const parts = certificateParts(der);
  // BasicConstraints ::= SEQUENCE { cA BOOLEAN DEFAULT FALSE, ... }. (node:crypto's `ca` is OpenSSL's
  // X509_check_ca, which also says no for a keyUsage without keyCertSign: that has its own message below.)
  const constraints = extensionElement(parts, BASIC_CONSTRAINTS, TAG.sequence)?.content;
  const cA = constraints?.length ? readElement(constraints, 0) : undefined;
  if (!(cA?.tag === TAG.boolean && cA.content[0] !== 0)) {
    throw new Error(`certificate "${name}" is not a CA: basicConstraints does not set CA`);
  }
  const keyUsage = extensionElement(parts, KEY_USAGE, TAG.bitString);
  // A BIT STRING's content: the count of unused bits, then the bits.
  if (keyUsage && !((keyUsage.content[1] ?? 0) & KEY_CERT_SIGN)) {
    throw new Error(`CA certificate "${name}" may not sign certificates: keyUsage lacks keyCertSign`);
  }
  if (!cert.checkPrivateKey(privateKey)) throw new Error(`the private key does not belong to CA certificate "${name}"`);
  return {
    subject: parts.subject,
    notAfter: new Date(cert.validTo),
    keyId:
      extensionElement(parts, SUBJECT_KEY_IDENTIFIER, TAG.octetString)?.content ??
      createHash('sha1').update(parts.subjectPublicKey).digest(),
  };
}

/** The element an extension's value holds, if the certificate has that extension; throws if of another type. */
function extensionElement(parts: CertificateParts, oid: string, tag: number): DerElement | undefined {
  const value = parts.extensions.get(oid)?.value;
  if (!value) return undefined;
  const element = readElement(value, 0);
  if (element.tag !== tag) throw new Error(`x509: malformed extension ${oid}`);
  return element;
}
