/**
 * The controller finders (reference notes §1.3): from a pod's controller reference to the scale of the
 * workload that decides how many pods there should be. The typed finders read snapshots of the caches
 * (ReplicationController, Deployment through its ReplicaSet, ReplicaSet, StatefulSet, in that order);
 * the generic finder, for anything else with a `/scale` subresource, is answered by a lookup the
 * reconciler made beforehand, so everything here stays synchronous and pure.
 */
import type { KubeObject, OwnerReference } from '../../src/api/meta.ts';
import type { ResourceRegistry, ResourceType } from '../../src/api/registry.ts';

export type WorkloadKind = 'ReplicationController' | 'ReplicaSet' | 'Deployment' | 'StatefulSet';

export const WORKLOAD_KINDS: readonly WorkloadKind[] = [
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'StatefulSet',
];

/** A workload found for a controller reference: its UID and desired replicas. */
export interface ControllerScale {
  uid: string;
  replicas: number;
}

/** What the generic `/scale` finder answered for one controller reference. */
export type ScaleLookup = { scale: ControllerScale } | { notFound: true } | { error: string };

/** Read access to the workloads, as of one moment. */
export interface Workloads {
  get(kind: WorkloadKind, namespace: string, name: string): KubeObject | undefined;
  /** The generic finder's answer for a reference the typed finders did not resolve. */
  scale(ref: OwnerReference, namespace: string): ScaleLookup;
}

/** A finder failed: the expected pod count cannot be computed (the PDB sync fails). */
export class FinderError extends Error {
  override name = 'FinderError';
}

/** The owner reference with `controller: true`, if any. */
export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((o) => o.controller === true);
}

/** The group of an apiVersion, as Go's `schema.ParseGroupVersion` reads it. */
export function groupVersionOf(apiVersion: string | undefined): { group: string; version: string } {
  const text = apiVersion ?? '';
  if (text === '') return { group: '', version: '' };
  const parts = text.split('/');
  if (parts.length === 1) return { group: '', version: parts[0] };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  throw new FinderError(`unexpected GroupVersion string: ${text}`);
}

function isKind(ref: OwnerReference, kind: string, groups: readonly string[]): boolean {
  const { group } = groupVersionOf(ref.apiVersion);
  return ref.kind === kind && groups.includes(group);
}

/** `spec.replicas`; unset means 1, the API default for every workload kind. */
function replicasOf(obj: KubeObject): number {
  const r = (obj.spec as { replicas?: unknown } | undefined)?.replicas;
  return typeof r === 'number' && Number.isInteger(r) ? r : 1;
}

const APPS = ['apps', 'extensions'];

type Finder = (ref: OwnerReference, namespace: string, w: Workloads) => ControllerScale | undefined;

/** The workload named by `ref` in the cache, provided it is the same object (same UID). */
function owned(w: Workloads, kind: WorkloadKind, ref: OwnerReference, namespace: string): KubeObject | undefined {
  const obj = w.get(kind, namespace, ref.name);
  return obj && obj.metadata.uid === ref.uid ? obj : undefined;
}

const replicationController: Finder = (ref, ns, w) => {
  if (!isKind(ref, 'ReplicationController', [''])) return undefined;
  const rc = owned(w, 'ReplicationController', ref, ns);
  return rc && { uid: rc.metadata.uid!, replicas: replicasOf(rc) };
};

const deployment: Finder = (ref, ns, w) => {
  if (!isKind(ref, 'ReplicaSet', APPS)) return undefined;
  const rs = owned(w, 'ReplicaSet', ref, ns);
  if (!rs) return undefined;
  const rsRef = controllerRefOf(rs);
  if (!rsRef || !isKind(rsRef, 'Deployment', APPS)) return undefined;
  const d = owned(w, 'Deployment', rsRef, ns);
  return d && { uid: d.metadata.uid!, replicas: replicasOf(d) };
};

