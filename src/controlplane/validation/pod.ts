/** The first of the reference's pod rules: a pod runs at least one container, on create and on update. */
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import { type FieldError, required } from './field-errors.ts';
import { arr, isObj, type Obj, obj, rootProblem, schemaShapeErrors } from './raw.ts';

export function validatePodCreate(o: unknown): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const pod = o as Obj;
  const errs = schemaShapeErrors(o, 'Pod');
  if (errs.length) return errs;
  errs.push(...validateObjectMeta(pod.metadata, true, nameIsDNSSubdomain));
  if ((arr(obj(pod.spec)?.containers) ?? []).length === 0) errs.push(required('spec.containers'));
  return errs;
}

export function validatePodUpdate(o: unknown, old: unknown): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  return [...validatePodCreate(o), ...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata)];
}
