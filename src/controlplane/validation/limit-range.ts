/**
 * LimitRange (`v1`, namespaced): validation and the defaulting of `Container` items.
 *
 * Items: type a standard limit type (`Pod`, `Container`, `PersistentVolumeClaim`) or a qualified name with a
 * prefix, no duplicate types; resource names valid for the type; `Pod` items without default or
 * defaultRequest; `PersistentVolumeClaim` items with a min or max for storage; per resource
 * min <= defaultRequest <= default <= max and min <= max; maxLimitRequestRatio >= 1 and <= max/min; for
 * resources that cannot be overcommitted, default = defaultRequest.
 */

import { child, duplicate, type FieldError, forbidden, index, invalid, key, required } from '../../api/field-errors.ts';
import { MAX_MILLI_VALUE, parseQuantityValue, type Quantity } from '../../api/quantity.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName } from './common.ts';
import type { ValidationContext } from './context.ts';
import { absent, arr, checkShape, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';
import {
  isOvercommitAllowed,
  quantities,
  STANDARD_LIMIT_TYPES,
  validateContainerResourceName,
  validateResourceName,
} from './resource-names.ts';

const RESOURCE_LIST = { values: 'quantity' } as const;
const SHAPE = topLevel({
  spec: {
    fields: {
      limits: {
        items: {
          fields: {
            type: 'string',
            max: RESOURCE_LIST,
            min: RESOURCE_LIST,
            default: RESOURCE_LIST,
            defaultRequest: RESOURCE_LIST,
            maxLimitRequestRatio: RESOURCE_LIST,
          },
        },
      },
    },
  },
});

function validateTypeName(value: string, path: string): FieldError[] {
  const errs = validateQualifiedName(value, path);
  if (errs.length) return errs;
  if (!value.includes('/') && !STANDARD_LIMIT_TYPES.includes(value)) {
    errs.push(invalid(path, value, 'must be a standard limit type or fully qualified'));
  }
  return errs;
}

/** Go's `%f`: six decimals, infinities as `+Inf`/`-Inf`. */
function formatFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  return n.toFixed(6);
}

function validateItem(item: Obj, path: string, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(item.type) ?? '';
  const nameCheck = (name: string, p: string) =>
    type === 'Pod' || type === 'Container'
      ? validateContainerResourceName(name, p, ctx.naming)
      : validateResourceName(name, p);

  const names = new Set<string>();
  const collect = (member: string): Map<string, Quantity> => {
    const list = quantities(item[member]);
    for (const name of Object.keys(obj(item[member]) ?? {})) {
      errs.push(...nameCheck(name, key(child(path, member), name)));
      names.add(name);
    }
    return list;
  };
  const max = collect('max');
  const min = collect('min');
  let defaults = new Map<string, Quantity>();
  let defaultRequests = new Map<string, Quantity>();
  if (type === 'Pod') {
    if (Object.keys(obj(item.default) ?? {}).length)
      errs.push(forbidden(child(path, 'default'), "may not be specified when `type` is 'Pod'"));
    if (Object.keys(obj(item.defaultRequest) ?? {}).length) {
      errs.push(forbidden(child(path, 'defaultRequest'), "may not be specified when `type` is 'Pod'"));
    }
  } else {
    defaults = collect('default');
    defaultRequests = collect('defaultRequest');
  }
  if (
    type === 'PersistentVolumeClaim' &&
    !Object.hasOwn(obj(item.min) ?? {}, 'storage') &&
    !Object.hasOwn(obj(item.max) ?? {}, 'storage')
  ) {
    // The reference reports this at `.limits` under the item.
    errs.push(
      required(child(path, 'limits'), 'either minimum or maximum storage value is required, but neither was provided'),
    );
  }
  const ratios = collect('maxLimitRequestRatio');

  for (const name of [...names].sort()) {
    const mn = min.get(name);
    const mx = max.get(name);
    const def = defaults.get(name);
    const defReq = defaultRequests.get(name);
    const ratio = ratios.get(name);
    if (mn && mx && mn.cmp(mx) > 0) {
      errs.push(
        invalid(key(child(path, 'min'), name), mn.toString(), `min value ${mn} is greater than max value ${mx}`),
      );
    }
    if (defReq && mn && mn.cmp(defReq) > 0) {
      errs.push(
        invalid(
          key(child(path, 'defaultRequest'), name),
          defReq.toString(),
          `min value ${mn} is greater than default request value ${defReq}`,
        ),
      );
    }
    if (defReq && mx && defReq.cmp(mx) > 0) {
      errs.push(
        invalid(
          key(child(path, 'defaultRequest'), name),
          defReq.toString(),
          `default request value ${defReq} is greater than max value ${mx}`,
        ),
      );
    }
    if (defReq && def && defReq.cmp(def) > 0) {
      errs.push(
        invalid(
          key(child(path, 'defaultRequest'), name),
          defReq.toString(),
          `default request value ${defReq} is greater than default limit value ${def}`,
        ),
      );
    }
    // The reference shows min (resp. max) as the value of the next two errors.
    if (def && mn && mn.cmp(def) > 0) {
      errs.push(
        invalid(
          key(child(path, 'default'), name),
          mn.toString(),
          `min value ${mn} is greater than default value ${def}`,
        ),
      );
    }
    if (def && mx && def.cmp(mx) > 0) {
      errs.push(
        invalid(
          key(child(path, 'default'), name),
          mx.toString(),
          `default value ${def} is greater than max value ${mx}`,
        ),
      );
    }
    if (ratio && ratio.nanos < 1_000_000_000n) {
      errs.push(
        invalid(key(child(path, 'maxLimitRequestRatio'), name), ratio.toString(), `ratio ${ratio} is less than 1`),
      );
    }
    if (ratio && mn && mx) {
      let ratioValue = Number(ratio.value());
      let minValue = Number(mn.value());
      let maxValue = Number(mx.value());
      if (ratio.value() < MAX_MILLI_VALUE && mn.value() < MAX_MILLI_VALUE && mx.value() < MAX_MILLI_VALUE) {
        ratioValue = Number(ratio.milliValue()) / 1000;
        minValue = Number(mn.milliValue());
        maxValue = Number(mx.milliValue());
      }
      const limit = maxValue / minValue;
      if (ratioValue > limit) {
        errs.push(
          invalid(
            key(child(path, 'maxLimitRequestRatio'), name),
            ratio.toString(),
            `ratio ${ratio} is greater than max/min = ${formatFloat(limit)}`,
          ),
        );
      }
    }
    if (!isOvercommitAllowed(name, ctx.naming) && def && defReq && def.cmp(defReq) !== 0) {
      errs.push(
        invalid(
          key(child(path, 'defaultRequest'), name),
          defReq.toString(),
          `default value ${def} must equal to defaultRequest value ${defReq} in ${name}`,
        ),
      );
    }
  }
  return errs;
}

