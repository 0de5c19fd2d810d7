import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../api/schema.ts';
import { deepFreeze } from '../patch/deep-freeze.ts';
import {
  describePath,
  type FieldSet,
  fromFieldsV1,
  pathElements,
  pathKey,
  toFieldSet,
  toFieldsV1,
  valueAt,
  withoutPath,
} from './field-set.ts';

const deployment = schemaFor('Deployment', 'apps/v1') ?? 'any';
const pod = schemaFor('Pod', 'v1') ?? 'any';
const paths = (set: FieldSet) => [...set].map((key) => describePath(pathElements(key))).sort();

describe('toFieldSet', () => {
  it.each<[string, unknown, string[]]>([
    ['scalars are members', { spec: { replicas: 2, paused: false } }, ['.spec.paused', '.spec.replicas']],
    [
      'map entries are members; the map field itself is not',
      { metadata: { labels: { app: 'web', tier: 'db' } } },
      ['.metadata.labels.app', '.metadata.labels.tier'],
    ],
    [
      'an empty object or null is a member',
      { spec: { strategy: {}, selector: null } },
      ['.spec.selector', '.spec.strategy'],
    ],
    [
      'map-list items are keyed by their map keys, the item and its fields are members',
      { spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx' }] } } } },
      [
        '.spec.template.spec.containers[name="web"]',
        '.spec.template.spec.containers[name="web"].image',
        '.spec.template.spec.containers[name="web"].name',
      ],
    ],
    [
      'multi-key items name every key, sorted',
      {
        spec: { template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } } },
      },
      [
        '.spec.template.spec.containers[name="c"]',
        '.spec.template.spec.containers[name="c"].name',
        '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]',
        '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort',
        '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].protocol',
      ],
    ],
    [
      'set items by value',
      { metadata: { finalizers: ['a/b', 'c'] } },
      ['.metadata.finalizers[="a/b"]', '.metadata.finalizers[="c"]'],
    ],
    [
      'atomic lists are one member',
      { spec: { template: { spec: { containers: [{ name: 'c', args: ['-v', '2'] }] } } } },
      [
        '.spec.template.spec.containers[name="c"]',
        '.spec.template.spec.containers[name="c"].args',
        '.spec.template.spec.containers[name="c"].name',
      ],
    ],
    [
      'fields the schema does not know are members',
      { spec: { unknown: { a: 1 } } },
      ['.spec.unknown', '.spec.unknown.a'],
    ],
  ])('%s', (_name, value, expected) => {
    expect(paths(toFieldSet(value, deployment))).toEqual(expected);
  });
});

describe('FieldsV1', () => {
  const set = toFieldSet(
    { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    pod,
  );

  it('writes the reference form: f:/k: elements, `.` on members that have children', () => {
    expect(toFieldsV1(set)).toEqual({
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
    });
  });

  it('reads back what it writes, and i:/v: elements', () => {
    expect(fromFieldsV1(toFieldsV1(set))).toEqual(set);
    expect(paths(fromFieldsV1({ 'f:a': { 'i:0': {}, 'v:"x"': { '.': {}, 'f:y': {} } } }))).toEqual([
      '.a[0]',
      '.a[="x"]',
      '.a[="x"].y',
    ]);
  });

  it('reports malformed trees', () => {
    expect(() => fromFieldsV1({ 'f:a': 'x' })).toThrow(/expected an object at \.a/);
    expect(() => fromFieldsV1({ 'x:a': {} })).toThrow(/unknown path element "x:a"/);
  });
});

describe('valueAt and withoutPath', () => {
  const object = deepFreeze({
    metadata: { labels: { app: 'web' }, finalizers: ['a', 'b'] },
    spec: {
      containers: [
        { name: 'web', image: 'nginx' },
        { name: 'log', image: 'busybox' },
      ],
    },
  });
  const path = (...elements: string[]) => elements;

  it('follows fields, keyed items and set items', () => {
    expect(valueAt(object, path('f:spec', 'f:containers', 'k:{"name":"log"}', 'f:image'), pod)).toBe('busybox');
    expect(valueAt(object, path('f:metadata', 'f:finalizers', 'v:"b"'), pod)).toBe('b');
    expect(valueAt(object, path('f:spec', 'f:containers', 'k:{"name":"nope"}'), pod)).toBeUndefined();
  });

  it('removes a field or an item without touching the (frozen) input', () => {
    expect(withoutPath(object, path('f:metadata', 'f:labels', 'f:app'), pod)).toMatchObject({
      metadata: { labels: {} },
    });
    const fewer = withoutPath(object, path('f:spec', 'f:containers', 'k:{"name":"web"}'), pod) as typeof object;
    expect(fewer.spec.containers).toEqual([{ name: 'log', image: 'busybox' }]);
    expect(fewer.metadata).toBe(object.metadata);
    expect(withoutPath(object, path('f:spec', 'f:nothing', 'f:here'), pod)).toBe(object);
  });

  it('keys paths by their elements', () => {
    expect(pathElements(pathKey(['f:a', 'k:{"b":"c.d"}']))).toEqual(['f:a', 'k:{"b":"c.d"}']);
    expect(pathElements(pathKey([]))).toEqual([]);
  });
});