const replicaSet: Finder = (ref, ns, w) => {
  if (!isKind(ref, 'ReplicaSet', APPS)) return undefined;
  const rs = owned(w, 'ReplicaSet', ref, ns);
  // A ReplicaSet controlled by a Deployment is the Deployment finder's (kind checked alone, as the reference).
  if (!rs || controllerRefOf(rs)?.kind === 'Deployment') return undefined;
  return { uid: rs.metadata.uid!, replicas: replicasOf(rs) };
};

const statefulSet: Finder = (ref, ns, w) => {
  if (!isKind(ref, 'StatefulSet', ['apps'])) return undefined;
  const ss = owned(w, 'StatefulSet', ref, ns);
  return ss && { uid: ss.metadata.uid!, replicas: replicasOf(ss) };
};

const TYPED: readonly Finder[] = [replicationController, deployment, replicaSet, statefulSet];

/** The typed finders in the reference's order; undefined when none claims the reference. */
export function findTypedController(ref: OwnerReference, namespace: string, w: Workloads): ControllerScale | undefined {
  for (const finder of TYPED) {
    const found = finder(ref, namespace, w);
    if (found) return found;
  }
  return undefined;
}

/** Every finder, the generic `/scale` one last; throws FinderError when a finder fails. */
export function findController(ref: OwnerReference, namespace: string, w: Workloads): ControllerScale | undefined {
  const typed = findTypedController(ref, namespace, w);
  if (typed) return typed;
  const generic = w.scale(ref, namespace);
  if ('error' in generic) throw new FinderError(generic.error);
  if ('scale' in generic && generic.scale.uid === ref.uid) return generic.scale;
  return undefined;
}

export interface ExpectedScale {
  /** Sum of the replicas of the distinct controllers of the pods. */
  expected: number;
  /** Names of pods without a controller (not counted in `expected`). */
  unmanaged: string[];
  /** UIDs the result depends on: the pods' controller references and the workloads they resolved to. */
  controllers: string[];
}

/** `getExpectedScale`: each controller counted once; throws FinderError, or when a pod's controller is not found. */
export function expectedScale(pods: readonly KubeObject[], w: Workloads): ExpectedScale {
  const byRef = new Map<string, ControllerScale>();
  const scales = new Map<string, number>();
  const unmanaged: string[] = [];
  for (const pod of pods) {
    const ref = controllerRefOf(pod);
    if (!ref) {
      unmanaged.push(pod.metadata.name ?? '');
      continue;
    }
    if (byRef.has(ref.uid)) continue;
    const found = findController(ref, pod.metadata.namespace ?? '', w);
    if (!found) throw new FinderError(`found no controllers for pod ${JSON.stringify(pod.metadata.name ?? '')}`);
    byRef.set(ref.uid, found);
    scales.set(found.uid, found.replicas);
  }
  let expected = 0;
  for (const replicas of scales.values()) expected += replicas;
  return { expected, unmanaged, controllers: [...new Set([...byRef.keys(), ...scales.keys()])] };
}

/**
 * The resource the generic finder asks for `/scale` (the reference's REST mapping of group, kind and
 * version), or the error that fails the sync: an unknown kind, or a resource without `/scale`.
 */
export function scaleResourceFor(
  ref: OwnerReference,
  registry: ResourceRegistry,
): { rt: ResourceType } | { error: string } {
  let gv: { group: string; version: string };
  try {
    gv = groupVersionOf(ref.apiVersion);
  } catch (err) {
    return { error: (err as Error).message };
  }
  const rt = registry.all.find(
    (r) => r.group === gv.group && r.kind === ref.kind && (gv.version === '' || r.version === gv.version) && !r.virtual,
  );
  if (!rt) {
    return gv.version
      ? { error: `no matches for kind ${JSON.stringify(ref.kind)} in version ${JSON.stringify(ref.apiVersion)}` }
      : { error: `no matches for kind ${JSON.stringify(ref.kind)} in group ${JSON.stringify(gv.group)}` };
  }
  if (!rt.subresources.includes('scale')) {
    const resource = rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
    return { error: `${resource} does not implement the scale subresource` };
  }
  return { rt };
}
