/**
 * Whether Go's crypto/x509 parses certificates (`ParseCertificate`, `ParseCertificates` return no error), read
 * straight from their DER for the shapes certificates have in practice. node:crypto's parse costs about 170 µs a
 * certificate, most of it in decoding the public key through OpenSSL 3's decoders, and it takes what Go refuses: a
 * point off its curve, a malformed key usage, a duplicate extension. This walk takes a few µs. It reads only what
 * Go reads. A shape it does not read (unique identifiers, another string, time or key type, bytes Go would leave
 * unread, a negative serial, an extension whose value Go reads and this does not, anything on which Go's versions
 * differ) comes back as not read: the caller decides another way.
 *
 * Also read here: the NotAfter Go reads, and the parts a CA signs with (subject, public key, extensions), which
 * the daemon would otherwise need an ASN.1 library for at its start.
 */
import { X509Certificate as OpenSslCertificate } from 'node:crypto';
import { children, type DerElement, elementsOf, MalformedDerError, oidText, readElement, TAG } from './der.ts';

/** Go refuses it. */
class Refused extends Error {}
/** A shape not read here. */
class Unread extends Error {}

function refuse(why: string): never {
  throw new Refused(why);
}
function unread(what: string): never {
  throw new Unread(what);
}

/** The elements of a value one at a time, as Go's cryptobyte reads them: what Go never reads is never parsed. */
class Reader {
  private at = 0;

  constructor(private readonly content: Uint8Array) {}

  next(): DerElement | undefined {
    if (this.at >= this.content.length) return undefined;
    const e = readElement(this.content, this.at);
    this.at += e.whole.length;
    return e;
  }

  peekTag(): number | undefined {
    return this.content[this.at];
  }

  atEnd(): boolean {
    return this.at >= this.content.length;
  }

  /** Bytes left where Go stops reading: Go ignores them, and so its verdict on them is not read here. */
  end(where: string): void {
    if (!this.atEnd()) unread(`bytes after ${where}`);
  }
}

/** A plain view: the subarrays of a Buffer are Buffers, several times as costly to make. */
const view = (der: Uint8Array) => new Uint8Array(der.buffer, der.byteOffset, der.byteLength);

/** True when Go parses one certificate, false when it refuses it, undefined for a shape not read here. */
export function goParsesCertificate(der: Uint8Array): boolean | undefined {
  const bytes = view(der);
  let certificate: DerElement;
  try {
    certificate = readElement(bytes, 0);
  } catch (err) {
    if (err instanceof MalformedDerError) return false;
    throw err;
  }
  return certificate.whole.length === bytes.length ? verdict(certificate) : false;
}

/**
 * Go's verdict on certificates back to back, as a PEM block may hold them: false when it refuses one, else those
 * whose shape is not read here (none: Go parses them all).
 */
export function goParsesCertificates(der: Uint8Array): false | Uint8Array[] {
  const all = new Reader(view(der));
  const notRead: Uint8Array[] = [];
  try {
    for (let certificate = all.next(); certificate; certificate = all.next()) {
      const parses = verdict(certificate);
      if (parses === false) return false;
      if (parses === undefined) notRead.push(certificate.whole);
    }
  } catch (err) {
    if (err instanceof MalformedDerError) return false;
    throw err;
  }
  return notRead;
}

function verdict(certificate: DerElement): boolean | undefined {
  const read = goRead(certificate);
  return read === undefined ? undefined : read !== null;
}

/** What Go reads of a certificate: null when it refuses it, undefined for a shape not read here. */
function goRead(certificate: DerElement): GoCertificate | null | undefined {
  try {
    return readCertificate(certificate);
  } catch (err) {
    if (err instanceof Unread) return undefined;
    if (err instanceof Refused || err instanceof MalformedDerError) return null;
    throw err;
  }
}

/**
 * The NotAfter of the first certificate in `der` as Go reads it: null when Go refuses that certificate, undefined
 * for a shape not read here.
 */
