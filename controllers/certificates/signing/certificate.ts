/**
 * Building and signing the certificate for an approved request (reference §3.5): v3, random 128-bit serial,
 * the CA's subject as issuer, the request's subject re-encoded and its public key, SANs copied, keyUsage
 * (critical) and extKeyUsage from the usages, basicConstraints CA=false (critical), authorityKeyIdentifier;
 * every other requested extension is dropped.
 *
 * Each part is encoded once: what depends only on the CA (issuer, signature algorithm, authority key identifier)
 * or on the CA and the usage list (the extensions but the SANs) once per CA, with `@peculiar/asn1-x509`
 * structures, and kept; the SANs per certificate with the same structures. The small per-certificate parts
 * (serial, validity, subject) and the SEQUENCEs around it all are written as DER directly: serialising a whole
 * TBSCertificate structure costs about two ECDSA P-256 signatures (`npm run bench -- certificates`). Nothing
 * is parsed back or serialised twice.
 *
 * node:crypto signs, with the CA key's KeyObject made once per CA: it writes ECDSA signatures as DER directly
 * (WebCrypto's r‖s would need re-encoding), and an ECDSA or Ed25519 signature (tens of microseconds) costs less
 * made inline than the hop to the thread pool WebCrypto takes; RSA's (about a millisecond) is still made there.
 */
import 'reflect-metadata';
import { KeyObject, randomBytes, sign, type webcrypto } from 'node:crypto';
import { promisify } from 'node:util';
import { AsnConvert, AsnObjectIdentifierConverter, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  BasicConstraints,
  ExtendedKeyUsage,
  Extension,
  GeneralName,
  GeneralNames,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
  id_ce_subjectAltName,
  KeyUsage,
} from '@peculiar/asn1-x509';
import type * as x509 from '@peculiar/x509';
import { derToPem } from '../../../src/pki/pem.ts';
import { type ParsedRequest, SUBJECT_ATTRIBUTES } from '../csr.ts';
import { mapUsages } from './policy.ts';

/** A CA ready to sign: its certificate, its private key and the signature algorithm that key implies. */
export interface SigningCa {
  cert: x509.X509Certificate;
  privateKey: webcrypto.CryptoKey;
  signingAlgorithm: { name: string; hash?: string };
  /** The authorityKeyIdentifier every certificate it issues carries. */
  authorityKeyId: x509.AuthorityKeyIdentifierExtension;
}

/** What every certificate a CA issues shares, DER-encoded once. */
interface PreparedCa {
  /** The CA's private key as node:crypto signs with it, ECDSA signatures in DER. */
  signingKey: { key: KeyObject; dsaEncoding: 'der' };
  /** The digest node:crypto names (`sha256`), or null for Ed25519, whose signature has its own. */
  digest: string | null;
  /** RSA: signed on the thread pool. */
  onThreadPool: boolean;
  issuer: Buffer;
  /** The signature AlgorithmIdentifier, inside the TBSCertificate and after it. */
  signature: Buffer;
  authorityKeyId: Buffer;
  /** By usage list: the extensions that depend only on the usages and the CA (all but the SANs). */
  usageExtensions: Map<string, Buffer[]>;
}

/** Usage lists are few in practice; the cache is dropped whole past this many rather than grow. */
const MAX_USAGE_LISTS = 64;

const prepared = new WeakMap<SigningCa, PreparedCa>();

/** The first content octet of a BIT STRING of whole bytes. */
const NO_UNUSED_BITS = Buffer.from([0]);

/** `[0] EXPLICIT Version`: v3. */
const VERSION_3 = Buffer.from([0xa0, 0x03, 0x02, 0x01, 0x02]);

// Signature algorithm OIDs (RFC 4055, RFC 5758, RFC 8410) by WebCrypto name and hash; RSA's carry NULL parameters.
const SIGNATURE_OIDS: Record<string, string> = {
  'RSASSA-PKCS1-v1_5/SHA-256': '1.2.840.113549.1.1.11',
  'RSASSA-PKCS1-v1_5/SHA-384': '1.2.840.113549.1.1.12',
  'RSASSA-PKCS1-v1_5/SHA-512': '1.2.840.113549.1.1.13',
  'ECDSA/SHA-256': '1.2.840.10045.4.3.2',
  'ECDSA/SHA-384': '1.2.840.10045.4.3.3',
  'ECDSA/SHA-512': '1.2.840.10045.4.3.4',
  Ed25519: '1.3.101.112',
};

