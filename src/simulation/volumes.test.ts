/** The simulated provisioner's plan for a claim: which class, which volume, or why none. */
import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import type { PersistentVolumeClaim } from '../api/types/core.ts';
import { type StorageClassView, volumeForClaim } from './volumes.ts';

const n = naming('orch');
const cls = (name: string, isDefault: boolean, reclaimPolicy?: string, created = '2026-01-01T00:00:00Z') =>
  ({
    metadata: {
      name,
      creationTimestamp: created,
      ...(isDefault ? { annotations: { [n.annotations.defaultStorageClass]: 'true' } } : {}),
    },
    ...(reclaimPolicy ? { reclaimPolicy } : {}),
  }) as StorageClassView;
const claim = (spec: Record<string, unknown>): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { namespace: 'ns', name: 'data', uid: 'u-1' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } }, ...spec },
});
const classes = [
  cls('standard', true),
  cls('keep', false, 'Retain'),
  cls('newer', true, undefined, '2026-02-01T00:00:00Z'),
];

describe('volumeForClaim', () => {
  it('provisions the named class, its reclaim policy, the claim size and modes, bound by claimRef', () => {
    const plan = volumeForClaim(claim({ storageClassName: 'keep', volumeMode: 'Block' }), classes, n);
    expect(plan).toEqual({
      volume: {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pvc-u-1' },
        spec: {
          capacity: { storage: '2Gi' },
          accessModes: ['ReadWriteOnce'],
          claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'ns', name: 'data', uid: 'u-1' },
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: 'keep',
          volumeMode: 'Block',
          hostPath: { path: '/var/lib/simulated-volumes/pvc-u-1', type: 'DirectoryOrCreate' },
        },
      },
    });
  });

  it('takes the newest default class for a claim naming none, reclaiming with Delete by default', () => {
    const plan = volumeForClaim(claim({}), classes, n);
    expect(plan).toMatchObject({
      volume: {
        spec: { storageClassName: 'newer', persistentVolumeReclaimPolicy: 'Delete', volumeMode: 'Filesystem' },
      },
    });
  });

  it.each([
    ['the empty class', claim({ storageClassName: '' }), classes, 'the claim asks for no storage class'],
    ['an unknown class', claim({ storageClassName: 'gold' }), classes, 'storage class "gold" not found'],
    ['no class and no default', claim({}), [cls('keep', false)], 'no default storage class'],
    ['no storage request', claim({ resources: {} }), classes, 'the claim requests no storage'],
  ])('provisions nothing for %s', (_what, c, cs, skip) => {
    expect(volumeForClaim(c, cs, n)).toEqual({ skip });
  });
});
