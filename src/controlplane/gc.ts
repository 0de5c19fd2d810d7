/**
 * What the reference runs beside its API server to make deletion complete: the garbage collector
 * (ownerReferences: background and foreground cascading, orphaning, dangling owners) and the
 * namespace controller (a terminating namespace is emptied, then removed).
 *
 * It reacts to committed changes in a `WorkLoop`: each change is processed on a later tick, outside the commit.
 */
import type { KubeObject, OwnerReference } from '../api/meta.ts';
import { objectKey } from '../api/meta.ts';
import type { ResourceType } from '../api/registry.ts';
import type { ApiServer } from './api.ts';
import { isNamespaceType } from './namespace-label.ts';
import type { Commit } from './storage.ts';
import { type ObjectRef, releaseFinalizer, WorkLoop } from './work-loop.ts';

export class GarbageCollector {
  /** owner uid → dependents naming it. */
  private readonly dependents = new Map<string, Map<string, ObjectRef>>();
  private stopCommits: () => void = () => {};
  private stopped = false;
  /** Each change in order, none merged: a deletion is acted on as the event it was. */
  readonly work = new WorkLoop<Commit>(
    () => this.api.options.log,
    'garbage-collector',
    (c) => this.process(c),
  );

  constructor(private readonly api: ApiServer) {}

  start(): void {
    this.stopCommits = this.api.storage.onCommit((c) => {
      this.index(c);
      if (concernsCollector(c)) this.work.enqueue(c);
    });
  }

  stop(): void {
    this.stopped = true;
    this.work.stop();
    this.stopCommits();
  }

  private index(c: Commit): void {
    const { object, previous, type } = c.event;
    if (!previous?.metadata.ownerReferences && !object.metadata.ownerReferences) return;
    const ref = { rt: c.rt, key: objectKey(object.metadata) };
    const refKey = `${c.rt.group}/${c.rt.plural}/${ref.key}`;
    for (const o of previous?.metadata.ownerReferences ?? []) this.dependents.get(o.uid)?.delete(refKey);
    if (type === 'DELETED') return;
    for (const o of object.metadata.ownerReferences ?? []) {
      let deps = this.dependents.get(o.uid);
      if (!deps) {
        deps = new Map();
        this.dependents.set(o.uid, deps);
      }
      deps.set(refKey, ref);
    }
  }

  private process(c: Commit): void {
    const { type, object, previous } = c.event;
    if (type === 'DELETED') {
      const uid = object.metadata.uid;
      if (uid) this.ownerGone(uid);
      // A dependent leaving may unblock its owners' foreground deletion.
      for (const o of object.metadata.ownerReferences ?? []) this.reviewOwner(o.uid);
      return;
    }
    const current = this.api.storage.get(c.rt, objectKey(object.metadata));
    if (!current) return;
    if (current.metadata.deletionTimestamp) {
      if (isNamespaceType(c.rt)) this.emptyNamespace(current);
      this.reviewOwner(current.metadata.uid ?? '');
    }
    if (type === 'ADDED' || !sameOwners(previous, current)) this.checkDangling(c.rt, current);
  }

  /** Every owner of `obj` named by uid is gone: delete it; some gone: drop those references. */
  private checkDangling(rt: ResourceType, obj: KubeObject): void {
    const owners = obj.metadata.ownerReferences ?? [];
    if (owners.length === 0) return;
    const live = owners.filter((o) => this.api.storage.locate(o.uid));
    if (live.length === owners.length) return;
    if (live.length === 0) this.deleteDependent(rt, obj, 'Background');
    else this.rewriteOwners(rt, obj, live);
  }

  private ownerGone(uid: string): void {
    const deps = this.dependents.get(uid);
    this.dependents.delete(uid);
    for (const ref of deps?.values() ?? []) {
      const obj = this.api.storage.get(ref.rt, ref.key);
      if (obj) this.checkDangling(ref.rt, obj);
    }
  }

