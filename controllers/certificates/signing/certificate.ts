/**
 * Building and signing the certificate for an approved request (reference §3.5) with @peculiar/x509 on
 * WebCrypto: v3, random 128-bit serial, the CA's subject as issuer, the request's subject re-encoded and its
 * public key, SANs copied, keyUsage (critical) and extKeyUsage from the usages, basicConstraints CA=false
 * (critical), authorityKeyIdentifier; every other requested extension is dropped.
 */
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { derToPem } from '../../../src/pki/pem.ts';
import { type ParsedRequest, SUBJECT_ATTRIBUTES } from '../csr.ts';
import { mapUsages } from './policy.ts';

x509.cryptoProvider.set(webcrypto);

/** A CA ready to sign: its certificate, its private key and the signature algorithm that key implies. */
export interface SigningCa {
  cert: x509.X509Certificate;
  privateKey: webcrypto.CryptoKey;
  signingAlgorithm: { name: string; hash?: string };
  /** The authorityKeyIdentifier every certificate it issues carries. */
  authorityKeyId: x509.AuthorityKeyIdentifierExtension;
}

/** A DER INTEGER-ready serial: 16 random bytes, i.e. uniform in [0, 2^128). */
export function randomSerialHex(): string {
  return randomBytes(16).toString('hex');
}

// Go's asn1 marshals a string as PrintableString when every character allows it ('*' tolerated), else UTF8String.
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?*]*$/;

/** The subject re-encoded as the reference does: standard attributes in a fixed order, one RDN per attribute. */
export function subjectName(p: ParsedRequest): x509.Name {
  const rdns: x509.JsonAttributeAndObjectValue[] = [];
  for (const { key, oid } of SUBJECT_ATTRIBUTES) {
    const raw = p.subject[key];
    const values = typeof raw === 'string' ? (raw ? [raw] : []) : raw;
    if (!values.length) continue;
    // A multi-valued RDN is a DER SET OF: its values sorted by their encodings, as Go's encoder does.
    const encoded = values
      .map((v) => ({ v, printable: PRINTABLE.test(v) }))
      .sort((a, b) => Buffer.compare(tlv(a), tlv(b)));
    rdns.push({ [oid]: encoded.map(({ v, printable }) => (printable ? { printableString: v } : { utf8String: v })) });
  }
  return new x509.Name(rdns);
}

/** The DER encoding of a directory string value, for sorting a SET OF. */
function tlv({ v, printable }: { v: string; printable: boolean }): Buffer {
  const content = Buffer.from(v, 'utf8');
  const n = content.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([printable ? 0x13 : 0x0c, ...length]), content]);
}

export interface CertificateRequestInput {
  parsed: ParsedRequest;
  usages: readonly string[];
  notBefore: Date;
  notAfter: Date;
  /** Hex; a random 128-bit one when unset. */
  serialHex?: string;
}

/** The extensions of the issued certificate, in the reference's order of concern. */
export function certificateExtensions(input: CertificateRequestInput, ca: SigningCa): x509.Extension[] {
  const mapped = mapUsages(input.usages);
  if ('error' in mapped) throw new Error(mapped.error);
  const p = input.parsed;
  const extensions: x509.Extension[] = [];
  if (mapped.keyUsage) extensions.push(new x509.KeyUsagesExtension(mapped.keyUsage, true));
  if (mapped.extKeyUsages.length) extensions.push(new x509.ExtendedKeyUsageExtension(mapped.extKeyUsages, false));
  extensions.push(new x509.BasicConstraintsExtension(false, undefined, true));
  extensions.push(ca.authorityKeyId);
  const names: x509.JsonGeneralName[] = [
    ...p.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...p.emailAddresses.map((value) => ({ type: 'email' as const, value })),
    ...p.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...p.uris.map((value) => ({ type: 'url' as const, value })),
  ];
  if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names, p.subjectEmpty));
  return extensions;
}

/** Signs the certificate; returns it with its PEM (one block, 64-column base64, trailing newline). */
export async function issue(
  input: CertificateRequestInput,
  ca: SigningCa,
): Promise<{ cert: x509.X509Certificate; pem: string }> {
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: input.serialHex ?? randomSerialHex(),
    subject: subjectName(input.parsed),
    issuer: ca.cert.subjectName,
    publicKey: input.parsed.csr.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: ca.signingAlgorithm,
    notBefore: input.notBefore,
    notAfter: input.notAfter,
    extensions: certificateExtensions(input, ca),
  });
  return { cert, pem: derToPem(cert.rawData, 'CERTIFICATE') };
}
