/**
 * The reference's rules of a Role's or ClusterRole's policy rules: verbs always; a rule is about resources (an API
 * group and a resource at least) or about non-resource URLs (cluster roles only), never both.
 */

import { type FieldError, invalid, required } from '../../api/field-errors.ts';
import { nameIsPathSegment, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import { arr, isObj, type Obj, obj, rootProblem, schemaShapeErrors } from './raw.ts';

const count = (v: unknown) => arr(v)?.length ?? 0;

export function validatePolicyRule(rule: Obj, path: string, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (count(rule.verbs) === 0) errs.push(required(`${path}.verbs`, 'verbs must contain at least one value'));
  if (count(rule.nonResourceURLs) > 0) {
    const urls = `${path}.nonResourceURLs`;
    if (namespaced)
      errs.push(invalid(urls, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    if (count(rule.apiGroups) > 0 || count(rule.resources) > 0) {
      errs.push(
        invalid(urls, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'),
      );
    }
    return errs;
  }
  if (count(rule.apiGroups) === 0) {
    errs.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  }
  if (count(rule.resources) === 0) {
    errs.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
  }
  return errs;
}

function validateRole(o: unknown, kind: 'Role' | 'ClusterRole'): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const role = o as Obj;
  const namespaced = kind === 'Role';
  const errs = schemaShapeErrors(o, kind);
  if (errs.length) return errs;
  errs.push(...validateObjectMeta(role.metadata, namespaced, nameIsPathSegment));
  (arr(role.rules) ?? []).forEach((rule, i) => {
    errs.push(...validatePolicyRule(obj(rule) ?? {}, `rules[${i}]`, namespaced));
  });
  return errs;
}

export const validateRoleCreate = (o: unknown) => validateRole(o, 'Role');
export const validateClusterRoleCreate = (o: unknown) => validateRole(o, 'ClusterRole');

export function validateRoleUpdate(o: unknown, old: unknown): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const kind = o.kind === 'Role' ? 'Role' : 'ClusterRole';
  return [...validateRole(o, kind), ...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata)];
}
