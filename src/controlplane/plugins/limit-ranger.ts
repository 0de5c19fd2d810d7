/**
 * LimitRanger: fills default requests and limits into pods' containers from the namespace's
 * LimitRanges, then enforces min, max and maxLimitRequestRatio per Container, Pod and
 * PersistentVolumeClaim, with the reference's messages (403 Forbidden).
 */
import type { KubeObject } from '../../api/meta.ts';
import type { Naming } from '../../api/naming.ts';
import { MAX_MILLI_VALUE, parseQuantity, Quantity } from '../../api/quantity.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { AdmissionPlugin } from '../admission.ts';
import { badRequest, forbidden } from '../errors.ts';
import type { Storage } from '../storage.ts';

type ResourceList = Record<string, string | number>;
interface Resources {
  requests?: ResourceList;
  limits?: ResourceList;
}
interface Container {
  name: string;
  resources?: Resources;
  restartPolicy?: string;
}
interface LimitItem {
  type: string;
  min?: ResourceList;
  max?: ResourceList;
  default?: ResourceList;
  defaultRequest?: ResourceList;
  maxLimitRequestRatio?: ResourceList;
}

/** A quantity from the request; a malformed one is the client's error (400), as the reference's decoding rejects it. */
function quantity(v: string | number): Quantity {
  try {
    return parseQuantity(String(v));
  } catch (err) {
    throw badRequest(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': "${v}": ${(err as Error).message}`,
    );
  }
}

const q = (v: string | number | undefined): Quantity | undefined => (v === undefined ? undefined : quantity(v));

/** Pod defaulting, which the reference runs before admission: a container's limits stand in for missing requests. */
function defaultRequestsFromLimits(c: Container): void {
  const limits = c.resources?.limits;
  if (!limits) return;
  c.resources!.requests ??= {};
  for (const [name, value] of Object.entries(limits)) c.resources!.requests[name] ??= value;
}

function containersOf(pod: KubeObject): { regular: Container[]; init: Container[] } {
  const spec = (pod.spec ?? {}) as { containers?: Container[]; initContainers?: Container[] };
  return { regular: spec.containers ?? [], init: spec.initContainers ?? [] };
}

type Totals = Map<string, Quantity>;

const quantities = (list: ResourceList | undefined): Totals =>
  new Map(Object.entries(list ?? {}).map(([name, v]) => [name, quantity(v)]));

/** Adds per resource; a sum keeps the format of its first non-zero term, as the reference's `Add`. */
function addAll(into: Totals, from: Totals): void {
  for (const [name, value] of from) {
    const had = into.get(name);
    into.set(name, had ? new Quantity(had.nanos + value.nanos, had.isZero() ? value.format : had.format) : value);
  }
}

/** Keeps the larger value per resource. */
function maxAll(into: Totals, from: Totals): void {
  for (const [name, value] of from) {
    const had = into.get(name);
    if (!had || value.cmp(had) > 0) into.set(name, value);
  }
}

/**
 * Pod totals as the reference computes them: regular and sidecar containers summed; each regular init
 * container, plus the sidecars started before it, taken on its own; then the larger of the two per
 * resource. Sums keep the format of their first term, so `256Mi + 256Mi` prints as `512Mi`.
 */
function podTotals(pod: KubeObject, kind: 'requests' | 'limits'): Totals {
  const { regular, init } = containersOf(pod);
  const sum: Totals = new Map();
  for (const c of regular) addAll(sum, quantities(c.resources?.[kind]));
  const sidecars: Totals = new Map();
  const initMax: Totals = new Map();
  for (const c of init) {
    const own = quantities(c.resources?.[kind]);
    if (c.restartPolicy === 'Always') {
      addAll(sum, own);
      addAll(sidecars, own);
      maxAll(initMax, sidecars);
    } else {
      addAll(own, sidecars);
      maxAll(initMax, own);
    }
  }
  maxAll(sum, initMax);
  return sum;
}

/**
 * The values the reference compares: milli-units when request, limit and bound all fit in an int64 as
 * milli-units, whole units otherwise (both rounded up); an absent value counts as zero.
 */
function observed(...values: (Quantity | undefined)[]): bigint[] {
  const whole = values.map((v) => v?.value() ?? 0n);
  const inMilli = whole.every((v) => v <= MAX_MILLI_VALUE);
  return values.map((v, i) => (v === undefined ? 0n : inMilli ? v.milliValue() : whole[i]));
}

/**
 * Checks one observed (request, limit) pair against an item; returns the reference's messages. As in
 * the reference, each constraint (min, max, ratio) of a resource reports at most its first failure.
 */
