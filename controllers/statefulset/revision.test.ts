import { describe, expect, it } from 'vitest';
import { naming } from '../../src/api/naming.ts';
import type { ControllerRevision, StatefulSet } from '../../src/api/types/apps.ts';
import {
  canonicalJson,
  equalRevision,
  fnv1,
  newRevision,
  revisionData,
  revisionHash,
  revisionName,
  safeEncode,
  sortRevisions,
  templateOf,
} from './revision.ts';

const n = naming('kubernetes');

/**
 * The reference's own vector (its TestStatefulSetCompatibility): the 1.33-defaulted template of set
 * `test` is stored as this data, and its revision is named `test-c77f6d978` with collisionCount 0.
 */
const REFERENCE_DATA =
  '{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},"creationTimestamp":null,"labels":{"app":"foo"}},"spec":{"containers":[{"image":"test","imagePullPolicy":"Always","name":"test","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}';

const referenceSet = (): StatefulSet => {
  const template = JSON.parse(REFERENCE_DATA).spec.template;
  delete template.$patch;
  // Keys in a different order than the canonical bytes: the data must not depend on it.
  const spec = template.spec;
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'test', namespace: 'test', uid: 'ssuid', annotations: { note: 'kept' } },
    spec: {
      selector: { matchLabels: { app: 'foo' } },
      template: { spec: { terminationGracePeriodSeconds: 30, ...spec }, metadata: template.metadata },
    },
  };
};

describe('revision hash', () => {
  it('FNV-1 (not 1a) over the data and the decimal collision count', () => {
    expect(fnv1('')).toBe(2166136261);
    expect(fnv1(REFERENCE_DATA, '0')).toBe(733928534);
    expect(fnv1(REFERENCE_DATA, '0')).toBe(fnv1(`${REFERENCE_DATA}0`));
  });

  it('safe-encodes each decimal digit', () => {
    expect(safeEncode('0123456789')).toBe('456789bcdf');
    expect(safeEncode('733928534')).toBe('c77f6d978');
  });

  it("equals the reference's value for its known template", () => {
    expect(revisionHash(REFERENCE_DATA, 0)).toBe('c77f6d978');
    const set = referenceSet();
    expect(revisionData(set)).toBe(REFERENCE_DATA);
    const rev = newRevision(n, set, 1, 0);
    expect(rev.metadata.name).toBe('test-c77f6d978');
    expect(rev.metadata.labels).toEqual({ app: 'foo', 'controller.kubernetes.io/hash': 'c77f6d978' });
    expect(rev.metadata.annotations).toEqual({ note: 'kept' });
    expect(rev.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: 'test',
        uid: 'ssuid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(rev.revision).toBe(1);
  });

  it('the collision count changes the hash, and the name carries it', () => {
    const hashes = [0, 1, 2].map((c) => revisionHash(REFERENCE_DATA, c));
    expect(new Set(hashes).size).toBe(3);
    expect(newRevision(n, referenceSet(), 1, 1).metadata.name).toBe(`test-${hashes[1]}`);
  });

  it('the orch flavor uses its own hash label', () => {
    expect(Object.keys(newRevision(naming('orch'), referenceSet(), 1, 0).metadata.labels!)).toContain(
      'controller.orch.io/hash',
    );
  });

  it('caps the set-name part of the name at 223 characters', () => {
    expect(revisionName('a'.repeat(300), 'xyz')).toBe(`${'a'.repeat(223)}-xyz`);
  });
});

describe('canonical JSON', () => {
  it.each([
    [{ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }, '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}'],
    [{ cmd: 'a<b>&c' }, '{"cmd":"a\\u003cb\\u003e\\u0026c"}'],
    [{ s: 'line\u2028sep\u2029' }, '{"s":"line\\u2028sep\\u2029"}'],
    [{ skip: undefined, keep: 0 }, '{"keep":0}'],
  ])('%j → %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text);
  });
});

describe('revision equality and order', () => {
  const rev = (name: string, data: unknown, revision: number, hash?: string, created = '2024-01-01T00:00:00Z') =>
    ({
      metadata: { name, creationTimestamp: created, labels: hash ? { [n.labels.revisionHash]: hash } : {} },
      data,
      revision,
    }) as ControllerRevision;

  it.each([
    ['same data, safe-encoded hashes', rev('a', { x: 1 }, 1, 'c77f'), rev('b', { x: 1 }, 2, 'bd9f'), true],
    ['different data', rev('a', { x: 1 }, 1), rev('b', { x: 2 }, 1), false],
    ['integer hash labels that differ settle it', rev('a', { x: 1 }, 1, '12'), rev('b', { x: 1 }, 1, '13'), false],
    ['key order does not matter', rev('a', { x: 1, y: 2 }, 1), rev('b', { y: 2, x: 1 }, 1), true],
    ['raw string data against decoded data', rev('a', '{"x":1}', 1), rev('b', { x: 1 }, 1), true],
  ])('%s', (_what, a, b, equal) => {
    expect(equalRevision(n, a, b)).toBe(equal);
  });

  it('sorts by revision, then age, then name', () => {
    const sorted = sortRevisions([
      rev('c', {}, 2),
      rev('b', {}, 1, undefined, '2024-01-02T00:00:00Z'),
      rev('a', {}, 1, undefined, '2024-01-02T00:00:00Z'),
      rev('z', {}, 1, undefined, '2024-01-01T00:00:00Z'),
    ]);
    expect(sorted.map((r) => r.metadata.name)).toEqual(['z', 'a', 'b', 'c']);
  });

  it('reads the template back from the data', () => {
    const set = referenceSet();
    const template = templateOf(newRevision(n, set, 1, 0));
    expect(template).toEqual(JSON.parse(canonicalJson(set.spec.template)));
    expect(template).not.toHaveProperty('$patch');
  });
});
