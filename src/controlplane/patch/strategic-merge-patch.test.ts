import { describe, expect, it } from 'vitest';
import { deepFreeze } from './deep-freeze.ts';
import { PatchError } from './errors.ts';
import type { JsonObject } from './merge-patch.ts';
import { applyStrategicMergePatch } from './strategic-merge-patch.ts';

function apply(original: JsonObject, patch: JsonObject, kind = 'Pod'): JsonObject {
  return applyStrategicMergePatch(deepFreeze(original), deepFreeze(patch), kind);
}

function failure(original: JsonObject, patch: JsonObject, kind = 'Pod'): PatchError {
  try {
    apply(original, patch, kind);
  } catch (error) {
    if (error instanceof PatchError) return error;
    throw error;
  }
  throw new Error('the patch applied');
}

const podSpec = (spec: JsonObject): JsonObject => ({ spec });
const deployment = (podSpec: JsonObject): JsonObject => ({ spec: { template: { spec: podSpec } } });

type Case = [name: string, kind: string, original: JsonObject, patch: JsonObject, expected: JsonObject];

describe('applyStrategicMergePatch: maps and scalars', () => {
  it.each<Case>([
    [
      'merges maps and replaces scalars',
      'Pod',
      { metadata: { name: 'web', labels: { app: 'web' } }, spec: { nodeName: 'a' } },
      { metadata: { labels: { tier: 'front' } }, spec: { nodeName: 'b' } },
      { metadata: { name: 'web', labels: { app: 'web', tier: 'front' } }, spec: { nodeName: 'b' } },
    ],
    [
      'deletes fields set to null, also inside new values',
      'Pod',
      { metadata: { labels: { app: 'web', tier: 'front' } } },
      { metadata: { labels: { tier: null }, annotations: { a: '1', b: null } } },
      { metadata: { labels: { app: 'web' }, annotations: { a: '1' } } },
    ],
    [
      'replaces a value of another type',
      'Pod',
      { spec: { nodeSelector: 'bad' } },
      { spec: { nodeSelector: { disk: 'ssd' } } },
      { spec: { nodeSelector: { disk: 'ssd' } } },
    ],
    [
      'merges a map-valued field as a map (PDB status.disruptedPods)',
      'PodDisruptionBudget',
      { status: { disruptedPods: { a: '2024-01-01T00:00:00Z' } } },
      { status: { disruptedPods: { b: '2024-01-02T00:00:00Z', a: null } } },
      { status: { disruptedPods: { b: '2024-01-02T00:00:00Z' } } },
    ],
    [
      '$patch: replace replaces a map',
      'Pod',
      { metadata: { labels: { app: 'web', tier: 'front' } } },
      { metadata: { labels: { $patch: 'replace', owner: 'me', gone: null } } },
      { metadata: { labels: { owner: 'me' } } },
    ],
    [
      '$patch: delete deletes a map',
      'Deployment',
      { spec: { replicas: 2, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
      { spec: { strategy: { rollingUpdate: { $patch: 'delete' } } } },
      { spec: { replicas: 2, strategy: { type: 'RollingUpdate' } } },
    ],
    [
      '$patch: merge merges a map as usual',
      'Pod',
      { metadata: { labels: { app: 'web' } } },
      { metadata: { labels: { $patch: 'merge', tier: 'front' } } },
      { metadata: { labels: { app: 'web', tier: 'front' } } },
    ],
    [
      '$retainKeys clears the fields it does not name',
      'Deployment',
      { spec: { replicas: 2, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      { spec: { replicas: 2, strategy: { type: 'Recreate' } } },
    ],
    [
      '$retainKeys keeps a named field the patch leaves alone',
      'Pod',
      { spec: { volumes: [{ name: 'data', emptyDir: {}, hostPath: { path: '/x' } }] } },
      { spec: { volumes: [{ name: 'data', $retainKeys: ['name', 'hostPath'] }] } },
      { spec: { volumes: [{ name: 'data', hostPath: { path: '/x' } }] } },
    ],
  ])('%s', (_name, kind, original, patch, expected) => {
    expect(apply(original, patch, kind)).toEqual(expected);
  });
});

describe('applyStrategicMergePatch: lists', () => {
  it.each<Case>([
    [
      'merges containers by name, keeping their order',
      'Pod',
      podSpec({
        containers: [
          { name: 'app', image: 'app:1' },
          { name: 'proxy', image: 'proxy:1' },
        ],
      }),
      podSpec({ containers: [{ name: 'app', image: 'app:2' }] }),
      podSpec({
        containers: [
          { name: 'app', image: 'app:2' },
          { name: 'proxy', image: 'proxy:1' },
        ],
      }),
    ],
    [
      'puts a new container ahead of the live ones, as the reference does',
      'Pod',
      podSpec({ containers: [{ name: 'app', image: 'app:1' }] }),
      podSpec({ containers: [{ name: 'log', image: 'log:1', args: null }] }),
      podSpec({
        containers: [
          { name: 'log', image: 'log:1' },
          { name: 'app', image: 'app:1' },
        ],
      }),
    ],
    [
      'weaves live-only elements back around the patched ones',
      'Pod',
      podSpec({ volumes: [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd' }] }),
      podSpec({
        volumes: [
          { name: 'c', emptyDir: {} },
          { name: 'a', emptyDir: {} },
        ],
      }),
      podSpec({ volumes: [{ name: 'b' }, { name: 'c', emptyDir: {} }, { name: 'a', emptyDir: {} }, { name: 'd' }] }),
    ],
    [
      'merges env by name and ports by containerPort in a Deployment template',
      'Deployment',
      deployment({
        containers: [
          {
            name: 'app',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 80, name: 'http' }],
          },
        ],
      }),
      deployment({
        containers: [
          {
            name: 'app',
            env: [{ name: 'B', value: '3' }],
            ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }],
          },
        ],
      }),
      deployment({
        containers: [
          {
            name: 'app',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '3' },
            ],
            ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }],
          },
        ],
      }),
    ],
    [
      'merges Service ports by port',
      'Service',
      {
        spec: {
          ports: [
            { port: 80, targetPort: 8080 },
            { port: 443, targetPort: 8443 },
          ],
        },
      },
      { spec: { ports: [{ port: 443, name: 'https' }] } },
      {
        spec: {
          ports: [
            { port: 80, targetPort: 8080 },
            { port: 443, targetPort: 8443, name: 'https' },
          ],
        },
      },
    ],
    [
      'merges status conditions by type',
      'StatefulSet',
      {
        status: {
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'Progressing', status: 'True' },
          ],
        },
      },
      { status: { conditions: [{ type: 'Ready', status: 'True', reason: null }] } },
      {
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'Progressing', status: 'True' },
          ],
        },
      },
    ],
    [
      'merges Node addresses by type and replaces Node images',
      'Node',
      {
        status: {
          addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
          images: [{ names: ['a'] }, { names: ['b'] }],
        },
      },
      { status: { addresses: [{ type: 'Hostname', address: 'n1' }], images: [{ names: ['c'] }] } },
      {
        status: {
          addresses: [
            { type: 'Hostname', address: 'n1' },
            { type: 'InternalIP', address: '10.0.0.1' },
          ],
          images: [{ names: ['c'] }],
        },
      },
    ],
    [
      'merges ownerReferences by uid on any kind',
      'ConfigMap',
      {
        metadata: {
          ownerReferences: [
            { uid: '1', kind: 'A' },
            { uid: '2', kind: 'B' },
          ],
        },
      },
      { metadata: { ownerReferences: [{ uid: '2', controller: true }] } },
      {
        metadata: {
          ownerReferences: [
            { uid: '1', kind: 'A' },
            { uid: '2', kind: 'B', controller: true },
          ],
        },
      },
    ],
    [
      'merges finalizers as a set',
      'Namespace',
      { metadata: { finalizers: ['a', 'b'] } },
      { metadata: { finalizers: ['b', 'c'] } },
      { metadata: { finalizers: ['a', 'b', 'c'] } },
    ],
    [
      'replaces tolerations atomically',
      'Pod',
      podSpec({
        tolerations: [
          { key: 'a', operator: 'Exists' },
          { key: 'b', operator: 'Exists' },
        ],
      }),
      podSpec({ tolerations: [{ key: 'c', operator: 'Exists' }] }),
      podSpec({ tolerations: [{ key: 'c', operator: 'Exists' }] }),
    ],
    [
      'replaces nodeSelectorTerms atomically',
      'Pod',
      podSpec({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
            },
          },
        },
      }),
      podSpec({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }],
            },
          },
        },
      }),
      podSpec({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }],
            },
          },
        },
      }),
    ],
    [
      'replaces Pod containerStatuses atomically',
      'Pod',
      {
        status: {
          containerStatuses: [
            { name: 'a', ready: true },
            { name: 'b', ready: true },
          ],
        },
      },
      { status: { containerStatuses: [{ name: 'a', ready: false }] } },
      { status: { containerStatuses: [{ name: 'a', ready: false }] } },
    ],
    [
      'replaces every list but metadata lists on a kind without a table',
      'Widget',
      { metadata: { finalizers: ['a'] }, spec: { containers: [{ name: 'a' }] } },
      { metadata: { finalizers: ['b'] }, spec: { containers: [{ name: 'b' }] } },
      { metadata: { finalizers: ['b', 'a'] }, spec: { containers: [{ name: 'b' }] } },
    ],
  ])('%s', (_name, kind, original, patch, expected) => {
    expect(apply(original, patch, kind)).toEqual(expected);
  });
});

