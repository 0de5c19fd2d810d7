/**
 * client-go's SharedInformer: one reflector feeding one indexed store, fanned out to any number of
 * handlers. Each handler has its own FIFO of notifications, drained asynchronously and in order,
 * so a handler that awaits holds up only itself, never the reflector or the other handlers.
 */

import type { KubeObject } from '../api/meta.ts';
import { type Clock, realClock, type Timer } from '../util/clock.ts';
import { Fifo } from '../util/fifo.ts';
import { type ListerWatcher, Reflector, type ReflectorOptions } from './reflector.ts';
import { type IndexFunc, keyOf, Store } from './store.ts';

/** An object that vanished while we were not watching: its last known state, under its key. */
export interface DeletedFinalStateUnknown<T> {
  key: string;
  obj: T;
  tombstone: true;
}

export function isTombstone<T>(obj: T | DeletedFinalStateUnknown<T>): obj is DeletedFinalStateUnknown<T> {
  return (obj as DeletedFinalStateUnknown<T>).tombstone === true;
}

/** The object a delete notification is about, tombstone or not. */
export function unwrapTombstone<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return isTombstone(obj) ? obj.obj : obj;
}

/** Handlers may return a promise: the next notification for the same handler waits for it. */
export interface ResourceEventHandler<T> {
  add?(obj: T): unknown;
  update?(oldObj: T, newObj: T): unknown;
  delete?(obj: T | DeletedFinalStateUnknown<T>): unknown;
}

export interface HandlerRegistration {
  /** True once the informer synced and this handler has processed everything in that first state. */
  hasSynced(): boolean;
  /** Stops delivering to the handler; notifications still queued are dropped. */
  remove(): void;
}

/** Read access to the cache. Objects are shared with the cache: never mutate them. */
export interface Lister<T> {
  get(namespace: string | undefined, name: string): T | undefined;
  /** Every object, or those of one namespace. */
  list(namespace?: string): T[];
  byIndex(indexName: string, value: string): T[];
}

export interface SharedInformerOptions<T extends KubeObject> extends ReflectorOptions {
  /** Resync period for handlers that do not name their own; 0 or absent means none. */
  resyncMs?: number;
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Drop `metadata.managedFields` from what is cached, as the reference's controller manager does: controllers
   * never read them, and they are a large share of each object. An update sent from a cached copy leaves the
   * server's own untouched (omitted, not emptied). Watches then ask for the kinds the client reads from protobuf
   * (pods) as protobuf, read without them.
   */
  trimManagedFields?: boolean;
}

function trimmed<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields) obj.metadata.managedFields = undefined;
  return obj;
}

/** client-go's minimum handler resync period. */
export const MIN_RESYNC_MS = 1000;

type Notification<T> =
  | { kind: 'add'; obj: T }
  | { kind: 'update'; old: T; obj: T }
  | { kind: 'delete'; obj: T | DeletedFinalStateUnknown<T> };

export class SharedInformer<T extends KubeObject = KubeObject> {
  readonly name: string;
  private readonly store: Store<T>;
  private readonly reflector: Reflector<T>;
  private readonly clock: Clock;
  private readonly listeners = new Set<Listener<T>>();
  private readonly syncWaiters = new Set<(err?: Error) => void>();
  private readonly onError: (err: unknown) => void;
  private synced = false;
  private state: 'new' | 'running' | 'stopped' = 'new';

  constructor(
    lw: ListerWatcher<T>,
    private readonly opts: SharedInformerOptions<T>,
  ) {
    this.name = opts.name;
    this.clock = opts.clock ?? realClock;
    this.onError = opts.onError ?? (() => {});
    this.store = new Store<T>(opts.indexers);
    const trim = opts.trimManagedFields ? trimmed : (obj: T) => obj;
    this.reflector = new Reflector<T>(
      lw,
      {
        add: (obj) => this.upsert(trim(obj)),
        update: (obj) => this.upsert(trim(obj)),
        delete: (obj) => this.remove(obj),
        replace: (items, rv) => {
          if (opts.trimManagedFields) for (const obj of items instanceof Store ? items.list() : items) trimmed(obj);
          this.replace(items, rv);
        },
        emptyCopy: () => this.store.emptyCopy(),
      },
      { ...opts, withoutManagedFields: opts.trimManagedFields },
    );
  }

  /**
   * Registers a handler. Once the informer is running, it first gets an add for every cached
   * object. `resyncMs` (default: the informer's) re-delivers every cached object as update(obj, obj).
   */
  addEventHandler(handler: ResourceEventHandler<T>, resyncMs = this.opts.resyncMs ?? 0): HandlerRegistration {
    if (this.state === 'stopped') throw new Error(`informer ${this.name} is stopped; the handler was not added`);
    const period = resyncMs > 0 ? Math.max(MIN_RESYNC_MS, resyncMs) : 0;
    const listener = new Listener<T>(
      handler,
      period,
      this.clock,
      () => this.store.list(),
      (err) =>
        this.onError(
          new Error(`informer ${this.name}: handler failed: ${(err as Error)?.message ?? err}`, { cause: err }),
        ),
    );
    this.listeners.add(listener);
    if (this.state === 'running') {
      for (const obj of this.store.list()) listener.push({ kind: 'add', obj });
      listener.start();
    }
    if (this.synced) listener.markSynced();
    return {
      hasSynced: () => listener.hasSynced(),
      remove: () => {
        listener.stop();
        this.listeners.delete(listener);
      },
    };
  }

