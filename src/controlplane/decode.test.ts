import { describe, expect, it } from 'vitest';
import { schemaFor } from '../api/schema.ts';
import {
  DecodeError,
  decodeBody,
  fieldValidationWarnings,
  findDuplicateKeys,
  strictDecodingError,
  unrecognizedObject,
} from './decode.ts';

const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];
const YAML_TYPES = ['application/yaml', 'application/apply-patch+yaml'];

const statefulSet = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    serviceName: 'web',
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          { name: 'a', image: 'nginx', imagePullPolicyy: 'Always' },
          { name: 'b', image: 'busybox', env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'x', extra: 1 } } }] },
        ],
        affinity: { nodeAffinity: { anything: { goes: true } } },
      },
    },
    foo: 1,
  },
};

describe('decodeBody: JSON', () => {
  it.each(JSON_TYPES)('decodes %s and reports nothing for a clean object', (type) => {
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } });
    expect(decodeBody(text, type, schemaFor('ConfigMap'))).toEqual({
      object: JSON.parse(text),
      unknown: [],
      duplicate: [],
    });
  });

  it.each(JSON_TYPES)('reports unknown fields in a StatefulSet pod template (%s)', (type) => {
    const { unknown, duplicate } = decodeBody(JSON.stringify(statefulSet), type, schemaFor('StatefulSet'));
    expect(unknown).toEqual([
      'spec.template.spec.containers[0].imagePullPolicyy',
      'spec.template.spec.containers[1].env[0].valueFrom.fieldRef.extra',
      'spec.foo',
    ]);
    expect(duplicate).toEqual([]);
  });

  it('reports duplicates at several depths, last value winning', () => {
    const text = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},
      "spec":{"containers":[{"name":"c","image":"i"},{"name":"d","image":"i","image":"j"}]},"kind":"Pod"}`;
    const { object, duplicate, unknown } = decodeBody(text, 'application/json', schemaFor('Pod'));
    expect(duplicate).toEqual(['metadata.name', 'metadata.labels.x', 'spec.containers[1].image', 'kind']);
    expect(unknown).toEqual([]);
    expect((object as any).metadata).toEqual({ name: 'b', labels: { x: '2' } });
  });

  it('checks nothing below an `any` node', () => {
    const text = JSON.stringify({ kind: 'ControllerRevision', data: { whatever: { deep: [1] } }, revision: 2, x: 1 });
    expect(decodeBody(text, 'application/json', schemaFor('ControllerRevision')).unknown).toEqual(['x']);
  });

  it('leaves unknown fields alone without a schema and for JSON patches', () => {
    expect(decodeBody('{"a":1,"a":2}', 'application/json', undefined)).toEqual({
      object: { a: 2 },
      unknown: [],
      duplicate: ['a'],
    });
    const patch = '[{"op":"add","path":"/spec/foo","value":1}]';
    expect(decodeBody(patch, 'application/json-patch+json', schemaFor('Pod'))).toEqual({
      object: JSON.parse(patch),
      unknown: [],
      duplicate: [],
    });
  });

  it.each([
    ['{"metadata":', "couldn't get version/kind; json parse error: "],
    ['{"a" 1}', "couldn't get version/kind; json parse error: "],
    ['', "couldn't get version/kind; json parse error: "],
  ])('throws DecodeError on malformed JSON %j', (text, prefix) => {
    expect(() => decodeBody(text, 'application/json', undefined)).toThrow(DecodeError);
    expect(() => decodeBody(text, 'application/json', undefined)).toThrow(prefix);
  });

  it('rejects content types it cannot decode', () => {
    expect(() => decodeBody('{}', 'text/plain', undefined)).toThrow(DecodeError);
  });
});

/** An object with `count` keys `k0`, `k1`, ... and `tail` appended. */
const wide = (count: number, tail: string) =>
  `{${Array.from({ length: count }, (_, i) => `"k${i}":${i}`).join(',')}${tail}}`;

describe('findDuplicateKeys', () => {
  it.each([
    ['flat', '{"a":1,"b":2,"a":3}', ['a']],
    ['reported once per path', '{"a":1,"a":2,"a":3}', ['a']],
    ['same key in sibling objects is fine', '{"a":{"x":1},"b":{"x":2}}', []],
    ['same key at different depths is fine', '{"x":{"x":{"x":1}}}', []],
    ['nested lists', '{"a":[[{"k":1}],[{"k":1},{"k":1,"k":2}]]}', ['a[1][1].k']],
    ['top-level list', '[{"a":1},{"a":1,"a":2}]', ['[1].a']],
    ['after empty containers', '[{},"x",[],{"x":1,"x":2}]', ['[3].x']],
    ['strings with braces, brackets, commas and quotes', '{"a":"}{,][\\"","b":"\\\\","a":"\\"}"}', ['a']],
    ['keys with escaped quotes', '{"a\\"b":1,"a\\"b":2}', ['a"b']],
    ['unicode escapes in keys', '{"name":1,"n\\u0061me":2}', ['name']],
    ['an escaped key first', '{"n\\u0061me":1,"x":{},"name":2}', ['name']],
    ['many keys, no duplicate', wide(40, ''), []],
    ['many keys, duplicate past the pairwise limit', wide(40, ',"k5":0'), ['k5']],
    ['many keys, escaped duplicate', wide(40, ',"k\\u0035":0'), ['k5']],
    ['a closed object keeps no keys', '{"a":{"b":1,"c":2},"b":{"c":1},"c":{"a":{"b":1}}}', []],
    ['escaped slash in keys', '{"a/b":1,"a\\/b":2}', ['a/b']],
    ['whitespace everywhere', ' {\n "a" : [ 1 , 2 ] ,\t"b" : { "c" : 1 , "c" : 2 } , "a" : 0 } ', ['b.c', 'a']],
    ['values that look like keys', '{"a":"b","c":["b","b"],"d":{"b":"a"}}', []],
    [
      'dotted map keys',
      '{"metadata":{"labels":{"app.example/name":"x","app.example/name":"y"}}}',
      ['metadata.labels.app.example/name'],
    ],
    ['deep', '{"a":{"b":[0,{"c":{"d":1,"d":2}}],"b":1}}', ['a.b[1].c.d', 'a.b']],
  ])('%s', (_name, text, expected) => {
    JSON.parse(text);
    expect(findDuplicateKeys(text)).toEqual(expected);
  });

  it('stops at an unterminated string instead of looping', () => {
    expect(findDuplicateKeys('{"a":1,"a":"x')).toEqual(['a']);
    expect(findDuplicateKeys('{"a":1,"b')).toEqual([]);
  });

  it('finds nothing in serialized objects full of tricky strings', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pieces = ['{', '}', '[', ']', ',', ':', '"', '\\', 'é', '\u2028', ' ', 'a', '\n'];
    const str = () => Array.from({ length: random(6) }, () => pieces[random(pieces.length)]).join('');
    const value = (depth: number): unknown => {
      const pick = depth > 4 ? random(3) : random(5);
      if (pick === 0) return str();
      if (pick === 1) return random(100);
      if (pick === 2) return [true, null][random(2)];
      if (pick === 3) return Array.from({ length: random(4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: random(5) }, () => [str(), value(depth + 1)]));
    };
    for (let n = 0; n < 300; n++) {
      const text = JSON.stringify({ [str()]: value(0), x: value(0) }, null, n % 2 ? 1 : undefined);
      expect(findDuplicateKeys(text), text).toEqual([]);
    }
  });
});

describe('decodeBody: YAML', () => {
  it('reads the YAML 1.1 words go-yaml v2 takes as booleans unquoted, and keeps them quoted or in longer words', () => {
    const text = 'data:\n  a: yes\n  b: Off\n  c: y\n  d: "yes"\n  e: yesno\n  f: N\n';
    const { object } = decodeBody(text, 'application/yaml', schemaFor('ConfigMap'));
    expect((object as { data: unknown }).data).toEqual({ a: true, b: false, c: true, d: 'yes', e: 'yesno', f: false });
  });

  it.each(YAML_TYPES)('decodes %s like JSON and reports unknown fields', (type) => {
    const text = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    spec:
      containers:
      - name: a
        image: nginx
        imagePullPolicyy: Always
  foo: 1
`;
    const { object, unknown, duplicate } = decodeBody(text, type, schemaFor('StatefulSet'));
    expect((object as any).spec.template.spec.containers[0].image).toBe('nginx');
    expect(unknown).toEqual(['spec.template.spec.containers[0].imagePullPolicyy', 'spec.foo']);
    expect(duplicate).toEqual([]);
  });

  it.each(YAML_TYPES)('reports duplicates at several depths (%s), last value winning', (type) => {
    const text = `kind: Pod
metadata:
  name: a
  name: b
  labels: {x: "1", x: "2"}
spec:
  containers:
  - name: c
  - name: d
    image: i
    image: j
kind: Pod
`;
    const { object, duplicate } = decodeBody(text, type, schemaFor('Pod'));
    expect(duplicate).toEqual(['metadata.name', 'metadata.labels.x', 'spec.containers[1].image', 'kind']);
    expect((object as any).metadata).toEqual({ name: 'b', labels: { x: '2' } });
    expect((object as any).spec.containers[1].image).toBe('j');
  });

  it('accepts JSON text as YAML', () => {
    const { object, duplicate } = decodeBody('{"a": {"b": 1, "b": 2}}', 'application/yaml', undefined);
    expect(object).toEqual({ a: { b: 2 } });
    expect(duplicate).toEqual(['a.b']);
  });

  it('throws DecodeError on malformed YAML', () => {
    expect(() => decodeBody('a: b: c\n', 'application/yaml', undefined)).toThrow(
      'error converting YAML to JSON: yaml: line 1: Nested mappings are not allowed in compact mappings',
    );
    expect(() => decodeBody('a: [1\n', 'application/apply-patch+yaml', undefined)).toThrow(DecodeError);
  });
});