  /** An owner being deleted: orphan or cascade to its dependents, then release its finalizer. */
  private reviewOwner(uid: string): void {
    const where = this.api.storage.locate(uid);
    if (!where) return;
    const owner = this.api.storage.get(where.rt, where.key);
    if (!owner?.metadata.deletionTimestamp) return;
    const finalizers = owner.metadata.finalizers ?? [];
    const deps = [...(this.dependents.get(uid)?.values() ?? [])]
      .map((r) => ({ ref: r, obj: this.api.storage.get(r.rt, r.key) }))
      .filter((d): d is { ref: ObjectRef; obj: KubeObject } => d.obj !== undefined);
    if (finalizers.includes('orphan')) {
      for (const d of deps) {
        const rest = (d.obj.metadata.ownerReferences ?? []).filter((o) => o.uid !== uid);
        this.rewriteOwners(d.ref.rt, d.obj, rest);
      }
      this.removeFinalizer(where.rt, owner, 'orphan');
    } else if (finalizers.includes('foregroundDeletion')) {
      for (const d of deps) if (!d.obj.metadata.deletionTimestamp) this.deleteDependent(d.ref.rt, d.obj, 'Foreground');
      const blocking = deps.some((d) =>
        d.obj.metadata.ownerReferences?.some((o) => o.uid === uid && o.blockOwnerDeletion),
      );
      if (!blocking) this.removeFinalizer(where.rt, owner, 'foregroundDeletion');
    }
  }

  private emptyNamespace(ns: KubeObject): void {
    const name = ns.metadata.name ?? '';
    let remaining = 0;
    for (const rt of this.api.registry.all) {
      if (!rt.namespaced || rt.virtual || rt.storedAs) continue;
      for (const obj of this.api.storage.list(rt, name)) {
        remaining++;
        if (!obj.metadata.deletionTimestamp) this.deleteDependent(rt, obj, 'Background');
      }
    }
    if (remaining === 0) {
      const nsType = this.api.registry.resource('', 'v1', 'namespaces')!;
      this.work.add(() => this.api.storage.backend.remove(nsType, name));
    } else {
      // Contents are going; look again once their deletions have been committed.
      setTimeout(() => {
        const current = this.api.storage.get(this.api.registry.resource('', 'v1', 'namespaces')!, name);
        if (current && !this.stopped) this.emptyNamespace(current);
      }, 200).unref();
    }
  }

  private deleteDependent(rt: ResourceType, obj: KubeObject, propagationPolicy: 'Background' | 'Foreground'): void {
    this.work.add(() => this.api.deleteObject(rt, obj, { dryRun: false, propagationPolicy }));
  }

  private rewriteOwners(rt: ResourceType, obj: KubeObject, owners: OwnerReference[]): void {
    const metadata = { ...obj.metadata, ownerReferences: owners.length ? owners : undefined };
    if (!metadata.ownerReferences) delete metadata.ownerReferences;
    this.work.add(() => this.api.storage.backend.update(rt, { ...obj, metadata }, obj.metadata.resourceVersion));
  }

  private removeFinalizer(rt: ResourceType, obj: KubeObject, finalizer: string): void {
    this.work.add(() => releaseFinalizer(this.api.storage, rt, obj, finalizer));
  }
}

function sameOwners(a: KubeObject | undefined, b: KubeObject): boolean {
  const ua = (a?.metadata.ownerReferences ?? []).map((o) => o.uid).join(',');
  const ub = (b.metadata.ownerReferences ?? []).map((o) => o.uid).join(',');
  return ua === ub;
}

/**
 * Whether processing a change can do anything: a deletion (of a possible owner or dependent), or an object that
 * has owners or is being deleted. Any later change that gives an object owners or a deletionTimestamp is a change
 * of its own, processed then.
 */
function concernsCollector(c: Commit): boolean {
  const { type, object } = c.event;
  return type === 'DELETED' || !!object.metadata.ownerReferences?.length || !!object.metadata.deletionTimestamp;
}
