/**
 * A pod's quality-of-service class (`status.qosClass`), as the reference computes it when the pod is created (after
 * admission, so that defaults a LimitRange adds count): from its pod-level resources when it has some, else summed
 * over its containers and init containers; only cpu and memory count, and only amounts above zero.
 */
import type { KubeObject } from '../api/meta.ts';
import { tryQuantity } from '../api/quantity.ts';
import type { PodSpec, ResourceList } from '../api/types/core.ts';

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'];

/** Adds the positive cpu and memory amounts of `list` to `sums` (nanos); answers which resources it had. */
function addUp(sums: Map<string, bigint>, list: ResourceList | undefined): Set<string> {
  const found = new Set<string>();
  for (const [name, value] of Object.entries(list ?? {})) {
    const q = tryQuantity(value);
    if (!QOS_RESOURCES.includes(name) || !q || q.nanos <= 0n) continue;
    found.add(name);
    sums.set(name, (sums.get(name) ?? 0n) + q.nanos);
  }
  return found;
}

export function podQosClass(spec: PodSpec): QosClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  const limited = (found: Set<string>) => QOS_RESOURCES.every((r) => found.has(r));
  let guaranteed = true;
  if (spec.resources) {
    addUp(requests, spec.resources.requests);
    const hasLimits = Object.keys(spec.resources.limits ?? {}).length > 0;
    if (hasLimits && !limited(addUp(limits, spec.resources.limits))) guaranteed = false;
  } else {
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      addUp(requests, c.resources?.requests);
      if (!limited(addUp(limits, c.resources?.limits))) guaranteed = false;
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  for (const [name, amount] of requests) if (limits.get(name) !== amount) guaranteed = false;
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/**
 * The class a pod write stores: computed on create; a status write without one keeps the stored one (the reference
 * fills it back in for node agents that drop it).
 */
export function settlePodQosClass(pod: KubeObject, old: KubeObject | undefined): void {
  pod.status ??= {};
  const status = pod.status as { qosClass?: string };
  if (!old) status.qosClass = podQosClass((pod.spec ?? {}) as unknown as PodSpec);
  else status.qosClass ||= (old.status as { qosClass?: string } | undefined)?.qosClass;
  if (!status.qosClass) delete status.qosClass;
}
