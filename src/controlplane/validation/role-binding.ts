/**
 * RoleBinding (namespaced) and ClusterRoleBinding (`rbac.authorization.<suffix>/v1`).
 *
 * roleRef: apiGroup empty or the RBAC group; kind `Role` or `ClusterRole` (`ClusterRole` only for a
 * ClusterRoleBinding); name required, usable as a path segment. roleRef cannot change on update: a binding
 * is judged (and authorized) for the role it references when written, so pointing it elsewhere needs a new one.
 */

import { type FieldError, invalid, notSupported, required } from '../../api/field-errors.ts';
import { group } from '../../api/naming.ts';
import { isValidPathSegmentName, nameIsPathSegment, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import type { ValidationContext } from './context.ts';
import { obj, schemaShapeErrors, str } from './raw.ts';

type Scope = 'RoleBinding' | 'ClusterRoleBinding';

const KINDS: Record<Scope, string[]> = { RoleBinding: ['Role', 'ClusterRole'], ClusterRoleBinding: ['ClusterRole'] };

function validateRoleRef(raw: unknown, scope: Scope, ctx: ValidationContext): FieldError[] {
  const ref = obj(raw) ?? {};
  const errs: FieldError[] = [];
  const rbac = group(ctx.naming, 'rbac.authorization');
  const apiGroup = str(ref.apiGroup) ?? '';
  if (apiGroup && apiGroup !== rbac) errs.push(notSupported('roleRef.apiGroup', apiGroup, [rbac]));
  const kind = str(ref.kind) ?? '';
  if (!KINDS[scope].includes(kind)) errs.push(notSupported('roleRef.kind', kind, KINDS[scope]));
  const name = str(ref.name) ?? '';
  if (!name) errs.push(required('roleRef.name'));
  for (const msg of name ? isValidPathSegmentName(name) : []) errs.push(invalid('roleRef.name', name, msg));
  return errs;
}

function validateCreate(scope: Scope) {
  return (raw: unknown, ctx: ValidationContext): FieldError[] => {
    const o = obj(raw) ?? {};
    const apiVersion = `${group(ctx.naming, 'rbac.authorization')}/v1`;
    return [
      ...schemaShapeErrors(raw, scope, apiVersion),
      ...validateObjectMeta(o.metadata, scope === 'RoleBinding', nameIsPathSegment),
      ...validateRoleRef(o.roleRef, scope, ctx),
    ];
  };
}

function validateUpdate(scope: Scope) {
  return (raw: unknown, oldRaw: unknown, ctx: ValidationContext): FieldError[] => {
    const o = obj(raw) ?? {};
    const ref = obj(o.roleRef) ?? {};
    const old = obj(obj(oldRaw)?.roleRef) ?? {};
    const apiVersion = `${group(ctx.naming, 'rbac.authorization')}/v1`;
    const errs = [
      ...schemaShapeErrors(raw, scope, apiVersion),
      ...validateObjectMetaUpdate(o.metadata, obj(oldRaw)?.metadata),
      ...validateRoleRef(o.roleRef, scope, ctx),
    ];
    if (['apiGroup', 'kind', 'name'].some((f) => (str(ref[f]) ?? '') !== (str(old[f]) ?? ''))) {
      errs.push(invalid('roleRef', o.roleRef, 'cannot change roleRef'));
    }
    return errs;
  };
}

export const validateRoleBindingCreate = validateCreate('RoleBinding');
export const validateRoleBindingUpdate = validateUpdate('RoleBinding');
export const validateClusterRoleBindingCreate = validateCreate('ClusterRoleBinding');
export const validateClusterRoleBindingUpdate = validateUpdate('ClusterRoleBinding');

/** As the reference's v1 defaults: a roleRef without an apiGroup names the RBAC group (and stores it). */
export function defaultRoleBinding(raw: unknown, ctx: ValidationContext): void {
  const ref = obj(obj(raw)?.roleRef);
  if (ref && !str(ref.apiGroup)) ref.apiGroup = group(ctx.naming, 'rbac.authorization');
}
