import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../api/schema.ts';
import { deepFreeze } from '../patch/deep-freeze.ts';
import {
  createdFieldsV1,
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

  it('counts map-typed fields as members when asked (what an Update records)', () => {
    const set = toFieldSet({ metadata: { labels: { app: 'web' } } }, deployment, [], { mapsAreMembers: true });
    expect(paths(set)).toEqual(['.metadata.labels', '.metadata.labels.app']);
  });
});

describe('FieldsV1', () => {
  const set = toFieldSet(
    { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    pod,
    [],
    { mapsAreMembers: true },
  );

  it('writes the reference form: f:/k: elements, `.` on members that have children', () => {
    expect(toFieldsV1(set)).toEqual({
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
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

describe('createdFieldsV1', () => {
  const viaSet = (value: unknown, schema: typeof pod) =>
    toFieldsV1(toFieldSet(value, schema, [], { mapsAreMembers: true }));

  it('is the set-built FieldsV1, keys in the same order, for any object under the Pod and Deployment schemas', () => {
    // Field names the schemas know at several depths, and some they do not; values of every JSON type.
    const name = fc.constantFrom(
      'metadata',
      'labels',
      'annotations',
      'spec',
      'template',
      'containers',
      'initContainers',
      'name',
      'image',
      'ports',
      'containerPort',
      'protocol',
      'env',
      'value',
      'volumes',
      'replicas',
      'selector',
      'matchLabels',
      'finalizers',
      'tolerations',
      'key',
      'x-unknown',
      'a',
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, true, 0, 'web', 'TCP', 80),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(name, tie('value'), { maxKeys: 5 }),
      ),
    })).value;
    // Pod-shaped objects reach the keyed lists (containers, ports: `k:`) and sets (finalizers: `v:`), with repeats.
    const optional = <T>(fields: { [K in keyof T]: fc.Arbitrary<T[K]> }) => fc.record(fields, { requiredKeys: [] });
    const port = optional({ containerPort: fc.constantFrom(80, 443), protocol: fc.constantFrom('TCP', 'UDP') });
    const container = optional({
      name: fc.constantFrom('web', 'db'),
      image: fc.constantFrom('nginx', null),
      ports: fc.array(port, { maxLength: 3 }),
      env: fc.array(optional({ name: fc.constantFrom('A', 'B'), value: json }), { maxLength: 2 }),
    });
    const podLike = optional({
      metadata: optional({ labels: json, finalizers: fc.array(fc.constantFrom('a', 'b'), { maxLength: 3 }) }),
      spec: optional({ containers: fc.array(container, { maxLength: 3 }), tolerations: json }),
    });
    const object = fc.oneof(fc.dictionary(name, json, { maxKeys: 4 }), podLike);
    fc.assert(
      fc.property(object, fc.constantFrom(pod, deployment), (value, schema) => {
        expect(JSON.stringify(createdFieldsV1(value, schema))).toBe(JSON.stringify(viaSet(value, schema)));
      }),
      { numRuns: 2000 },
    );
  });

  it('orders levels larger than a few elements too: big maps, sets and keyed lists, with and without repeats', () => {
    const many = <T>(item: fc.Arbitrary<T>) => fc.array(item, { minLength: 17, maxLength: 60 });
    const podWithBigLevels = fc.record({
      metadata: fc.record({
        labels: fc.dictionary(fc.string({ maxLength: 6 }), fc.constant('x'), { minKeys: 17, maxKeys: 60 }),
        finalizers: many(fc.integer({ min: 0, max: 80 }).map((i) => `f${i}`)),
      }),
      // Repeated containers differ in what they hold, so a repeat that went unnoticed would show.
      spec: fc.record({
        containers: many(
          fc.record(
            { name: fc.integer({ min: 0, max: 90 }).map(String), image: fc.constantFrom('a', 'b') },
            { requiredKeys: ['name'] },
          ),
        ),
      }),
    });
    fc.assert(
      fc.property(podWithBigLevels, (value) => {
        expect(JSON.stringify(createdFieldsV1(value, pod))).toBe(JSON.stringify(viaSet(value, pod)));
      }),
      { numRuns: 300 },
    );
  });

  it('makes every node its own object, so a structuredClone copy (as JSON Patch makes) changes one alone', () => {
    const value = { metadata: { labels: { a: '1', b: '2' } }, data: { k: 'v' } };
    for (const tree of [createdFieldsV1(value, pod), viaSet(value, pod)]) {
      const copy = structuredClone(tree) as Record<string, Record<string, Record<string, object>>>;
      Object.assign(copy['f:data']['f:k'], { 'f:x': {} });
      expect(copy).toEqual({
        'f:data': { '.': {}, 'f:k': { 'f:x': {} } },
        'f:metadata': { 'f:labels': { '.': {}, 'f:a': {}, 'f:b': {} } },
      });
    }
  });

  it('merges list items that share a key, as the set does', () => {
    const value = {
      spec: {
        containers: [
          { name: 'web', image: 'a' },
          { name: 'web', command: ['sh'] },
        ],
      },
    };
    expect(createdFieldsV1(value, pod)).toEqual({
      'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:command': {}, 'f:image': {}, 'f:name': {} } } },
    });
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