  /** Adds an index to the cache (objects already cached are indexed at once). */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.store.addIndexer(name, fn);
  }

  lister(): Lister<T> {
    const store = this.store;
    return {
      get: (namespace, name) => store.get(namespace ? `${namespace}/${name}` : name),
      list: (namespace) => (namespace === undefined ? store.list() : store.byNamespace(namespace)),
      byIndex: (indexName, value) => store.byIndex(indexName, value),
    };
  }

  /** The cache itself, for indexKeys and other reads; write to it only through the informer. */
  getStore(): Store<T> {
    return this.store;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion();
  }

  isRunning(): boolean {
    return this.state === 'running';
  }

  start(): void {
    if (this.state !== 'new') throw new Error(`informer ${this.name} cannot start: it is ${this.state}`);
    this.state = 'running';
    for (const l of this.listeners) l.start();
    this.reflector.start();
  }

  /** Resolves once the cache holds a full state; rejects on timeout, abort or stop, naming the informer. */
  waitForSync(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const finish = (err?: Error) => {
        this.clock.clearTimeout(timer);
        this.syncWaiters.delete(finish);
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const onAbort = () => finish(new Error(`waiting for informer ${this.name} to sync was cancelled`));
      const timer = this.clock.setTimeout(
        () => finish(new Error(`informer ${this.name} did not sync within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.syncWaiters.add(finish);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Stops the reflector, the resync timers and the handlers' queues; cannot be restarted. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    for (const l of this.listeners) l.stop();
    for (const finish of [...this.syncWaiters]) finish(new Error(`informer ${this.name} stopped before it synced`));
    await this.reflector.stop();
  }

  private upsert(obj: T): void {
    const old = this.store.get(keyOf(obj));
    this.store.add(obj);
    this.notify(old ? { kind: 'update', old, obj } : { kind: 'add', obj });
  }

  private remove(obj: T): void {
    this.store.delete(obj);
    this.notify({ kind: 'delete', obj });
  }

  /**
   * A relist: adds for new objects, updates for objects whose resourceVersion changed, and
   * tombstones for cached objects the list no longer has (their deletion was never seen).
   */
  private replace(items: readonly T[] | Store<T>, rv: string): void {
    const previous = this.store.replace(items, rv);
    for (const [key, obj] of this.store.entries()) {
      const old = previous.get(key);
      if (!old) this.notify({ kind: 'add', obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.notify({ kind: 'update', old, obj });
    }
    for (const [key, obj] of previous) {
      if (!this.store.has(key)) this.notify({ kind: 'delete', obj: { key, obj, tombstone: true } });
    }
    if (this.synced) return;
    this.synced = true;
    for (const l of this.listeners) l.markSynced();
    for (const finish of [...this.syncWaiters]) finish();
  }

  private notify(n: Notification<T>): void {
    for (const l of this.listeners) l.push(n);
  }
}

/** One handler's queue (client-go's processorListener): unbounded, in order, never coalesced. */
class Listener<T> {
  private readonly queue = new Fifo<Notification<T>>();
  private draining = false;
  private stopped = false;
  private pushed = 0;
  private processed = 0;
  /** How many notifications make up the first full state; undefined until the informer syncs. */
  private syncMark: number | undefined;
  private timer: Timer | undefined;

  constructor(
    private readonly handler: ResourceEventHandler<T>,
    private readonly resyncMs: number,
    private readonly clock: Clock,
    private readonly snapshot: () => T[],
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    if (this.resyncMs > 0 && !this.stopped) this.armResync();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.clear();
  }

  markSynced(): void {
    this.syncMark = this.pushed;
  }

  hasSynced(): boolean {
    return this.syncMark !== undefined && this.processed >= this.syncMark;
  }

  push(n: Notification<T>): void {
    if (this.stopped) return;
    this.queue.push(n);
    this.pushed++;
    if (this.draining) return;
    this.draining = true;
    // Never run the handler on the caller's stack: the reflector must not wait for it.
    queueMicrotask(() => void this.drain());
  }

  /** Runs the queue dry, one notification at a time; ends when it is empty or the listener stops. */
  private async drain(): Promise<void> {
    while (!this.stopped && this.queue.length > 0) {
      const n = this.queue.shift();
      try {
        const result = this.deliver(n);
        if (isThenable(result)) await result;
      } catch (err) {
        this.onError(err);
      }
      this.processed++;
    }
    this.draining = false;
  }

  private deliver(n: Notification<T>): unknown {
    switch (n.kind) {
      case 'add':
        return this.handler.add?.(n.obj);
      case 'update':
        return this.handler.update?.(n.old, n.obj);
      case 'delete':
        return this.handler.delete?.(n.obj);
    }
  }

  private armResync(): void {
    this.timer = this.clock.setTimeout(() => {
      for (const obj of this.snapshot()) this.push({ kind: 'update', old: obj, obj });
      this.armResync();
    }, this.resyncMs);
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as PromiseLike<unknown> | null)?.then === 'function';
}
