import { describe, expect, it } from 'vitest';
import { assertSupportedFields, parseFieldSelector } from './fields.ts';
import { SelectorError } from './labels.ts';
import { thrown } from './test-helpers.ts';

const fieldsOf =
  (values: Record<string, string>) =>
  (field: string): string | undefined =>
    values[field];

describe('parseFieldSelector', () => {
  it.each([
    ['', ''],
    ['metadata.name=web', 'metadata.name=web'],
    ['metadata.name==web', 'metadata.name=web'],
    ['status.phase!=Running', 'status.phase!=Running'],
    ['spec.nodeName=', 'spec.nodeName='],
    ['b=1,a=2', 'a=2,b=1'],
    ['a=1,,b=2,', 'a=1,b=2'],
    ['a=x\\,y', 'a=x\\,y'],
    ['a=x\\=y\\\\z', 'a=x\\=y\\\\z'],
  ])('parses %j as %j', (text, canonical) => {
    expect(parseFieldSelector(text).toString()).toBe(canonical);
  });

  it('unescapes values', () => {
    expect(parseFieldSelector('a=x\\,y,b=p\\=q\\\\r').requirements).toEqual([
      { field: 'a', operator: '=', value: 'x,y' },
      { field: 'b', operator: '=', value: 'p=q\\r' },
    ]);
  });

  it('splits at the first operator, so the field name carries no operator characters', () => {
    expect(parseFieldSelector('a!b!=c').requirements).toEqual([{ field: 'a!b', operator: '!=', value: 'c' }]);
    expect(parseFieldSelector('a==').requirements).toEqual([{ field: 'a', operator: '=', value: '' }]);
  });

  it.each([
    ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
    ['a=1,b', "invalid selector: 'a=1,b'; can't understand 'b'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a==b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a=\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
  ])('rejects %j', (text, message) => {
    const err = thrown(() => parseFieldSelector(text));
    expect(err).toBeInstanceOf(SelectorError);
    expect(err.message).toBe(message);
  });

  it('matches with missing fields reading as empty', () => {
    const get = fieldsOf({ 'metadata.name': 'web', 'status.phase': 'Running' });
    const cases: [string, boolean][] = [
      ['', true],
      ['metadata.name=web', true],
      ['metadata.name==web', true],
      ['metadata.name=db', false],
      ['metadata.name!=db', true],
      ['metadata.name!=web', false],
      ['spec.nodeName=', true],
      ['spec.nodeName!=', false],
      ['spec.nodeName!=n1', true],
      ['metadata.name=web,status.phase=Running', true],
      ['metadata.name=web,status.phase!=Running', false],
    ];
    for (const [text, expected] of cases) {
      expect(parseFieldSelector(text).matches(get), text).toBe(expected);
    }
  });

  it('compares unescaped values', () => {
    expect(parseFieldSelector('a=x\\,y').matches(fieldsOf({ a: 'x,y' }))).toBe(true);
  });

  it('reports empty, the fields used and the exact values', () => {
    expect(parseFieldSelector('').empty()).toBe(true);
    const sel = parseFieldSelector('spec.nodeName!=n1,metadata.name=web,spec.nodeName==n2');
    expect(sel.empty()).toBe(false);
    expect(sel.fields()).toEqual(['metadata.name', 'spec.nodeName']);
    expect(sel.exactValue('metadata.name')).toBe('web');
    expect(sel.exactValue('spec.nodeName')).toBe('n2');
    expect(sel.exactValue('metadata.namespace')).toBeUndefined();
    expect(parseFieldSelector('a!=x').exactValue('a')).toBeUndefined();
  });

  it.each(['a=1', 'a!=1,b==2', 'x=p\\,q\\=r\\\\s', 'a='])('round-trips %j through toString', (text) => {
    const first = parseFieldSelector(text);
    const again = parseFieldSelector(first.toString());
    expect(again.toString()).toBe(first.toString());
    expect(again.requirements).toEqual(first.requirements);
  });
});

describe('assertSupportedFields', () => {
  const supported = ['metadata.name', 'metadata.namespace', 'spec.nodeName'];

  it('accepts selectors using only supported fields', () => {
    expect(() =>
      assertSupportedFields(parseFieldSelector('metadata.name=a,spec.nodeName!=b'), supported),
    ).not.toThrow();
    expect(() => assertSupportedFields(parseFieldSelector(''), [])).not.toThrow();
  });

  it('names the first unsupported field, in sorted term order, in the reference wording', () => {
    const err = thrown(() =>
      assertSupportedFields(parseFieldSelector('status.y=2,metadata.name=a,spec.x=1'), supported),
    );
    expect(err).toBeInstanceOf(SelectorError);
    expect(err.message).toBe('field label not supported: spec.x');
  });
});