describe('applyStrategicMergePatch: list directives', () => {
  it.each<Case>([
    [
      '$patch: delete removes the elements with the merge key',
      'Pod',
      podSpec({ containers: [{ name: 'app' }, { name: 'log' }, { name: 'proxy' }] }),
      podSpec({
        containers: [
          { name: 'log', $patch: 'delete' },
          { name: 'app', image: 'app:2' },
        ],
      }),
      podSpec({ containers: [{ name: 'app', image: 'app:2' }, { name: 'proxy' }] }),
    ],
    [
      '$patch: replace replaces a merged list with the other elements',
      'Pod',
      podSpec({ containers: [{ name: 'app', image: 'app:1' }, { name: 'log' }] }),
      podSpec({ containers: [{ name: 'app', image: 'app:2' }, { $patch: 'replace' }] }),
      podSpec({ containers: [{ name: 'app', image: 'app:2' }] }),
    ],
    [
      '$patch: replace in an atomic list is the default',
      'Pod',
      podSpec({ tolerations: [{ key: 'a' }] }),
      podSpec({ tolerations: [{ key: 'b' }, { $patch: 'replace' }] }),
      podSpec({ tolerations: [{ key: 'b' }] }),
    ],
    [
      '$patch: merge in a merged list is the default',
      'Pod',
      podSpec({ containers: [{ name: 'app' }] }),
      podSpec({ containers: [{ $patch: 'merge' }, { name: 'app', image: 'app:2' }] }),
      podSpec({ containers: [{ name: 'app', image: 'app:2' }] }),
    ],
    [
      '$deleteFromPrimitiveList removes values from a set',
      'Pod',
      { metadata: { finalizers: ['a', 'b', 'c'] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'c', 'x'] } },
      { metadata: { finalizers: ['a'] } },
    ],
    [
      '$deleteFromPrimitiveList applies after the list is merged',
      'Pod',
      { metadata: { finalizers: ['a', 'b'] } },
      { metadata: { finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['a', 'c'] } },
      { metadata: { finalizers: ['b'] } },
    ],
    [
      '$setElementOrder reorders a merged list',
      'Pod',
      podSpec({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }),
      podSpec({ '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }] }),
      podSpec({ containers: [{ name: 'c' }, { name: 'a' }, { name: 'b' }] }),
    ],
    [
      '$setElementOrder places new and patched elements',
      'Pod',
      podSpec({ containers: [{ name: 'a' }, { name: 'b' }] }),
      podSpec({
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'n' }, { name: 'b' }],
        containers: [
          { name: 'n', image: 'n:1' },
          { name: 'b', image: 'b:2' },
        ],
      }),
      podSpec({ containers: [{ name: 'a' }, { name: 'n', image: 'n:1' }, { name: 'b', image: 'b:2' }] }),
    ],
    [
      // x came before b in the live list, so it stays ahead of b.
      '$setElementOrder weaves unlisted live elements in by live position',
      'Pod',
      podSpec({ containers: [{ name: 'a' }, { name: 'x' }, { name: 'b' }] }),
      podSpec({ '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] }),
      podSpec({ containers: [{ name: 'x' }, { name: 'b' }, { name: 'a' }] }),
    ],
    [
      '$setElementOrder orders a set of primitives',
      'Pod',
      { metadata: { finalizers: ['a', 'b', 'c'] } },
      { metadata: { '$setElementOrder/finalizers': ['b', 'c', 'a'] } },
      { metadata: { finalizers: ['b', 'c', 'a'] } },
    ],
  ])('%s', (_name, kind, original, patch, expected) => {
    expect(apply(original, patch, kind)).toEqual(expected);
  });
});

describe('applyStrategicMergePatch: errors', () => {
  it.each<[string, JsonObject, JsonObject, PatchError['reason'], string]>([
    [
      'a merged element without its merge key',
      podSpec({ containers: [{ name: 'app' }] }),
      podSpec({ containers: [{ image: 'x' }] }),
      'BadRequest',
      'map: {"image":"x"} does not contain declared merge key: name',
    ],
    [
      '$patch: delete without the merge key',
      podSpec({ containers: [{ name: 'app' }] }),
      podSpec({ containers: [{ $patch: 'delete' }] }),
      'BadRequest',
      'map: {"$patch":"delete"} does not contain declared merge key: name',
    ],
    [
      'an unknown $patch in a map',
      { metadata: { labels: {} } },
      { metadata: { labels: { $patch: 'drop' } } },
      'BadRequest',
      'unknown patch type: "drop" in map: {"$patch":"drop"}',
    ],
    [
      'an unknown $patch in a list',
      podSpec({ containers: [] }),
      podSpec({ containers: [{ $patch: 'drop', name: 'a' }] }),
      'BadRequest',
      'unknown patch type: "drop" in map: {"$patch":"drop","name":"a"}',
    ],
    [
      '$patch: delete in an atomic list',
      podSpec({ tolerations: [{ key: 'a' }] }),
      podSpec({ tolerations: [{ key: 'a', $patch: 'delete' }] }),
      'BadRequest',
      'spec.tolerations is replaced as a whole, so $patch: delete cannot apply',
    ],
    [
      '$patch: merge in an atomic list',
      podSpec({ tolerations: [{ key: 'a' }] }),
      podSpec({ tolerations: [{ $patch: 'merge' }, { key: 'b' }] }),
      'BadRequest',
      'spec.tolerations is replaced as a whole, so $patch: merge cannot apply',
    ],
    [
      '$patch: delete in a set of primitives',
      { metadata: { finalizers: ['a'] } },
      { metadata: { finalizers: [{ $patch: 'delete' }] } },
      'BadRequest',
      'metadata.finalizers is a list of primitives: delete from it with $deleteFromPrimitiveList/',
    ],
    [
      '$retainKeys that is not a list',
      { spec: { strategy: {} } },
      { spec: { strategy: { $retainKeys: 'type' } } },
      'BadRequest',
      'invalid patch format of retainKeys',
    ],
    [
      '$retainKeys that leaves out a field the patch sets',
      { spec: { strategy: {} } },
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: {} } } },
      'Invalid',
      `patch content doesn't match retainKeys list: "rollingUpdate" is not retained`,
    ],
    [
      '$setElementOrder that is not a list',
      podSpec({ containers: [] }),
      podSpec({ '$setElementOrder/containers': { name: 'a' } }),
      'BadRequest',
      'invalid patch format of setElementOrder list',
    ],
    [
      '$setElementOrder that leaves out a patched element',
      podSpec({ containers: [{ name: 'a' }] }),
      podSpec({ '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'b' }] }),
      'BadRequest',
      '$setElementOrder/containers does not list {"name":"b"}',
    ],
    [
      '$deleteFromPrimitiveList that is not a list',
      { metadata: { finalizers: ['a'] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
      'BadRequest',
      'invalid patch format of primitive list',
    ],
  ])('rejects %s', (_name, original, patch, reason, message) => {
    const error = failure(original, patch);
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(message);
  });
});

describe('applyStrategicMergePatch: purity', () => {
  it('returns an object that shares nothing with its inputs', () => {
    const original = podSpec({ containers: [{ name: 'app', env: [{ name: 'A', value: '1' }] }], nodeSelector: {} });
    const patch = podSpec({
      containers: [{ name: 'log', env: [{ name: 'B', value: '2' }] }],
      tolerations: [{ key: 'a' }],
    });
    const result = apply(original, patch) as {
      spec: { containers: JsonObject[]; tolerations: JsonObject[] };
    } & JsonObject;
    // Each write would throw if it reached a frozen input.
    for (const container of result.spec.containers) container.image = 'x';
    result.spec.tolerations[0].effect = 'NoSchedule';
    (result.spec as JsonObject).nodeSelector = { disk: 'ssd' };
    expect(result.spec.containers.map((container) => container.name)).toEqual(['log', 'app']);
  });
});