export function goCertificateNotAfter(der: Uint8Array): Date | null | undefined {
  let certificate: DerElement;
  try {
    certificate = readElement(view(der), 0);
  } catch (err) {
    if (err instanceof MalformedDerError) return null;
    throw err;
  }
  const read = goRead(certificate);
  return read && new Date(read.notAfter);
}

/**
 * The NotAfter a certificate states, read from its place without judging the rest (a few µs where Go's verdict
 * takes tens): undefined when it cannot be read so. What Go makes of the whole is {@link goCertificateNotAfter}'s.
 */
export function statedNotAfter(der: Uint8Array): Date | undefined {
  try {
    const fields = elementsOf(readElement(readElement(view(der), 0).content, 0).content);
    // [0] version is optional; serialNumber, signature and issuer come before the validity.
    return new Date(readValidity(fields[fields[0]?.tag === TBS.version ? 4 : 3]));
  } catch (err) {
    if (err instanceof Unread || err instanceof Refused || err instanceof MalformedDerError) return undefined;
    throw err;
  }
}

/**
 * Whether DER holds certificates back to back (one or more) as Go's parser takes them, for checks that need
 * nothing from them: read here for the usual shapes, by OpenSSL for the others. The reference's error text if not.
 */
export function certificateParseError(der: Uint8Array): string | undefined {
  const notRead = der.byteLength === 0 ? false : goParsesCertificates(der);
  if (notRead === false || !notRead.every(openSslParses)) return 'x509: malformed certificate';
  return undefined;
}

/** Whether DER is one certificate Go parses: read here for the usual shapes, by OpenSSL for the others. */
export function parsesAsCertificate(der: Uint8Array): boolean {
  return goParsesCertificate(der) ?? openSslParses(der);
}

function openSslParses(der: Uint8Array): boolean {
  try {
    new OpenSslCertificate(der);
    return true;
  } catch {
    return false;
  }
}

/** The parts of a certificate a CA signs with, read from its DER. */
export interface CertificateParts {
  /** The subject Name, DER-encoded. */
  subject: Uint8Array;
  /** The subjectPublicKey BIT STRING's bits (the key itself, without the unused-bits octet). */
  subjectPublicKey: Uint8Array;
  /** Each extension's value (the OCTET STRING's content) by its OID. */
  extensions: Map<string, { critical: boolean; value: Uint8Array }>;
}

/**
 * The subject, public key and extensions of a certificate, read by their place in the TBSCertificate without
 * judging the rest (for a certificate OpenSSL has parsed). Throws {@link MalformedDerError} on DER it cannot walk.
 */
export function certificateParts(der: Uint8Array): CertificateParts {
  const fields = elementsOf(readElement(readElement(view(der), 0).content, 0).content);
  // [0] version is optional; serialNumber, signature, issuer and validity come before the subject.
  const subjectAt = fields[0]?.tag === TBS.version ? 5 : 4;
  const [subject, spki] = [fields[subjectAt], fields[subjectAt + 1]];
  const bits = spki && elementsOf(spki.content)[1];
  if (subject?.tag !== TAG.sequence || bits?.tag !== TAG.bitString || bits.content[0] !== 0) {
    throw new MalformedDerError('malformed certificate: no subject and public key where a TBSCertificate has them');
  }
  const extensions: CertificateParts['extensions'] = new Map();
  const wrapper = fields.find((f) => f.tag === TBS.extensions);
  for (const extension of wrapper ? children(wrapper.content) : []) {
    const [type, second, third] = elementsOf(extension.content);
    const critical = second?.tag === TAG.boolean ? second.content[0] !== 0 : false;
    const value = second?.tag === TAG.boolean ? third : second;
    if (type?.tag !== TAG.oid || value?.tag !== TAG.octetString) throw new MalformedDerError('malformed extension');
    extensions.set(oidText(type.content), { critical, value: value.content });
  }
  return { subject: subject.whole, subjectPublicKey: bits.content.subarray(1), extensions };
}

/** The TBSCertificate's context-specific fields. */
const TBS = { version: 0xa0, issuerUniqueId: 0x81, subjectUniqueId: 0x82, extensions: 0xa3 } as const;

