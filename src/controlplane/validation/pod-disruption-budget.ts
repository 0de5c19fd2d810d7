/**
 * PodDisruptionBudget (`policy/v1`, namespaced).
 *
 * minAvailable and maxUnavailable are mutually exclusive, each a non-negative integer or a percentage of at
 * most 100%; the selector is a valid label selector; unhealthyPodEvictionPolicy is `IfHealthyBudget` or
 * `AlwaysAllow` (unset means IfHealthyBudget: nothing is defaulted). Status: valid conditions and
 * non-negative counters.
 */

import { type FieldError, invalid, notSupported } from '../../api/field-errors.ts';
import { labelValueErrors } from '../../api/labels.ts';
import {
  nameIsPathSegment,
  validateConditions,
  validateLabelSelector,
  validateNonnegativeField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.ts';
import type { ValidationContext } from './context.ts';
import { isNotMoreThan100Percent, validatePositiveIntOrPercent } from './int-or-percent.ts';
import {
  absent,
  arr,
  CONDITION,
  checkShape,
  int,
  isObj,
  LABEL_SELECTOR,
  type Obj,
  obj,
  rootProblem,
  str,
  topLevel,
} from './raw.ts';

export const UNHEALTHY_POD_EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

const SHAPE = topLevel({
  spec: {
    fields: {
      minAvailable: 'intOrString',
      maxUnavailable: 'intOrString',
      selector: LABEL_SELECTOR,
      unhealthyPodEvictionPolicy: 'string',
    },
  },
  status: {
    fields: {
      observedGeneration: 'int64',
      disruptedPods: { values: 'time' },
      disruptionsAllowed: 'int32',
      currentHealthy: 'int32',
      desiredHealthy: 'int32',
      expectedPods: 'int32',
      conditions: { items: CONDITION },
    },
  },
});

function validateSpec(spec: Obj, allowInvalidLabelValueInSelector: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const hasMin = !absent(spec.minAvailable);
  const hasMax = !absent(spec.maxUnavailable);
  if (hasMin && hasMax) errs.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  for (const f of ['minAvailable', 'maxUnavailable']) {
    if (absent(spec[f])) continue;
    errs.push(...validatePositiveIntOrPercent(spec[f], `spec.${f}`));
    errs.push(...isNotMoreThan100Percent(spec[f], `spec.${f}`));
  }
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector', { allowInvalidLabelValueInSelector }));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (typeof policy === 'string' && !UNHEALTHY_POD_EVICTION_POLICIES.includes(policy)) {
    errs.push(notSupported('spec.unhealthyPodEvictionPolicy', policy, UNHEALTHY_POD_EVICTION_POLICIES));
  }
  return errs;
}

function selectorHasInvalidLabelValue(selector: unknown): boolean {
  return (arr(obj(selector)?.matchExpressions) ?? []).some((e) =>
    (arr(obj(e)?.values) ?? []).some((v) => typeof v === 'string' && labelValueErrors(v).length > 0),
  );
}

function validate(o: unknown, allowInvalidLabelValueInSelector: boolean): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const pdb = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(pdb.metadata, true, nameIsPathSegment));
  errs.push(...validateSpec(obj(pdb.spec) ?? {}, allowInvalidLabelValueInSelector));
  return errs;
}

export function validatePodDisruptionBudgetCreate(o: unknown, _ctx?: ValidationContext): FieldError[] {
  return validate(o, false);
}

export function validatePodDisruptionBudgetUpdate(o: unknown, old: unknown, _ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  // Selectors stored before label values were checked stay acceptable.
  const oldSelector = obj(obj(old)?.spec)?.selector;
  const errs = validate(o, selectorHasInvalidLabelValue(oldSelector));
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  return errs;
}

export function validatePodDisruptionBudgetStatusUpdate(
  o: unknown,
  old: unknown,
  _ctx?: ValidationContext,
): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  const status = obj(o.status) ?? {};
  errs.push(...validateConditions(status.conditions, 'status.conditions'));
  for (const f of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) {
    errs.push(...validateNonnegativeField(int(status[f]), `status.${f}`));
  }
  return errs;
}

/** Nothing is defaulted: an unset unhealthyPodEvictionPolicy means IfHealthyBudget. */
export function effectiveUnhealthyPodEvictionPolicy(o: unknown): string {
  return str(obj(obj(o)?.spec)?.unhealthyPodEvictionPolicy) ?? 'IfHealthyBudget';
}
