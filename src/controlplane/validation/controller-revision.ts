/**
 * ControllerRevision (`apps/v1`, namespaced): data is required; revision is non-negative; after creation
 * data may not change. The revision number may, as in the reference: a StatefulSet rolled back to an
 * older template renumbers that template's revision as the newest.
 */

import { type FieldError, required, validateImmutableField } from '../../api/field-errors.ts';
import {
  nameIsDNSSubdomain,
  validateNonnegativeField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.ts';
import type { ValidationContext } from './context.ts';
import { absent, checkShape, int, isObj, type Obj, obj, rootProblem, topLevel } from './raw.ts';

const SHAPE = topLevel({ data: 'any', revision: 'int64' });

export function validateControllerRevisionCreate(o: unknown, _ctx?: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const rev = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(rev.metadata, true, nameIsDNSSubdomain));
  if (absent(rev.data)) errs.push(required('data', 'data is mandatory'));
  errs.push(...validateNonnegativeField(int(rev.revision), 'revision'));
  return errs;
}

export function validateControllerRevisionUpdate(o: unknown, old: unknown, ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const prev = obj(old) ?? {};
  const errs = validateObjectMetaUpdate(o.metadata, prev.metadata);
  errs.push(...validateControllerRevisionCreate(o, ctx));
  errs.push(...validateImmutableField(o.data ?? null, prev.data ?? null, 'data'));
  return errs;
}
