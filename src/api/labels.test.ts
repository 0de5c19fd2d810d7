import { describe, expect, it } from 'vitest';
import {
  labelSelectorAsString,
  labelValueErrors,
  parseLabelSelector,
  qualifiedNameErrors,
  SelectorError,
  selectorFromLabelSelector,
} from './labels.ts';
import type { LabelSelector } from './meta.ts';
import { thrown } from './test-helpers.ts';

const NAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const PREFIX_RULE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('qualifiedNameErrors', () => {
  it.each([
    ['plain', 'app', []],
    ['prefixed', 'example.com/App_1', []],
    ['empty prefix', '/a', ['prefix part must be non-empty']],
    ['bad prefix', 'Example.com/a', [`prefix part ${PREFIX_RULE}`]],
    ['empty name', 'a/', ['name part must be non-empty', `name part ${NAME_RULE}`]],
    ['long name', 'a'.repeat(64), ['name part must be no more than 63 bytes']],
    ['bad characters', 'a b', [`name part ${NAME_RULE}`]],
    [
      'two slashes',
      'a/b/c',
      [`a valid label key ${NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`],
    ],
  ])('%s', (_n, value, expected) => {
    expect(qualifiedNameErrors(value)).toEqual(expected);
  });
});

describe('labelValueErrors', () => {
  it.each([
    ['empty', '', []],
    ['ok', 'v1.2_3', []],
    ['ends with dash', 'a-', [VALUE_RULE]],
    ['too long', 'a'.repeat(64), ['must be no more than 63 bytes']],
  ])('%s', (_n, value, expected) => {
    expect(labelValueErrors(value)).toEqual(expected);
  });
});

