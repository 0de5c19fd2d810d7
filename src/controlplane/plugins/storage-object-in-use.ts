/**
 * The reference's StorageObjectInUseProtection admission: a new PersistentVolume or claim gets its protection
 * finalizer, which the plane removes once the object is deleted and unused (`../storage-protection.ts`).
 */
import type { Naming } from '../../api/naming.ts';
import type { AdmissionPlugin } from '../admission.ts';
import { claimFinalizer, volumeFinalizer } from '../storage-protection.ts';

export function storageObjectInUseProtection(n: Naming): AdmissionPlugin {
  const finalizers: Readonly<Record<string, string>> = {
    PersistentVolume: volumeFinalizer(n),
    PersistentVolumeClaim: claimFinalizer(n),
  };
  return {
    name: 'StorageObjectInUseProtection',
    admit(a) {
      if (a.operation !== 'CREATE' || a.subresource || a.rt.group !== '' || !a.object) return;
      const finalizer = finalizers[a.rt.kind];
      const meta = a.object.metadata;
      if (finalizer && !(meta.finalizers ?? []).includes(finalizer))
        meta.finalizers = [...(meta.finalizers ?? []), finalizer];
    },
  };
}
