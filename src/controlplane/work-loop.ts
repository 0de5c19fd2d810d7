/**
 * The loop of a controller of the plane (the garbage collector, the node and storage controllers): it reacts to
 * committed changes outside the commit, so its own writes never re-enter storage while it notifies. Items are
 * queued as changes come and processed on a later tick, in bounded batches so that a burst cannot starve request
 * handling; the writes they make are tracked until answered (with etcd each takes a round trip). A conflict or a
 * vanished object is no failure: the newer change is queued and will be looked at again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { KubeObject } from '../api/meta.ts';
import { objectKey } from '../api/meta.ts';
import type { ResourceType } from '../api/registry.ts';
import { ApiError } from './errors.ts';
import type { Storage } from './storage.ts';

/** An object to look at again, as its resource and key. */
export interface ObjectRef {
  rt: ResourceType;
  key: string;
}

/** Items processed per tick. */
const BATCH = 500;

export class WorkLoop<T> {
  /** Queued items by key: an item queued again before it is processed is processed once. */
  private readonly queue = new Map<unknown, T>();
  private readonly pending = new Set<Promise<void>>();
  private scheduled = false;
  private stopped = false;

  constructor(
    private readonly log: () => Logger,
    private readonly logger: string,
    private readonly process: (item: T) => void,
  ) {}

  /** Queues `item` for a later tick; `key` names it for deduplication (by default each item is its own). */
  enqueue(item: T, key: unknown = item): void {
    if (this.stopped) return;
    this.queue.set(key, item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    let budget = BATCH;
    for (const [key, item] of this.queue) {
      if (budget-- === 0 || this.stopped) break;
      this.queue.delete(key);
      this.process(item);
    }
    if (this.queue.size && !this.stopped) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  /** Starts a write and tracks it until it is answered. */
  add(write: () => Promise<unknown>): void {
    const done: Promise<void> = write()
      .then(
        () => {},
        (err) => {
          if (err instanceof ApiError && ['Conflict', 'NotFound'].includes(err.reason)) return;
          this.log().error({ err, logger: this.logger }, 'a write failed');
        },
      )
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  stop(): void {
    this.stopped = true;
  }

  /** Nothing queued and every write answered. */
  get idle(): boolean {
    return this.queue.size === 0 && !this.scheduled && this.pending.size === 0;
  }

  /** Resolves true once idle, or false at `deadline` (epoch ms) if it is not by then. */
  async settled(deadline: number): Promise<boolean> {
    while (!this.idle) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      const timer = new AbortController();
      await Promise.race([Promise.all(this.pending), sleep(left, undefined, { signal: timer.signal })]);
      timer.abort();
      await new Promise((r) => setImmediate(r));
    }
    return true;
  }
}

/**
 * Removes one finalizer of an object being deleted, as of the version read (a newer one conflicts): the last one
 * removes the object.
 */
export function releaseFinalizer(
  storage: Storage,
  rt: ResourceType,
  obj: KubeObject,
  finalizer: string,
): Promise<unknown> {
  const finalizers = (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  if (finalizers.length === 0) return storage.backend.remove(rt, objectKey(obj.metadata), obj.metadata.resourceVersion);
  return storage.backend.update(
    rt,
    { ...obj, metadata: { ...obj.metadata, finalizers } },
    obj.metadata.resourceVersion,
  );
}
