/** PersistentVolume and StorageClass rules: what a create needs, what an update may not change, the defaults. */
import { describe, expect, it } from 'vitest';
import {
  defaultPersistentVolume,
  defaultStorageClass,
  validatePersistentVolumeCreate,
  validatePersistentVolumeUpdate,
  validateStorageClassCreate,
  validateStorageClassUpdate,
} from './storage.ts';

const volume = (spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-1' },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' }, ...spec },
});
const storageClass = (fields: Record<string, unknown> = {}) => ({
  apiVersion: 'storage.orch.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'fast', resourceVersion: '1' },
  provisioner: 'example.com/p',
  ...fields,
});
const fields = (errs: { field: string }[]) => errs.map((e) => e.field);

describe('PersistentVolume', () => {
  it('accepts a complete volume', () => {
    expect(validatePersistentVolumeCreate(volume())).toEqual([]);
  });

  it.each([
    [{ capacity: {} }, ['spec.capacity.storage']],
    [{ accessModes: [] }, ['spec.accessModes']],
    [{ accessModes: ['ReadWriteSometimes'] }, ['spec.accessModes[0]']],
    [{ persistentVolumeReclaimPolicy: 'Shred' }, ['spec.persistentVolumeReclaimPolicy']],
    [{ volumeMode: 'Tape' }, ['spec.volumeMode']],
    [{ claimRef: { namespace: 'ns' } }, ['spec.claimRef.name']],
    [{ accessModes: 'ReadWriteOnce' }, ['spec.accessModes', 'spec.accessModes']],
  ])('refuses spec %j naming %j', (spec, expected) => {
    expect(fields(validatePersistentVolumeCreate(volume(spec)))).toEqual(expected);
  });

  it('defaults Retain and Filesystem, and keeps the volume mode on update', () => {
    const v = volume();
    defaultPersistentVolume(v);
    expect(v.spec).toMatchObject({ persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem' });
    const old = { ...v, metadata: { ...v.metadata, resourceVersion: '1' } };
    const next = { ...old, spec: { ...v.spec, volumeMode: 'Block' } };
    expect(fields(validatePersistentVolumeUpdate(next, old))).toEqual(['spec.volumeMode']);
  });
});

describe('StorageClass', () => {
  it('accepts a class and defaults Delete and Immediate', () => {
    const sc = storageClass();
    expect(validateStorageClassCreate(sc)).toEqual([]);
    defaultStorageClass(sc);
    expect(sc).toMatchObject({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
  });

  it.each([
    [{ provisioner: undefined }, ['provisioner']],
    [{ reclaimPolicy: 'Recycle' }, ['reclaimPolicy']],
    [{ volumeBindingMode: 'Later' }, ['volumeBindingMode']],
  ])('refuses %j naming %j', (change, expected) => {
    expect(fields(validateStorageClassCreate(storageClass(change)))).toEqual(expected);
  });

  it('forbids changing the provisioner, parameters, reclaim policy and binding mode', () => {
    const old = storageClass({ parameters: { a: '1' }, reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
    const next = storageClass({
      provisioner: 'example.com/q',
      parameters: { a: '2' },
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    const errs = validateStorageClassUpdate(next, old);
    expect(fields(errs)).toEqual(['parameters', 'provisioner', 'reclaimPolicy', 'volumeBindingMode']);
    expect(errs[1].message).toBe('provisioner: Forbidden: updates to provisioner are forbidden.');
  });
});
