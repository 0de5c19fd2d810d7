/**
 * Storage object in-use protection, as the reference keeps it: its StorageObjectInUseProtection admission gives
 * every new PersistentVolume and claim a protection finalizer, and kube-controller-manager's pv-protection and
 * pvc-protection controllers remove it from one being deleted once nothing uses it: a claim once no scheduled pod
 * mounts it, a volume once it is no longer Bound. These are the decisions; `node-storage-controllers.ts` acts.
 */
import type { KubeObject } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { Pod } from '../api/types/core.ts';

export const claimFinalizer = (n: Naming) => `${n.domain}/pvc-protection`;
export const volumeFinalizer = (n: Naming) => `${n.domain}/pv-protection`;

/**
 * Whether the kubelet is done with a pod: deleted with a zero grace period (by its node once its volumes were
 * unmounted, or forced). Only ephemeral claims look at it, as in the reference; its phase does not count (a pod
 * that Succeeded or Failed holds its claims until it is deleted, which is why only a pod's deletion queues them).
 */
const isShutDown = (pod: Pod) =>
  pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionGracePeriodSeconds === 0;

/** Whether a pod uses the claim: it is scheduled and mounts it, by name or as the claim of its ephemeral volume. */
export function podUsesClaim(pod: Pod, claim: KubeObject): boolean {
  if (!pod.spec?.nodeName || pod.metadata.namespace !== claim.metadata.namespace) return false;
  return (pod.spec.volumes ?? []).some(
    (v) =>
      v.persistentVolumeClaim?.claimName === claim.metadata.name ||
      (v.ephemeral !== undefined &&
        !isShutDown(pod) &&
        `${pod.metadata.name}-${v.name}` === claim.metadata.name &&
        claim.metadata.ownerReferences?.some((o) => o.controller && o.uid === pod.metadata.uid) === true),
  );
}

/** The claims (by name) a pod may hold back from deletion. */
export function claimNamesOf(pod: Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) => {
    if (v.persistentVolumeClaim) return [v.persistentVolumeClaim.claimName];
    return v.ephemeral !== undefined ? [`${pod.metadata.name}-${v.name}`] : [];
  });
}

/** Whether a volume is in use: bound to a claim. */
export const volumeInUse = (volume: KubeObject) => (volume.status as { phase?: string } | undefined)?.phase === 'Bound';

/** Whether an object is being deleted and still holds `finalizer`: a candidate for its removal. */
export const awaitsRelease = (obj: KubeObject, finalizer: string) =>
  obj.metadata.deletionTimestamp !== undefined && (obj.metadata.finalizers ?? []).includes(finalizer);
