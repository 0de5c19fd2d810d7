import { describe, expect, it } from 'vitest';
import { schemaFor } from '../api/schema.ts';
import { newEnvironment } from './library.ts';
import {
  type DeclType,
  declType,
  escapeName,
  listConcat,
  listEquals,
  type OpenAPISchema,
  openAPIFromNode,
  registerDeclType,
  unescapeName,
} from './schema-types.ts';

const str: DeclType = { kind: 'scalar', name: 'string' };
const int: DeclType = { kind: 'scalar', name: 'int' };

describe('property name escaping', () => {
  it.each([
    ['name', 'name'],
    ['foo.bar', 'foo__dot__bar'],
    ['foo-bar', 'foo__dash__bar'],
    ['foo/bar', 'foo__slash__bar'],
    ['foo__bar', 'foo__underscores__bar'],
    ['namespace', '__namespace__'],
    ['if', '__if__'],
    ['true', '__true__'],
    ['a.b-c/d__e', 'a__dot__b__dash__c__slash__d__underscores__e'],
    ['9lives', undefined],
    ['has space', undefined],
    ['ünicode', undefined],
  ])('%s → %s', (name, want) => {
    expect(escapeName(name)).toBe(want);
    if (want !== undefined) expect(unescapeName(want)).toBe(name);
  });
});

/** [shape, schema, CEL type]. */
const SHAPES: [string, OpenAPISchema, DeclType][] = [
  ['integer', { type: 'integer' }, int],
  ['number', { type: 'number' }, { kind: 'scalar', name: 'double' }],
  ['boolean', { type: 'boolean' }, { kind: 'scalar', name: 'bool' }],
  ['string', { type: 'string' }, str],
  ['byte string', { type: 'string', format: 'byte' }, { kind: 'scalar', name: 'bytes' }],
  ['date-time string', { type: 'string', format: 'date-time' }, { kind: 'scalar', name: 'timestamp' }],
  ['duration string', { type: 'string', format: 'duration' }, { kind: 'scalar', name: 'duration' }],
  ['int-or-string', { 'x-kubernetes-int-or-string': true }, { kind: 'dyn' }],
  [
    'preserve-unknown-fields without properties',
    { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    { kind: 'dyn' },
  ],
  [
    'preserve-unknown-fields with properties',
    { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'integer' } } },
    { kind: 'object', fields: { a: int } },
  ],
  ['additionalProperties', { type: 'object', additionalProperties: { type: 'string' } }, { kind: 'map', values: str }],
  [
    'additionalProperties true',
    { type: 'object', additionalProperties: true },
    { kind: 'map', values: { kind: 'dyn' } },
  ],
  ['object without properties', { type: 'object' }, { kind: 'object', fields: {} }],
  [
    'object with escaped and inaccessible properties',
    { type: 'object', properties: { 'app.kubernetes.io/name': { type: 'string' }, 'bad key': { type: 'string' } } },
    { kind: 'object', fields: { app__dot__kubernetes__dot__io__slash__name: str } },
  ],
  [
    'atomic list',
    { type: 'array', items: { type: 'integer' } },
    { kind: 'list', items: int, listType: 'atomic', mapKeys: [] },
  ],
  [
    'set list',
    { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    { kind: 'list', items: str, listType: 'set', mapKeys: [] },
  ],
  [
    'map list',
    {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' } } },
    },
    { kind: 'list', items: { kind: 'object', fields: { name: str } }, listType: 'map', mapKeys: ['name'] },
  ],
  ['list without items', { type: 'array' }, { kind: 'list', items: { kind: 'dyn' }, listType: 'atomic', mapKeys: [] }],
  [
    'embedded resource: only name and generateName of metadata',
    {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      properties: {
        metadata: {
          type: 'object',
          properties: { labels: { type: 'object', additionalProperties: { type: 'string' } } },
        },
        spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    {
      kind: 'object',
      fields: {
        apiVersion: str,
        kind: str,
        metadata: { kind: 'object', fields: { name: str, generateName: str } },
        spec: { kind: 'dyn' },
      },
    },
  ],
  ['no type', {}, { kind: 'dyn' }],
];

describe('schema → CEL type', () => {
  it.each(SHAPES)('%s', (_, schema, want) => {
    expect(declType(schema)).toEqual(want);
  });
});

describe('built-in schemas', () => {
  const deployment = declType(openAPIFromNode(schemaFor('Deployment')!));
  const env = newEnvironment();
  env.registerVariable('object', registerDeclType(env, 'Deployment', deployment));

  it.each([
    ['object.spec.replicas > 1', 'bool'],
    ['object.spec.strategy.rollingUpdate.maxSurge', 'dyn'],
    ['object.metadata.labels["app"]', 'string'],
    ['object.spec.template.spec.containers.map(c, c.image)', 'list<string>'],
    ['object.metadata.creationTimestamp', 'google.protobuf.Timestamp'],
  ])('%s types as %s', (expr, type) => {
    expect(env.check(expr)).toMatchObject({ valid: true, type });
  });

  it.each([
    ['object.spec.replica > 1', /No such key: replica/],
    ['object.spec.replicas > "1"', /no such overload: int > string/],
    ['object.spec.template.spec.containers.exists(c, c.nope)', /No such key: nope/],
  ])('%s is refused', (expr, want) => {
    const r = env.check(expr);
    expect(r.valid).toBe(false);
    expect(r.error?.message).toMatch(want);
  });
});

describe('list-type semantics', () => {
  const list = (listType: 'atomic' | 'set' | 'map', mapKeys: string[] = []) =>
    ({ kind: 'list', items: { kind: 'dyn' }, listType, mapKeys }) as const;
  it.each([
    ['atomic lists compare in order', list('atomic'), [1, 2], [2, 1], false],
    ['sets compare as sets', list('set'), [1, 2], [2, 1], true],
    ['maps compare as sets of entries', list('map', ['k']), [{ k: 'a' }, { k: 'b' }], [{ k: 'b' }, { k: 'a' }], true],
    ['different sizes differ', list('set'), [1], [1, 2], false],
  ])('%s', (_, t, a, b, want) => {
    expect(listEquals(t, a, b)).toBe(want);
  });
  it.each([
    ['atomic lists append', list('atomic'), [1, 2], [2, 3], [1, 2, 2, 3]],
    ['sets keep the first of equal elements', list('set'), [1, 2], [2, 3], [1, 2, 3]],
    [
      'maps replace elements with the same keys in place',
      list('map', ['k']),
      [
        { k: 'a', v: 1 },
        { k: 'b', v: 1 },
      ],
      [
        { k: 'a', v: 2 },
        { k: 'c', v: 3 },
      ],
      [
        { k: 'a', v: 2 },
        { k: 'b', v: 1 },
        { k: 'c', v: 3 },
      ],
    ],
  ])('%s', (_, t, a, b, want) => {
    expect(listConcat(t, a, b)).toEqual(want);
  });
});
