/**
 * Resource names (`cpu`, `memory`, `hugepages-2Mi`, `example.com/gpu`) and quantity values of resource lists,
 * as the reference checks them. Native resources carry no domain or the flavor's own domain.
 */

import { type FieldError, forbidden, invalid, key } from '../../api/field-errors.ts';
import { qualifiedNameErrors } from '../../api/labels.ts';
import type { Naming } from '../../api/naming.ts';
import { parseQuantityValue, type Quantity } from '../../api/quantity.ts';
import { validateQualifiedName } from './common.ts';
import { obj } from './raw.ts';

const HUGEPAGES_PREFIX = 'hugepages-';
const REQUESTS_PREFIX = 'requests.';

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
const INTEGER_RESOURCES = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);

export const STANDARD_LIMIT_TYPES = ['Pod', 'Container', 'PersistentVolumeClaim'];

export const isHugePageResourceName = (name: string): boolean => name.startsWith(HUGEPAGES_PREFIX);

export function isNativeResource(name: string, n: Naming): boolean {
  return !name.includes('/') || name.includes(`${n.domain}/`);
}

export function isExtendedResourceName(name: string, n: Naming): boolean {
  if (isNativeResource(name, n) || name.startsWith(REQUESTS_PREFIX)) return false;
  return qualifiedNameErrors(`${REQUESTS_PREFIX}${name}`).length === 0;
}

export function isStandardResourceName(name: string): boolean {
  return (
    STANDARD_RESOURCES.has(name) ||
    name.startsWith(HUGEPAGES_PREFIX) ||
    name.startsWith(`${REQUESTS_PREFIX}${HUGEPAGES_PREFIX}`)
  );
}

export function isStandardContainerResourceName(name: string): boolean {
  return STANDARD_CONTAINER_RESOURCES.has(name) || isHugePageResourceName(name);
}

/** Resources that may be overcommitted (request below limit): native ones except huge pages. */
export function isOvercommitAllowed(name: string, n: Naming): boolean {
  return isNativeResource(name, n) && !isHugePageResourceName(name);
}

export function isIntegerResourceName(name: string, n: Naming): boolean {
  return INTEGER_RESOURCES.has(name) || isExtendedResourceName(name, n);
}

export function validateResourceName(value: string, path: string): FieldError[] {
  const errs = validateQualifiedName(value, path);
  if (errs.length) return errs;
  if (!value.includes('/') && !isStandardResourceName(value)) {
    errs.push(invalid(path, value, 'must be a standard resource type or fully qualified'));
  }
  return errs;
}

export function validateContainerResourceName(value: string, path: string, n: Naming): FieldError[] {
  const errs = validateResourceName(value, path);
  if (!value.includes('/')) {
    if (!isStandardContainerResourceName(value))
      errs.push(invalid(path, value, 'must be a standard resource for containers'));
  } else if (!isNativeResource(value, n) && !isExtendedResourceName(value, n)) {
    errs.push(invalid(path, value, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** A map of resource name to quantity, keeping only parseable quantities (shape errors are reported elsewhere). */
export function quantities(list: unknown): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(obj(list) ?? {})) {
    const r = parseQuantityValue(v);
    if (r.ok) out.set(k, r.quantity);
  }
  return out;
}

/** Resource limits of a container-like list: names, non-negative values, integers where required, huge pages. */
export function validateContainerResourceLimits(list: unknown, path: string, n: Naming): FieldError[] {
  const errs: FieldError[] = [];
  let cpuOrMemory = false;
  let hugePages = false;
  const limPath = `${path}.limits`;
  for (const [name, q] of quantities(list)) {
    const p = key(limPath, name);
    errs.push(...validateContainerResourceName(name, p, n));
    if (q.nanos < 0n) errs.push(invalid(p, q.toString(), 'must be greater than or equal to 0'));
    if (isIntegerResourceName(name, n) && q.milliValue() % 1000n !== 0n)
      errs.push(invalid(p, q.toString(), 'must be an integer'));
    if (isHugePageResourceName(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (hugePages && !cpuOrMemory) errs.push(forbidden(path, 'HugePages require cpu or memory'));
  return errs;
}