/** What callers take from a certificate Go parses. */
interface GoCertificate {
  /** Milliseconds since the epoch. */
  notAfter: number;
}

function readCertificate(certificate: DerElement): GoCertificate {
  if (certificate.tag !== TAG.sequence) refuse('malformed certificate');
  const parts = new Reader(certificate.content);
  const tbs = parts.next();
  if (tbs?.tag !== TAG.sequence) refuse('malformed tbs certificate');
  const fields = new Reader(tbs.content);
  let version = 1;
  if (fields.peekTag() === TBS.version) {
    const explicit = new Reader(fields.next()!.content);
    const number = explicit.next();
    if (!isInteger(number) || !explicit.atEnd() || number.content.length > 1 || number.content[0] > 2) {
      refuse('malformed or invalid version');
    }
    version = number.content[0] + 1;
  }
  const serial = fields.next();
  if (!isInteger(serial)) refuse('malformed serial number');
  if (serial.content[0] & 0x80) unread('a negative serial number (refused or not by GODEBUG)');
  const innerAlgorithm = fields.next();
  if (innerAlgorithm?.tag !== TAG.sequence) refuse('malformed signature algorithm identifier');
  readAlgorithm(innerAlgorithm);
  readName(fields.next());
  const notAfter = readValidity(fields.next());
  readName(fields.next());
  readPublicKeyInfo(fields.next());
  const next = fields.peekTag();
  if (version > 1 && (next === TBS.issuerUniqueId || next === TBS.subjectUniqueId)) unread('unique identifiers');
  if (version === 3 && next === TBS.extensions) readExtensions(fields.next()!);
  fields.end('the tbs certificate');
  const algorithm = parts.next();
  if (algorithm?.tag !== TAG.sequence) refuse('malformed algorithm identifier');
  if (Buffer.compare(innerAlgorithm.content, algorithm.content) !== 0)
    refuse('inner and outer signature algorithms differ');
  const signature = parts.next();
  if (signature?.tag !== TAG.bitString || !validBitString(signature.content)) refuse('malformed signature');
  parts.end('the signature');
  return { notAfter };
}

/** An OBJECT IDENTIFIER's dotted form; arcs past what Go's cryptobyte reads (below 2³¹) are not read here. */
function oid(e: DerElement): string {
  const text = oidText(e.content);
  if (text.split('.').some((arc) => Number(arc) >= 2 ** 28)) unread('an OID arc near or past 2³¹');
  return text;
}

function isInteger(e: DerElement | undefined): e is DerElement {
  if (e?.tag !== TAG.integer || e.content.length === 0) return false;
  const [first, second] = e.content;
  // DER's shortest form, which Go's cryptobyte requires.
  return e.content.length === 1 || !((first === 0 && second < 0x80) || (first === 0xff && second >= 0x80));
}

/** A BOOLEAN as Go's cryptobyte reads it: one octet, 0 or 0xff. */
function isBoolean(e: DerElement): boolean {
  return e.content.length === 1 && (e.content[0] === 0 || e.content[0] === 0xff);
}

function isPositiveInteger(e: DerElement | undefined): e is DerElement {
  return isInteger(e) && !(e.content[0] & 0x80) && e.content.some((byte) => byte !== 0);
}

/** A BIT STRING's content as Go's cryptobyte takes it: at most 7 unused bits, and those zero. */
function validBitString(content: Uint8Array): boolean {
  const unused = content[0];
  if (content.length === 0 || unused > 7) return false;
  if (content.length === 1) return unused === 0;
  return (content[content.length - 1] & ((1 << unused) - 1)) === 0;
}

/** An AlgorithmIdentifier: its OID and its parameters element, if any. */
function readAlgorithm(sequence: DerElement): { oid: string; parameters?: DerElement } {
  const parts = new Reader(sequence.content);
  const algorithm = parts.next();
  if (algorithm?.tag !== TAG.oid) refuse('malformed algorithm identifier');
  const parameters = parts.next();
  parts.end('an algorithm identifier');
  return { oid: oid(algorithm), parameters };
}

