/**
 * Pod and claim identity of a StatefulSet (names, labels, volumes, claim owner references) and the
 * availability rules the reference decides with. Pure functions over raw objects.
 */
import type { KubeObject, OwnerReference } from '../../src/api/meta.ts';
import type { Naming } from '../../src/api/naming.ts';
import type { StatefulSet } from '../../src/api/types/apps.ts';
import type { PersistentVolumeClaim, Pod, PodTemplateSpec, Volume } from '../../src/api/types/core.ts';
import { controllerRefTo, setOwnerRef } from './revision.ts';

/** The pod label holding the name of the ControllerRevision the pod was made from (no product word in it). */
export const POD_REVISION_LABEL = 'controller-revision-hash';
const MAX_INT32 = 2 ** 31 - 1;
const NO_ORDINAL: { parent: string; ordinal: number } = Object.freeze({ parent: '', ordinal: -1 });

/** `<parent>-<ordinal>` → its parts; ordinal -1 when the name has no valid ordinal. */
export function parseOrdinal(name: string): { parent: string; ordinal: number } {
  const ordinal = ordinalOf(name);
  return ordinal < 0 ? NO_ORDINAL : { parent: name.slice(0, name.lastIndexOf('-')), ordinal };
}

/**
 * The ordinal alone, -1 for none: the reference's `(.*)-([0-9]+)$` read by hand, with no string made, as every sync
 * of a set reads every pod's name several times.
 */
export function ordinalOf(name: string): number {
  const dash = name.lastIndexOf('-');
  if (dash < 0 || dash === name.length - 1) return -1;
  let ordinal = 0;
  for (let i = dash + 1; i < name.length; i++) {
    const digit = name.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    ordinal = ordinal * 10 + digit;
  }
  return ordinal > MAX_INT32 ? -1 : ordinal;
}

/** Whether `name` is `<parent>-<ordinal>`. */
function isOrdinalName(name: string, parent: string): boolean {
  return name.lastIndexOf('-') === parent.length && name.startsWith(parent) && ordinalOf(name) >= 0;
}

export const podName = (set: KubeObject, ordinal: number) => `${set.metadata.name}-${ordinal}`;
export const claimName = (template: string, set: KubeObject, ordinal: number) =>
  `${template}-${set.metadata.name}-${ordinal}`;

export function isMemberOf(set: KubeObject, pod: KubeObject): boolean {
  return isOrdinalName(pod.metadata.name ?? '', set.metadata.name ?? '');
}

export const revisionOf = (pod: Pod) => pod.metadata.labels?.[POD_REVISION_LABEL] ?? '';
export const isCreated = (pod: Pod) => (pod.status?.phase ?? '') !== '';
export const isTerminating = (obj: KubeObject) => Boolean(obj.metadata.deletionTimestamp);
export const hasFinished = (pod: Pod) => pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';

export function readyCondition(pod: Pod) {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

export const isRunningAndReady = (pod: Pod) =>
  pod.status?.phase === 'Running' && readyCondition(pod)?.status === 'True';

/** When the pod became Ready (epoch ms), if it is Ready and says so. */
export function readySinceMs(pod: Pod): number | undefined {
  const c = readyCondition(pod);
  if (c?.status !== 'True' || !c.lastTransitionTime) return undefined;
  const t = Date.parse(c.lastTransitionTime);
  return Number.isNaN(t) ? undefined : t;
}

/** Ready, and (with minReadySeconds) Ready for strictly longer than that. */
export function isAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (readyCondition(pod)?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = readySinceMs(pod);
  return since !== undefined && since + minReadySeconds * 1000 < nowMs;
}

/**
 * Not healthy (running, Ready, not terminating) or not yet available: the reference's two tests, its Ready condition
 * looked up once (a rolling update asks this of every pod at every sync).
 */
export function isUnavailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (isTerminating(pod) || pod.status?.phase !== 'Running') return true;
  const ready = readyCondition(pod);
  if (ready?.status !== 'True') return true;
  if (minReadySeconds <= 0) return false;
  const since = ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : Number.NaN;
  return !(since + minReadySeconds * 1000 < nowMs);
}

/**
 * A pod that has not been Ready since it started: no Ready=True now, and its Ready condition has not
 * changed since the start (a pod that was Ready and then failed its probe changed it later).
 */
export function neverReady(pod: Pod): boolean {
  const c = readyCondition(pod);
  if (c?.status === 'True') return false;
  const started = Date.parse(pod.status?.startTime ?? '');
  const changed = Date.parse(c?.lastTransitionTime ?? '');
  return Number.isNaN(started) || Number.isNaN(changed) || changed <= started;
}

/** The set's claims: `volumeClaimTemplates` as named, with the selector's labels on top. */
function claimTemplates(set: StatefulSet): PersistentVolumeClaim[] {
  return (set.spec.volumeClaimTemplates ?? []).filter((t) => t.metadata?.name);
}

export function claimsFor(set: StatefulSet, ordinal: number): PersistentVolumeClaim[] {
  return claimTemplates(set).map((t) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    ...t,
    metadata: {
      ...t.metadata,
      name: claimName(t.metadata.name!, set, ordinal),
      namespace: set.metadata.namespace,
      labels: { ...t.metadata.labels, ...set.spec.selector.matchLabels },
    },
  }));
}

/** The pod volumes: one per claim template, then the template's own volumes that no claim replaces. */
function volumesFor(set: StatefulSet, template: PodTemplateSpec, ordinal: number): Volume[] {
  const claimVolumes = claimTemplates(set).map((t) => ({
    name: t.metadata.name!,
    persistentVolumeClaim: { claimName: claimName(t.metadata.name!, set, ordinal) },
  }));
  const taken = new Set(claimVolumes.map((v) => v.name));
  return [...claimVolumes, ...(template.spec?.volumes ?? []).filter((v) => !taken.has(v.name))];
}

