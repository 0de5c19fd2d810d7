import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../api/schema.ts';
import { deepFreeze } from '../patch/deep-freeze.ts';
import {
  ApplyConflict,
  applyConfiguration,
  type FieldOwner,
  type ManagedFieldsEntry,
  managerLabel,
  recordUpdate,
} from './managed-fields.ts';

const schema = schemaFor('Deployment', 'apps/v1') ?? 'any';
const owner = (manager: string, more: Partial<FieldOwner> = {}): FieldOwner => ({
  manager,
  apiVersion: 'apps/v1',
  time: '2026-11-25T10:00:00Z',
  schema,
  tracked: (field) => field !== 'status',
  ...more,
});

type Obj = Record<string, unknown> & { metadata?: { name?: string; managedFields?: ManagedFieldsEntry[] } };
const deployment = (spec: object, metadata: object = {}): Obj =>
  deepFreeze({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', ...metadata }, spec });
const withFields = (object: Obj, managedFields: ManagedFieldsEntry[]): Obj =>
  deepFreeze({ ...object, metadata: { ...object.metadata, managedFields } });
/** Each manager's FieldsV1, by `manager/operation`. */
const owners = (entries: ManagedFieldsEntry[]) =>
  Object.fromEntries(
    entries.map((e) => [`${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`, e.fieldsV1]),
  );

describe('recordUpdate', () => {
  it('gives a create everything it sets, untracked metadata and the type excluded', () => {
    const created = deployment({ replicas: 2 }, { labels: { app: 'web' }, uid: 'u', resourceVersion: '1' });
    const entries = recordUpdate(undefined, created, owner('kubectl-create'));
    expect(entries).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2026-11-25T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } },
      },
    ]);
  });

  it.each<[string, object, object, Record<string, unknown>]>([
    [
      'a changed value moves to the updater',
      { replicas: 2, paused: true },
      { replicas: 5, paused: true },
      { 'a/Update': { 'f:spec': { 'f:paused': {} } }, 'b/Update': { 'f:spec': { 'f:replicas': {} } } },
    ],
    [
      'a removed field leaves every manager',
      { replicas: 2, paused: true },
      { replicas: 2 },
      { 'a/Update': { 'f:spec': { 'f:replicas': {} } } },
    ],
    [
      'an unchanged value stays with its owner',
      { replicas: 2, paused: true },
      { replicas: 2, paused: true, minReadySeconds: 5 },
      {
        'a/Update': { 'f:spec': { 'f:paused': {}, 'f:replicas': {} } },
        'b/Update': { 'f:spec': { 'f:minReadySeconds': {} } },
      },
    ],
    [
      'an object or list that appears is a member; a value struct the zero value holds is not',
      { replicas: 2 },
      { replicas: 2, strategy: { rollingUpdate: { maxSurge: 1 } }, template: { spec: { volumes: [{ name: 'v' }] } } },
      {
        'a/Update': { 'f:spec': { 'f:replicas': {} } },
        'b/Update': {
          'f:spec': {
            'f:strategy': { 'f:rollingUpdate': { '.': {}, 'f:maxSurge': {} } },
            'f:template': { 'f:spec': { 'f:volumes': { '.': {}, 'k:{"name":"v"}': { '.': {}, 'f:name': {} } } } },
          },
        },
      },
    ],
    [
      'an object that only loses its members is no change of its own',
      { replicas: 2, strategy: { rollingUpdate: { maxSurge: 1 } } },
      { replicas: 2, strategy: {} },
      { 'a/Update': { 'f:spec': { 'f:replicas': {} } } },
    ],
  ])('%s', (_name, before, after, expected) => {
    const old = withFields(deployment(before), recordUpdate(undefined, deployment(before), owner('a')));
    const entries = recordUpdate(old, deployment(after), owner('b', { time: '2026-11-25T11:00:00Z' }));
    expect(owners(entries)).toEqual(expected);
  });

  it('keeps the time of entries it does not change, and records nothing for a no-op', () => {
    const first = recordUpdate(undefined, deployment({ replicas: 2 }), owner('a'));
    const old = withFields(deployment({ replicas: 2 }), first);
    expect(recordUpdate(old, deployment({ replicas: 2 }), owner('b', { time: 'later' }))).toEqual(first);
  });

  it('drops a stored entry whose FieldsV1 cannot be read instead of failing the write', () => {
    const broken = { manager: 'x', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'q:bad': {} } };
    const old = withFields(deployment({ replicas: 1 }), [broken as unknown as ManagedFieldsEntry]);
    expect(owners(recordUpdate(old, deployment({ replicas: 2 }), owner('b')))).toEqual({
      'b/Update': { 'f:spec': { 'f:replicas': {} } },
    });
  });

  it('tracks status writes under their subresource and ignores status on the main resource', () => {
    const old = deployment({ replicas: 1 });
    const next = { ...old, status: { replicas: 1 } };
    const status = owner('controller', { subresource: 'status', tracked: (f) => f === 'status' });
    expect(owners(recordUpdate(old, next, status))).toEqual({
      'controller/Update/status': { 'f:status': { 'f:replicas': {} } },
    });
    expect(recordUpdate(old, next, owner('user'))).toEqual([]);
  });
});