describe('parseLabelSelector', () => {
  it.each([
    ['', ''],
    ['a=b', 'a=b'],
    ['a==b', 'a==b'],
    ['a!=b', 'a!=b'],
    ['a', 'a'],
    ['!a', '!a'],
    ['a in (y,x)', 'a in (x,y)'],
    ['a notin (x)', 'a notin (x)'],
    ['a>5', 'a>5'],
    ['a<5', 'a<5'],
    ['a=', 'a='],
    ['a in ()', 'a in ()'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['a in (b,b,a)', 'a in (a,b)'],
    ['a in (b,)', 'a in (,b)'],
    ['  a  =  b  ,  ! c  ', 'a=b,!c'],
    ['\ta\r\n!=\nb', 'a!=b'],
    ['z=1,a=2,m', 'a=2,m,z=1'],
    ['in in (in),notin notin (notin)', 'in in (in),notin notin (notin)'],
    ['example.com/app=web', 'example.com/app=web'],
    ['A_b.c-D=E_f.g-H', 'A_b.c-D=E_f.g-H'],
    [
      `${'p'.repeat(253)}/${'k'.repeat(63)}=${'v'.repeat(63)}`,
      `${'p'.repeat(253)}/${'k'.repeat(63)}=${'v'.repeat(63)}`,
    ],
  ])('parses %j as %j', (text, canonical) => {
    expect(parseLabelSelector(text).toString()).toBe(canonical);
  });

  it.each([
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in', "unable to parse requirement: found '' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a in (b,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a in (b,', "unable to parse requirement: found '', expected: ',', or identifier"],
    ['a=(', "unable to parse requirement: found '(', expected: identifier"],
    ['!=a', "found '!=', expected: !, identifier, or 'end of string'"],
    ['! =a', "unable to parse requirement: found '=', expected: identifier"],
    ['!!a', "unable to parse requirement: found '!', expected: identifier"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    ['a,,b', "found ',', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['(a)', "found '(', expected: !, identifier, or 'end of string'"],
    [
      'a>b',
      `unable to parse requirement: values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    [
      'a<99999999999999999999',
      `unable to parse requirement: values[0]: Invalid value: "99999999999999999999": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    ['-a=b', `unable to parse requirement: <nil>: Invalid value: "-a": name part ${NAME_RULE}`],
    ['/a', `unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty`],
    [
      'p/',
      `unable to parse requirement: <nil>: Invalid value: "p/": name part must be non-empty; name part ${NAME_RULE}`,
    ],
    ['Ex.com/a', `unable to parse requirement: <nil>: Invalid value: "Ex.com/a": prefix part ${PREFIX_RULE}`],
    [
      'a/b/c',
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key ${NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
    [
      `${'k'.repeat(64)}`,
      `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 bytes`,
    ],
    [
      `${'p'.repeat(254)}/k`,
      `unable to parse requirement: <nil>: Invalid value: "${'p'.repeat(254)}/k": prefix part must be no more than 253 bytes`,
    ],
    ['a=b!', "found '!', expected: ',' or 'end of string'"],
    ['a=-b', `unable to parse requirement: values[0][a]: Invalid value: "-b": ${VALUE_RULE}`],
    [
      `a=${'v'.repeat(64)}`,
      `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`,
    ],
    // Set values are sorted before validation, so the index counts in sorted order.
    ['a in (ok,b_)', `unable to parse requirement: values[0][a]: Invalid value: "b_": ${VALUE_RULE}`],
  ])('rejects %j', (text, message) => {
    const err = thrown(() => parseLabelSelector(text));
    expect(err).toBeInstanceOf(SelectorError);
    expect(err.message).toBe(message);
  });

  it('matches with the reference semantics', () => {
    const labels = { app: 'web', tier: 'front', n: '10', empty: '' };
    const cases: [string, boolean][] = [
      ['', true],
      ['app=web', true],
      ['app==web', true],
      ['app=db', false],
      ['app!=db', true],
      ['app!=web', false],
      ['missing!=x', true],
      ['missing=', false],
      ['empty=', true],
      ['empty', true],
      ['missing', false],
      ['!missing', true],
      ['!app', false],
      ['app in (db,web)', true],
      ['app in (db)', false],
      ['missing in (x)', false],
      ['app notin (db)', true],
      ['app notin (web)', false],
      ['missing notin (x)', true],
      ['empty in ()', true],
      ['n>9', true],
      ['n>10', false],
      ['n<11', true],
      ['app>1', false],
      ['missing<1', false],
      ['app=web,tier=front', true],
      ['app=web,tier=back', false],
    ];
    for (const [text, expected] of cases) {
      expect(parseLabelSelector(text).matches(labels), text).toBe(expected);
    }
  });

  it('treats missing labels as no labels', () => {
    expect(parseLabelSelector('').matches(undefined)).toBe(true);
    expect(parseLabelSelector('!a').matches(undefined)).toBe(true);
    expect(parseLabelSelector('a').matches(undefined)).toBe(false);
  });

  it('does not read labels from the object prototype', () => {
    expect(parseLabelSelector('constructor').matches({})).toBe(false);
  });

  it('exposes requirements sorted by key for index lookups', () => {
    const sel = parseLabelSelector('z in (2,1),app=web,!gone');
    expect(sel.empty()).toBe(false);
    expect(sel.requirements).toEqual([
      { key: 'app', operator: '=', values: ['web'] },
      { key: 'gone', operator: '!', values: [] },
      { key: 'z', operator: 'in', values: ['1', '2'] },
    ]);
    expect(parseLabelSelector('').empty()).toBe(true);
  });

  it.each(['a=b', 'a!=b,c,!d', 'a in (,x,y),b notin (z)', 'a>1,b<2', 'example.com/a==b'])(
    'round-trips %j through toString',
    (text) => {
      const once = parseLabelSelector(text).toString();
      expect(parseLabelSelector(once).toString()).toBe(once);
    },
  );
});

describe('selectorFromLabelSelector', () => {
  it('matches nothing for null and undefined, everything for {}', () => {
    for (const sel of [null, undefined]) {
      const s = selectorFromLabelSelector(sel);
      expect(s.matches({ a: 'b' })).toBe(false);
      expect(s.matches(undefined)).toBe(false);
      expect(s.empty()).toBe(false);
      expect(s.requirements).toEqual([]);
    }
    for (const sel of [{}, { matchLabels: {}, matchExpressions: [] }]) {
      const s = selectorFromLabelSelector(sel);
      expect(s.matches({ a: 'b' })).toBe(true);
      expect(s.matches(undefined)).toBe(true);
      expect(s.empty()).toBe(true);
      expect(s.toString()).toBe('');
    }
  });

  it('ands matchLabels with matchExpressions', () => {
    const s = selectorFromLabelSelector({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'edge'] },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'team', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(s.toString()).toBe('app=web,env notin (dev),!legacy,team,tier in (edge,front)');
    expect(s.matches({ app: 'web', tier: 'edge', team: 'x' })).toBe(true);
    expect(s.matches({ app: 'web', tier: 'edge', team: 'x', env: 'dev' })).toBe(false);
    expect(s.matches({ app: 'web', tier: 'edge', team: 'x', legacy: '' })).toBe(false);
    expect(s.matches({ app: 'web', tier: 'back', team: 'x' })).toBe(false);
    expect(s.matches({ app: 'web', tier: 'edge' })).toBe(false);
    expect(s.matches({ tier: 'edge', team: 'x' })).toBe(false);
  });

  it.each<[string, LabelSelector, string]>([
    [
      'an unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'Foo' as 'In', values: ['x'] }] },
      '"Foo" is not a valid label selector operator',
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'NotIn with no values field',
      { matchExpressions: [{ key: 'a', operator: 'NotIn' }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x', 'y'] }] },
      'values: Invalid value: []string{"x", "y"}: values set must be empty for exists and does not exist',
    ],
    ['a bad key', { matchLabels: { 'a b': 'c' } }, `key: Invalid value: "a b": name part ${NAME_RULE}`],
    ['a bad value', { matchLabels: { a: 'c d' } }, `values[0][a]: Invalid value: "c d": ${VALUE_RULE}`],
    [
      'a bad key and value together',
      { matchExpressions: [{ key: '', operator: 'In', values: ['ok', '-'] }] },
      `[key: Invalid value: "": name part must be non-empty; name part ${NAME_RULE}, values[1][]: Invalid value: "-": ${VALUE_RULE}]`,
    ],
  ])('rejects %s', (_name, sel, message) => {
    const err = thrown(() => selectorFromLabelSelector(sel));
    expect(err).toBeInstanceOf(SelectorError);
    expect(err.message).toBe(message);
  });

  it('does not take operators from the object prototype', () => {
    const sel = { matchExpressions: [{ key: 'a', operator: 'toString' as 'In' }] };
    expect(() => selectorFromLabelSelector(sel)).toThrow('"toString" is not a valid label selector operator');
  });
});

describe('labelSelectorAsString', () => {
  it('writes query text that parses back to the same selector', () => {
    const sel: LabelSelector = {
      matchLabels: { 'app.kubernetes.io/name': 'web', empty: '' },
      matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a', ''] }],
    };
    const text = labelSelectorAsString(sel);
    expect(text).toBe('app.kubernetes.io/name=web,empty=,zone in (,a,b)');
    expect(parseLabelSelector(text).requirements).toEqual([
      { key: 'app.kubernetes.io/name', operator: '=', values: ['web'] },
      { key: 'empty', operator: '=', values: [''] },
      { key: 'zone', operator: 'in', values: ['', 'a', 'b'] },
    ]);
  });

  it('writes the empty string for {}', () => {
    expect(labelSelectorAsString({})).toBe('');
  });

  it('refuses a null selector, which no query text can express', () => {
    expect(() => labelSelectorAsString(null)).toThrow(SelectorError);
    expect(() => labelSelectorAsString(undefined)).toThrow(SelectorError);
  });
});