/** A new pod for an ordinal from a revision's template (the reference's `newVersionedStatefulSetPod`). */
export function newPod(
  n: Naming,
  set: StatefulSet,
  template: PodTemplateSpec,
  revisionName: string,
  ordinal: number,
): Pod {
  const name = podName(set, ordinal);
  const volumes = volumesFor(set, template, ordinal);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...template.metadata,
      name,
      generateName: `${set.metadata.name}-`,
      namespace: set.metadata.namespace,
      labels: {
        ...template.metadata?.labels,
        [n.labels.statefulSetPodName]: name,
        [n.labels.podIndex]: String(ordinal),
        [POD_REVISION_LABEL]: revisionName,
      },
      ownerReferences: [setOwnerRef(set)],
    },
    spec: {
      ...template.spec,
      containers: template.spec?.containers ?? [],
      hostname: name,
      ...(set.spec.serviceName ? { subdomain: set.spec.serviceName } : {}),
      ...(volumes.length ? { volumes } : {}),
    },
  };
}

/** Name, namespace and pod-name label as the set would give them (the pod-index label is not checked). */
export function identityMatches(n: Naming, set: StatefulSet, pod: Pod): boolean {
  return (
    isOrdinalName(pod.metadata.name ?? '', set.metadata.name ?? '') &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[n.labels.statefulSetPodName] === pod.metadata.name
  );
}

/** Every claim template has a volume of its name pointing at the ordinal's claim. */
export function storageMatches(set: StatefulSet, pod: Pod, ordinal: number): boolean {
  const volumes = pod.spec?.volumes ?? [];
  return claimTemplates(set).every((t) => {
    const name = t.metadata.name!;
    // The last volume of a name counts, as in a map built from the list.
    const volume = volumes.findLast((v) => v.name === name);
    return volume?.persistentVolumeClaim?.claimName === claimName(name, set, ordinal);
  });
}

/** The pod with identity labels and claim volumes put right (the reference's `updateIdentity`/`updateStorage`). */
export function withIdentity(n: Naming, set: StatefulSet, pod: Pod, ordinal: number): Pod {
  const template = { metadata: {}, spec: pod.spec };
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      namespace: set.metadata.namespace,
      labels: {
        ...pod.metadata.labels,
        [n.labels.statefulSetPodName]: pod.metadata.name ?? '',
        [n.labels.podIndex]: String(ordinal),
      },
    },
    spec: { ...pod.spec, containers: pod.spec?.containers ?? [], volumes: volumesFor(set, template, ordinal) },
  };
}

// ---- claim owner references (persistentVolumeClaimRetentionPolicy) ----

export interface ClaimOwners {
  /** The owner references to write; undefined when nothing is to change. */
  ownerReferences?: OwnerReference[];
  /** Another controller owns the claim while the policy asks for ours. */
  conflicting?: boolean;
}

const refersTo = (ref: OwnerReference, obj: KubeObject) =>
  ref.apiVersion === (obj.apiVersion ?? 'v1') && ref.kind === obj.kind && ref.name === obj.metadata.name;

/** Whether the policy deletes claims at all (only then another controller is a conflict). */
export function retentionDeletes(set: StatefulSet): boolean {
  const p = set.spec.persistentVolumeClaimRetentionPolicy ?? {};
  return p.whenDeleted === 'Delete' || p.whenScaled === 'Delete';
}

/** The reference's retention table: which of set and pod own a claim of a pod in range or condemned. */
export function desiredClaimOwner(set: StatefulSet, condemned: boolean): 'set' | 'pod' | undefined {
  const p = set.spec.persistentVolumeClaimRetentionPolicy ?? {};
  if (condemned && p.whenScaled === 'Delete') return 'pod';
  if (p.whenDeleted === 'Delete') return 'set';
  return undefined;
}

/**
 * The owner references a claim should carry. A reference to our set or pod with another UID is stale:
 * the claim is left alone (the garbage collector or the user settles it).
 */
export function claimOwners(set: StatefulSet, pod: Pod, claim: PersistentVolumeClaim, condemned: boolean): ClaimOwners {
  const refs = claim.metadata.ownerReferences ?? [];
  const setObj = { ...set, apiVersion: 'apps/v1', kind: 'StatefulSet' };
  const podObj = { ...pod, apiVersion: 'v1', kind: 'Pod' };
  const ours = (r: OwnerReference) => refersTo(r, setObj) || refersTo(r, podObj);
  if (
    refs.some(
      (r) => (refersTo(r, setObj) && r.uid !== set.metadata.uid) || (refersTo(r, podObj) && r.uid !== pod.metadata.uid),
    )
  )
    return {};
  const others = refs.filter((r) => !ours(r));
  const conflicting = retentionDeletes(set) && others.some((r) => r.controller);
  const owner = conflicting ? undefined : desiredClaimOwner(set, condemned);
  const wanted = [
    ...others,
    ...(owner === 'set'
      ? [setOwnerRef(set)]
      : owner === 'pod' && pod.metadata.uid
        ? [controllerRefTo('v1', 'Pod', pod)]
        : []),
  ];
  const same = JSON.stringify(wanted) === JSON.stringify(refs);
  return { ...(same ? {} : { ownerReferences: wanted }), ...(conflicting ? { conflicting } : {}) };
}

/** A claim still owned by an earlier pod of this name (the placeholder has no UID, so any pod reference). */
export function hasStalePodOwner(claim: PersistentVolumeClaim, name: string): boolean {
  return (claim.metadata.ownerReferences ?? []).some(
    (r) => r.kind === 'Pod' && r.apiVersion === 'v1' && r.name === name,
  );
}
