/**
 * LimitRanger: fills default requests and limits into pods' containers from the namespace's
 * LimitRanges, then enforces min, max and maxLimitRequestRatio per Container, Pod and
 * PersistentVolumeClaim, with the reference's messages (403 Forbidden).
 */
import type { KubeObject } from '../../api/meta.ts';
import type { Naming } from '../../api/naming.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { AdmissionPlugin } from '../admission.ts';
import { forbidden } from '../errors.ts';
import type { Storage } from '../storage.ts';
import { parseQuantity, type Quantity } from '../validation/quantity.ts';

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

const q = (v: string | number | undefined): Quantity | undefined =>
  v === undefined ? undefined : parseQuantity(String(v));

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

/** Pod totals: regular and sidecar containers summed, then the max with each regular init container. */
function podTotals(pod: KubeObject, kind: 'requests' | 'limits'): Map<string, bigint> {
  const { regular, init } = containersOf(pod);
  const sum = new Map<string, bigint>();
  const add = (into: Map<string, bigint>, list: ResourceList | undefined) => {
    for (const [name, v] of Object.entries(list ?? {}))
      into.set(name, (into.get(name) ?? 0n) + parseQuantity(String(v)).milliValue());
  };
  for (const c of regular) add(sum, c.resources?.[kind]);
  const sidecars = new Map<string, bigint>();
  for (const c of init) {
    if (c.restartPolicy === 'Always') {
      add(sum, c.resources?.[kind]);
      add(sidecars, c.resources?.[kind]);
      continue;
    }
    for (const [name, v] of Object.entries(c.resources?.[kind] ?? {})) {
      const need = parseQuantity(String(v)).milliValue() + (sidecars.get(name) ?? 0n);
      if (need > (sum.get(name) ?? 0n)) sum.set(name, need);
    }
  }
  return sum;
}

const milli = (m: bigint) => parseQuantity(`${m}m`);

/** Checks one observed (request, limit) pair against an item; returns the reference's messages. */
function check(type: string, res: string, item: LimitItem, request?: Quantity, limit?: Quantity): string[] {
  const errs: string[] = [];
  const min = q(item.min?.[res]);
  const max = q(item.max?.[res]);
  const ratio = q(item.maxLimitRequestRatio?.[res]);
  if (min) {
    if (!request) errs.push(`minimum ${res} usage per ${type} is ${min.canonical()}.  No request is specified`);
    else if (request.cmp(min) < 0)
      errs.push(`minimum ${res} usage per ${type} is ${min.canonical()}, but request is ${request.canonical()}`);
    if (limit && limit.cmp(min) < 0)
      errs.push(`minimum ${res} usage per ${type} is ${min.canonical()}, but limit is ${limit.canonical()}`);
  }
  if (max) {
    if (type === 'PersistentVolumeClaim') {
      if (!request) errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}.  No request is specified`);
      else if (request.cmp(max) > 0)
        errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}, but request is ${request.canonical()}`);
    } else {
      if (!limit) errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}.  No limit is specified`);
      else if (limit.cmp(max) > 0)
        errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}, but limit is ${limit.canonical()}`);
      if (request && request.cmp(max) > 0)
        errs.push(`maximum ${res} usage per ${type} is ${max.canonical()}, but request is ${request.canonical()}`);
    }
  }
  if (ratio && type !== 'PersistentVolumeClaim') {
    const prefix = `${res} max limit to request ratio per ${type} is ${ratio.canonical()}`;
    if (!request || request.isZero()) errs.push(`${prefix}, but no request is specified or request is 0`);
    else if (!limit || limit.isZero()) errs.push(`${prefix}, but no limit is specified or limit is 0`);
    else {
      const observed = Number(limit.milliValue()) / Number(request.milliValue());
      if (observed > Number(ratio.milliValue()) / 1000)
        errs.push(`${prefix}, but provided ratio is ${observed.toFixed(6)}`);
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
      const r = requests.get(res);
      const l = limits.get(res);
      errs.push(
        ...check('Pod', res, item, r === undefined ? undefined : milli(r), l === undefined ? undefined : milli(l)),
      );
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
