/**
 * Dynamic provisioning as the simulated cluster does it: one PersistentVolume per claim, named `pvc-<claim uid>`
 * as the reference's external provisioners name them, of the claim's class (or the default class when the claim
 * names none), holding the requested storage and access modes, bound to the claim by its `claimRef`.
 * The control plane seeds the default class (`src/controlplane/storage-class.ts`).
 */
import type { KubeObject } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { PersistentVolumeClaim } from '../api/types/core.ts';

export interface StorageClassView {
  metadata: { name?: string; annotations?: Record<string, string> };
  reclaimPolicy?: string;
}

/** The name of the volume provisioned for a claim. */
export const volumeNameFor = (claim: PersistentVolumeClaim) => `pvc-${claim.metadata.uid ?? ''}`;

/**
 * The volume to provision for a claim, or why none is: a claim naming the empty class asks for no dynamic
 * provisioning, and a claim naming none needs a default class.
 */
export function volumeForClaim(
  claim: PersistentVolumeClaim,
  classes: readonly StorageClassView[],
  n: Naming,
): { volume: KubeObject } | { skip: string } {
  const named = claim.spec?.storageClassName;
  if (named === '') return { skip: 'the claim asks for no storage class' };
  const isDefault = (c: StorageClassView) => c.metadata.annotations?.[n.annotations.defaultStorageClass] === 'true';
  const cls = named === undefined ? classes.find(isDefault) : classes.find((c) => c.metadata.name === named);
  if (!cls) return { skip: named === undefined ? 'no default storage class' : `storage class "${named}" not found` };
  const storage = claim.spec?.resources?.requests?.storage;
  if (!storage) return { skip: 'the claim requests no storage' };
  const name = volumeNameFor(claim);
  return {
    volume: {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage },
        accessModes: claim.spec?.accessModes ?? [],
        claimRef: {
          kind: 'PersistentVolumeClaim',
          apiVersion: 'v1',
          namespace: claim.metadata.namespace,
          name: claim.metadata.name,
          uid: claim.metadata.uid,
        },
        persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
        storageClassName: cls.metadata.name,
        volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
        hostPath: { path: `/var/lib/simulated-volumes/${name}`, type: 'DirectoryOrCreate' },
      },
    },
  };
}
