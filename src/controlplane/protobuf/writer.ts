/**
 * The protobuf wire format, write side: an append-only byte buffer with tags, varints (negative integers as
 * their 64-bit two's complement, as Go writes int32 and int64), doubles and length-delimited payloads.
 * A nested message is written in place after a one-byte length that is widened afterwards if the message
 * turned out longer than 127 bytes (one move of its bytes), not in a writer of its own that is then copied.
 */
import { WireType } from './wire.ts';

const TWO_32 = 4294967296;
/** Strings longer than this are encoded by Buffer; shorter ones, almost always ASCII, by a loop here. */
const SHORT_STRING = 64;

export class ProtoWriter {
  private buf: Buffer;
  private length = 0;

  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** The bytes written so far (a view, valid until the next write). */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  /** How many bytes are written; `truncate` goes back to such a point. */
  get position(): number {
    return this.length;
  }

  truncate(position: number): void {
    this.length = position;
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
    this.ensure(10);
    for (let i = 0; i < 9; i++) {
      this.buf[this.length++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    this.buf[this.length++] = lo & 0x01;
  }

  double(value: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.length);
    this.length += 8;
  }

  bytes(value: Uint8Array): void {
    this.uint(value.length);
    this.raw(value);
  }

  /** Bytes as they are, with no length before them. */
  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.buf.set(value, this.length);
    this.length += value.length;
  }

  /** A string as its length and UTF-8 bytes. */
  string(value: string): void {
    const n = value.length;
    if (n < SHORT_STRING) {
      // Written as ASCII straight away; the first other character sends the string to Buffer instead.
      this.ensure(n + 1);
      const start = this.length;
      const buf = this.buf;
      buf[start] = n;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + 1 + i] = c;
      }
      if (i === n) {
        this.length = start + 1 + n;
        return;
      }
    }
    const size = Buffer.byteLength(value);
    this.uint(size);
    this.ensure(size);
    this.length += this.buf.write(value, this.length, 'utf8');
  }

  /** A length-delimited field holding what `write` adds to this writer. */
  message(field: number, write: (w: ProtoWriter) => void): void {
    const mark = this.begin(field);
    write(this);
    this.end(mark);
  }

  /** Starts a length-delimited field of a size not known yet; `end` with what it returns closes it. */
  begin(field: number): number {
    this.tag(field, WireType.LENGTH_DELIMITED);
    this.ensure(1);
    return this.length++;
  }

  /** Writes the size of the field `begin` started, moving its bytes when the size needs more than one byte. */
  end(mark: number): void {
    const size = this.length - mark - 1;
    if (size < 0x80) {
      this.buf[mark] = size;
      return;
    }
    let extra = 1;
    while (size >= 2 ** (7 * (extra + 1))) extra++;
    this.ensure(extra);
    this.buf.copyWithin(mark + 1 + extra, mark + 1, this.length);
    this.length += extra;
    const end = this.length;
    this.length = mark;
    this.uint(size);
    this.length = end;
  }

  private uint(value: number): void {
    this.ensure(10);
    let v = value;
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }
}