function signatureAlgorithm({ name, hash }: SigningCa['signingAlgorithm']): Buffer {
  const key = hash ? `${name}/${hash}` : name;
  if (!Object.hasOwn(SIGNATURE_OIDS, key)) throw new Error(`unsupported signature algorithm ${key}`);
  return der(
    new AlgorithmIdentifier({
      algorithm: SIGNATURE_OIDS[key],
      ...(name === 'RSASSA-PKCS1-v1_5' ? { parameters: null } : {}),
    }),
  );
}

const der = (structure: object): Buffer => Buffer.from(AsnConvert.serialize(structure));

/** The per-CA part of every certificate, computed on the first certificate a CA issues. */
function prepareCa(ca: SigningCa): PreparedCa {
  let p = prepared.get(ca);
  if (!p) {
    const { name, hash } = ca.signingAlgorithm;
    p = {
      signingKey: { key: KeyObject.from(ca.privateKey), dsaEncoding: 'der' },
      digest: hash ? hash.replace('-', '').toLowerCase() : null,
      onThreadPool: name.startsWith('RSA'),
      issuer: Buffer.from(ca.cert.subjectName.toArrayBuffer()),
      signature: signatureAlgorithm(ca.signingAlgorithm),
      authorityKeyId: Buffer.from(ca.authorityKeyId.rawData),
      usageExtensions: new Map(),
    };
    prepared.set(ca, p);
  }
  return p;
}

/** The content octets of a non-negative DER INTEGER: no leading zero octets, and one added if the sign bit is set. */
function positiveInteger(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const digits = bytes.subarray(start);
  const out = new Uint8Array(digits.length + (digits[0] > 0x7f ? 1 : 0));
  out.set(digits, out.length - digits.length);
  return out;
}

// Go's asn1 marshals a string as PrintableString when every character allows it ('*' tolerated), else UTF8String.
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?*]*$/;

/** Each subject attribute's OID, DER-encoded once. */
const ATTRIBUTE_OIDS = new Map(
  SUBJECT_ATTRIBUTES.map(({ oid }) => [oid, Buffer.from(AsnObjectIdentifierConverter.toASN(oid).toBER())]),
);

/**
 * The subject's DER, re-encoded as the reference does: standard attributes in a fixed order, one RDN (a SET
 * of AttributeTypeAndValue SEQUENCEs) per attribute.
 */
export function subjectName(p: ParsedRequest): Buffer {
  const rdns: Buffer[] = [];
  for (const { key, oid } of SUBJECT_ATTRIBUTES) {
    const raw = p.subject[key];
    const values = typeof raw === 'string' ? (raw ? [raw] : []) : raw;
    if (!values.length) continue;
    // A multi-valued RDN is a DER SET OF: its values sorted by their encodings, as Go's encoder does.
    const encoded = values.map(directoryString).sort(Buffer.compare);
    const oidDer = ATTRIBUTE_OIDS.get(oid) as Buffer;
    const attributes: Buffer[] = [];
    for (const value of encoded) attributes.push(derElement(0x30, [oidDer, value]));
    rdns.push(derElement(0x31, attributes));
  }
  return derElement(0x30, rdns);
}

/** A directory string value: PrintableString where every character allows it, else UTF8String. */
function directoryString(v: string): Buffer {
  return derElement(PRINTABLE.test(v) ? 0x13 : 0x0c, [Buffer.from(v, 'utf8')]);
}

const twoDigits = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/** An X.509 Time (RFC 5280 §4.1.2.5): UTCTime through 2049, GeneralizedTime after; whole seconds. */
function derTime(t: Date): Buffer {
  const year = t.getUTCFullYear();
  const rest =
    twoDigits(t.getUTCMonth() + 1) +
    twoDigits(t.getUTCDate()) +
    twoDigits(t.getUTCHours()) +
    twoDigits(t.getUTCMinutes()) +
    `${twoDigits(t.getUTCSeconds())}Z`;
  return year > 2049
    ? derElement(0x18, [Buffer.from(`${year}${rest}`, 'latin1')])
    : derElement(0x17, [Buffer.from(`${twoDigits(year % 100)}${rest}`, 'latin1')]);
}

/** A DER element (tag, definite length up to 64 KiB) around already-encoded content, written in one buffer. */
function derElement(tag: number, content: Uint8Array[]): Buffer {
  let n = 0;
  for (const c of content) n += c.length;
  if (n > 0xffff) throw new Error(`DER element of ${n} bytes: too long`);
  const header = n < 0x80 ? 2 : n < 0x100 ? 3 : 4;
  const out = Buffer.allocUnsafe(header + n);
  out[0] = tag;
  if (header === 2) out[1] = n;
  else if (header === 3) out.set([0x81, n], 1);
  else out.set([0x82, n >> 8, n & 0xff], 1);
  let at = header;
  for (const c of content) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export interface CertificateRequestInput {
  parsed: ParsedRequest;
  usages: readonly string[];
  notBefore: Date;
  notAfter: Date;
  /** Hex; a random 128-bit one when unset. */
  serialHex?: string;
}

function extension(extnID: string, critical: boolean, value: object): Buffer {
  return der(new Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) }));
}

