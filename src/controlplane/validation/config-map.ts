/** The reference's ConfigMap rules: its keys are config keys, unique across `data` and `binaryData`, 1 MiB in all. */

import { type FieldError, forbidden, invalid, tooLong } from '../../api/field-errors.ts';
import { isConfigMapKey, nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import { isObj, type Obj, obj, rootProblem, schemaShapeErrors } from './raw.ts';

/** The most a ConfigMap's keys and values may hold together, in bytes. */
export const MAX_CONFIG_MAP_BYTES = 1024 * 1024;

export function validateConfigMapCreate(o: unknown): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const cm = o as Obj;
  const errs = schemaShapeErrors(o, 'ConfigMap');
  if (errs.length) return errs;
  errs.push(...validateObjectMeta(cm.metadata, true, nameIsDNSSubdomain));
  const data = obj(cm.data) ?? {};
  const binaryData = obj(cm.binaryData) ?? {};
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const msg of isConfigMapKey(key)) errs.push(invalid(`data[${key}]`, key, msg));
    if (Object.hasOwn(binaryData, key)) {
      errs.push(invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    }
    size += key.length + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  for (const [key, value] of Object.entries(binaryData)) {
    for (const msg of isConfigMapKey(key)) errs.push(invalid(`binaryData[${key}]`, key, msg));
    size += key.length + (typeof value === 'string' ? Buffer.from(value, 'base64').length : 0);
  }
  if (size > MAX_CONFIG_MAP_BYTES) errs.push(tooLong('[]', MAX_CONFIG_MAP_BYTES)); // the reference's root path prints so
  return errs;
}

/** An immutable ConfigMap keeps its data and stays immutable. */
export function validateConfigMapUpdate(o: unknown, old: unknown): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = validateConfigMapCreate(o);
  const before = obj(old);
  errs.push(...validateObjectMetaUpdate(o.metadata, before?.metadata));
  if (before?.immutable === true) {
    if (o.immutable !== true) errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
    const same = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
    if (!same(o.data, before.data)) errs.push(forbidden('data', 'field is immutable when `immutable` is set'));
    if (!same(o.binaryData, before.binaryData)) {
      errs.push(forbidden('binaryData', 'field is immutable when `immutable` is set'));
    }
  }
  return errs;
}
