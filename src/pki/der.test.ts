import { describe, expect, it } from 'vitest';
import { elementsOf, MalformedDerError, readElement } from './der.ts';
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