// Go's PrintableString: the standard's characters and, as its parser allows, '*' and '&'.
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?*&]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function readName(name: DerElement | undefined): void {
  if (name?.tag !== TAG.sequence) refuse('malformed name');
  for (const rdn of elementsOf(name.content)) {
    if (rdn.tag !== TAG.set) refuse('invalid RDNSequence');
    for (const attribute of elementsOf(rdn.content)) {
      if (attribute.tag !== TAG.sequence) refuse('invalid attribute');
      const parts = new Reader(attribute.content);
      const type = parts.next();
      const value = parts.next();
      if (type?.tag !== TAG.oid || !value) refuse('invalid attribute');
      oid(type);
      readString(value);
      parts.end('an attribute value');
    }
  }
}

function readString(value: DerElement): void {
  const { buffer, byteOffset, byteLength } = value.content;
  switch (value.tag) {
    case TAG.printableString:
      if (!PRINTABLE.test(Buffer.from(buffer, byteOffset, byteLength).toString('latin1'))) {
        refuse('invalid PrintableString');
      }
      return;
    case TAG.ia5String:
      if (value.content.some((byte) => byte >= 0x80)) refuse('invalid IA5String');
      return;
    case TAG.utf8String:
      try {
        utf8.decode(value.content);
      } catch {
        refuse('invalid UTF-8 string');
      }
      return;
    default:
      unread('another string type');
  }
}

/** The NotAfter of a Validity, in milliseconds since the epoch. */
function readValidity(validity: DerElement | undefined): number {
  if (validity?.tag !== TAG.sequence) refuse('malformed validity');
  const times = new Reader(validity.content);
  const [notBefore, notAfter] = [times.next(), times.next()];
  if (!notBefore || !notAfter) refuse('malformed validity');
  readTime(notBefore);
  const end = readTime(notAfter);
  times.end('the validity');
  return end;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * UTCTime as YYMMDDHHMMSSZ and GeneralizedTime as YYYYMMDDHHMMSSZ, each a real instant, in milliseconds since the
 * epoch; other forms unread.
 */
function readTime(time: DerElement): number {
  const text = time.content;
  const yearDigits = time.tag === TAG.utcTime ? 2 : time.tag === TAG.generalizedTime ? 4 : 0;
  if (!yearDigits || text.length !== yearDigits + 11 || text[text.length - 1] !== 0x5a) unread('another time form');
  const shortYear = digits(text, 0, yearDigits);
  const year = yearDigits === 4 ? shortYear : shortYear < 50 ? 2000 + shortYear : 1900 + shortYear;
  const [month, day, hour, minute, second] = [0, 2, 4, 6, 8].map((at) => digits(text, yearDigits + at, 2));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (!days || day < 1 || day > days || hour > 23 || minute > 59 || second > 59) refuse('malformed time');
  // Date.UTC maps years 0–99 to 1900–1999: set the year apart.
  const instant = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  instant.setUTCFullYear(year);
  return instant.getTime();
}

/** The number the `count` ASCII digits at `at` write; refused if one is not a digit. */
function digits(text: Uint8Array, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text[i] - 0x30;
    if (digit < 0 || digit > 9) refuse('malformed time');
    value = value * 10 + digit;
  }
  return value;
}

const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
const EC_PUBLIC_KEY = '1.2.840.10045.2.1';
const ED25519 = '1.3.101.112';
/** The NIST curves Go reads and this checks points on: y² = x³ - 3x + b (mod p). */
const CURVES: Record<string, { size: number; p: bigint; b: bigint }> = {
  '1.2.840.10045.3.1.7': {
    size: 32,
    p: 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn,
    b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
  },
  '1.3.132.0.34': {
    size: 48,
    p: 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffffn,
    b: 0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aefn,
  },
  '1.3.132.0.35': {
    size: 66,
    p: (1n << 521n) - 1n,
    b: 0x0051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00n,
  },
};
const P224 = '1.3.132.0.33';

