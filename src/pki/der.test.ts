import { describe, expect, it } from 'vitest';
import { derElement, derOid, elementsOf, MalformedDerError, oidText, readElement } from './der.ts';
import { readCertificationRequest } from './request.ts';

describe('readElement', () => {
  it('reads short and long lengths', () => {
    expect(readElement(Uint8Array.from([0x04, 0x01, 0xaa]), 0).content).toEqual(Uint8Array.from([0xaa]));
    const long = Uint8Array.from([0x04, 0x81, 0x80, ...new Array(0x80).fill(7)]);
    expect(readElement(long, 0).content.length).toBe(0x80);
  });

  it.each([
    ['a long length with none of its bytes', [0x30, 0x81]],
    ['a long length with one of its two bytes', [0x30, 0x82, 0x01]],
    ['a length past the end', [0x30, 0x03, 0x00]],
    ['a long length that fits the short form', [0x30, 0x81, 0x01, 0x00]],
    ['a high tag number', [0x1f, 0x01, 0x00]],
  ])('refuses %s', (_name, bytes) => {
    expect(() => readElement(Uint8Array.from(bytes), 0)).toThrow(MalformedDerError);
  });

  it('refuses a header cut short inside a sequence, where it once looped without end', () => {
    expect(() => elementsOf(Uint8Array.from([0x30, 0x81]))).toThrow(MalformedDerError);
    expect(readCertificationRequest(Uint8Array.from([0x30, 0x02, 0x30, 0x81]))).toBeUndefined();
  });
});

describe('derOid', () => {
  it.each([
    ['2.5.29.15', '0603551d0f'],
    ['1.2.840.113549.1.1.11', '06092a864886f70d01010b'],
    ['1.3.6.1.4.1.311.10.3.3', '060a2b0601040182370a0303'],
    ['2.16.840.1.113730.4.1', '06096086480186f8420401'],
    ['2.999.3', '0603883703'],
    ['0.0', '060100'],
  ])('writes %s as X.690 does', (dotted, hex) => {
    const der = derOid(dotted);
    expect(der.toString('hex')).toBe(hex);
    expect(oidText(readElement(der, 0).content)).toBe(dotted);
  });

  it.each(['', '1', '3.1', '1.40', '1.2.x', '1.02', `1.2.${2 ** 53}`])('refuses %j', (dotted) => {
    expect(() => derOid(dotted)).toThrow('not an object identifier');
  });
});

describe('derElement', () => {
  it.each([0, 0x7f, 0x80, 0xff, 0x100, 0xffff])('writes a length of %i in its shortest form', (n) => {
    const der = derElement(0x04, [Buffer.alloc(n, 7)]);
    const read = readElement(der, 0);
    expect(read.content.length).toBe(n);
    expect(read.whole.length).toBe(der.length);
  });

  it('refuses content past 64 KiB', () => {
    expect(() => derElement(0x04, [Buffer.alloc(0x10000)])).toThrow('too long');
  });
});
