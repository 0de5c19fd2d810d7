import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core.ts';
import { EXPECTATION_TTL_MS, PodExpectations } from './expectations.ts';

const pod = (name: string, uid: string, terminating = false): Pod => ({
  metadata: { name, uid, ...(terminating ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
});

describe('pod expectations', () => {
  let now = 0;
  const cache = new Map<string, Pod>();
  const lookup = (name: string) => cache.get(name);

  it('a created pod is pending until the cache shows it', () => {
    const e = new PodExpectations(() => now);
    e.expectCreate('ns/web', 'web-0');
    expect(e.pending('ns/web', lookup)).toBe(true);
    expect(e.pending('ns/other', lookup)).toBe(false);
    cache.set('web-0', pod('web-0', 'u0'));
    expect(e.pending('ns/web', lookup)).toBe(false);
  });

  it.each([
    ['added, then deleted by someone else before the next look', true],
    ['never added (its create failed)', false],
  ])('a create is met once the cache added that name or the create failed: %s', (_, addedThenDeleted) => {
    const e = new PodExpectations(() => now);
    e.expectCreate('ns/web', 'web-5');
    e.expectCreate('ns/web', 'web-6');
    if (addedThenDeleted) cache.set('web-5', pod('web-5', 'u5'));
    e.createObserved('ns/web', 'web-5');
    cache.delete('web-5');
    expect(e.pending('ns/web', lookup), 'web-6 still awaited').toBe(true);
    e.createObserved('ns/web', 'web-6');
    expect(e.pending('ns/web', lookup)).toBe(false);
  });

  it('a deleted pod is pending while the cache still shows it running with that UID', () => {
    const e = new PodExpectations(() => now);
    cache.set('web-1', pod('web-1', 'u1'));
    e.expectDelete('ns/web', 'web-1', 'u1');
    expect(e.pending('ns/web', lookup)).toBe(true);
    cache.set('web-1', pod('web-1', 'u1', true));
    expect(e.pending('ns/web', lookup)).toBe(false);
    e.expectDelete('ns/web', 'web-1', 'u1');
    cache.set('web-1', pod('web-1', 'u2'));
    expect(e.pending('ns/web', lookup), 'replaced by a new pod of that name').toBe(false);
  });

  it('an expectation the cache never meets expires; forget drops the set', () => {
    const e = new PodExpectations(() => now);
    e.expectCreate('ns/web', 'never');
    now += EXPECTATION_TTL_MS + 1;
    expect(e.pending('ns/web', lookup)).toBe(false);
    e.expectCreate('ns/web', 'never');
    e.forget('ns/web');
    expect(e.pending('ns/web', lookup)).toBe(false);
  });
});
