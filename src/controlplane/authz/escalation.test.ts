import { describe, expect, it } from 'vitest';
import { escalationMessage, onlyGcFieldsChange } from './escalation.ts';

describe('onlyGcFieldsChange', () => {
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
    expect(onlyGcFieldsChange(next, role)).toBe(true);
  });

  it.each([
    ['rules', { ...role, rules: [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }] }],
    ['labels', withMeta({ labels: {} })],
    ['annotations', withMeta({ annotations: { a: 'b' } })],
    ['a new top-level field', { ...role, aggregationRule: {} }],
  ])('is false for a change of %s', (_what, next) => {
    expect(onlyGcFieldsChange(next, role)).toBe(false);
  });
});

describe('escalationMessage', () => {
  it("names the user and groups as the reference's %q does, then the missing rules", () => {
    expect(
      escalationMessage({ username: 'jane', groups: ['dev', 'system:authenticated'] }, '{Verbs:["get"]}', []),
    ).toBe(
      'user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{Verbs:["get"]}',
    );
  });

  it('appends what could not be resolved', () => {
    expect(escalationMessage({ username: 'u', groups: [] }, 'x', ['role "a" not found', 'role "b" not found'])).toBe(
      'user "u" (groups=[]) is attempting to grant RBAC permissions not currently held:\nx; resolution errors: [role "a" not found role "b" not found]',
    );
  });
});
