import { describe, expect, it } from 'vitest';
import { concat, pb, varintBytes } from './test-encoder.ts';
import { ProtobufError, ProtoReader, WireType } from './wire.ts';

const reader = (...bytes: number[]) => new ProtoReader(Uint8Array.from(bytes));

describe('ProtoReader varints', () => {
  it.each([
    [0, [0x00]],
    [1, [0x01]],
    [127, [0x7f]],
    [128, [0x80, 0x01]],
    [300, [0xac, 0x02]],
    [2 ** 31 - 1, [0xff, 0xff, 0xff, 0xff, 0x07]],
  ])('reads %d', (value, bytes) => {
    expect(varintBytes(value)).toEqual(bytes);
    expect(reader(...bytes).int32()).toBe(value);
    expect(reader(...bytes).int64()).toBe(value);
  });

  it('reads int32 -1 from its ten-byte sign-extended form', () => {
    const bytes = varintBytes(-1);
    expect(bytes).toHaveLength(10);
    expect(reader(...bytes).int32()).toBe(-1);
    expect(reader(...bytes).int64()).toBe(-1);
  });

  it('reads int64 values beyond 32 bits, positive and negative', () => {
    for (const v of [
      2 ** 32,
      2 ** 40 + 5,
      1767225845,
      253402300799,
      Number.MAX_SAFE_INTEGER,
      -(2 ** 33),
      -62135596800,
    ]) {
      expect(reader(...varintBytes(v)).int64()).toBe(v);
    }
  });

  it('reads unsigned 32 and 64-bit values and booleans', () => {
    expect(reader(...varintBytes(2 ** 32 - 1)).uint32()).toBe(2 ** 32 - 1);
    expect(reader(...varintBytes(2 ** 50)).uint64()).toBe(2 ** 50);
    expect(reader(0x01).bool()).toBe(true);
    expect(reader(0x00).bool()).toBe(false);
  });

  it('refuses truncated and over-long varints', () => {
    expect(() => reader(0x80).int32()).toThrow(ProtobufError);
    expect(() => reader(...new Array(11).fill(0xff)).int64()).toThrow(/longer than 10 bytes/);
  });
});

describe('ProtoReader fields', () => {
  it('reads tags, fixed values and length-delimited payloads', () => {
    const bytes = concat(pb.fixed32(1, 0xdeadbeef), pb.fixed64(2, -5n), pb.string(3, 'héllo'), pb.varint(4, 7));
    const r = new ProtoReader(bytes);
    expect(r.tag()).toEqual({ field: 1, wireType: WireType.FIXED32 });
    expect(r.fixed32()).toBe(0xdeadbeef);
    expect(r.tag()).toEqual({ field: 2, wireType: WireType.FIXED64 });
    expect(r.fixed64()).toBe(-5);
    expect(r.tag()).toEqual({ field: 3, wireType: WireType.LENGTH_DELIMITED });
    expect(r.string()).toBe('héllo');
    expect(r.tag()).toEqual({ field: 4, wireType: WireType.VARINT });
    expect(r.int32()).toBe(7);
    expect(r.done()).toBe(true);
  });

  it('skips every wire type, groups included', () => {
    const group = Uint8Array.from([
      ...varintBytes(9 * 8 + WireType.START_GROUP),
      ...pb.varint(1, 5),
      ...pb.string(2, 'x'),
      ...varintBytes(9 * 8 + WireType.END_GROUP),
    ]);
    const bytes = concat(
      pb.varint(1, 300),
      pb.fixed64(2, 1n),
      pb.string(3, 'skip'),
      pb.fixed32(4, 1),
      group,
      pb.varint(5, 42),
    );
    const r = new ProtoReader(bytes);
    for (let i = 0; i < 5; i++) {
      const t = r.tag();
      r.skip(t.wireType, t.field);
    }
    expect(r.tag().field).toBe(5);
    expect(r.int32()).toBe(42);
  });

  it('refuses payloads that run past the end, field number 0 and unknown wire types', () => {
    expect(() => reader(0x0a, 0x05, 0x61).string()).toThrow(/truncated/);
    expect(() => new ProtoReader(Uint8Array.of(0x0a, 0x05, 0x61), 1).bytes()).toThrow(/truncated/);
    expect(() => reader(0x00).tag()).toThrow(/invalid field number/);
    expect(() => reader(0x0e).skip(6)).toThrow(/unexpected wire type/);
    expect(() => reader(...varintBytes(1 * 8 + WireType.START_GROUP)).skip(WireType.START_GROUP, 1)).toThrow(
      ProtobufError,
    );
  });

  it('reads a sub-range without running into what follows', () => {
    const bytes = concat(pb.message(1, pb.varint(1, 1), pb.varint(2, 2)), pb.varint(2, 99));
    const r = new ProtoReader(bytes);
    r.tag();
    const sub = r.sub();
    const seen: number[] = [];
    while (!sub.done()) {
      sub.tag();
      seen.push(sub.int32());
    }
    expect(seen).toEqual([1, 2]);
    expect(r.tag().field).toBe(2);
  });
});