function readPublicKeyInfo(spki: DerElement | undefined): void {
  if (spki?.tag !== TAG.sequence) refuse('malformed spki');
  const parts = new Reader(spki.content);
  const algorithm = parts.next();
  if (algorithm?.tag !== TAG.sequence) refuse('malformed public key algorithm identifier');
  const { oid: keyAlgorithm, parameters } = readAlgorithm(algorithm);
  const bits = parts.next();
  if (bits?.tag !== TAG.bitString || !validBitString(bits.content)) refuse('malformed subjectPublicKey');
  parts.end('the public key');
  if (bits.content[0] !== 0) unread('a key of a partial last byte');
  const key = bits.content.subarray(1);
  switch (keyAlgorithm) {
    case RSA_ENCRYPTION:
      readRsaKey(parameters, key);
      break;
    case EC_PUBLIC_KEY:
      readEcKey(parameters, key);
      break;
    case ED25519:
      if (parameters) refuse('Ed25519 key encoded with illegal parameters');
      if (key.length !== 32) refuse('wrong Ed25519 public key size');
      break;
    default:
      unread('another key algorithm');
  }
}

function readRsaKey(parameters: DerElement | undefined, key: Uint8Array): void {
  if (parameters?.tag !== TAG.null || parameters.content.length) refuse('RSA key missing NULL parameters');
  const top = readElement(key, 0);
  if (top.tag !== TAG.sequence) refuse('invalid RSA public key');
  if (top.whole.length !== key.length) unread('bytes after the RSA key');
  const numbers = new Reader(top.content);
  const modulus = numbers.next();
  const exponent = numbers.next();
  if (!isInteger(modulus) || !isInteger(exponent)) refuse('invalid RSA public key');
  numbers.end('the RSA exponent');
  if (!isPositiveInteger(modulus)) refuse('RSA modulus is not a positive number');
  if (exponent.content.length > 6) unread('an RSA exponent past 48 bits');
  if (!isPositiveInteger(exponent)) refuse('RSA public exponent is not a positive number');
}

function readEcKey(parameters: DerElement | undefined, key: Uint8Array): void {
  if (parameters?.tag !== TAG.oid) refuse('invalid ECDSA parameters');
  const curveOid = oid(parameters);
  const curve = CURVES[curveOid];
  if (curveOid === P224) unread('a P-224 key');
  if (!curve) refuse('unsupported elliptic curve');
  // Go takes the uncompressed form only, both coordinates below p, on the curve.
  if (key.length !== 1 + 2 * curve.size || key[0] !== 0x04) refuse('failed to unmarshal elliptic curve point');
  const x = bigint(key.subarray(1, 1 + curve.size));
  const y = bigint(key.subarray(1 + curve.size));
  const { p, b } = curve;
  const onCurve = x < p && y < p && (y * y - (x * x * x - 3n * x + b)) % p === 0n;
  if (!onCurve) refuse('failed to unmarshal elliptic curve point');
}