describe('unrecognizedObject: the first 30 bytes of the body', () => {
  const prefix = 'the object provided is unrecognized (must be of type ConfigMap): e (';
  const shown = (body: string) => unrecognizedObject('ConfigMap', 'e', body).slice(prefix.length, -1);
  it.each([
    ['', '<empty>'],
    ['{"a":1}', '{"a":1}'],
    ['{' + 'x'.repeat(29), '{' + 'x'.repeat(29)],
    ['{' + 'x'.repeat(30), `{${'x'.repeat(29)} ...`],
    // 28 one-byte characters, then a 4-byte one across the cut: its bytes as the body has them.
    [
      'x'.repeat(28) + '😀',
      Buffer.from('x'.repeat(28) + '😀')
        .subarray(0, 30)
        .toString('hex') + ' ...',
    ],
    [
      'x'.repeat(29) + '😀',
      Buffer.from('x'.repeat(29) + '😀')
        .subarray(0, 30)
        .toString('hex') + ' ...',
    ],
    ['é'.repeat(15), Buffer.from('é'.repeat(15)).toString('hex')],
    ['é'.repeat(16), `${Buffer.from('é'.repeat(15)).toString('hex')} ...`],
  ])('%j', (body, expected) => {
    expect(shown(body)).toBe(expected);
  });
});

