/**
 * Pod expectations: a pod the controller created must show up in the cache, and one it deleted must go
 * (or terminate), before its set is synced again; otherwise a slow cache would make the controller create
 * or delete the same pod twice. An expectation the cache never meets is dropped after a TTL.
 *
 * A create is expected before its request is sent and met by the informer's add of that name (or the pod
 * in the cache), as the reference's ControllerExpectations count adds: a pod someone else deletes before
 * the set is looked at again (a node agent deleting by name) is then still seen as created, instead of
 * holding the set for the whole TTL.
 */
import type { Pod } from '../../src/api/types/core.ts';
import { isTerminating } from './pods.ts';

/** The reference's ReplicaSet expectation lifetime. */
export const EXPECTATION_TTL_MS = 5 * 60_000;

interface Expectation {
  name: string;
  /** Set for a delete: the UID that must go (or terminate). */
  uid?: string;
  atMs: number;
}

export class PodExpectations {
  private readonly bySet = new Map<string, Expectation[]>();

  constructor(private readonly nowMs: () => number) {}

  /** Call before sending the create, so an add the cache delivers at once is not missed. */
  expectCreate(setKey: string, name: string): void {
    this.add(setKey, { name, atMs: this.nowMs() });
  }

  /** The cache added a pod of that name, or its create failed: the create is no longer awaited. */
  createObserved(setKey: string, name: string): void {
    const list = this.bySet.get(setKey);
    if (!list) return;
    const rest = list.filter((e) => e.uid !== undefined || e.name !== name);
    if (rest.length) this.bySet.set(setKey, rest);
    else this.bySet.delete(setKey);
  }

  expectDelete(setKey: string, name: string, uid: string): void {
    this.add(setKey, { name, uid, atMs: this.nowMs() });
  }

  /** Whether some write is not in the cache yet; `lookup` reads the cache. Met and expired ones are dropped. */
  pending(setKey: string, lookup: (name: string) => Pod | undefined): boolean {
    const list = this.bySet.get(setKey);
    if (!list) return false;
    const now = this.nowMs();
    const open = list.filter((e) => {
      if (now - e.atMs > EXPECTATION_TTL_MS) return false;
      const pod = lookup(e.name);
      if (e.uid === undefined) return !pod;
      return pod !== undefined && pod.metadata.uid === e.uid && !isTerminating(pod);
    });
    if (open.length) this.bySet.set(setKey, open);
    else this.bySet.delete(setKey);
    return open.length > 0;
  }

  forget(setKey: string): void {
    this.bySet.delete(setKey);
  }

  private add(setKey: string, e: Expectation): void {
    this.bySet.set(setKey, [...(this.bySet.get(setKey) ?? []), e]);
  }
}
