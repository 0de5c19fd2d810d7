/**
 * The protobuf wire format, write side: an append-only byte buffer with tags, varints (negative integers as
 * their 64-bit two's complement, as Go writes int32 and int64), doubles and length-delimited payloads.
 */
import { WireType } from './wire.ts';

const UTF8 = new TextEncoder();
const TWO_32 = 4294967296;

export class ProtoWriter {
  private buf = new Uint8Array(256);
  private length = 0;

  /** The bytes written so far (a view, valid until the next write). */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  tag(field: number, wireType: number): void {
    this.uint(field * 8 + wireType);
  }

  /** An integer as a varint; negative values take ten bytes. */
  varint(value: number): void {
    if (value >= 0) {
      this.uint(value);
      return;
    }
    // Two's complement over 64 bits, split in halves that fit JavaScript's bit operations.
    const magnitude = -value;
    let lo = (~(magnitude % TWO_32) + 1) >>> 0;
    let hi = (~Math.floor(magnitude / TWO_32) + (lo === 0 ? 1 : 0)) >>> 0;
    for (let i = 0; i < 9; i++) {
      this.byte((lo & 0x7f) | 0x80);
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    this.byte(lo & 0x01);
  }

  double(value: number): void {
    this.ensure(8);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.length, 8).setFloat64(0, value, true);
    this.length += 8;
  }

  bytes(value: Uint8Array): void {
    this.uint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.length);
    this.length += value.length;
  }

  string(value: string): void {
    this.bytes(UTF8.encode(value));
  }

  /** A length-delimited field holding what `write` puts in a fresh writer. */
  message(field: number, write: (w: ProtoWriter) => void): void {
    const inner = new ProtoWriter();
    write(inner);
    this.tag(field, WireType.LENGTH_DELIMITED);
    this.bytes(inner.finish());
  }

  private uint(value: number): void {
    let v = value;
    while (v >= 0x80) {
      this.byte((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.byte(v);
  }

  private byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b;
  }

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
  }
}