function check(type: string, res: string, item: LimitItem, request?: Quantity, limit?: Quantity): string[] {
  const errs: string[] = [];
  const min = q(item.min?.[res]);
  const max = q(item.max?.[res]);
  const ratio = q(item.maxLimitRequestRatio?.[res]);
  if (min) {
    const [req, lim, bound] = observed(request, limit, min);
    if (!request) errs.push(`minimum ${res} usage per ${type} is ${min.canonical()}.  No request is specified`);
    else if (req < bound)
      errs.push(`minimum ${res} usage per ${type} is ${min.canonical()}, but request is ${request.canonical()}`);
    else if (limit && lim < bound)
      errs.push(`minimum ${res} usage per ${type} is ${min.canonical()}, but limit is ${limit.canonical()}`);
  }
  if (max && type === 'PersistentVolumeClaim') {
    const [req, bound] = observed(request, max);
    if (!request) errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}.  No request is specified`);
    else if (req > bound)
      errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}, but request is ${request.canonical()}`);
  } else if (max) {
    const [req, lim, bound] = observed(request, limit, max);
    if (!limit) errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}.  No limit is specified`);
    else if (lim > bound)
      errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}, but limit is ${limit.canonical()}`);
    else if (request && req > bound)
      errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}, but request is ${request.canonical()}`);
  }
  if (ratio && type !== 'PersistentVolumeClaim') {
    const prefix = `${res} max limit to request ratio per ${type} is ${ratio.canonical()}`;
    const [req, lim] = observed(request, limit, ratio);
    if (!request || req === 0n) errs.push(`${prefix}, but no request is specified or request is 0`);
    else if (!limit || lim === 0n) errs.push(`${prefix}, but no limit is specified or limit is 0`);
    else {
      const shown = Number(lim) / Number(req);
      const inMilli = ratio.value() <= MAX_MILLI_VALUE;
      const bound = Number(inMilli ? ratio.milliValue() : ratio.value());
      if ((inMilli ? shown * 1000 : shown) > bound) errs.push(`${prefix}, but provided ratio is ${shown.toFixed(6)}`);
    }
  }
  return errs;
}

function validateItem(obj: KubeObject, isPod: boolean, item: LimitItem): string[] {
  const resources = new Set([
    ...Object.keys(item.min ?? {}),
    ...Object.keys(item.max ?? {}),
    ...Object.keys(item.maxLimitRequestRatio ?? {}),
  ]);
  const errs: string[] = [];
  if (isPod && item.type === 'Container') {
    const { regular, init } = containersOf(obj);
    for (const c of [...regular, ...init]) {
      for (const res of resources)
        errs.push(...check('Container', res, item, q(c.resources?.requests?.[res]), q(c.resources?.limits?.[res])));
    }
  } else if (isPod && item.type === 'Pod') {
    const requests = podTotals(obj, 'requests');
    const limits = podTotals(obj, 'limits');
    for (const res of resources) {
      errs.push(...check('Pod', res, item, requests.get(res), limits.get(res)));
    }
  } else if (!isPod && item.type === 'PersistentVolumeClaim') {
    const requests = ((obj.spec as { resources?: Resources } | undefined)?.resources?.requests ?? {}) as ResourceList;
    for (const res of resources) errs.push(...check('PersistentVolumeClaim', res, item, q(requests[res])));
  }
  return errs;
}

export function limitRanger(registry: ResourceRegistry, storage: Storage, n: Naming): AdmissionPlugin {
  const limitRanges = registry.resource('', 'v1', 'limitranges')!;
  const applies = (a: Parameters<NonNullable<AdmissionPlugin['admit']>>[0]) =>
    a.rt.group === '' &&
    (a.rt.kind === 'Pod' || a.rt.kind === 'PersistentVolumeClaim') &&
    !a.subresource &&
    a.object !== undefined &&
    !a.oldObject?.metadata.deletionTimestamp &&
    (a.operation === 'CREATE' || (a.operation === 'UPDATE' && a.rt.kind !== 'Pod'));
  const itemsIn = (namespace: string | undefined) =>
    storage.list(limitRanges, namespace).map((lr) => (lr.spec as { limits?: LimitItem[] })?.limits ?? []);
  return {
    name: 'LimitRanger',
    admit(a) {
      if (!applies(a) || a.rt.kind !== 'Pod') return;
      const pod = a.object!;
      const { regular, init } = containersOf(pod);
      const notes: string[] = [];
      for (const c of [...regular, ...init]) defaultRequestsFromLimits(c);
      for (const items of itemsIn(a.namespace)) {
        const container = items.filter((i) => i.type === 'Container');
        const limits = Object.assign({}, ...container.map((i) => i.default ?? {})) as ResourceList;
        const requests = Object.assign({}, ...container.map((i) => i.defaultRequest ?? {})) as ResourceList;
        const fill = (c: Container, label: string) => {
          c.resources ??= {};
          const set = (kind: 'requests' | 'limits', from: ResourceList) => {
            const names = Object.keys(from)
              .filter((r) => c.resources![kind]?.[r] === undefined)
              .sort();
            if (!names.length) return;
            c.resources![kind] ??= {};
            for (const r of names) c.resources![kind]![r] = from[r];
            notes.push(`${names.join(', ')} ${kind === 'requests' ? 'request' : 'limit'} for ${label} ${c.name}`);
          };
          set('requests', requests);
          set('limits', limits);
        };
        for (const c of regular) fill(c, 'container');
        for (const c of init) fill(c, 'init container');
      }
      if (notes.length) {
        pod.metadata.annotations = {
          ...pod.metadata.annotations,
          [n.annotations.limitRanger]: `LimitRanger plugin set: ${notes.join('; ')}`,
        };
      }
    },
    validate(a) {
      if (!applies(a)) return;
      for (const items of itemsIn(a.namespace)) {
        const errs = [...new Set(items.flatMap((i) => validateItem(a.object!, a.rt.kind === 'Pod', i)))];
        if (errs.length) throw forbidden(a.rt, a.name, errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
      }
    },
  };
}
