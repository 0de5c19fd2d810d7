import { describe, expect, it } from 'vitest';
import { onlyGcFieldsChanged } from './admission.ts';

describe('onlyGcFieldsChanged', () => {
  const role = {
    metadata: { name: 'r', namespace: 'a', resourceVersion: '3', labels: { x: 'y' } },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  };
  const withMeta = (extra: Record<string, unknown>) => ({ ...role, metadata: { ...role.metadata, ...extra } });

  it.each([
    ['owner references', withMeta({ ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u' }] })],
    ['finalizers', withMeta({ finalizers: ['example.com/keep'] })],
    [
      'the bookkeeping of the write (managedFields, resourceVersion)',
      withMeta({ managedFields: [{}], resourceVersion: '4' }),
    ],
    [
      'nothing but key order',
      { rules: role.rules, metadata: { labels: { x: 'y' }, resourceVersion: '3', namespace: 'a', name: 'r' } },
    ],
  ])('is true for a change of %s', (_what, next) => {
    expect(onlyGcFieldsChanged(next, role)).toBe(true);
  });

  it.each([
    ['rules', { ...role, rules: [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }] }],
    ['labels', withMeta({ labels: {} })],
    ['annotations', withMeta({ annotations: { a: 'b' } })],
    ['a new top-level field', { ...role, aggregationRule: {} }],
  ])('is false for a change of %s', (_what, next) => {
    expect(onlyGcFieldsChanged(next, role)).toBe(false);
  });
});
