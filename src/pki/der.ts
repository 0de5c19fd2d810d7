/**
 * Reading and writing DER by hand, for the few structures met on hot paths or at start (a request's fields, its
 * signed part, a certificate's parts): a walk over views of the input, no copies and no object per node. Strict:
 * low tag numbers, definite lengths in their shortest form; anything else throws, so that callers may hand such
 * input to a full ASN.1 parser.
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

/** A DER element (tag, definite length up to 64 KiB) around already-encoded content, written in one buffer. */
export function derElement(tag: number, content: readonly Uint8Array[]): Buffer {
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

/** An OBJECT IDENTIFIER element from its dotted form; throws on one that is not an OID. */
export function derOid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((arc) => (/^(0|[1-9][0-9]*)$/.test(arc) ? Number(arc) : Number.NaN));
  const [first, second, ...rest] = arcs;
  const valid =
    arcs.length >= 2 &&
    arcs.every(Number.isSafeInteger) &&
    first <= 2 &&
    (first === 2 || second < 40) &&
    40 * first + second <= Number.MAX_SAFE_INTEGER;
  if (!valid) throw new Error(`not an object identifier: ${JSON.stringify(dotted)}`);
  const octets: number[] = [];
  for (const arc of [40 * first + second, ...rest]) {
    // Base 128, most significant group first, every group but the last with its top bit set.
    const groups = [arc % 128];
    for (let high = Math.floor(arc / 128); high > 0; high = Math.floor(high / 128)) groups.unshift((high % 128) | 0x80);
    octets.push(...groups);
  }
  return derElement(TAG.oid, [Uint8Array.from(octets)]);
}
