/**
 * Reading DER by hand, for the few structures read on hot paths (a request's fields, its signed part): a walk
 * over views of the input, no copies and no object per node. Strict: low tag numbers, definite lengths in
 * their shortest form; anything else throws, so that callers may hand such input to a full ASN.1 parser.
 */

/** Input that is not DER: what a strict decoder (Go's cryptobyte) refuses too. */
export class MalformedDerError extends Error {}

/** The universal tags the hand-written readers meet, as their identifier octets (constructed where DER says so). */
export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** One DER element: its tag, its content octets and its whole encoding, as views of the same buffer. */
export interface DerElement {
  tag: number;
  content: Uint8Array;
  whole: Uint8Array;
}

/** The element that starts at `at`; throws on anything that is not DER. */
export function readElement(der: Uint8Array, at: number): DerElement {
  if (at + 2 > der.length) throw new MalformedDerError('malformed DER: element past the end');
  if ((der[at] & 0x1f) === 0x1f) throw new MalformedDerError('malformed DER: high tag number');
  const first = der[at + 1];
  let start = at + 2;
  let length = first;
  if (first >= 0x80) {
    const bytes = first & 0x7f;
    // A header cut short would read past the end: NaN, which no range check below catches.
    if (bytes === 0 || bytes > 4 || start + bytes > der.length || der[start] === 0) {
      throw new MalformedDerError('malformed DER length');
    }
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[start + i];
    if (length < 0x80) throw new MalformedDerError('malformed DER length: not in its shortest form');
    start += bytes;
  }
  if (start + length > der.length) throw new MalformedDerError('malformed DER: element past the end');
  return { tag: der[at], content: der.subarray(start, start + length), whole: der.subarray(at, start + length) };
}

/** The elements inside `content`, which they must fill exactly. */
export function elementsOf(content: Uint8Array): DerElement[] {
  const out: DerElement[] = [];
  for (let at = 0; at < content.length; at += out[out.length - 1].whole.length) out.push(readElement(content, at));
  return out;
}

/** The elements inside the constructed element that starts `der`. */
export function children(der: Uint8Array): DerElement[] {
  return elementsOf(readElement(der, 0).content);
}

/**
 * The DER of the first element inside a SEQUENCE: the signed part of a certificate or a request (its
 * TBSCertificate or CertificationRequestInfo), as bytes of the same buffer.
 */
export function signedPart(der: Uint8Array): Uint8Array {
  return readElement(readElement(der, 0).content, 0).whole;
}

/** An OBJECT IDENTIFIER's content octets in dotted form; throws when they are not a valid encoding. */
export function oidText(content: Uint8Array): string {
  const arcs: number[] = [];
  let value = 0;
  for (let i = 0; i < content.length; i++) {
    const byte = content[i];
    if (value === 0 && byte === 0x80) throw new MalformedDerError('malformed OID: padded subidentifier');
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw new MalformedDerError('malformed OID: subidentifier too large');
    if (byte & 0x80) continue;
    if (arcs.length === 0) arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
    else arcs.push(value);
    value = 0;
  }
  if (!arcs.length || content[content.length - 1] & 0x80) throw new MalformedDerError('malformed OID');
  return arcs.join('.');
}
