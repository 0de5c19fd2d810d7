/** Table tests of event routing (index values, pod → PDBs) and of the stale DisruptionTarget check (§1.1, §1.9). */
import { describe, expect, it } from 'vitest';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import { Store } from '../../src/cache/store.ts';
import {
  candidateIndexValues,
  clearedDisruptionTarget,
  PDB_SELECTOR_INDEX,
  pdbIndexValues,
  pdbsForPod,
  podIndexValues,
  staleDisruptionWait,
} from './routing.ts';
import { at, NOW, pdb, pod } from './testing.ts';

const MIN = 60_000;

function named(name: string, selector: unknown): PodDisruptionBudget {
  const p = pdb({ minAvailable: 1 });
  return { ...p, metadata: { ...p.metadata, name }, spec: { ...p.spec, selector: selector as never } };
}

describe('index values', () => {
  it('a pod is filed under each of its labels', () => {
    expect(podIndexValues(pod('a', { labels: { app: 'web', tier: 'front' } }))).toEqual([
      'ns/app=web',
      'ns/tier=front',
    ]);
  });

  it.each([
    ['matchLabels pins its first key', { matchLabels: { tier: 'front', app: 'web' } }, ['ns/app=web']],
    [
      'a pinned key wins over In',
      { matchLabels: { z: '1' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['x'] }] },
      ['ns/z=1'],
    ],
    [
      'In files under each value',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
      ['ns/app=web', 'ns/app=db'],
    ],
    ['Exists only: namespace wildcard', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, ['ns/*']],
    ['{}: namespace wildcard', {}, ['ns/*']],
    ['null: nowhere (matches nothing)', null, []],
    ['invalid: nowhere', { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] }, []],
  ])('%s', (_name, selector, values) => {
    expect(pdbIndexValues(named('b', selector))).toEqual(values);
  });

  it('candidate lookup: wildcard PDBs read the namespace, others their values', () => {
    expect(candidateIndexValues(named('b', {}))).toBe('namespace');
    expect(candidateIndexValues(named('b', { matchLabels: { app: 'web' } }))).toEqual(['ns/app=web']);
    expect(candidateIndexValues(named('b', null))).toEqual([]);
  });
});

describe('pod → PDBs', () => {
  const budgets = [
    named('by-app', { matchLabels: { app: 'web' } }),
    named('by-tier', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] }),
    named('all', {}),
    named('exists', { matchExpressions: [{ key: 'canary', operator: 'Exists' }] }),
    named('none', null),
    named('broken', { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] }),
    named('both', { matchLabels: { app: 'web', tier: 'back' } }),
  ];
  const store = new Store<PodDisruptionBudget>({ [PDB_SELECTOR_INDEX]: pdbIndexValues });
  for (const b of budgets) store.add(b);
  const byIndex = (v: string) => store.byIndex(PDB_SELECTOR_INDEX, v);

  it.each([
    ['app=web, tier=front', { app: 'web', tier: 'front' }, ['all', 'by-app', 'by-tier']],
    ['app=web, tier=back', { app: 'web', tier: 'back' }, ['all', 'both', 'by-app', 'by-tier']],
    ['canary', { canary: 'yes' }, ['all', 'exists']],
    ['no labels', {}, ['all']],
  ])('%s', (_name, labels, names) => {
    expect(pdbsForPod(pod('p', { labels }), byIndex).map((b) => b.metadata.name)).toEqual(names);
  });

  it('a pod of another namespace matches none of them', () => {
    expect(pdbsForPod(pod('p', { labels: { app: 'web' }, namespace: 'other' }), byIndex)).toEqual([]);
  });
});

describe('stale DisruptionTarget (§1.9)', () => {
  const target = (status: 'True' | 'False', reason: string, since: number) => [
    { type: 'DisruptionTarget', status, reason, lastTransitionTime: at(since) },
  ];
  it.each([
    ['no condition', pod('p'), undefined],
    [
      'True 2m+1s ago → stale now',
      pod('p', { conditions: target('True', 'EvictionByEvictionAPI', -2 * MIN - 1000) }),
      0,
    ],
    [
      'True 2m-1s ago → in 1 s',
      pod('p', { conditions: target('True', 'EvictionByEvictionAPI', -2 * MIN + 1000) }),
      1000,
    ],
    ['True 30 s ago → in 90 s', pod('p', { conditions: target('True', 'PreemptionByScheduler', -30_000) }), 90_000],
    ['False → never', pod('p', { conditions: target('False', 'EvictionByEvictionAPI', -5 * MIN) }), undefined],
    [
      'TerminationByKubelet → never',
      pod('p', { conditions: target('True', 'TerminationByKubelet', -5 * MIN) }),
      undefined,
    ],
    [
      'terminating pod → never',
      pod('p', { terminating: true, conditions: target('True', 'EvictionByEvictionAPI', -5 * MIN) }),
      undefined,
    ],
    [
      'Succeeded pod → never',
      pod('p', { phase: 'Succeeded', conditions: target('True', 'EvictionByEvictionAPI', -5 * MIN) }),
      undefined,
    ],
    [
      'Failed pod → never',
      pod('p', { phase: 'Failed', conditions: target('True', 'EvictionByEvictionAPI', -5 * MIN) }),
      undefined,
    ],
  ])('%s', (_name, p, wait) => {
    expect(staleDisruptionWait(p, NOW)).toBe(wait);
  });

  it('the cleared condition is False with reason and message gone, other conditions kept', () => {
    const p = pod('p', { ready: true, conditions: target('True', 'EvictionByEvictionAPI', -5 * MIN) });
    expect(clearedDisruptionTarget(p, at(0)).conditions).toEqual([
      { type: 'DisruptionTarget', status: 'False', lastTransitionTime: at(0) },
      { type: 'Ready', status: 'True' },
    ]);
  });
});
