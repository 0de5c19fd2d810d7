import { describe, expect, it } from 'vitest';
import { ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX, parseQuantity, parseQuantityValue } from './quantity.ts';

describe('parsing and serialization', () => {
  it.each([
    // [input, serialized (what the reference writes back), canonical, nanos]
    ['0', '0', '0', 0n],
    ['100m', '100m', '100m', 100_000_000n],
    ['1.5', '1500m', '1500m', 1_500_000_000n],
    ['1000m', '1', '1', 1_000_000_000n],
    ['0.5', '500m', '500m', 500_000_000n],
    ['1.500', '1.500', '1500m', 1_500_000_000n],
    ['1Gi', '1Gi', '1Gi', 1_073_741_824_000_000_000n],
    ['1024Mi', '1Gi', '1Gi', 1_073_741_824_000_000_000n],
    ['1.5Gi', '1536Mi', '1536Mi', 1_610_612_736_000_000_000n],
    ['0.5Ki', '512', '512', 512_000_000_000n],
    ['12e6', '12e6', '12e6', 12_000_000_000_000_000n],
    ['1e3', '1e3', '1e3', 1_000_000_000_000n],
    ['1.1e3', '1100', '1100', 1_100_000_000_000n],
    ['5k', '5k', '5k', 5_000_000_000_000n],
    ['-5', '-5', '-5', -5_000_000_000n],
    ['+5', '+5', '5', 5_000_000_000n],
    ['0.9n', '1n', '1n', 1n],
    ['1.0000000001', '1000000001n', '1000000001n', 1_000_000_001n],
    ['1000E', '1e21', '1e21', 10n ** 30n],
  ])('%s → %s', (input, serialized, canonical, nanos) => {
    const q = parseQuantity(input);
    expect(q.toString()).toBe(serialized);
    expect(q.canonical()).toBe(canonical);
    expect(q.nanos).toBe(nanos);
  });

  it.each([
    ['', ERR_FORMAT_WRONG],
    ['abc', ERR_FORMAT_WRONG],
    ['1.2.3', ERR_FORMAT_WRONG],
    ['1 Gi', ERR_FORMAT_WRONG],
    ['1K', ERR_SUFFIX],
    ['5m3', ERR_SUFFIX],
    ['1e99999', ERR_NUMERIC],
  ])('rejects %j', (input, message) => {
    expect(() => parseQuantity(input)).toThrow(message);
  });

  it('caps binary quantities at 2^63-1', () => {
    expect(parseQuantity('8Ei').nanos).toBe((2n ** 63n - 1n) * 1_000_000_000n);
  });
});

describe('values and comparison', () => {
  it('milli and whole values round away from zero', () => {
    expect(parseQuantity('1.5').milliValue()).toBe(1500n);
    expect(parseQuantity('1n').milliValue()).toBe(1n);
    expect(parseQuantity('1500m').value()).toBe(2n);
    expect(parseQuantity('-1500m').value()).toBe(-2n);
  });

  it('compares exactly', () => {
    expect(parseQuantity('1Gi').cmp(parseQuantity('1G'))).toBe(1);
    expect(parseQuantity('1000m').cmp(parseQuantity('1'))).toBe(0);
    expect(parseQuantity('100m').cmp(parseQuantity('0.2'))).toBe(-1);
  });

  it('decodes JSON members: trimmed strings and bare numbers', () => {
    const fromNumber = parseQuantityValue(0.5);
    expect(fromNumber.ok && fromNumber.quantity.toString()).toBe('500m');
    const fromString = parseQuantityValue(' 2Gi ');
    expect(fromString.ok && fromString.quantity.toString()).toBe('2Gi');
    expect(parseQuantityValue(true)).toEqual({
      ok: false,
      error: 'must be a quantity (a string such as "500m" or a number)',
    });
  });
});
