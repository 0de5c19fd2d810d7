import { describe, expect, it } from 'vitest';
import { group } from '../../api/naming.ts';
import {
  defaultRoleBinding,
  validateClusterRoleBindingCreate,
  validateRoleBindingCreate,
  validateRoleBindingUpdate,
} from './role-binding.ts';
import { ctx, n } from './test-helpers.ts';

const rbac = group(n, 'rbac.authorization');
const binding = (roleRef: unknown, namespace = 'team') => ({
  apiVersion: `${rbac}/v1`,
  kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
  metadata: { name: 'b', ...(namespace ? { namespace } : {}), resourceVersion: '1' },
  roleRef,
  subjects: [{ kind: 'User', apiGroup: rbac, name: 'u' }],
});
const messages = (errs: { message: string }[]) => errs.map((e) => e.message);

describe('RoleBinding and ClusterRoleBinding roleRef', () => {
  it.each([
    ['a Role', { apiGroup: rbac, kind: 'Role', name: 'r' }],
    ['a ClusterRole', { apiGroup: rbac, kind: 'ClusterRole', name: 'system:node' }],
    ['an empty apiGroup', { kind: 'Role', name: 'r' }],
  ])('a RoleBinding may reference %s', (_what, ref) => {
    expect(validateRoleBindingCreate(binding(ref), ctx)).toEqual([]);
  });

  it.each([
    [
      'another group',
      { apiGroup: 'example.com', kind: 'Role', name: 'r' },
      `roleRef.apiGroup: Unsupported value: "example.com": supported values: "${rbac}"`,
    ],
    [
      'another kind',
      { apiGroup: rbac, kind: 'User', name: 'r' },
      'roleRef.kind: Unsupported value: "User": supported values: "Role", "ClusterRole"',
    ],
    ['no name', { apiGroup: rbac, kind: 'Role' }, 'roleRef.name: Required value'],
    [
      'a name with a slash',
      { apiGroup: rbac, kind: 'Role', name: 'a/b' },
      `roleRef.name: Invalid value: "a/b": may not contain '/'`,
    ],
  ])('refuses %s', (_what, ref, message) => {
    expect(messages(validateRoleBindingCreate(binding(ref), ctx))).toEqual([message]);
  });

  it('refuses a missing roleRef, naming each field', () => {
    expect(messages(validateRoleBindingCreate(binding(undefined), ctx))).toEqual([
      'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
    ]);
  });

  it('a ClusterRoleBinding references only ClusterRoles', () => {
    expect(
      validateClusterRoleBindingCreate(binding({ apiGroup: rbac, kind: 'ClusterRole', name: 'c' }, ''), ctx),
    ).toEqual([]);
    expect(
      messages(validateClusterRoleBindingCreate(binding({ apiGroup: rbac, kind: 'Role', name: 'r' }, ''), ctx)),
    ).toEqual(['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"']);
  });

  it('roleRef cannot change on update; other fields can', () => {
    const old = binding({ apiGroup: rbac, kind: 'Role', name: 'r' });
    const relabelled = { ...old, metadata: { ...old.metadata, labels: { a: 'b' } }, subjects: [] };
    expect(validateRoleBindingUpdate(relabelled, old, ctx)).toEqual([]);
    for (const roleRef of [
      { apiGroup: rbac, kind: 'Role', name: 'other' },
      { apiGroup: rbac, kind: 'ClusterRole', name: 'r' },
      { apiGroup: '', kind: 'Role', name: 'r' },
    ]) {
      const errs = validateRoleBindingUpdate({ ...old, roleRef }, old, ctx);
      expect(errs.map((e) => e.field)).toEqual(['roleRef']);
      expect(errs[0].message).toMatch(/^roleRef: Invalid value: \{.*\}: cannot change roleRef$/);
    }
  });
});

describe('roleRef defaults', () => {
  it('fills an empty apiGroup with the RBAC group, so that a later update naming it changes nothing', () => {
    const created = binding({ kind: 'Role', name: 'r' });
    defaultRoleBinding(created, ctx);
    expect(created.roleRef).toEqual({ apiGroup: rbac, kind: 'Role', name: 'r' });
    const updated = binding({ apiGroup: rbac, kind: 'Role', name: 'r' });
    expect(validateRoleBindingUpdate(updated, created, ctx)).toEqual([]);
  });

  it('keeps a given apiGroup, even a wrong one, for validation to refuse', () => {
    const wrong = binding({ apiGroup: 'example.com', kind: 'Role', name: 'r' });
    defaultRoleBinding(wrong, ctx);
    expect((wrong.roleRef as { apiGroup: string }).apiGroup).toBe('example.com');
  });
});