describe('messages', () => {
  it('formats warnings and the strict error like the reference server', () => {
    expect(fieldValidationWarnings(['spec.foo', 'spec.bar'], ['metadata.name'])).toEqual([
      'unknown field "spec.foo"',
      'unknown field "spec.bar"',
      'duplicate field "metadata.name"',
    ]);
    expect(strictDecodingError(['spec.foo'], ['x'])).toBe(
      'strict decoding error: unknown field "spec.foo", duplicate field "x"',
    );
  });
});

describe('decodeBody: what Go decoders refuse', () => {
  const configMap = schemaFor('ConfigMap');
  const pdb = schemaFor('PodDisruptionBudget', 'policy/v1');
  it.each([
    ['application/json', `{"data":{"k":${'['.repeat(600)}${']'.repeat(600)}}}`, configMap, 'exceeded max depth'],
    ['application/yaml', `data:\n  k: ${'['.repeat(600)}${']'.repeat(600)}`, configMap, 'exceeded max depth of 500'],
    ['application/yaml', 'a: &a [[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]\nb: *a\n', undefined, undefined],
    [
      'application/yaml',
      `a: &a ${'['.repeat(300)}x${']'.repeat(300)}\nb: ${'['.repeat(300)}*a${']'.repeat(300)}`,
      undefined,
      'exceeded max depth of 500',
    ],
    [
      'application/yaml',
      `a: &a ${'['.repeat(200)}x${']'.repeat(200)}\nb: ${'['.repeat(200)}*a${']'.repeat(200)}`,
      undefined,
      undefined,
    ],
    ['application/yaml', 'a: &x [1, *x]\n', undefined, 'anchor value contains itself'],
    ['application/yaml', 'a: &x {b: {c: *x}}\n', undefined, 'anchor value contains itself'],
    ['application/json', '{"data":{"k":{"a":1}}}', configMap, 'cannot unmarshal object into Go struct field data.k'],
    ['application/json', '{"data":{"k":[1]}}', configMap, 'cannot unmarshal array into Go struct field data.k'],
    ['application/json', '{"spec":{"minAvailable":1e2}}', pdb, 'cannot unmarshal number 1e2'],
    ['application/json', '{"spec":{"minAvailable":2.0}}', pdb, 'cannot unmarshal number 2.0'],
    ['application/json', '{"spec":{"minAvailable":2}}', pdb, undefined],
    ['application/json', '{"metadata":{"generation":1E3}}', configMap, 'of type int64'],
    ['application/yaml', 'data:\n  k: !!js/function "x"\n', configMap, 'tagged !!js/function: unknown tag'],
    ['application/yaml', 'data:\n  k: !local x\n', configMap, 'tagged !local: unknown tag'],
    ['application/yaml', 'data:\n  k: !!str 1\n', configMap, undefined],
    ['application/yaml', 'data:\n  k: ! 1\n', undefined, undefined],
  ])('%s %j', (type, text, schema, refusal) => {
    const decode = () => decodeBody(text, type, schema);
    if (refusal) expect(decode).toThrow(refusal);
    else expect(decode).not.toThrow();
  });

  it('refuses aliases that expand too much, in go-yaml words', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 4; i++)
      lines.push(`${'bcde'[i]}: &${'bcde'[i]} [${Array(10).fill(`*${'abcd'[i]}`).join(', ')}]`);
    expect(() => decodeBody(lines.join('\n'), 'application/yaml', undefined)).toThrow(
      'error converting YAML to JSON: yaml: document contains excessive aliasing',
    );
  });
});