/** keyUsage (critical), extKeyUsage, basicConstraints (critical) and authorityKeyIdentifier, for one usage list. */
function usageExtensions(usages: readonly string[], ca: PreparedCa): Buffer[] {
  const key = usages.join('\n');
  let extensions = ca.usageExtensions.get(key);
  if (!extensions) {
    const mapped = mapUsages(usages);
    if ('error' in mapped) throw new Error(mapped.error);
    extensions = [];
    if (mapped.keyUsage) extensions.push(extension(id_ce_keyUsage, true, new KeyUsage(mapped.keyUsage)));
    if (mapped.extKeyUsages.length)
      extensions.push(extension(id_ce_extKeyUsage, false, new ExtendedKeyUsage(mapped.extKeyUsages)));
    extensions.push(extension(id_ce_basicConstraints, true, new BasicConstraints({ cA: false })));
    extensions.push(ca.authorityKeyId);
    if (ca.usageExtensions.size >= MAX_USAGE_LISTS) ca.usageExtensions.clear();
    ca.usageExtensions.set(key, extensions);
  }
  return extensions;
}

/** The extensions of the issued certificate, in the reference's order of concern. */
function certificateExtensions(input: CertificateRequestInput, ca: PreparedCa): Buffer[] {
  const p = input.parsed;
  const names = [
    ...p.dnsNames.map((dNSName) => new GeneralName({ dNSName })),
    ...p.emailAddresses.map((rfc822Name) => new GeneralName({ rfc822Name })),
    ...p.ipAddresses.map((iPAddress) => new GeneralName({ iPAddress })),
    ...p.uris.map((uniformResourceIdentifier) => new GeneralName({ uniformResourceIdentifier })),
  ];
  const fixed = usageExtensions(input.usages, ca);
  if (!names.length) return fixed;
  return [...fixed, extension(id_ce_subjectAltName, p.subjectEmpty, new GeneralNames(names))];
}

const signOnThreadPool = promisify(sign);

/** The signature of the TBS bytes as a certificate carries it (ECDSA: the DER ECDSA-Sig-Value). */
function signTbs(tbs: Buffer, ready: PreparedCa): Buffer | Promise<Buffer> {
  return ready.onThreadPool
    ? signOnThreadPool(ready.digest, tbs, ready.signingKey)
    : sign(ready.digest, tbs, ready.signingKey);
}

/** Random serials, cut from a buffer refilled once per SERIALS_PER_FILL certificates rather than once each. */
const SERIAL_BYTES = 16;
const SERIALS_PER_FILL = 256;
let serialPool = Buffer.alloc(0);
let serialOffset = 0;

function randomSerial(): Buffer {
  if (serialOffset >= serialPool.length) {
    serialPool = randomBytes(SERIAL_BYTES * SERIALS_PER_FILL);
    serialOffset = 0;
  }
  serialOffset += SERIAL_BYTES;
  return serialPool.subarray(serialOffset - SERIAL_BYTES, serialOffset);
}

/** Signs the certificate; returns its DER and its PEM (one block, 64-column base64, trailing newline). */
export async function issue(input: CertificateRequestInput, ca: SigningCa): Promise<{ der: Buffer; pem: string }> {
  const ready = prepareCa(ca);
  // 16 random bytes: uniform in [0, 2^128).
  const serial = input.serialHex ? Buffer.from(input.serialHex, 'hex') : randomSerial();
  // TBSCertificate ::= SEQUENCE { [0] version, serialNumber, signature, issuer, validity, subject,
  // subjectPublicKeyInfo (the request's, as it is), [3] extensions }
  const tbsDer = derElement(0x30, [
    VERSION_3,
    derElement(0x02, [positiveInteger(serial)]),
    ready.signature,
    ready.issuer,
    derElement(0x30, [derTime(input.notBefore), derTime(input.notAfter)]),
    subjectName(input.parsed),
    input.parsed.spki,
    derElement(0xa3, [derElement(0x30, certificateExtensions(input, ready))]),
  ]);
  const signatureValue = await signTbs(tbsDer, ready);
  // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }, around the
  // signed bytes as they are: serialising the TBSCertificate structure again would cost as much as the first time.
  const bitString = derElement(0x03, [NO_UNUSED_BITS, signatureValue]);
  const certificate = derElement(0x30, [tbsDer, ready.signature, bitString]);
  return { der: certificate, pem: derToPem(certificate, 'CERTIFICATE') };
}
