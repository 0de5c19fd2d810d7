/**
 * Building and signing the certificate for an approved request (reference §3.5): v3, random 128-bit serial,
 * the CA's subject as issuer, the request's subject re-encoded and its public key, SANs copied, keyUsage
 * (critical) and extKeyUsage from the usages, basicConstraints CA=false (critical), authorityKeyIdentifier;
 * every other requested extension is dropped.
 *
 * Every part is written as DER directly, each once: what depends only on the CA (issuer, signature algorithm,
 * authority key identifier) or on the CA and the usage list (the extensions but the SANs) once per CA, and kept;
 * the rest per certificate. Serialising a TBSCertificate through an ASN.1 library cost about two ECDSA P-256
 * signatures (`npm run bench -- certificates`), and loading one a tenth of the daemon's start. Nothing is parsed
 * back or serialised twice.
 *
 * node:crypto signs, with the CA's KeyObject: it writes ECDSA signatures as DER directly (WebCrypto's r‖s would
 * need re-encoding), and an ECDSA or Ed25519 signature (tens of microseconds) costs less made inline than the hop to
 * the thread pool WebCrypto takes; RSA's (about a millisecond) is still made there.
 */
import { type KeyObject, randomBytes, sign } from 'node:crypto';
import { promisify } from 'node:util';
import { derElement, derOid, TAG } from '../../../src/pki/der.ts';
import type { SigningAlgorithm } from '../../../src/pki/keys.ts';
import { derToPem } from '../../../src/pki/pem.ts';
import { ipOctets } from '../../../src/util/ip.ts';
import { type ParsedRequest, SUBJECT_ATTRIBUTES } from '../csr.ts';
import { mapUsages } from './policy.ts';

/** A CA ready to sign: what its certificate gives every certificate it issues, and its private key. */
export interface SigningCa {
  /** The CA certificate's subject, DER-encoded: the issuer of every certificate it signs. */
  subject: Uint8Array;
  notAfter: Date;
  privateKey: KeyObject;
  /** The signature algorithm that key implies. */
  signingAlgorithm: SigningAlgorithm;
  /** The key identifier of the authorityKeyIdentifier every certificate it issues carries. */
  authorityKeyId: Uint8Array;
}

