/**
 * Dynamic provisioning as the simulated cluster does it: one PersistentVolume per claim, named `pvc-<claim uid>`
 * as the reference's external provisioners name them, of the claim's class (or the default class when the claim
 * names none), holding the requested storage and access modes, bound to the claim by its `claimRef`.
 * The control plane seeds the default class (`src/controlplane/storage-class.ts`).
 */
import type { KubeObject } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { PersistentVolumeClaim } from '../api/types/core.ts';
import { pickDefault } from '../controlplane/plugins/default-class.ts';

export interface StorageClassView extends KubeObject {
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
  // The DefaultStorageClass admission names the class at create; a claim created before any default existed
  // gets today's default, as the reference's binder gives it.
  const wanted =
    named ?? pickDefault(classes, [n.annotations.defaultStorageClass, n.annotations.betaDefaultStorageClass]);
  const cls = classes.find((c) => c.metadata.name === wanted);
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
