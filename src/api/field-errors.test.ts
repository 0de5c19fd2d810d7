import { describe, expect, it } from 'vitest';
import {
  child,
  deepEqual,
  duplicate,
  errorBody,
  forbidden,
  goJSON,
  goQuote,
  index,
  invalid,
  key,
  notSupported,
  renderValue,
  required,
  tooLong,
  tooMany,
  validateImmutableField,
} from './field-errors.ts';

describe('constructors render like the reference', () => {
  it.each([
    ['required without detail', required('spec.signerName'), 'FieldValueRequired', 'spec.signerName: Required value'],
    [
      'required with detail',
      required('metadata.name', 'name or generateName is required'),
      'FieldValueRequired',
      'metadata.name: Required value: name or generateName is required',
    ],
    [
      'invalid with an integer',
      invalid('spec.expirationSeconds', 599, 'may not specify a duration less than 600 seconds (10 minutes)'),
      'FieldValueInvalid',
      'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
    ],
    ['invalid with a string', invalid('a', 'x"y', 'bad'), 'FieldValueInvalid', 'a: Invalid value: "x\\"y": bad'],
    ['invalid with a boolean', invalid('a', true, 'bad'), 'FieldValueInvalid', 'a: Invalid value: true: bad'],
    ['invalid with null', invalid('a', null, 'bad'), 'FieldValueInvalid', 'a: Invalid value: null: bad'],
    [
      'invalid with an object',
      invalid('a', { b: 1, a: '<' }, 'bad'),
      'FieldValueInvalid',
      'a: Invalid value: {"a":"\\u003c","b":1}: bad',
    ],
    [
      'invalid with an empty detail',
      invalid('spec.selector', {}, ''),
      'FieldValueInvalid',
      'spec.selector: Invalid value: {}',
    ],
    [
      'notSupported',
      notSupported('spec.usages[1]', 'foo', ['any', 'client auth']),
      'FieldValueNotSupported',
      'spec.usages[1]: Unsupported value: "foo": supported values: "any", "client auth"',
    ],
    [
      'notSupported without values',
      notSupported('a', 'foo', []),
      'FieldValueNotSupported',
      'a: Unsupported value: "foo"',
    ],
    [
      'duplicate',
      duplicate('spec.usages[2]', 'client auth'),
      'FieldValueDuplicate',
      'spec.usages[2]: Duplicate value: "client auth"',
    ],
    ['forbidden', forbidden('spec', 'not allowed'), 'FieldValueForbidden', 'spec: Forbidden: not allowed'],
    [
      'tooLong',
      tooLong('spec.trustBundle', 1048576),
      'FieldValueTooLong',
      'spec.trustBundle: Too long: may not be more than 1048576 bytes',
    ],
    ['tooLong of one byte', tooLong('a', 1), 'FieldValueTooLong', 'a: Too long: may not be more than 1 byte'],
    [
      'tooMany',
      tooMany('spec.matchConditions', 65, 64),
      'FieldValueTooMany',
      'spec.matchConditions: Too many: 65: must have at most 64 items',
    ],
  ])('%s', (_name, err, type, message) => {
    expect(err.type).toBe(type);
    expect(err.message).toBe(message);
  });

  it('errorBody drops the field prefix', () => {
    expect(errorBody(required('a.b', 'x'))).toBe('Required value: x');
  });
});

describe('value rendering', () => {
  it.each([
    ['plain', 'abc', '"abc"'],
    ['newline and tab', 'a\nb\tc', '"a\\nb\\tc"'],
    ['control character', '\x01', '"\\x01"'],
    ['non-ASCII printable', 'rā', '"rā"'],
    ['zero-width space', '\u200b', '"\\u200b"'],
  ])('goQuote %s', (_n, input, out) => {
    expect(goQuote(input)).toBe(out);
  });

  it.each([
    [600, '600'],
    [1.5, '1.5'],
    [1e21, '1e+21'],
    [undefined, 'null'],
    [[1, 'a'], '[1,"a"]'],
  ])('renderValue(%j)', (v, out) => {
    expect(renderValue(v)).toBe(out);
  });

  it('goJSON sorts keys and escapes HTML characters', () => {
    expect(goJSON({ z: '&', a: ['>'] })).toBe('{"a":["\\u003e"],"z":"\\u0026"}');
  });
});

describe('paths and equality', () => {
  it('builds paths', () => {
    expect(index(child(child('', 'spec'), 'limits'), 0)).toBe('spec.limits[0]');
    expect(key('spec.limits[0].max', 'cpu')).toBe('spec.limits[0].max[cpu]');
  });

  it.each([
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [{ a: null }, {}, true],
    [{ a: 1 }, { a: 2 }, false],
    [[1, 2], [2, 1], false],
  ])('deepEqual(%j, %j) = %s', (a, b, eq) => {
    expect(deepEqual(a, b)).toBe(eq);
  });

  it('validateImmutableField', () => {
    expect(validateImmutableField('a', 'a', 'handler')).toEqual([]);
    expect(validateImmutableField('b', 'a', 'handler')).toEqual([
      { type: 'FieldValueInvalid', field: 'handler', message: 'handler: Invalid value: "b": field is immutable' },
    ]);
  });
});
