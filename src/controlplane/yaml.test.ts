import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toYaml, yamlSequenceItem } from './yaml.ts';

/** What JSON keeps of a value (no undefined, -0 as 0): what the YAML must give back. */
const jsonForm = (v: unknown) => JSON.parse(JSON.stringify(v));

/** Strings YAML readers are known to take for something else, or to choke on, unless quoted. */
const TRICKY = [
  '',
  ' ',
  ' a',
  'a ',
  'true',
  'True',
  'FALSE',
  'yes',
  'No',
  'ON',
  'off',
  'y',
  'N',
  'null',
  'Null',
  '~',
  '1',
  '-1',
  '+1',
  '0x1f',
  '0o17',
  '017',
  '1_000',
  '1e3',
  '.5',
  '.inf',
  '-.Inf',
  '.nan',
  '1:20',
  '2026-11-27',
  '2026-11-27T21:52:54Z',
  '-',
  '- a',
  '-a',
  'a: b',
  'a:',
  ':a',
  'a:b',
  'a #b',
  '#a',
  'a#b',
  '?',
  '? a',
  '|',
  '>',
  '%a',
  '@a',
  '`a',
  '!a',
  '&a',
  '*a',
  '{',
  '}',
  '[',
  ']',
  ',a',
  'a,b',
  '"',
  "'",
  "'a'",
  '\\',
  'a\nb',
  '\n',
  '\t',
  'a\tb',
  '\r\n',
  '\x7f',
  '\x85',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffe',
  '\x00',
  '\x1b',
  '\ud800',
  '\udc00x',
  '😀',
  'é',
  '<<',
  '=',
  'a b',
  'a  b',
  'http://x.example/y',
  'app.kubernetes.io/name',
  'nginx:1.27',
  '/path',
  '_x',
  '---',
  '...',
  'a\u00a0b',
];

/** Characters that turn plain strings into something else: short strings of them find the edges. */
const SIGNIFICANT = fc.constantFrom(...'eE01-+.: #ynoO_x~/\n"\'\t'.split(''));
const strings = fc.oneof(
  fc.constantFrom(...TRICKY),
  fc.string({ unit: 'binary' }),
  fc.string(),
  fc.string({ unit: SIGNIFICANT, maxLength: 6 }),
);
const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    strings,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(strings, tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('toYaml', () => {
  it('round-trips JSON-shaped data through the yaml library, YAML 1.2 and 1.1 (as Go reads it)', () => {
    fc.assert(
      fc.property(values, (v) => {
        const text = toYaml(v);
        expect(parse(text)).toEqual(jsonForm(v));
        expect(parse(text, { version: '1.1' })).toEqual(jsonForm(v));
      }),
      { numRuns: 3000 },
    );
  });

  it('round-trips every tricky string as a value, a key and a sequence item', () => {
    for (const s of TRICKY) {
      const doc = { [s]: s, list: [s, { [s]: [s] }] };
      expect(parse(toYaml(doc)), JSON.stringify(s)).toEqual(doc);
      expect(parse(toYaml(doc), { version: '1.1' }), JSON.stringify(s)).toEqual(doc);
    }
  });

  it('writes plain what needs no quotes, the rest quoted; empty collections inline; sequences at their key', () => {
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm-1', labels: { 'app.kubernetes.io/name': 'web' }, finalizers: [] },
      data: { port: '8080', enabled: 'true', when: '2026-11-27T21:52:54Z', note: 'a: b', empty: '' },
      spec: { replicas: 3, paused: false, selector: {}, tolerations: null, items: [{ a: 1, b: [2, [3]] }] },
    };
    expect(toYaml(object)).toBe(
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        '  name: cm-1',
        '  labels:',
        '    app.kubernetes.io/name: web',
        '  finalizers: []',
        'data:',
        '  port: "8080"',
        '  enabled: "true"',
        '  when: "2026-11-27T21:52:54Z"',
        '  note: "a: b"',
        '  empty: ""',
        'spec:',
        '  replicas: 3',
        '  paused: false',
        '  selector: {}',
        '  tolerations: null',
        '  items:',
        '  - a: 1',
        '    b:',
        '    - 2',
        '    - - 3',
        '',
      ].join('\n'),
    );
    expect(toYaml('text')).toBe('text\n');
  });

  it('keys longer than YAML allows an implicit key are written explicitly', () => {
    const key = 'k'.repeat(2000);
    for (const value of ['v', { a: 1 }, [1, 2], []]) {
      expect(parse(toYaml({ [key]: value, after: 1 }))).toEqual({ [key]: value, after: 1 });
    }
  });

  it('a list written item by item parses as the whole', () => {
    const items = [{ a: 1 }, 'b', [], [1, { c: [2] }], null];
    const text = `items:\n${items.map(yamlSequenceItem).join('')}`;
    expect(parse(text)).toEqual({ items });
  });
});
