/**
 * A PKCS#10 request's fields read straight from its DER: the subject's attributes as text, the public key, the
 * requested extensions, the signature. A fraction of the cost of @peculiar/x509's parse, for the requests seen in
 * practice; anything it does not know (another string type, an attribute other than the extension request, BER,
 * trailing bytes) comes back `undefined`, and the caller keeps the library's parse, its verdict and its messages.
 */
import type { JsonWebKey } from 'node:crypto';
import { children, type DerElement, elementsOf, oidText, readElement, TAG } from './der.ts';

export interface RequestFields {
  /** The CertificationRequestInfo: the signed bytes. */
  info: Uint8Array;
  /** Every subject attribute, RDN after RDN, as its type and text. */
  subject: { oid: string; value: string }[];
  /** The SubjectPublicKeyInfo, as it is. */
  spki: Uint8Array;
  publicKey: JsonWebKey;
  /** The key algorithm as WebCrypto (and @peculiar/x509) name it. */
  keyAlgorithm: 'RSASSA-PKCS1-v1_5' | 'ECDSA' | 'Ed25519';
  extensions: { oid: string; critical: boolean; value: Uint8Array }[];
  signatureAlgorithm: string;
  /** The signature BIT STRING's content, its unused-bits octet first. */
  signature: Uint8Array;
}

/** A CertificationRequestInfo's attributes: [0], constructed. */
const ATTRIBUTES = 0xa0;

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

/** The request's fields, or `undefined` when it is not in the shape read here (see the module comment). */
export function readCertificationRequest(der: Uint8Array): RequestFields | undefined {
  try {
    const top = readElement(der, 0);
    if (top.tag !== TAG.sequence || top.whole.length !== der.length) return undefined;
    const [info, algorithm, signature, ...more] = elementsOf(top.content);
    if (more.length || info?.tag !== TAG.sequence || signature?.tag !== TAG.bitString) return undefined;
    const [version, name, spki, attributes, ...rest] = elementsOf(info.content);
    const v0 = version?.tag === TAG.integer && version.content.length === 1 && version.content[0] === 0;
    if (!v0 || rest.length || spki?.tag !== TAG.sequence || attributes?.tag !== ATTRIBUTES) return undefined;
    const subject = readName(name);
    const key = readPublicKey(spki.whole);
    const extensions = readRequestedExtensions(attributes.content);
    const signatureAlgorithm = algorithmOid(algorithm);
    if (!subject || !key || !extensions || !signatureAlgorithm) return undefined;
    return {
      info: info.whole,
      subject,
      spki: spki.whole,
      ...key,
      extensions,
      signatureAlgorithm,
      signature: signature.content,
    };
  } catch {
    return undefined;
  }
}

// A leading byte order mark stays, as the library keeps it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

/** The text of a string in one of the types seen in practice; `undefined` for the others. */
function text(e: DerElement): string | undefined {
  switch (e.tag) {
    case TAG.utf8String:
      return utf8.decode(e.content);
    case TAG.printableString:
    case TAG.ia5String:
      return latin1(e.content);
    default:
      return undefined;
  }
}

function readName(name: DerElement | undefined): RequestFields['subject'] | undefined {
  if (name?.tag !== TAG.sequence) return undefined;
  const out: RequestFields['subject'] = [];
  for (const rdn of elementsOf(name.content)) {
    if (rdn.tag !== TAG.set) return undefined;
    for (const attribute of elementsOf(rdn.content)) {
      const [type, value, ...rest] = attribute.tag === TAG.sequence ? elementsOf(attribute.content) : [];
      const valueText = value && text(value);
      if (type?.tag !== TAG.oid || valueText === undefined || rest.length) return undefined;
      out.push({ oid: oidText(type.content), value: valueText });
    }
  }
  return out;
}

function algorithmOid(algorithm: DerElement | undefined): string | undefined {
  if (algorithm?.tag !== TAG.sequence) return undefined;
  const [oid] = elementsOf(algorithm.content);
  return oid?.tag === TAG.oid ? oidText(oid.content) : undefined;
}

/** The extensions of the request's one extension request, none without it; `undefined` for any other attribute. */
function readRequestedExtensions(attributes: Uint8Array): RequestFields['extensions'] | undefined {
  const all = elementsOf(attributes);
  if (all.length === 0) return [];
  if (all.length > 1 || all[0].tag !== TAG.sequence) return undefined;
  const [type, values, ...rest] = elementsOf(all[0].content);
  if (type?.tag !== TAG.oid || oidText(type.content) !== EXTENSION_REQUEST || values?.tag !== TAG.set || rest.length) {
    return undefined;
  }
  const [extensions, ...others] = elementsOf(values.content);
  if (extensions?.tag !== TAG.sequence || others.length) return undefined;
  const out: RequestFields['extensions'] = [];
  for (const extension of elementsOf(extensions.content)) {
    if (extension.tag !== TAG.sequence) return undefined;
    const parts = elementsOf(extension.content);
    const [oid, critical, value] = parts.length === 3 ? parts : [parts[0], undefined, parts[1]];
    const flag =
      critical === undefined ||
      (critical.tag === TAG.boolean &&
        critical.content.length === 1 &&
        (critical.content[0] === 0 || critical.content[0] === 0xff));
    if (parts.length < 2 || oid?.tag !== TAG.oid || !flag || value?.tag !== TAG.octetString) return undefined;
    out.push({ oid: oidText(oid.content), critical: critical?.content[0] === 0xff, value: value.content });
  }
  return out;
}