/** What every certificate a CA issues shares, DER-encoded once. */
interface PreparedCa {
  /** The CA's private key as node:crypto signs with it, ECDSA signatures in DER. */
  signingKey: { key: KeyObject; dsaEncoding: 'der' };
  /** The digest node:crypto names (`sha256`), or null for Ed25519, whose signature has its own. */
  digest: string | null;
  /** RSA: signed on the thread pool. */
  onThreadPool: boolean;
  /** The signature AlgorithmIdentifier, inside the TBSCertificate and after it. */
  signature: Buffer;
  /** The authorityKeyIdentifier extension. */
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

const NULL = Buffer.from([TAG.null, 0]);

function signatureAlgorithm({ name, hash }: SigningAlgorithm): Buffer {
  const key = hash ? `${name}/${hash}` : name;
  if (!Object.hasOwn(SIGNATURE_OIDS, key)) throw new Error(`unsupported signature algorithm ${key}`);
  const oid = derOid(SIGNATURE_OIDS[key]);
  return derElement(TAG.sequence, name === 'RSASSA-PKCS1-v1_5' ? [oid, NULL] : [oid]);
}

const EXTENSION_OIDS = {
  keyUsage: derOid('2.5.29.15'),
  subjectAltName: derOid('2.5.29.17'),
  basicConstraints: derOid('2.5.29.19'),
  authorityKeyIdentifier: derOid('2.5.29.35'),
  extKeyUsage: derOid('2.5.29.37'),
};

/** `critical BOOLEAN TRUE` of an Extension (FALSE, the default, is not written). */
const CRITICAL = Buffer.from([TAG.boolean, 1, 0xff]);

/** Extension ::= SEQUENCE { extnID, critical, extnValue OCTET STRING }. */
function extension(oid: Buffer, critical: boolean, value: Uint8Array): Buffer {
  const extnValue = derElement(TAG.octetString, [value]);
  return derElement(TAG.sequence, critical ? [oid, CRITICAL, extnValue] : [oid, extnValue]);
}

/** The per-CA part of every certificate, computed on the first certificate a CA issues. */
function prepareCa(ca: SigningCa): PreparedCa {
  let p = prepared.get(ca);
  if (!p) {
    const { name, hash } = ca.signingAlgorithm;
    const keyIdentifier = derElement(0x80, [ca.authorityKeyId]); // [0] IMPLICIT KeyIdentifier
    p = {
      signingKey: { key: ca.privateKey, dsaEncoding: 'der' },
      digest: hash ? hash.replace('-', '').toLowerCase() : null,
      onThreadPool: name.startsWith('RSA'),
      signature: signatureAlgorithm(ca.signingAlgorithm),
      authorityKeyId: extension(
        EXTENSION_OIDS.authorityKeyIdentifier,
        false,
        derElement(TAG.sequence, [keyIdentifier]),
      ),
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
const ATTRIBUTE_OIDS = new Map(SUBJECT_ATTRIBUTES.map(({ oid }) => [oid, derOid(oid)]));

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
    for (const value of encoded) attributes.push(derElement(TAG.sequence, [oidDer, value]));
    rdns.push(derElement(TAG.set, attributes));
  }
  return derElement(TAG.sequence, rdns);
}

/** A directory string value: PrintableString where every character allows it, else UTF8String. */
function directoryString(v: string): Buffer {
  return derElement(PRINTABLE.test(v) ? TAG.printableString : TAG.utf8String, [Buffer.from(v, 'utf8')]);
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
    ? derElement(TAG.generalizedTime, [Buffer.from(`${year}${rest}`, 'latin1')])
    : derElement(TAG.utcTime, [Buffer.from(`${twoDigits(year % 100)}${rest}`, 'latin1')]);
}

export interface CertificateRequestInput {
  parsed: ParsedRequest;
  usages: readonly string[];
  notBefore: Date;
  notAfter: Date;
  /** Hex; a random 128-bit one when unset. */
  serialHex?: string;
}

/**
 * keyUsage's named bits as a BIT STRING: bit i of `bits` (KEY_USAGE_BITS) is the string's bit i, the first the top
 * bit of the first octet; DER drops the trailing zero bits.
 */
function keyUsageBits(bits: number): Buffer {
  const length = 32 - Math.clz32(bits);
  const octets = Buffer.alloc(Math.ceil(length / 8));
  for (let i = 0; i < length; i++) if (bits & (1 << i)) octets[i >> 3] |= 0x80 >> (i & 7);
  return derElement(TAG.bitString, [Buffer.from([octets.length * 8 - length]), octets]);
}

/** basicConstraints with cA FALSE, the default, and no path length: an empty SEQUENCE. */
const NOT_A_CA = Buffer.from([TAG.sequence, 0]);

/** keyUsage (critical), extKeyUsage, basicConstraints (critical) and authorityKeyIdentifier, for one usage list. */
function usageExtensions(usages: readonly string[], ca: PreparedCa): Buffer[] {
  const key = usages.join('\n');
  let extensions = ca.usageExtensions.get(key);
  if (!extensions) {
    const mapped = mapUsages(usages);
    if ('error' in mapped) throw new Error(mapped.error);
    extensions = [];
    if (mapped.keyUsage) extensions.push(extension(EXTENSION_OIDS.keyUsage, true, keyUsageBits(mapped.keyUsage)));
    if (mapped.extKeyUsages.length) {
      const oids = derElement(TAG.sequence, mapped.extKeyUsages.map(derOid));
      extensions.push(extension(EXTENSION_OIDS.extKeyUsage, false, oids));
    }
    extensions.push(extension(EXTENSION_OIDS.basicConstraints, true, NOT_A_CA));
    extensions.push(ca.authorityKeyId);
    if (ca.usageExtensions.size >= MAX_USAGE_LISTS) ca.usageExtensions.clear();
    ca.usageExtensions.set(key, extensions);
  }
  return extensions;
}

/** GeneralName's implicit tags (RFC 5280 §4.2.1.6): [1] rfc822Name, [2] dNSName, [6] URI, [7] iPAddress. */
const NAME_TAGS = { email: 0x81, dns: 0x82, uri: 0x86, ip: 0x87 } as const;

/** The subjectAltName of the request's names, in the reference's order: DNS names, emails, IP addresses, URIs. */
function subjectAltName(p: ParsedRequest): Buffer | undefined {
  const ia5 = (tag: number) => (name: string) => derElement(tag, [Buffer.from(name, 'latin1')]);
  const names = [
    ...p.dnsNames.map(ia5(NAME_TAGS.dns)),
    ...p.emailAddresses.map(ia5(NAME_TAGS.email)),
    ...p.ipAddresses.map((ip) => derElement(NAME_TAGS.ip, [ipAddressOctets(ip)])),
    ...p.uris.map(ia5(NAME_TAGS.uri)),
  ];
  if (!names.length) return undefined;
  return extension(EXTENSION_OIDS.subjectAltName, p.subjectEmpty, derElement(TAG.sequence, names));
}

function ipAddressOctets(text: string): Buffer {
  const octets = ipOctets(text);
  if (!octets) throw new Error(`not an IP address: ${JSON.stringify(text)}`);
  return octets;
}

/** The extensions of the issued certificate, in the reference's order of concern. */
function certificateExtensions(input: CertificateRequestInput, ca: PreparedCa): Buffer[] {
  const fixed = usageExtensions(input.usages, ca);
  const names = subjectAltName(input.parsed);
  return names ? [...fixed, names] : fixed;
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
  const tbsDer = derElement(TAG.sequence, [
    VERSION_3,
    derElement(TAG.integer, [positiveInteger(serial)]),
    ready.signature,
    ca.subject,
    derElement(TAG.sequence, [derTime(input.notBefore), derTime(input.notAfter)]),
    subjectName(input.parsed),
    input.parsed.spki,
    derElement(0xa3, [derElement(TAG.sequence, certificateExtensions(input, ready))]),
  ]);
  const signatureValue = await signTbs(tbsDer, ready);
  // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }, around the
  // signed bytes as they are: serialising the TBSCertificate structure again would cost as much as the first time.
  const bitString = derElement(TAG.bitString, [NO_UNUSED_BITS, signatureValue]);
  const certificate = derElement(TAG.sequence, [tbsDer, ready.signature, bitString]);
  return { der: certificate, pem: derToPem(certificate, 'CERTIFICATE') };
}
