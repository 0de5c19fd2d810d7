import { describe, expect, it } from 'vitest';
import type { StatefulSet } from '../../src/api/types/apps.ts';
import type { Pod } from '../../src/api/types/core.ts';
import { isMemberOf, isUnavailable, parseOrdinal, storageMatches } from './pods.ts';

describe('parseOrdinal (the reference pattern `(.*)-([0-9]+)$`)', () => {
  it.each([
    ['web-0', { parent: 'web', ordinal: 0 }],
    ['web-12', { parent: 'web', ordinal: 12 }],
    ['web-1-2', { parent: 'web-1', ordinal: 2 }],
    ['web-01', { parent: 'web', ordinal: 1 }],
    ['-3', { parent: '', ordinal: 3 }],
    ['web-2147483647', { parent: 'web', ordinal: 2147483647 }],
    ['web-2147483648', { parent: '', ordinal: -1 }],
    ['web', { parent: '', ordinal: -1 }],
    ['web-', { parent: '', ordinal: -1 }],
    ['web-1a', { parent: '', ordinal: -1 }],
    ['web-a', { parent: '', ordinal: -1 }],
    ['web-1-a', { parent: '', ordinal: -1 }],
    ['', { parent: '', ordinal: -1 }],
  ])('%s', (name, parts) => {
    expect(parseOrdinal(name)).toEqual(parts);
  });
});

describe('isMemberOf: a pod named <set>-<ordinal>', () => {
  const set = { metadata: { name: 'web' } } as StatefulSet;
  it.each([
    ['web-0', true],
    ['web-999', true],
    ['web-1-2', false],
    ['webx-0', false],
    ['we-0', false],
    ['web-', false],
    ['web-a', false],
    ['xweb-0', false],
    ['web', false],
  ])('%s: %s', (name, member) => {
    expect(isMemberOf(set, { metadata: { name } } as Pod)).toBe(member);
  });
});

describe('storageMatches', () => {
  const set = {
    metadata: { name: 'web', namespace: 'ns' },
    spec: { volumeClaimTemplates: [{ metadata: { name: 'data' } }, { metadata: { name: 'logs' } }] },
  } as unknown as StatefulSet;
  const pod = (volumes: { name: string; claimName: string }[]) =>
    ({
      metadata: { name: 'web-3' },
      spec: { volumes: volumes.map((v) => ({ name: v.name, persistentVolumeClaim: { claimName: v.claimName } })) },
    }) as unknown as Pod;

  it.each([
    [
      'every template has its claim',
      [
        ['data', 'data-web-3'],
        ['logs', 'logs-web-3'],
      ],
      true,
    ],
    ['a template without a volume', [['data', 'data-web-3']], false],
    [
      "another ordinal's claim",
      [
        ['data', 'data-web-3'],
        ['logs', 'logs-web-4'],
      ],
      false,
    ],
    [
      'the last volume of a name counts',
      [
        ['data', 'other'],
        ['data', 'data-web-3'],
        ['logs', 'logs-web-3'],
      ],
      true,
    ],
    [
      '...both ways',
      [
        ['data', 'data-web-3'],
        ['data', 'other'],
        ['logs', 'logs-web-3'],
      ],
      false,
    ],
  ])('%s', (_, volumes, expected) => {
    const given = (volumes as string[][]).map(([name, claimName]) => ({ name: name!, claimName: claimName! }));
    expect(storageMatches(set, pod(given), 3)).toBe(expected);
  });

  it('holds for a set without claim templates', () => {
    const bare = { ...set, spec: {} } as StatefulSet;
    expect(storageMatches(bare, pod([]), 0)).toBe(true);
  });
});

describe('isUnavailable: not running and Ready, terminating, or Ready for less than minReadySeconds', () => {
  const NOW = Date.parse('2024-01-01T00:10:00Z');
  const readyPod = (phase: string, ready: string, since?: string, deleting = false) =>
    ({
      metadata: { name: 'web-0', ...(deleting ? { deletionTimestamp: '2024-01-01T00:09:00Z' } : {}) },
      status: {
        phase,
        conditions: [{ type: 'Ready', status: ready, ...(since ? { lastTransitionTime: since } : {}) }],
      },
    }) as unknown as Pod;
  it.each([
    ['Ready', readyPod('Running', 'True', '2024-01-01T00:09:00Z'), 0, false],
    ['Ready, terminating', readyPod('Running', 'True', '2024-01-01T00:09:00Z', true), 0, true],
    ['not Ready', readyPod('Running', 'False', '2024-01-01T00:09:00Z'), 0, true],
    ['Pending', readyPod('Pending', 'True', '2024-01-01T00:09:00Z'), 0, true],
    ['no status', { metadata: { name: 'web-0' } } as Pod, 0, true],
    ['Ready 60 s, 30 s asked', readyPod('Running', 'True', '2024-01-01T00:09:00Z'), 30, false],
    ['Ready 60 s, 60 s asked', readyPod('Running', 'True', '2024-01-01T00:09:00Z'), 60, true],
    ['Ready 60 s, 90 s asked', readyPod('Running', 'True', '2024-01-01T00:09:00Z'), 90, true],
    ['Ready since when unknown, 1 s asked', readyPod('Running', 'True'), 1, true],
    ['Ready since a time that does not parse', readyPod('Running', 'True', 'yesterday'), 1, true],
    ['Ready since when unknown, none asked', readyPod('Running', 'True'), 0, false],
  ])('%s', (_, pod, minReadySeconds, unavailable) => {
    expect(isUnavailable(pod, minReadySeconds, NOW)).toBe(unavailable);
  });
});