export function validateLimitRangeCreate(o: unknown, ctx: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const lr = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(lr.metadata, true, nameIsDNSSubdomain));
  const spec = obj(lr.spec);
  if (spec && absent(spec.limits)) errs.push(required('spec.limits'));
  const seenTypes = new Set<string>();
  arr(spec?.limits)?.forEach((raw, i) => {
    const item = obj(raw);
    if (!item) return;
    const p = index('spec.limits', i);
    const type = str(item.type) ?? '';
    if (typeof item.type === 'string' || absent(item.type)) errs.push(...validateTypeName(type, child(p, 'type')));
    if (seenTypes.has(type)) errs.push(duplicate(child(p, 'type'), type));
    seenTypes.add(type);
    errs.push(...validateItem(item, p, ctx));
  });
  return errs;
}

export function validateLimitRangeUpdate(o: unknown, old: unknown, ctx: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = validateLimitRangeCreate(o, ctx);
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  return errs;
}

/**
 * Container items get defaults: each max without a default becomes the default, each default without a
 * defaultRequest becomes the defaultRequest, each min still without a defaultRequest becomes it. Quantities
 * are rewritten as the reference serializes them (`0.5` → `500m`).
 */
export function defaultLimitRange(o: unknown): void {
  for (const raw of arr(obj(obj(o)?.spec)?.limits) ?? []) {
    const item = obj(raw);
    if (!item) continue;
    for (const member of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) {
      const list = obj(item[member]);
      if (!list) continue;
      for (const [name, v] of Object.entries(list)) {
        const r = parseQuantityValue(v);
        if (r.ok) list[name] = r.quantity.toString();
      }
    }
    if (item.type !== 'Container') continue;
    const def: Obj = isObj(item.default) ? item.default : {};
    const defReq: Obj = isObj(item.defaultRequest) ? item.defaultRequest : {};
    for (const [name, v] of Object.entries(obj(item.max) ?? {})) if (!Object.hasOwn(def, name)) def[name] = v;
    for (const [name, v] of Object.entries(def)) if (!Object.hasOwn(defReq, name)) defReq[name] = v;
    for (const [name, v] of Object.entries(obj(item.min) ?? {})) if (!Object.hasOwn(defReq, name)) defReq[name] = v;
    if (Object.keys(def).length && (isObj(item.default) || absent(item.default))) item.default = def;
    if (Object.keys(defReq).length && (isObj(item.defaultRequest) || absent(item.defaultRequest)))
      item.defaultRequest = defReq;
  }
}
