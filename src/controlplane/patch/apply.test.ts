import { describe, expect, it } from 'vitest';
import { applyServerSideApply } from './apply.ts';
import { deepFreeze } from './deep-freeze.ts';
import { PatchError } from './errors.ts';
import type { JsonObject } from './merge-patch.ts';

const live: JsonObject = deepFreeze({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' }, finalizers: ['a'] },
  spec: {
    replicas: 3,
    template: {
      spec: {
        containers: [{ name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] }],
        tolerations: [{ key: 'a', operator: 'Exists' }],
      },
    },
  },
});

describe('applyServerSideApply', () => {
  it('creates the object when there is no live one, dropping nulls', () => {
    const applied = deepFreeze({ kind: 'Deployment', metadata: { name: 'web', labels: null }, spec: { replicas: 1 } });
    expect(applyServerSideApply(undefined, applied, 'Deployment')).toEqual({
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 1 },
    });
  });

  it.each<[string, JsonObject, JsonObject]>([
    [
      'merges keyed lists by their keys, new items after the live ones',
      {
        spec: {
          template: { spec: { containers: [{ name: 'app', image: 'app:2', env: [{ name: 'B', value: '2' }] }] } },
        },
      },
      {
        containers: [
          {
            name: 'app',
            image: 'app:2',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
          },
        ],
        tolerations: [{ key: 'a', operator: 'Exists' }],
      },
    ],
    [
      'replaces lists without a merge key',
      { spec: { template: { spec: { tolerations: [{ key: 'b', operator: 'Exists' }] } } } },
      {
        containers: [{ name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] }],
        tolerations: [{ key: 'b', operator: 'Exists' }],
      },
    ],
    [
      'deletes fields set to null',
      { spec: { template: { spec: { tolerations: null } } } },
      { containers: [{ name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] }] },
    ],
  ])('%s', (_name, applied, podSpec) => {
    const result = applyServerSideApply(live, deepFreeze(applied), 'Deployment');
    expect(result).toEqual({ ...live, spec: { replicas: 3, template: { spec: podSpec } } });
  });

  it('keeps fields the configuration leaves out', () => {
    const result = applyServerSideApply(live, deepFreeze({ metadata: { finalizers: ['b'] } }), 'Deployment');
    expect(result.metadata).toEqual({ name: 'web', labels: { app: 'web' }, finalizers: ['a', 'b'] });
    expect(result.spec).toEqual(live.spec);
  });

  it.each<[string, unknown, string]>([
    ['a configuration that is not an object', ['kind'], 'the apply configuration must be an object'],
    [
      'a $patch directive',
      { spec: { template: { $patch: 'replace' } } },
      'the apply configuration may not contain the patch directive "$patch"',
    ],
    [
      'a directive inside a list element',
      { spec: { template: { spec: { containers: [{ name: 'app', '$setElementOrder/env': [] }] } } } },
      'the apply configuration may not contain the patch directive "$setElementOrder/env"',
    ],
  ])('rejects %s', (_name, applied, message) => {
    let error: unknown;
    try {
      applyServerSideApply(live, deepFreeze(applied), 'Deployment');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PatchError);
    expect(error).toMatchObject({ reason: 'BadRequest', message });
  });
});
