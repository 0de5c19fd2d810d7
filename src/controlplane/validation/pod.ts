/**
 * The reference's pod rules: a pod runs at least one container, on create and on update; and an update changes
 * nothing of the spec but the few fields a running pod can change.
 */

import { deepEqual, type FieldError, forbidden, required } from '../../api/field-errors.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import { arr, clone, isObj, type Obj, obj, rootProblem, schemaShapeErrors } from './raw.ts';
import { defaultPod } from './workload-defaults.ts';

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
  const errs = [...validatePodCreate(o), ...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata)];
  if (errs.length) return errs;
  // The reference reads a stored pod through its defaults: one stored without them (seeded fixtures) is compared
  // as if it had them, so that an update is not refused for defaults that only the new object carries.
  const prior = { spec: clone(obj(obj(old)?.spec) ?? {}) };
  defaultPod(prior);
  return validatePodSpecUpdate(obj(o.spec) ?? {}, prior.spec);
}

const SPEC_UPDATE_RULE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,' +
  '`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),' +
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * What may change in a pod's spec: container and init container images, the active deadline, added tolerations
 * (an existing one only in its tolerationSeconds) and a negative grace period to 1; a node is assigned only through
 * `pods/binding`. The reference appends a diff of its internal types to the refusal; this one names the rule only.
 */
export function validatePodSpecUpdate(spec: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const oldTolerations = (arr(old.tolerations) ?? []).map((t) => ({ ...obj(t), tolerationSeconds: undefined }));
  const kept = (arr(spec.tolerations) ?? []).map((t) => ({ ...obj(t), tolerationSeconds: undefined }));
  if (!oldTolerations.every((t) => kept.some((k) => deepEqual(k, t)))) {
    errs.push(forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
  }
  const munged = clone(spec);
  for (const list of ['containers', 'initContainers']) {
    const next = arr(munged[list]) ?? [];
    const prev = arr(old[list]) ?? [];
    if (next.length !== prev.length) continue;
    next.forEach((c, i) => {
      if (isObj(c)) c.image = obj(prev[i])?.image;
    });
  }
  munged.activeDeadlineSeconds = old.activeDeadlineSeconds;
  munged.tolerations = old.tolerations;
  const grace = old.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace < 0 && munged.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = grace;
  }
  // The deprecated account field is the current one's alias, one field in the reference's internal type.
  const sameAccount = (s: Obj) => ({ ...s, serviceAccount: s.serviceAccountName || s.serviceAccount });
  if (!deepEqual(withoutEmpty(sameAccount(munged)), withoutEmpty(sameAccount(old)))) {
    errs.push(forbidden('spec', SPEC_UPDATE_RULE));
  }
  return errs;
}

/** The value with empty lists and maps left out, as the reference's semantic equality treats them as unset. */
function withoutEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(withoutEmpty) : undefined;
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    const kept = withoutEmpty(x);
    if (kept !== undefined && !(isObj(kept) && Object.keys(kept).length === 0)) out[k] = kept;
  }
  return out;
}