/** Subject alternative names by kind. */
export interface AltNames {
  dnsNames: string[];
  emailAddresses: string[];
  ipAddresses: string[];
  uris: string[];
}

export const noAltNames = (): AltNames => ({ dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [] });

/** The names of a subjectAltName extension's value, added to `out`; `undefined` when one is of a kind not read here. */
export function readAltNames(value: Uint8Array, out = noAltNames()): AltNames | undefined {
  try {
    return readAltNamesInto(value, out);
  } catch {
    return undefined;
  }
}

function readAltNamesInto(value: Uint8Array, out: AltNames): AltNames | undefined {
  const top = readElement(value, 0);
  if (top.tag !== TAG.sequence || top.whole.length !== value.length) return undefined;
  for (const name of elementsOf(top.content)) {
    // GeneralName, implicitly tagged: [1] rfc822Name, [2] dNSName, [6] URI (IA5 strings), [7] iPAddress.
    if (name.tag === 0x81) out.emailAddresses.push(latin1(name.content));
    else if (name.tag === 0x82) out.dnsNames.push(latin1(name.content));
    else if (name.tag === 0x86) out.uris.push(latin1(name.content));
    else if (name.tag === 0x87 && (name.content.length === 4 || name.content.length === 16)) {
      out.ipAddresses.push(ipText(name.content));
    } else return undefined;
  }
  return out;
}

/** An address as @peculiar/x509 writes it: IPv4 dotted; IPv6 in hex groups, the first longest run of 2+ zeros as `::`. */
function ipText(ip: Uint8Array): string {
  if (ip.length === 4) return ip.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((ip[i] << 8) | ip[i + 1]).toString(16));
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let end = i;
    while (end < 8 && groups[end] === '0') end++;
    if (end - i > best.length) best = { start: i, length: end - i };
    i = end > i ? end : i + 1;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.length).join(':')}`;
}

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

const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
const base64url = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');

/** An INTEGER's magnitude without the sign octet a positive value may carry. */
function unsigned(integer: Uint8Array): Uint8Array {
  let start = 0;
  while (start < integer.length - 1 && integer[start] === 0) start++;
  return integer.subarray(start);
}

/** A SubjectPublicKeyInfo as a JWK, for RSA, uncompressed ECDSA P-256/384/521 and Ed25519 keys; else undefined. */
export function publicJwk(spki: Uint8Array): JsonWebKey | undefined {
  return readPublicKey(spki)?.publicKey;
}

function readPublicKey(spki: Uint8Array): Pick<RequestFields, 'publicKey' | 'keyAlgorithm'> | undefined {
  const [algorithm, bits] = children(spki);
  const [oid, parameters] = children(algorithm.whole);
  if (bits?.tag !== TAG.bitString || bits.content[0] !== 0 || oid?.tag !== TAG.oid) return undefined;
  const key = bits.content.subarray(1);
  switch (hex(oid.content)) {
    case RSA_ENCRYPTION: {
      const [n, e] = children(key);
      if (n?.tag !== TAG.integer || e?.tag !== TAG.integer) return undefined;
      const publicKey = { kty: 'RSA', n: base64url(unsigned(n.content)), e: base64url(unsigned(e.content)) };
      return { publicKey, keyAlgorithm: 'RSASSA-PKCS1-v1_5' };
    }
    case EC_PUBLIC_KEY: {
      const curve = parameters?.tag === TAG.oid ? CURVES[hex(parameters.content)] : undefined;
      if (!curve || key[0] !== 0x04 || key.length !== 1 + 2 * curve.size) return undefined;
      const x = base64url(key.subarray(1, 1 + curve.size));
      return {
        publicKey: { kty: 'EC', crv: curve.crv, x, y: base64url(key.subarray(1 + curve.size)) },
        keyAlgorithm: 'ECDSA',
      };
    }
    case ED25519:
      return key.length === 32
        ? { publicKey: { kty: 'OKP', crv: 'Ed25519', x: base64url(key) }, keyAlgorithm: 'Ed25519' }
        : undefined;
    default:
      return undefined;
  }
}
