import { describe, expect, it } from 'vitest';
import { needsDefaultServiceAccount } from './namespaces.ts';
import type { Namespace } from './types/core.ts';

const ns = (phase?: 'Active' | 'Terminating', deleting = false): Namespace => ({
  metadata: { name: 'team', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  status: phase ? { phase } : {},
});

describe('needsDefaultServiceAccount', () => {
  it.each([
    ['an Active namespace without one', ns('Active'), false, true],
    ['an Active namespace that has one', ns('Active'), true, false],
    ['a Terminating namespace', ns('Terminating'), false, false],
    ['a namespace being deleted, not yet Terminating', ns('Active', true), false, false],
    ['a namespace with no phase yet', ns(), false, false],
    ['a namespace that is gone', undefined, false, false],
  ])('%s', (_what, namespace, has, want) => {
    expect(needsDefaultServiceAccount(namespace, has)).toBe(want);
  });
});
