/**
 * RuntimeClass (`node.<suffix>/v1`, cluster-scoped).
 *
 * handler: a DNS-1123 label, immutable. overhead.podFixed: valid resource names and non-negative quantities.
 * scheduling.nodeSelector: valid labels; scheduling.tolerations: valid and unique.
 */

import {
  child,
  duplicate,
  type FieldError,
  index,
  invalid,
  notSupported,
  validateImmutableField,
} from '../../api/field-errors.ts';
import { labelValueErrors } from '../../api/labels.ts';
import {
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validateLabelName,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.ts';
import type { ValidationContext } from './context.ts';
import { arr, checkShape, int, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';
import { validateContainerResourceLimits } from './resource-names.ts';

const TOLERATION = {
  fields: { key: 'string', operator: 'string', value: 'string', effect: 'string', tolerationSeconds: 'int64' },
} as const;

const SHAPE = topLevel({
  handler: 'string',
  overhead: { fields: { podFixed: { values: 'quantity' } } },
  scheduling: { fields: { nodeSelector: { values: 'string' }, tolerations: { items: TOLERATION } } },
});

const TAINT_EFFECTS = ['NoExecute', 'NoSchedule', 'PreferNoSchedule'];

/** Tolerations as the reference checks them for pods, plus uniqueness of (key, operator, value, effect). */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arr(tolerations)?.forEach((raw, i) => {
    const t = obj(raw);
    if (!t) return;
    const p = index(path, i);
    const k = str(t.key) ?? '';
    const operator = str(t.operator) ?? '';
    const value = str(t.value) ?? '';
    const effect = str(t.effect) ?? '';
    if (k) errs.push(...validateLabelName(k, child(p, 'key')));
    if (!k && operator !== 'Exists') {
      errs.push(
        invalid(
          child(p, 'operator'),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (int(t.tolerationSeconds) !== undefined && effect !== 'NoExecute') {
      errs.push(invalid(child(p, 'effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === 'Equal' || operator === '') {
      const msgs = labelValueErrors(value);
      if (msgs.length) errs.push(invalid(child(p, 'operator'), value, msgs.join(';')));
    } else if (operator === 'Exists') {
      if (value) errs.push(invalid(child(p, 'operator'), t, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(notSupported(child(p, 'operator'), operator, ['Equal', 'Exists']));
    }
    if (effect && !TAINT_EFFECTS.includes(effect)) errs.push(notSupported(child(p, 'effect'), effect, TAINT_EFFECTS));
    const listKey = JSON.stringify([k, operator, value, effect]);
    if (seen.has(listKey)) errs.push(duplicate(p, t));
    seen.add(listKey);
  });
  return errs;
}

export function validateRuntimeClassCreate(o: unknown, ctx: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const rc = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(rc.metadata, false, nameIsDNSSubdomain));
  const handler = rc.handler;
  if (typeof handler === 'string' || handler === undefined || handler === null) {
    const h = str(handler) ?? '';
    for (const msg of nameIsDNSLabel(h, false)) errs.push(invalid('handler', h, msg));
  }
  const overhead = obj(rc.overhead);
  if (overhead) errs.push(...validateContainerResourceLimits(overhead.podFixed, 'overhead', ctx.naming));
  const scheduling = obj(rc.scheduling);
  if (scheduling) {
    errs.push(...validateLabels(scheduling.nodeSelector, 'scheduling.nodeSelector'));
    errs.push(...validateTolerations(scheduling.tolerations, 'scheduling.tolerations'));
  }
  return errs;
}

export function validateRuntimeClassUpdate(o: unknown, old: unknown, ctx: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = validateRuntimeClassCreate(o, ctx);
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  errs.push(...validateImmutableField(str(o.handler) ?? '', str(obj(old)?.handler) ?? '', 'handler'));
  return errs;
}
