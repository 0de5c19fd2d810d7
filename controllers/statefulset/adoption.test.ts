import { describe, expect, it } from 'vitest';
import { selectorFromLabelSelector } from '../../src/api/labels.ts';
import type { Pod } from '../../src/api/types/core.ts';
import { claimPods, claimRevisions } from './adoption.ts';
import { at, revision, sts } from './testing.ts';

const set = sts();
const selector = selectorFromLabelSelector(set.spec.selector);
const ours = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'web-uid', controller: true };
const theirs = { ...ours, name: 'other', uid: 'other-uid' };

function pod(
  name: string,
  labels: Record<string, string> = { app: 'web' },
  owner?: typeof ours,
  terminating = false,
): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels,
      ...(owner ? { ownerReferences: [owner] } : {}),
      ...(terminating ? { deletionTimestamp: at(0) } : {}),
    },
  };
}

describe('pod adoption and release (the reference TestGetPodsForStatefulSetAdopt/Release cases)', () => {
  it.each<[string, Pod, 'owned' | 'adopt' | 'release' | 'foreign' | 'ignored']>([
    ['owned and matching', pod('web-0', undefined, ours), 'owned'],
    ['orphan with matching labels and name is adopted', pod('web-2'), 'adopt'],
    ['orphan with other labels is not adopted, but holds the name', pod('web-3', { app: 'x' }), 'foreign'],
    ['orphan with another name is ignored', pod('xweb-4'), 'ignored'],
    ['a terminating orphan is not adopted', pod('web-5', undefined, undefined, true), 'foreign'],
    ['owned but renamed is released', pod('xweb-2', undefined, ours), 'release'],
    ['owned but relabelled is released', pod('web-1', {}, ours), 'release'],
    ['owned by another set, with one of our names', pod('web-6', undefined, theirs), 'foreign'],
    ['owned by another set, another name', pod('other-0', undefined, theirs), 'ignored'],
  ])('%s', (_what, p, want) => {
    const c = claimPods(set, selector, [p]);
    const where =
      (['adopt', 'release', 'foreign'] as const).find((k) => c[k].includes(p)) ??
      (c.owned.includes(p) ? 'owned' : 'ignored');
    expect(where).toBe(want);
    if (want === 'adopt') expect(c.owned).toContain(p);
  });

  it('a set being deleted neither adopts nor releases', () => {
    const deleting = sts({ deleting: true });
    const c = claimPods(deleting, selector, [pod('web-2'), pod('xweb-2', undefined, ours)]);
    expect(c.adopt).toEqual([]);
    expect(c.release).toEqual([]);
  });
});

describe('revision adoption', () => {
  it('adopts orphan revisions that match the selector; names held by others are taken', () => {
    const orphan = { ...revision(set), metadata: { ...revision(set).metadata, ownerReferences: [] } };
    const other = {
      ...revision(sts({ image: 'x' })),
      metadata: { ...revision(sts({ image: 'x' })).metadata, ownerReferences: [theirs] },
    };
    const c = claimRevisions(set, selector, [orphan, other]);
    expect(c.adopt).toEqual([orphan]);
    expect(c.foreign).toEqual([other]);
  });
});