function bigint(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`);
}

// The extensions whose value is read here. Go reads others too: every other one of 2.5.29 (its parser has gained
// some between versions) and the authority information access; those are left to the caller.
const KEY_USAGE = '2.5.29.15';
const BASIC_CONSTRAINTS = '2.5.29.19';
const SUBJECT_ALT_NAME = '2.5.29.17';
const AUTHORITY_KEY_ID = '2.5.29.35';
const EXT_KEY_USAGE = '2.5.29.37';
const SUBJECT_KEY_ID = '2.5.29.14';
const AUTHORITY_INFO_ACCESS = '1.3.6.1.5.5.7.1.1';
/** An IPv6 address that maps an IPv4 one: Go's versions differ on it in a name. */
const IPV4_MAPPED = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);

function readExtensions(wrapper: DerElement): void {
  const lists = new Reader(wrapper.content);
  const list = lists.next();
  if (list?.tag !== TAG.sequence) refuse('malformed extensions');
  lists.end('the extensions');
  const seen = new Set<string>();
  for (const extension of elementsOf(list.content)) {
    if (extension.tag !== TAG.sequence) refuse('malformed extension');
    const parts = new Reader(extension.content);
    const type = parts.next();
    if (type?.tag !== TAG.oid) refuse('malformed extension OID field');
    const critical = parts.peekTag() === TAG.boolean ? parts.next() : undefined;
    if (critical && !isBoolean(critical)) refuse('malformed extension critical field');
    const value = parts.next();
    if (value?.tag !== TAG.octetString) refuse('malformed extension value field');
    parts.end('an extension value');
    const id = oid(type);
    if (seen.has(id)) refuse('certificate contains duplicate extensions');
    seen.add(id);
    readExtensionValue(id, critical?.content[0] === 0xff, value.content);
  }
}

/** The value of an extension as Go's parser reads it; an extension Go does not read is Go's to ignore. */
function readExtensionValue(id: string, critical: boolean, value: Uint8Array): void {
  switch (id) {
    case KEY_USAGE:
      if (!validBitString(onlyElement(value, TAG.bitString, 'invalid key usage').content)) refuse('invalid key usage');
      return;
    case BASIC_CONSTRAINTS:
      readBasicConstraints(onlyElement(value, TAG.sequence, 'invalid basic constraints'));
      return;
    case EXT_KEY_USAGE:
      for (const usage of elementsOf(onlyElement(value, TAG.sequence, 'invalid extended key usages').content)) {
        if (usage.tag !== TAG.oid) refuse('invalid extended key usages');
        oid(usage);
      }
      return;
    case SUBJECT_KEY_ID:
      if (critical) unread('a critical subject key identifier (refused by recent Go only)');
      onlyElement(value, TAG.octetString, 'invalid subject key identifier');
      return;
    case AUTHORITY_KEY_ID: {
      if (critical) unread('a critical authority key identifier (refused by recent Go only)');
      const identifier = onlyElement(value, TAG.sequence, 'invalid authority key identifier').content;
      // Go reads the key identifier, [0], when it comes first, and nothing else.
      if (identifier[0] === 0x80) readElement(identifier, 0);
      return;
    }
    case SUBJECT_ALT_NAME:
      readAltNames(onlyElement(value, TAG.sequence, 'invalid subject alternative names').content);
      return;
    default:
      if (id.startsWith('2.5.29.') || id === AUTHORITY_INFO_ACCESS) unread(`extension ${id}`);
  }
}

function readBasicConstraints(sequence: DerElement): void {
  const parts = new Reader(sequence.content);
  const isCa = parts.peekTag() === TAG.boolean ? parts.next() : undefined;
  if (isCa && !isBoolean(isCa)) refuse('invalid basic constraints');
  if (parts.peekTag() === TAG.integer) {
    const pathLength = parts.next()!;
    if (!isInteger(pathLength)) refuse('invalid basic constraints');
    if (pathLength.content[0] & 0x80) unread('a negative path length (refused by recent Go only)');
    if (pathLength.content.length > 6) unread('a path length past 48 bits');
  }
  parts.end('the basic constraints');
}

/** The one element an extension's value starts with, refused if of another tag. */
function onlyElement(value: Uint8Array, tag: number, why: string): DerElement {
  const e = readElement(value, 0);
  if (e.tag !== tag) refuse(why);
  if (e.whole.length !== value.length) unread('bytes after an extension value');
  return e;
}

/** GeneralNames as Go reads them: rfc822Name and dNSName IA5, iPAddress 4 or 16 bytes, the other kinds unread. */
function readAltNames(content: Uint8Array): void {
  for (const name of elementsOf(content)) {
    switch (name.tag) {
      case 0x81:
      case 0x82:
        if (name.content.some((byte) => byte >= 0x80)) refuse('SAN rfc822Name or dNSName is malformed');
        break;
      case 0x87:
        if (name.content.length !== 4 && name.content.length !== 16) refuse('cannot parse IP address');
        if (name.content.length === 16 && Buffer.compare(name.content.subarray(0, 12), IPV4_MAPPED) === 0) {
          unread('an IPv4-mapped IPv6 address (refused by recent Go only)');
        }
        break;
      default:
        unread('a subject alternative name of another kind');
    }
  }
}
