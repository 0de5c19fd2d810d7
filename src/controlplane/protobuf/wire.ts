/**
 * The protobuf wire format, read side: a cursor over a byte array that reads tags, varints (as 32-bit,
 * signed 64-bit or boolean values), 64-bit and 32-bit fixed values and length-delimited payloads, and
 * skips any field it is not asked about (groups included).
 *
 * Integers come back as JavaScript numbers: int32 exactly; int64 exactly up to 2^53 in magnitude, beyond
 * that rounded (Kubernetes objects carry no such values in practice).
 */

import { ProtobufError } from '../../api/protobuf.ts';

export { ProtobufError };

export const WireType = {
  VARINT: 0,
  FIXED64: 1,
  LENGTH_DELIMITED: 2,
  START_GROUP: 3,
  END_GROUP: 4,
  FIXED32: 5,
} as const;
export type WireType = (typeof WireType)[keyof typeof WireType];

const TWO_32 = 4294967296;

export class ProtoReader {
  pos: number;
  readonly end: number;
  /** The low and high 32 bits (unsigned) of the last varint read. */
  private lo = 0;
  private hi = 0;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    end = buf.length,
  ) {
    if (start < 0 || end > buf.length || start > end) throw new ProtobufError('reader range out of bounds');
    this.pos = start;
    this.end = end;
  }

  /** Whether the cursor is at the end of its range. */
  done(): boolean {
    return this.pos >= this.end;
  }

  /** Reads a field tag: the field number and the wire type. */
  tag(): { field: number; wireType: number } {
    this.readVarint();
    if (this.hi !== 0 || this.lo >>> 3 === 0)
      throw new ProtobufError(`invalid field number in tag at offset ${this.pos}`);
    return { field: this.lo >>> 3, wireType: this.lo & 7 };
  }

  /** A varint as int32 (the low 32 bits, two's complement). */
  int32(): number {
    this.readVarint();
    return this.lo | 0;
  }

  /** A varint as uint32. */
  uint32(): number {
    this.readVarint();
    return this.lo >>> 0;
  }

  /** A varint as int64 (two's complement over 64 bits). */
  int64(): number {
    this.readVarint();
    return int64Value(this.lo, this.hi);
  }

  /** A varint as uint64. */
  uint64(): number {
    this.readVarint();
    return (this.hi >>> 0) * TWO_32 + (this.lo >>> 0);
  }

  bool(): boolean {
    this.readVarint();
    return this.lo !== 0 || this.hi !== 0;
  }

  /** 32 bits, little-endian, unsigned. */
  fixed32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos += 4;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000;
  }

  /** 64 bits, little-endian, as a signed integer. */
  fixed64(): number {
    const lo = this.fixed32();
    const hi = this.fixed32();
    return int64Value(lo, hi);
  }

  /** 64 bits, little-endian, as an IEEE 754 double. */
  double(): number {
    this.need(8);
    const value = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return value;
  }

  /** A length-delimited payload: its bounds within `buf` (the cursor moves past it). */
  delimited(): { start: number; end: number } {
    const length = this.uint32();
    if (this.hi !== 0) throw new ProtobufError(`length too large at offset ${this.pos}`);
    this.need(length);
    const start = this.pos;
    this.pos += length;
    return { start, end: this.pos };
  }

  /** A length-delimited payload as a copy-free view. */
  bytes(): Uint8Array {
    const { start, end } = this.delimited();
    return this.buf.subarray(start, end);
  }

  /** A length-delimited payload as UTF-8 text (invalid sequences become U+FFFD, as Go's JSON encoder does). */
  string(): string {
    return UTF8.decode(this.bytes());
  }

  /** A reader over the next length-delimited payload. */
  sub(): ProtoReader {
    const { start, end } = this.delimited();
    return new ProtoReader(this.buf, start, end);
  }

  /** Skips the value of a field of the given wire type (the tag has been read). */
  skip(wireType: number, field = 0): void {
    switch (wireType) {
      case WireType.VARINT:
        this.readVarint();
        return;
      case WireType.FIXED64:
        this.need(8);
        this.pos += 8;
        return;
      case WireType.LENGTH_DELIMITED:
        this.delimited();
        return;
      case WireType.FIXED32:
        this.need(4);
        this.pos += 4;
        return;
      case WireType.START_GROUP:
        for (;;) {
          if (this.done()) throw new ProtobufError(`unterminated group (field ${field})`);
          const t = this.tag();
          if (t.wireType === WireType.END_GROUP) {
            if (t.field !== field) throw new ProtobufError(`mismatched end of group ${t.field} (expected ${field})`);
            return;
          }
          this.skip(t.wireType, t.field);
        }
      default:
        throw new ProtobufError(`unexpected wire type ${wireType} at offset ${this.pos}`);
    }
  }

  private need(n: number): void {
    if (n > this.end - this.pos) throw new ProtobufError(`truncated input: ${n} bytes needed at offset ${this.pos}`);
  }

  /** Reads up to ten bytes of varint into `lo`/`hi`. */
  private readVarint(): void {
    const b = this.buf;
    let lo = 0;
    let hi = 0;
    let byte = 0x80;
    // Bytes 1-4 fill bits 0-27; byte 5 bits 28-34 (split over lo and hi); bytes 6-10 bits 35-63.
    for (let shift = 0; shift < 28 && byte >= 0x80; shift += 7) {
      byte = this.byte(b);
      lo |= (byte & 0x7f) << shift;
    }
    if (byte >= 0x80) {
      byte = this.byte(b);
      lo |= (byte & 0x0f) << 28;
      hi = (byte & 0x7f) >> 4;
    }
    for (let shift = 3; shift < 32 && byte >= 0x80; shift += 7) {
      byte = this.byte(b);
      hi |= (byte & 0x7f) << shift;
    }
    if (byte >= 0x80) throw new ProtobufError(`varint longer than 10 bytes at offset ${this.pos}`);
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  private byte(b: Uint8Array): number {
    if (this.pos >= this.end) throw new ProtobufError(`truncated varint at offset ${this.pos}`);
    return b[this.pos++];
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** The signed 64-bit integer with these halves, as a number. */
function int64Value(lo: number, hi: number): number {
  if (hi === 0) return lo >>> 0;
  if ((hi & 0x80000000) === 0) return hi * TWO_32 + (lo >>> 0);
  // Negative: the two's complement of (hi, lo).
  const negLo = (~lo + 1) >>> 0;
  const negHi = (~hi + (negLo === 0 ? 1 : 0)) >>> 0;
  return -(negHi * TWO_32 + negLo);
}