describe('applyConfiguration', () => {
  const apply = (live: Obj, config: object, manager: string, force = false) =>
    applyConfiguration(live, config as Record<string, unknown>, owner(manager), force);
  const config = (spec: object, labels?: object) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', ...(labels ? { labels } : {}) },
    spec,
  });

  it('creates: the applier owns exactly what it applied', () => {
    const { object, managedFields } = apply(deployment({}), config({ replicas: 2 }, { app: 'web' }), 'a');
    expect(object).toMatchObject({ metadata: { labels: { app: 'web' } }, spec: { replicas: 2 } });
    expect(owners(managedFields)).toEqual({
      'a/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:replicas': {} } },
    });
  });

  it('answers a conflict naming the field, its manager and version, and writes nothing', () => {
    const first = apply(deployment({}), config({ replicas: 2 }), 'a');
    const live = withFields(first.object as Obj, first.managedFields);
    let error: unknown;
    try {
      apply(live, config({ replicas: 3 }), 'b');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApplyConflict);
    expect((error as ApplyConflict).conflicts).toEqual([
      { manager: 'a', operation: 'Apply', apiVersion: 'apps/v1', path: '.spec.replicas' },
    ]);
    expect((error as Error).message).toBe('Apply failed with 1 conflict: conflict with "a": .spec.replicas');
  });

  it.each([
    [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1' }, '"kubectl"'],
    [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1' }, '"kubectl" using v1'],
    [
      { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', subresource: 'status' },
      '"kubectl" with subresource "status" using v1',
    ],
  ] as const)('names a manager as the reference does: %j is %s', (c, label) => {
    expect(managerLabel(c)).toBe(label);
  });

  it('groups several conflicts by manager, sorted, a path per line', () => {
    const conflict = (manager: string, operation: 'Apply' | 'Update', path: string) => ({
      manager,
      operation,
      apiVersion: 'v1',
      path,
    });
    const err = new ApplyConflict([
      conflict('z', 'Apply', '.data.a'),
      conflict('m', 'Update', '.data.b'),
      conflict('z', 'Apply', '.data.c'),
    ]);
    expect(err.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "m" using v1:\n- .data.b\nconflicts with "z":\n- .data.a\n- .data.c',
    );
  });

  it('conflicts with Update managers too', () => {
    const live = withFields(
      deployment({ replicas: 2 }),
      recordUpdate(undefined, deployment({ replicas: 2 }), owner('editor')),
    );
    expect(() => apply(live, config({ replicas: 3 }), 'a')).toThrow(
      /conflict with "editor" using apps\/v1: \.spec\.replicas/,
    );
  });

  it('compares an atomic object as one value: another one conflicts, the same one does not', () => {
    const selector = { matchLabels: { app: 'web' }, matchExpressions: [] };
    const live = withFields(
      deployment({ selector }),
      recordUpdate(undefined, deployment({ selector }), owner('editor')),
    );
    expect(() => apply(live, config({ selector: { matchLabels: { app: 'web' } } }), 'a')).toThrow(
      /conflict with "editor" using apps\/v1: \.spec\.selector/,
    );
    expect(() => apply(live, config({ selector }), 'a')).not.toThrow();
  });

  it('shares a field applied with the same value, and transfers one on force', () => {
    const first = apply(deployment({}), config({ replicas: 2, paused: true }), 'a');
    const live = withFields(first.object as Obj, first.managedFields);
    const shared = apply(live, config({ replicas: 2 }), 'b');
    expect(owners(shared.managedFields)).toEqual({
      'a/Apply': { 'f:spec': { 'f:paused': {}, 'f:replicas': {} } },
      'b/Apply': { 'f:spec': { 'f:replicas': {} } },
    });
    const forced = apply(live, config({ replicas: 3 }), 'b', true);
    expect(forced.object).toMatchObject({ spec: { replicas: 3, paused: true } });
    expect(owners(forced.managedFields)).toEqual({
      'a/Apply': { 'f:spec': { 'f:paused': {} } },
      'b/Apply': { 'f:spec': { 'f:replicas': {} } },
    });
  });

  it('removes fields the applier stops applying, unless another manager owns them', () => {
    const cfg = config(
      { replicas: 2, paused: true, template: { spec: { containers: [{ name: 'a' }, { name: 'b' }] } } },
      { x: '1', y: '2' },
    );
    const first = apply(deployment({}), cfg, 'a');
    const live = withFields(first.object as Obj, first.managedFields);
    const withB = apply(live, config({ paused: true }), 'b');
    const shared = withFields(withB.object as Obj, withB.managedFields);
    const second = apply(
      shared,
      config({ replicas: 2, template: { spec: { containers: [{ name: 'a' }] } } }, { x: '1' }),
      'a',
    );
    expect(second.object).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { x: '1' }, managedFields: withB.managedFields },
      spec: { replicas: 2, paused: true, template: { spec: { containers: [{ name: 'a' }] } } },
    });
  });

  it('merges map lists by key and keeps items other managers added', () => {
    const first = apply(
      deployment({}),
      config({ template: { spec: { containers: [{ name: 'app', image: 'app:1' }] } } }),
      'a',
    );
    const live = withFields(first.object as Obj, first.managedFields);
    const sidecar = apply(live, config({ template: { spec: { containers: [{ name: 'log', image: 'log:1' }] } } }), 'b');
    expect((sidecar.object.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers).toEqual(
      [
        { name: 'app', image: 'app:1' },
        { name: 'log', image: 'log:1' },
      ],
    );
  });
});
