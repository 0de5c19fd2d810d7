/**
 * PersistentVolume (core `v1`, cluster-scoped) and StorageClass (`storage.<suffix>/v1`, cluster-scoped), the
 * reference's rules in part: a volume needs a storage capacity, access modes from the known set, a known reclaim
 * policy and volume mode; a class needs a provisioner, and its provisioner, parameters and reclaim policy never
 * change. Field types are checked against the kind's schema.
 */

import {
  deepEqual,
  type FieldError,
  forbidden,
  index,
  notSupported,
  required,
  validateImmutableField,
} from '../../api/field-errors.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import { arr, isObj, type Obj, obj, rootProblem, schemaShapeErrors, str } from './raw.ts';

const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];
const VOLUME_RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const CLASS_RECLAIM_POLICIES = ['Delete', 'Retain'];
const VOLUME_MODES = ['Block', 'Filesystem'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];

/** A string field, when set, must be one of `allowed`. */
function oneOf(value: unknown, allowed: readonly string[], path: string): FieldError[] {
  const v = str(value);
  return v !== undefined && !allowed.includes(v) ? [notSupported(path, v, allowed)] : [];
}

export function validatePersistentVolumeCreate(o: unknown): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const pv = o as Obj;
  const errs = schemaShapeErrors(o, 'PersistentVolume');
  errs.push(...validateObjectMeta(pv.metadata, false, nameIsDNSSubdomain));
  const spec = obj(pv.spec) ?? {};
  const modes = arr(spec.accessModes) ?? [];
  if (modes.length === 0) errs.push(required('spec.accessModes'));
  for (const [i, m] of modes.entries()) errs.push(...oneOf(m, ACCESS_MODES, index('spec.accessModes', i)));
  if (str(obj(spec.capacity)?.storage) === undefined) errs.push(required('spec.capacity.storage'));
  errs.push(
    ...oneOf(spec.persistentVolumeReclaimPolicy, VOLUME_RECLAIM_POLICIES, 'spec.persistentVolumeReclaimPolicy'),
  );
  errs.push(...oneOf(spec.volumeMode, VOLUME_MODES, 'spec.volumeMode'));
  const claim = obj(spec.claimRef);
  if (claim && !str(claim.name)) errs.push(required('spec.claimRef.name'));
  return errs;
}

export function validatePersistentVolumeUpdate(o: unknown, old: unknown): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = validateObjectMetaUpdate(o.metadata, obj(old)?.metadata);
  errs.push(...validatePersistentVolumeCreate(o));
  const mode = (v: unknown) => str(obj(obj(v)?.spec)?.volumeMode);
  errs.push(...validateImmutableField(mode(o), mode(old), 'spec.volumeMode'));
  return errs;
}

/** A new volume is retained when released and holds a filesystem, as the reference defaults it. */
export function defaultPersistentVolume(o: unknown): void {
  const spec = obj(obj(o)?.spec);
  if (!spec) return;
  spec.persistentVolumeReclaimPolicy ??= 'Retain';
  spec.volumeMode ??= 'Filesystem';
  defaultHostPath(spec.hostPath);
}

/** A hostPath's type is a pointer the reference sets to `""` (no check of what is at the path). */
export function defaultHostPath(source: unknown): void {
  const hostPath = obj(source);
  if (hostPath) hostPath.type ??= '';
}

/** A claim holds a filesystem unless it says otherwise. */
export function defaultPersistentVolumeClaim(o: unknown): void {
  const spec = obj(obj(o)?.spec);
  if (spec) spec.volumeMode ??= 'Filesystem';
}

export function validateStorageClassCreate(o: unknown): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const sc = o as Obj;
  const errs = schemaShapeErrors(o, 'StorageClass');
  errs.push(...validateObjectMeta(sc.metadata, false, nameIsDNSSubdomain));
  if (!str(sc.provisioner)) errs.push(required('provisioner'));
  errs.push(...oneOf(sc.reclaimPolicy, CLASS_RECLAIM_POLICIES, 'reclaimPolicy'));
  errs.push(...oneOf(sc.volumeBindingMode, BINDING_MODES, 'volumeBindingMode'));
  return errs;
}

export function validateStorageClassUpdate(o: unknown, old: unknown): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const prev = obj(old) ?? {};
  const errs = validateObjectMetaUpdate(o.metadata, prev.metadata);
  errs.push(...validateStorageClassCreate(o));
  for (const f of ['parameters', 'provisioner', 'reclaimPolicy'])
    if (!deepEqual(o[f], prev[f])) errs.push(forbidden(f, `updates to ${f} are forbidden.`));
  errs.push(...validateImmutableField(o.volumeBindingMode, prev.volumeBindingMode, 'volumeBindingMode'));
  return errs;
}

/** A class deletes its volumes when released and binds them at once unless it says otherwise. */
export function defaultStorageClass(o: unknown): void {
  if (!isObj(o)) return;
  o.reclaimPolicy ??= 'Delete';
  o.volumeBindingMode ??= 'Immediate';
}
