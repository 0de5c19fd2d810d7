/**
 * In-memory object storage: one monotonic resourceVersion counter, per-resource object maps kept
 * in key order, a bounded event history per resource (for watch resume and exact-version lists),
 * and list snapshots for consistent paging.
 *
 * Stored objects are never mutated: every write stores a new object, so snapshots, history entries
 * and watch events can share references. Everything here is synchronous, which makes each write
 * atomic with its precondition check. A persistent backend subscribes to `onCommit` (a journal of
 * every committed change), reports what it has made durable through `markDurable`, and loads what it
 * kept through `restore` at start. While a journal is attached (`holdUntilDurable`), watchers see a
 * change only once it is durable, and `durable()` tells a request when it may answer.
 *
 * Writes go through `backend`. By default it writes here directly; with etcd, this storage is the watch
 * cache of etcd's revision stream (`applyPut`/`applyDelete`), and the backend writes to etcd.
 *
 * A resource that is a view of another's objects (`storedAs`: events-group Events are core Events) has
 * no store of its own: every call reads and writes the stored resource, converting objects in and out,
 * so both APIs see one set of objects, one resourceVersion sequence and one watch stream.
 */
import type { KubeObject } from '../api/meta.ts';
import { objectKey, splitKey } from '../api/meta.ts';
import type { ResourceType, StoredAs } from '../api/registry.ts';
import { newSnapshotId } from './continue-token.ts';
import { ApiError, alreadyExists, conflict, notFound, STALE_OBJECT, tooOldResourceVersion } from './errors.ts';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  type: ChangeType;
  rv: number;
  /** The object after the change (for DELETED: the last state, with the deletion's resourceVersion). */
  object: KubeObject;
  /** The object before the change (MODIFIED and DELETED). */
  previous?: KubeObject;
}

export interface WatchSubscriber {
  deliver(event: StoredEvent): void;
  /** Ends the watch (its client will list again). */
  stop(): void;
}

export interface StorageOptions {
  /** Events retained per resource for watch resume; older ones answer 410. */
  historySize: number;
  /** How many list snapshots (for `continue`) are kept at once, least recently used evicted first. */
  maxSnapshots: number;
  /** What an object a backend kept (perhaps written by an older version) becomes as it is loaded. */
  loaded: (object: KubeObject) => KubeObject;
}

export const DEFAULT_STORAGE_OPTIONS: StorageOptions = { historySize: 5000, maxSnapshots: 256, loaded: (o) => o };

/** A consistent view of one resource at a resourceVersion, sorted by key. */
export interface Snapshot {
  /** Random: a continue token names it, and nobody may reach another's by guessing. */
  id: string;
  /** The list it was taken for (resource, namespace, selectors): only that list may page through it. */
  scope: string;
  rv: number;
  createdAt: number;
  items: readonly KubeObject[];
}

class ResourceStore {
  readonly items = new Map<string, KubeObject>();
  readonly watchers = new Set<WatchSubscriber>();
  /** Ring buffer of the latest events, oldest at `head`. */
  private readonly history: StoredEvent[] = [];
  private head = 0;
  /** Events with rv at or below this were dropped from history. */
  compactedRv = 0;
  private sortedKeys: string[] | undefined;
  /** Keys flagged unreadable by fault injection, as if the stored bytes could not be decoded. */
  readonly corrupt = new Set<string>();

  constructor(private readonly historySize: number) {}

  record(event: StoredEvent): void {
    if (this.history.length < this.historySize) {
      this.history.push(event);
    } else {
      this.compactedRv = this.history[this.head].rv;
      this.history[this.head] = event;
      this.head = (this.head + 1) % this.historySize;
    }
  }

  deliver(event: StoredEvent): void {
    for (const w of this.watchers) w.deliver(event);
  }

