import { describe, expect, it } from 'vitest';
import { decodeRawUrlBase64, goJsonSyntaxError } from './go-json.ts';

// Each expected message is what Go 1.26's encoding/json and encoding/base64 answer for the same input.
describe('Go decoder messages', () => {
  it.each([
    ['', 'unexpected end of JSON input'],
    ['{"metadata": {"name": "broken"', 'unexpected end of JSON input'],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['[1 2]', "invalid character '2' after array element"],
    ['{1:2}', "invalid character '1' looking for beginning of object key string"],
    ['{,}', "invalid character ',' looking for beginning of object key string"],
    ['trux', "invalid character 'x' in literal true (expecting 'e')"],
    ['-', "invalid character ' ' in numeric literal"],
    ['1.a', "invalid character 'a' after decimal point in numeric literal"],
    ['1e+', "invalid character ' ' in exponent of numeric literal"],
    ['"a\\x"', "invalid character 'x' in string escape code"],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
    ['{"a":1}x', "invalid character 'x' after top-level value"],
    ["'", "invalid character '\\'' looking for beginning of value"],
    ['\x9e', "invalid character '\\u009e' looking for beginning of value"],
    ['"\x01"', "invalid character '\\x01' in string literal"],
    ['\xe9', "invalid character 'é' looking for beginning of value"],
    ['{"a":[1,-0.5e-3,"x",true,null,{}]}', undefined],
    ['  7 ', undefined],
  ])('JSON %j: %s', (text, expected) => {
    expect(goJsonSyntaxError(Buffer.from(text, 'latin1'))).toBe(expected);
  });

  it.each([
    ['<unset x>', 'illegal base64 data at input byte 0'],
    ['abcde', 'illegal base64 data at input byte 4'],
    ['ab=', 'illegal base64 data at input byte 2'],
    ['ab+c', 'illegal base64 data at input byte 2'],
  ])('raw URL base64 %j: %s', (text, expected) => {
    expect(decodeRawUrlBase64(text)).toBe(expected);
  });

  it('decodes raw URL base64, line breaks skipped', () => {
    expect(decodeRawUrlBase64('not-a-token')).toEqual(Buffer.from('not-a-token', 'base64url'));
    expect(decodeRawUrlBase64('eyJ2Ijox\nfQ')).toEqual(Buffer.from('{"v":1}'));
  });
});
