/**
 * The default StorageClass the control plane seeds at start, as a cluster installer leaves one: claims that name
 * no class get it, and the simulated nodes provision its volumes (`src/simulation/volumes.ts`).
 */
import type { KubeObject } from '../api/meta.ts';
import { group, type Naming } from '../api/naming.ts';

export const DEFAULT_STORAGE_CLASS = 'standard';

export const simulatedProvisioner = (n: Naming) => `${n.domain}/simulated-host-path`;

export function defaultStorageClass(n: Naming): KubeObject {
  return {
    apiVersion: `${group(n, 'storage')}/v1`,
    kind: 'StorageClass',
    metadata: { name: DEFAULT_STORAGE_CLASS, annotations: { [n.annotations.defaultStorageClass]: 'true' } },
    provisioner: simulatedProvisioner(n),
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  };
}