  /** Events with rv greater than `from`, oldest first; throws 410 when some were dropped. */
  eventsSince(from: number): StoredEvent[] {
    if (from < this.compactedRv) throw tooOldResourceVersion(from, this.compactedRv);
    const ordered = this.ordered();
    let lo = 0;
    let hi = ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ordered[mid].rv <= from) lo = mid + 1;
      else hi = mid;
    }
    return ordered.slice(lo);
  }

  compact(upTo: number): void {
    const kept = this.ordered().filter((e) => e.rv > upTo);
    this.history.length = 0;
    this.history.push(...kept);
    this.head = 0;
    this.compactedRv = Math.max(this.compactedRv, upTo);
  }

  private ordered(): StoredEvent[] {
    return this.head === 0 ? this.history : [...this.history.slice(this.head), ...this.history.slice(0, this.head)];
  }

  keysInOrder(): string[] {
    this.sortedKeys ??= [...this.items.keys()].sort();
    return this.sortedKeys;
  }

  keysChanged(): void {
    this.sortedKeys = undefined;
  }
}

/**
 * Where writes are made: into the storage itself (memory, LevelDB through the journal), or into etcd,
 * whose changes then reach the storage, its watch cache, through the revision stream.
 */
export interface StorageBackend {
  /** Stores `obj`, which the caller hands over: it may become the stored object and must not be changed after. */
  create(rt: ResourceType, obj: KubeObject): Promise<KubeObject>;
  /** `expectedRv` (when given) must equal the stored resourceVersion, else 409. */
  update(rt: ResourceType, obj: KubeObject, expectedRv?: string): Promise<KubeObject>;
  /** Removes an object (or the unreadable bytes of a corrupt one). */
  remove(rt: ResourceType, key: string, expectedRv?: string): Promise<KubeObject>;
  /** Resolves once the storage shows every change of `rt` made before the call (a consistent read). */
  caughtUp(rt: ResourceType): Promise<void>;
  /** Compacts the backing store's history up to now (fault injection). */
  compact(): Promise<void>;
  /** Makes an object's stored bytes undecodable (fault injection). */
  corrupt(rt: ResourceType, key: string): Promise<void>;
}

/**
 * A write's compare failed because the object changed: 409 for a request that named the version it
 * expected. `current` is the object as the store had it when the compare failed, read from the store
 * itself, on which a write without a precondition tries again.
 */
export class StaleWrite extends ApiError {
  constructor(
    rt: ResourceType,
    name: string,
    readonly current: KubeObject,
  ) {
    const { code, reason, message, details } = conflict(rt, name, STALE_OBJECT);
    super(code, reason, message, details);
  }
}

export interface Commit {
  rt: ResourceType;
  event: StoredEvent;
}

/** What a persistent backend kept: the objects, the latest events, and the resourceVersion they reach. */
export interface SavedState {
  rv: number;
  objects: { rt: ResourceType; object: KubeObject }[];
  /** Oldest first; events at or below `keptAfter` were not kept, so watches from there answer 410. */
  events: Commit[];
  keptAfter: number;
  /** Keys whose stored bytes do not decode. */
  corrupt?: { rt: ResourceType; key: string }[];
}

export class Storage {
  private rv = 0;
  private readonly stores = new Map<ResourceType, ResourceStore>();
  private readonly byUid = new Map<string, { rt: ResourceType; key: string }>();
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly commitListeners = new Set<(c: Commit) => void>();
  private readonly purgeListeners = new Set<(rt: ResourceType, key: string) => void>();
  /** Committed changes not yet durable, held back from watchers (only while a journal is attached). */
  private undelivered: { s: ResourceStore; event: StoredEvent }[] = [];
  private holding = false;
  private durableRv = 0;
  private durableWaiters: { rv: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  private journalFailure?: Error;
  /** Events at or below this were lost with a restart: every resource's history starts after it. */
  private keptAfter = 0;
  /** Callers waiting for the storage to reach a resourceVersion (the watch cache catching up). */
  private rvWaiters: { rv: number; resolve: () => void }[] = [];
  private loadCount = 0;
  readonly options: StorageOptions;
  /** Where writes go, always for stored resources (never views): see `backend`. */
  private writer: StorageBackend = {
    create: async (rt, obj) => this.create(rt, obj),
    update: async (rt, obj, expectedRv) => this.update(rt, obj, expectedRv),
    remove: async (rt, key, expectedRv) => this.remove(rt, key, expectedRv),
    caughtUp: async () => {},
    compact: async () => {},
    corrupt: async (rt, key) => this.corrupt(rt, key),
  };
  /** Converted views of stored objects, per view; stored objects never change, so a view stays valid. */
  private readonly views = new WeakMap<StoredAs, WeakMap<KubeObject, KubeObject>>();

  /** The write path (memory, or etcd once it is attached); views' writes are converted to their stored resource. */
  readonly backend: StorageBackend = {
    create: async (rt, obj) =>
      this.out(rt, await this.writer.create(storedRt(rt), this.in(rt, obj)).catch(namedAfterView(rt))),
    update: async (rt, obj, expectedRv) =>
      this.out(rt, await this.writer.update(storedRt(rt), this.in(rt, obj), expectedRv)),
    remove: async (rt, key, expectedRv) => this.out(rt, await this.writer.remove(storedRt(rt), key, expectedRv)),
    caughtUp: (rt) => this.writer.caughtUp(storedRt(rt)),
    compact: () => this.writer.compact(),
    corrupt: (rt, key) => this.writer.corrupt(storedRt(rt), key),
  };

  constructor(options: Partial<StorageOptions> = {}) {
    this.options = { ...DEFAULT_STORAGE_OPTIONS, ...options };
  }

  /** How many times objects were loaded whole (`restore`, `replace`), which no commit reports: indexes rebuild then. */
  get loads(): number {
    return this.loadCount;
  }

  /** Makes `backend` write through `writer` (etcd), which sees stored resources only. */
  attachBackend(writer: StorageBackend): void {
    this.writer = writer;
  }

  /** A stored object as `rt` shows it. */
  private out(rt: ResourceType, obj: KubeObject): KubeObject {
    const via = rt.storedAs;
    if (!via) return obj;
    let cache = this.views.get(via);
    if (!cache) {
      cache = new WeakMap();
      this.views.set(via, cache);
    }
    let view = cache.get(obj);
    if (!view) {
      view = via.fromStored(obj);
      cache.set(obj, view);
    }
    return view;
  }

  /** An object `rt` shows, as stored. */
  private in(rt: ResourceType, obj: KubeObject): KubeObject {
    return rt.storedAs ? rt.storedAs.toStored(obj) : obj;
  }

  private outEvent(rt: ResourceType, e: StoredEvent): StoredEvent {
    if (!rt.storedAs) return e;
    const converted: StoredEvent = { ...e, object: this.out(rt, e.object) };
    if (e.previous) converted.previous = this.out(rt, e.previous);
    return converted;
  }

  /** The latest resourceVersion handed out. */
  currentRv(): number {
    return this.rv;
  }

  /** The latest resourceVersion watchers have been told about: the durable one while a journal is attached. */
  deliveredRv(): number {
    return this.holding ? this.durableRv : this.rv;
  }

  /** From now on, watchers see a change only once `markDurable` covers it. */
  holdUntilDurable(): void {
    this.holding = true;
    this.durableRv = this.rv;
  }

  /** Whether everything committed so far is durable. */
  isDurable(): boolean {
    return !this.holding || this.durableRv >= this.rv;
  }

  /** Resolves once everything committed so far is durable; rejects if the journal failed. */
  durable(): Promise<void> {
    if (this.journalFailure) return Promise.reject(this.journalFailure);
    if (this.isDurable()) return Promise.resolve();
    return new Promise((resolve, reject) => this.durableWaiters.push({ rv: this.rv, resolve, reject }));
  }

  /** The journal wrote everything up to `rv`: release it to watchers and to the requests waiting on it. */
  markDurable(rv: number): void {
    this.durableRv = Math.max(this.durableRv, rv);
    let released = 0;
    while (released < this.undelivered.length && this.undelivered[released].event.rv <= this.durableRv) released++;
    for (const { s, event } of this.undelivered.splice(0, released)) s.deliver(event);
    const done = this.durableWaiters.filter((w) => w.rv <= this.durableRv);
    this.durableWaiters = this.durableWaiters.filter((w) => w.rv > this.durableRv);
    for (const w of done) w.resolve();
  }

  /** The journal can no longer write: every request waiting for durability, and every later one, fails. */
  markFailed(err: Error): void {
    this.journalFailure = err;
    for (const w of this.durableWaiters.splice(0)) w.reject(err);
  }

  /** Resolves once the storage has reached resourceVersion `rv`. */
  reached(rv: number): Promise<void> {
    if (this.rv >= rv) return Promise.resolve();
    return new Promise((resolve) => this.rvWaiters.push({ rv, resolve }));
  }

  /** The watch cache has seen everything up to `rv` (changes of other resources, or none of ours). */
  advance(rv: number): void {
    if (rv <= this.rv) return;
    this.rv = rv;
    const done = this.rvWaiters.filter((w) => w.rv <= rv);
    this.rvWaiters = this.rvWaiters.filter((w) => w.rv > rv);
    for (const w of done) w.resolve();
  }

  /** The watch cache's put at revision `rv`: `object` is undefined when the stored bytes do not decode. */
  applyPut(rt: ResourceType, key: string, rv: number, object: KubeObject | undefined): void {
    const s = this.store(rt);
    const previous = s.items.get(key);
    if (!object) this.markCorrupt(rt, key);
    else {
      s.corrupt.delete(key);
      s.items.set(key, object);
      if (!previous) s.keysChanged();
      if (object.metadata.uid) this.byUid.set(object.metadata.uid, { rt, key });
      this.commit(rt, s, previous ? { type: 'MODIFIED', rv, object, previous } : { type: 'ADDED', rv, object });
    }
    this.advance(rv);
  }

  /** The watch cache's delete at revision `rv`. */
  applyDelete(rt: ResourceType, key: string, rv: number): void {
    const s = this.store(rt);
    const previous = s.items.get(key);
    s.corrupt.delete(key);
    if (previous) {
      s.items.delete(key);
      s.keysChanged();
      if (previous.metadata.uid) this.byUid.delete(previous.metadata.uid);
      const object = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rv) } };
      this.commit(rt, s, { type: 'DELETED', rv, object, previous });
    }
    this.advance(rv);
  }

  /** Records an event from before the state the storage was loaded with (watch history reaching back). */
  recordPast(rt: ResourceType, event: StoredEvent): void {
    this.store(rt).record(event);
  }

  /** Loads a backend's saved state into an empty storage. */
  restore(saved: SavedState): void {
    if (this.rv !== 0) throw new Error('restore needs an empty storage');
    this.keptAfter = saved.keptAfter;
    for (const s of this.stores.values()) s.compactedRv = saved.keptAfter;
    this.load(saved);
    this.rv = saved.rv;
    this.durableRv = saved.rv;
    for (const { rt, event } of saved.events) this.store(rt).record(event);
  }

  /**
   * Replaces every object with a fresh load at `saved.rv` (the watch cache lost its place in etcd's
   * stream). As the reference's cacher does, history goes (resumes answer 410) and every open watch
   * ends, so that its client lists again.
   */
  replace(saved: SavedState): void {
    for (const s of this.stores.values()) {
      s.items.clear();
      s.corrupt.clear();
      s.keysChanged();
      s.compact(saved.rv);
      for (const w of [...s.watchers]) w.stop();
    }
    this.byUid.clear();
    this.keptAfter = saved.rv;
    this.load(saved);
    this.advance(saved.rv);
  }

  private load(saved: SavedState): void {
    this.loadCount++;
    for (const { rt, object: kept } of saved.objects) {
      const object = this.options.loaded(kept);
      const s = this.store(rt);
      const key = objectKey(object.metadata);
      s.items.set(key, object);
      s.keysChanged();
      if (object.metadata.uid) this.byUid.set(object.metadata.uid, { rt, key });
    }
    for (const { rt, key } of saved.corrupt ?? []) this.markCorrupt(rt, key);
  }

  private store(rt: ResourceType): ResourceStore {
    const stored = storedRt(rt);
    let s = this.stores.get(stored);
    if (!s) {
      s = new ResourceStore(this.options.historySize);
      s.compactedRv = this.keptAfter;
      this.stores.set(stored, s);
    }
    return s;
  }

  get(rt: ResourceType, key: string): KubeObject | undefined {
    const obj = this.store(rt).items.get(key);
    return obj && this.out(rt, obj);
  }

  isCorrupt(rt: ResourceType, key: string): boolean {
    return this.store(rt).corrupt.has(key);
  }

  corruptKeys(rt: ResourceType): string[] {
    return [...this.store(rt).corrupt];
  }

  /** Where an object with this uid lives, if it exists. */
  locate(uid: string): { rt: ResourceType; key: string } | undefined {
    return this.byUid.get(uid);
  }

  size(rt: ResourceType): number {
    return this.store(rt).items.size;
  }

  /** Current objects in key order, optionally only one namespace's. */
  list(rt: ResourceType, namespace?: string): KubeObject[] {
    const s = this.store(rt);
    const keys = s.keysInOrder();
    const [from, to] = namespace ? namespaceRange(keys, namespace) : [0, keys.length];
    const out = new Array<KubeObject>(to - from);
    for (let i = from; i < to; i++) out[i - from] = this.out(rt, s.items.get(keys[i])!);
    return out;
  }

  /** Objects as they were at resourceVersion `at`, rebuilt from the event history (410 if too old). */
  listAt(rt: ResourceType, at: number, namespace?: string): KubeObject[] {
    const s = this.store(rt);
    const later = s.eventsSince(at);
    if (later.length === 0) return this.list(rt, namespace);
    const overlay = new Map<string, KubeObject | null>();
    for (let i = later.length - 1; i >= 0; i--) {
      const e = later[i];
      overlay.set(objectKey(e.object.metadata), e.type === 'ADDED' || !e.previous ? null : this.out(rt, e.previous));
    }
    const merged = new Map<string, KubeObject>();
    for (const obj of this.list(rt, namespace)) merged.set(objectKey(obj.metadata), obj);
    for (const [key, obj] of overlay) {
      if (namespace && !key.startsWith(`${namespace}/`)) continue;
      if (obj) merged.set(key, obj);
      else merged.delete(key);
    }
    return [...merged.keys()].sort().map((k) => merged.get(k)!);
  }

  /** Events after resourceVersion `from` (410 when history no longer reaches back that far). */
  eventsSince(rt: ResourceType, from: number): StoredEvent[] {
    const events = this.store(rt).eventsSince(from);
    return rt.storedAs ? events.map((e) => this.outEvent(rt, e)) : events;
  }

  watch(rt: ResourceType, subscriber: WatchSubscriber): () => void {
    const s = this.store(rt);
    const converting: WatchSubscriber = rt.storedAs
      ? { deliver: (e) => subscriber.deliver(this.outEvent(rt, e)), stop: () => subscriber.stop() }
      : subscriber;
    s.watchers.add(converting);
    return () => s.watchers.delete(converting);
  }

  watcherCount(rt?: ResourceType): number {
    if (rt) return this.store(rt).watchers.size;
    let n = 0;
    for (const s of this.stores.values()) n += s.watchers.size;
    return n;
  }

  /**
   * Stores `obj` itself with its resourceVersion set, not a copy: the caller hands it over (a create's object is
   * the request's own) and must not change it afterwards.
   */
  create(rt: ResourceType, given: KubeObject): KubeObject {
    const obj = this.in(rt, given);
    const s = this.store(rt);
    const key = objectKey(obj.metadata);
    if (s.items.has(key) || s.corrupt.has(key)) throw alreadyExists(rt, obj.metadata.name ?? '');
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    s.items.set(key, obj);
    s.keysChanged();
    if (obj.metadata.uid) this.byUid.set(obj.metadata.uid, { rt: storedRt(rt), key });
    this.commit(rt, s, { type: 'ADDED', rv: this.rv, object: obj });
    return this.out(rt, obj);
  }

  /**
   * Replaces an object. `expectedRv` (when given) must equal the stored resourceVersion, else 409.
   */
  update(rt: ResourceType, given: KubeObject, expectedRv?: string): KubeObject {
    const obj = this.in(rt, given);
    const s = this.store(rt);
    const key = objectKey(obj.metadata);
    const previous = s.items.get(key);
    if (!previous) throw notFound(rt, obj.metadata.name ?? '');
    if (expectedRv !== undefined && expectedRv !== previous.metadata.resourceVersion) {
      throw conflict(rt, obj.metadata.name ?? '', STALE_OBJECT);
    }
    const stored = this.stamp(obj);
    s.items.set(key, stored);
    this.commit(rt, s, { type: 'MODIFIED', rv: this.rv, object: stored, previous });
    return this.out(rt, stored);
  }

  remove(rt: ResourceType, key: string, expectedRv?: string): KubeObject {
    const s = this.store(rt);
    const previous = s.items.get(key);
    if (!previous) {
      if (s.corrupt.delete(key)) {
        for (const l of this.purgeListeners) l(storedRt(rt), key);
        return { metadata: splitKey(key) };
      }
      throw notFound(rt, splitKey(key).name);
    }
    if (expectedRv !== undefined && expectedRv !== previous.metadata.resourceVersion) {
      throw conflict(rt, previous.metadata.name ?? '', STALE_OBJECT);
    }
    s.items.delete(key);
    s.keysChanged();
    if (previous.metadata.uid) this.byUid.delete(previous.metadata.uid);
    const last = this.stamp(previous);
    this.commit(rt, s, { type: 'DELETED', rv: this.rv, object: last, previous });
    return this.out(rt, last);
  }

  /** Takes a consistent, key-ordered snapshot of a resource for paging the list `scope` names. */
  snapshot(rt: ResourceType, now: number, scope: string, namespace?: string): Snapshot {
    const items = this.list(rt, namespace);
    const snap: Snapshot = { id: newSnapshotId(), scope, rv: this.rv, createdAt: now, items };
    this.snapshots.set(snap.id, snap);
    if (this.snapshots.size > this.options.maxSnapshots) {
      this.snapshots.delete(this.snapshots.keys().next().value!);
    }
    return snap;
  }

  /** A snapshot still held, refreshed as most recently used. */
  takeSnapshot(id: string): Snapshot | undefined {
    const snap = this.snapshots.get(id);
    if (snap) {
      this.snapshots.delete(id);
      this.snapshots.set(id, snap);
    }
    return snap;
  }

  /** Drops watch history up to the current resourceVersion (fault injection: a compaction). */
  compact(rt?: ResourceType): void {
    for (const [type, s] of this.stores) if (!rt || rt === type) s.compact(this.rv);
  }

  /** Marks an object unreadable (fault injection: undecodable bytes in storage). */
  corrupt(rt: ResourceType, key: string): void {
    if (!this.get(rt, key)) throw notFound(rt, splitKey(key).name);
    this.markCorrupt(rt, key);
  }

  private markCorrupt(rt: ResourceType, key: string): void {
    const s = this.store(rt);
    const obj = s.items.get(key);
    if (obj) {
      s.items.delete(key);
      s.keysChanged();
      if (obj.metadata.uid) this.byUid.delete(obj.metadata.uid);
    }
    s.corrupt.add(key);
  }

  onCommit(listener: (c: Commit) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Called when the unreadable bytes of a corrupt object are removed (no event: nothing could be read). */
  onPurge(listener: (rt: ResourceType, key: string) => void): () => void {
    this.purgeListeners.add(listener);
    return () => this.purgeListeners.delete(listener);
  }

  private stamp(obj: KubeObject): KubeObject {
    this.rv += 1;
    return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.rv) } };
  }

  private commit(rt: ResourceType, s: ResourceStore, event: StoredEvent): void {
    s.record(event);
    if (this.holding) this.undelivered.push({ s, event });
    else s.deliver(event);
    for (const l of this.commitListeners) l({ rt: storedRt(rt), event });
  }
}

/** A view's duplicate names the view's resource (`events.events.k8s.io`), as the reference's registry of it does. */
function namedAfterView(rt: ResourceType): (err: unknown) => never {
  return (err) => {
    if (rt.storedAs && err instanceof ApiError && err.reason === 'AlreadyExists') {
      throw alreadyExists(rt, err.details?.name ?? '');
    }
    throw err;
  };
}

/** The resource whose store holds `rt`'s objects. */
function storedRt(rt: ResourceType): ResourceType {
  return rt.storedAs?.rt ?? rt;
}

/** The [from, to) index range of one namespace's keys in a sorted key array. */
function namespaceRange(keys: string[], namespace: string): [number, number] {
  const prefix = `${namespace}/`;
  const lowerBound = (target: string) => {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // '0' is the character after '/', so it bounds every key with this prefix.
  return [lowerBound(prefix), lowerBound(`${namespace}0`)];
}
