/**
 * etcd as the control plane's store (`--etcd-servers`), the reference's model: etcd is authoritative,
 * and the local `Storage` is a watch cache of it.
 *
 * - Each write is one etcd transaction with a precondition: a create needs the key absent
 *   (create_revision 0), an update or delete needs `mod_revision` equal to the resourceVersion it was
 *   computed from (or, unconditional, the key present). A failed compare is a 409 that carries the
 *   object etcd holds now, on which a write without a precondition tries again (api.ts).
 * - An object's resourceVersion is its etcd `mod_revision`; it is not stored in the value.
 * - One etcd watch on the prefix (with previous values) feeds the cache, from the revision of the
 *   initial range. A write answers once the cache has applied its revision, so the next request sees it.
 * - Several control planes may share a prefix: each sees the others' writes through its watch.
 * - Watches resume across a restart: at start the cache's history is primed from etcd's own history
 *   (the last `historySize` revisions, as far as etcd has not compacted them).
 * - If etcd ends that watch (its position compacted away), the cache loads the prefix again: as the
 *   reference's cacher, open watches end and resumes from before answer 410.
 * - etcd is compacted every `compactionIntervalMs` to the revision seen one interval earlier.
 *
 * Keys: `<prefix><apiVersion>/<plural>|<namespace>/<name>`; other keys under the prefix are ignored.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  Etcd3,
  type ICompare,
  type IKeyValue,
  type IRequestOp,
  type ITxnResponse,
  type IWatchResponse,
  type Watcher,
} from 'etcd3';
import type { Logger } from 'pino';
import type { KubeObject } from '../api/meta.ts';
import { objectKey, splitKey } from '../api/meta.ts';
import { apiVersionOf, type ResourceRegistry, type ResourceType } from '../api/registry.ts';
import { alreadyExists, conflict, notFound, STALE_OBJECT, tooLargeResourceVersion } from './errors.ts';
import { decodeObject } from './persistence.ts';
import { type SavedState, StaleWrite, type Storage, type StorageBackend, type StoredEvent } from './storage.ts';
import { toJson } from './watch.ts';

const LOAD_PAGE = 1000;
/** How long a transaction is retried while etcd is unreachable (a restart, a leader election). */
const WRITE_RETRY_MS = 60_000;
const MAX_RETRY_DELAY_MS = 2000;
/** How long a write waits for the cache to show it, and a start for the cache to be primed. */
const CACHE_WAIT_MS = 30_000;
/** How long a consistent read waits for the cache (the reference's 3 s), then 504. */
const CONSISTENT_READ_WAIT_MS = 3000;
/** A key written at start: once the watch delivers it, the history before it has been replayed. */
const STARTED_KEY = '~started';
/** The key through which the control planes sharing an etcd take turns compacting it (the reference's). */
const COMPACT_KEY = 'compact_rev_key';
const UNDECODABLE = Buffer.from([0xff, 0x00, 0x7b]);

export interface EtcdStoreOptions {
  servers: string[];
  prefix: string;
  /** 0 disables compaction. */
  compactionIntervalMs: number;
  log: Logger;
}

export class EtcdStore implements StorageBackend {
  private watcher?: Watcher;
  private compactor?: NodeJS.Timeout;
  /** Revisions at or below this were loaded by the initial range: their events only prime history. */
  private loadedRv = 0;
  private closed = false;
  private readonly byId: Map<string, ResourceType>;

  private constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly storage: Storage,
    registry: ResourceRegistry,
    private readonly log: Logger,
  ) {
    // Views (events-group Events) have no keys of their own: their objects are the stored resource's.
    this.byId = new Map(registry.all.filter((rt) => !rt.storedAs).map((rt) => [resourceId(rt), rt]));
  }

  /** Loads the prefix into an empty `storage`, which from then on follows etcd and writes through it. */
  static async open(storage: Storage, registry: ResourceRegistry, o: EtcdStoreOptions): Promise<EtcdStore> {
    const client = new Etcd3({ hosts: o.servers, dialTimeout: 10_000 });
    const store = new EtcdStore(client, o.prefix, storage, registry, o.log);
    try {
      await store.load();
    } catch (err) {
      await store.close();
      throw new Error(`cannot load the etcd prefix ${o.prefix}: ${(err as Error).message}`);
    }
    storage.attachBackend(store);
    if (o.compactionIntervalMs > 0) store.startCompactor(o.compactionIntervalMs);
    return store;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.compactor);
    await this.watcher?.cancel();
    this.client.close();
  }

  async create(rt: ResourceType, obj: KubeObject): Promise<KubeObject> {
    const key = this.key(rt, objectKey(obj.metadata));
    const value = encode(obj);
    const absent: ICompare = { key, target: 'Create', result: 'Equal', create_revision: 0 };
    const res = await this.txn([absent], [{ request_put: { key, value } }], key, value);
    if (!res.succeeded) {
      await this.seen(Number(res.header.revision));
      throw alreadyExists(rt, obj.metadata.name ?? '');
    }
    return this.written(obj, res);
  }

  async update(rt: ResourceType, obj: KubeObject, expectedRv?: string): Promise<KubeObject> {
    const key = this.key(rt, objectKey(obj.metadata));
    const value = encode(obj);
    const res = await this.txn([precondition(key, expectedRv)], [{ request_put: { key, value } }], key, value);
    if (!res.succeeded) await this.failed(rt, obj.metadata.name ?? '', res);
    return this.written(obj, res);
  }

  async remove(rt: ResourceType, key: string, expectedRv?: string): Promise<KubeObject> {
    const etcdKey = this.key(rt, key);
    const del: IRequestOp = { request_delete_range: { key: etcdKey, prev_kv: true } };
    const res = await this.txn([precondition(etcdKey, expectedRv)], [del], etcdKey);
    if (!res.succeeded) await this.failed(rt, splitKey(key).name, res);
    const rv = Number(res.header.revision);
    await this.seen(rv);
    const previous = res.responses[0].response_delete_range?.prev_kvs[0];
    const last = previous && decodeObject(previous.value.toString());
    // The bytes of a corrupt object are gone; nothing of it could be read.
    return last ? withRv(last, rv) : { metadata: splitKey(key) };
  }

  /**
   * The cache holds `rt` as etcd has it now when it has reached etcd's revision, or (without waiting
   * for changes of other prefixes) when it has reached the latest change of `rt`'s keys and counts as
   * many of them: a delete since then would lower the count, anything else would be a later change.
   */
  async caughtUp(rt: ResourceType): Promise<void> {
    const [key, range_end] = this.range(rt);
    const deadline = Date.now() + CONSISTENT_READ_WAIT_MS;
    const count = () => this.storage.size(rt) + this.storage.corruptKeys(rt).length;
    for (;;) {
      const latest = await this.client.kv.range({
        key,
        range_end,
        sort_target: 'Mod',
        sort_order: 'Descend',
        limit: 1,
        keys_only: true,
      });
      const now = Number(latest.header.revision);
      const tooLarge = () => tooLargeResourceVersion(now, this.storage.currentRv());
      await withTimeout(
        this.storage.reached(Number(latest.kvs[0]?.mod_revision ?? 0)),
        deadline - Date.now(),
        tooLarge,
      );
      if (count() === Number(latest.count) || this.storage.currentRv() >= now) return;
      // A delete not yet seen, or a create seen since the range: look again.
      if (Date.now() > deadline) throw tooLarge();
      await sleep(20);
    }
  }

  /** Puts bytes that do not decode in place of an object. */
  async corrupt(rt: ResourceType, key: string): Promise<void> {
    if (!this.storage.get(rt, key)) throw notFound(rt, splitKey(key).name);
    const put = await this.client.put(this.key(rt, key)).value(UNDECODABLE).exec();
    await this.seen(Number(put.header.revision));
  }

  /** Compacts etcd's history up to its current revision. */
  async compact(): Promise<void> {
    await this.compactTo(await this.currentRevision());
  }

  /** The prefix as etcd has it at one revision, then the cache primed and following from there. */
  private async load(): Promise<void> {
    const state = await this.readAll();
    this.loadedRv = state.rv;
    const historyFrom = await this.oldestKept(Math.max(1, state.rv - this.storage.options.historySize + 1));
    this.storage.restore({ ...state, keptAfter: historyFrom - 1 });
    this.follow(historyFrom);
    const started = await this.client.put(`${this.prefix}${STARTED_KEY}`).value(new Date().toISOString()).exec();
    await this.seen(Number(started.header.revision));
  }

  /** Every object under the prefix, read in pages at the revision of the first one. */
  private async readAll(): Promise<SavedState> {
    const state: SavedState = { rv: 0, objects: [], events: [], keptAfter: 0, corrupt: [] };
    const end = Buffer.from(`${this.prefix}\uffff`);
    let from = Buffer.from(this.prefix);
    let revision: number | undefined;
    for (;;) {
      const page = await this.client.kv.range({ key: from, range_end: end, limit: LOAD_PAGE, revision });
      revision ??= Number(page.header.revision);
      for (const kv of page.kvs) {
        const where = this.parseKey(kv.key);
        if (!where) continue;
        const object = decodeKv(kv);
        if (object) state.objects.push({ rt: where.rt, object });
        else state.corrupt?.push(where);
      }
      if (!page.more || page.kvs.length === 0) break;
      from = Buffer.concat([page.kvs[page.kvs.length - 1].key, Buffer.from([0])]);
    }
    return { ...state, rv: revision, keptAfter: revision };
  }

  /** The cache's one watch on the prefix, from `revision`. */
  private follow(revision: number): void {
    const watcher = this.client.watch().prefix(this.prefix).startRevision(String(revision)).withPreviousKV().watcher();
    let next = revision;
    watcher.on('data', (res: IWatchResponse) => {
      this.apply(res);
      if (res.events.length > 0) next = Number(res.events[res.events.length - 1].kv.mod_revision) + 1;
    });
    // The client resumes a broken watch after the revision etcd had when the watch was created, even if
    // the replay of older events had not arrived: resume after the last event received instead.
    watcher.on('disconnected', () => {
      watcher.request.start_revision = String(next);
    });
    watcher.on('error', (err: Error) => void this.relist(err));
    this.watcher = watcher;
  }

  /**
   * etcd ended the cache's watch (its place in the stream was compacted away): load the prefix again
   * and follow from there, as the reference's cacher relists. Retried until it works or the store closes.
   */
  private async relist(err: Error): Promise<void> {
    this.log.error({ err, prefix: this.prefix }, 'the etcd watch ended; loading the prefix again');
    // etcd has ended that watch already: nothing to cancel.
    this.watcher = undefined;
    for (let delay = 100; !this.closed; delay = Math.min(2 * delay, MAX_RETRY_DELAY_MS)) {
      try {
        const state = await this.readAll();
        this.loadedRv = state.rv;
        this.storage.replace(state);
        this.follow(state.rv + 1);
        return;
      } catch (e) {
        this.log.error({ err: e, prefix: this.prefix }, 'cannot load the prefix from etcd');
        await sleep(delay);
      }
    }
  }

  /** `wanted`, or the revision after the last one etcd has compacted away if that is later. */
  private async oldestKept(wanted: number): Promise<number> {
    try {
      await this.client.kv.range({ key: Buffer.from(this.prefix), revision: wanted, count_only: true });
      return wanted;
    } catch (err) {
      if (!/compacted/.test((err as Error).message)) throw err;
      return this.loadedRv + 1;
    }
  }

  /** Applies a watch response to the cache; changes up to the loaded revision only prime history. */
  private apply(res: IWatchResponse): void {
    for (const ev of res.events) {
      const rv = Number(ev.kv.mod_revision);
      const where = this.parseKey(ev.kv.key);
      if (rv <= this.loadedRv) {
        if (where) this.primeHistory(where.rt, ev.type === 'Put', rv, ev.kv, ev.prev_kv);
      } else if (!where) this.storage.advance(rv);
      else if (ev.type === 'Put') this.storage.applyPut(where.rt, where.key, rv, decodeKv(ev.kv));
      else this.storage.applyDelete(where.rt, where.key, rv);
    }
  }

  private primeHistory(rt: ResourceType, put: boolean, rv: number, kv: IKeyValue, prevKv?: IKeyValue): void {
    const previous = prevKv && decodeKv(prevKv);
    const object = put ? decodeKv(kv) : previous && withRv(previous, rv);
    if (!object) return;
    const event: StoredEvent = put
      ? { type: previous ? 'MODIFIED' : 'ADDED', rv, object, previous }
      : { type: 'DELETED', rv, object, previous };
    this.storage.recordPast(rt, event);
  }

  /**
   * Runs a transaction, retried while etcd is unreachable. A retry may find its own earlier attempt
   * applied (the compare then fails): a key already holding `value` counts as written.
   */
  private async txn(compare: ICompare[], success: IRequestOp[], key: Buffer, value?: Buffer): Promise<ITxnResponse> {
    const request = { compare, success, failure: [{ request_range: { key } }] };
    const deadline = Date.now() + WRITE_RETRY_MS;
    for (let delay = 100, retried = false; ; delay = Math.min(2 * delay, MAX_RETRY_DELAY_MS), retried = true) {
      try {
        const res = await this.client.kv.txn(request);
        const current = res.responses[0]?.response_range?.kvs[0];
        if (!res.succeeded && retried && value && current?.value.equals(value)) {
          return { ...res, succeeded: true, header: { ...res.header, revision: current.mod_revision } };
        }
        return res;
      } catch (err) {
        if (Date.now() + delay > deadline) throw err;
        await sleep(delay);
      }
    }
  }

  /**
   * A failed update or delete: 409 with the object etcd holds now (the failure branch's read, as the
   * reference's GuaranteedUpdate), or 404 if the key is gone.
   */
  private async failed(rt: ResourceType, name: string, res: ITxnResponse): Promise<never> {
    const kv = res.responses[0]?.response_range?.kvs[0];
    const current = kv && decodeKv(kv);
    // A retry starts from `current` at once; any other answer waits for the cache to show why.
    if (current) throw new StaleWrite(rt, name, current);
    await this.seen(Number(res.header.revision));
    throw kv ? conflict(rt, name, STALE_OBJECT) : notFound(rt, name);
  }

  private async written(obj: KubeObject, res: ITxnResponse): Promise<KubeObject> {
    const rv = Number(res.header.revision);
    await this.seen(rv);
    return withRv(obj, rv);
  }

  /** Waits until the cache has applied revision `rv` (read-your-writes). */
  private seen(rv: number): Promise<void> {
    return withTimeout(this.storage.reached(rv), CACHE_WAIT_MS, () =>
      tooLargeResourceVersion(rv, this.storage.currentRv()),
    );
  }

  private async currentRevision(): Promise<number> {
    const res = await this.client.kv.range({ key: Buffer.from(this.prefix), count_only: true });
    return Number(res.header.revision);
  }

  private async compactTo(revision: number): Promise<void> {
    try {
      await this.client.kv.compact({ revision });
    } catch (err) {
      // Another control plane on the same etcd compacted as far already.
      if (!/compacted/.test((err as Error).message)) throw err;
    }
  }

  /**
   * Every interval, compacts to the revision of the previous tick, so at least one interval of history
   * stays. As in the reference, the API servers sharing an etcd take turns through the version of
   * `compact_rev_key`: only the one whose compare-and-swap of it succeeds compacts in that interval.
   */
  private startCompactor(intervalMs: number): void {
    const key = Buffer.from(COMPACT_KEY);
    let previous = 0;
    let version = 0;
    this.compactor = setInterval(() => {
      void (async () => {
        const claim = await this.client.kv.txn({
          compare: [{ key, target: 'Version', result: 'Equal', version }],
          success: [{ request_put: { key, value: Buffer.from(String(previous)) } }],
          failure: [{ request_range: { key } }],
        });
        const won = claim.succeeded;
        version = won ? version + 1 : Number(claim.responses[0].response_range?.kvs[0]?.version ?? 0);
        if (won && previous > 0) await this.compactTo(previous);
        previous = Number(claim.header.revision);
      })().catch((err) => this.log.error({ err }, 'etcd compaction failed'));
    }, intervalMs);
    this.compactor.unref();
  }

  private key(rt: ResourceType, key: string): Buffer {
    return Buffer.from(`${this.prefix}${resourceId(rt)}|${key}`);
  }

  /** The [start, end) of one resource's keys ('}' follows '|'). */
  private range(rt: ResourceType): [Buffer, Buffer] {
    return [Buffer.from(`${this.prefix}${resourceId(rt)}|`), Buffer.from(`${this.prefix}${resourceId(rt)}}`)];
  }

  private parseKey(raw: Buffer): { rt: ResourceType; key: string } | undefined {
    const name = raw.toString().slice(this.prefix.length);
    const bar = name.indexOf('|');
    const rt = bar > 0 ? this.byId.get(name.slice(0, bar)) : undefined;
    return rt && { rt, key: name.slice(bar + 1) };
  }
}

const resourceId = (rt: ResourceType) => `${apiVersionOf(rt)}/${rt.plural}`;

/** An update or delete's precondition: the version it was computed from, or (unconditional) the key present. */
function precondition(key: Buffer, expectedRv: string | undefined): ICompare {
  return expectedRv === undefined
    ? { key, target: 'Version', result: 'Greater', version: 0 }
    : { key, target: 'Mod', result: 'Equal', mod_revision: expectedRv };
}

/** The stored bytes: the object without its resourceVersion, which is etcd's `mod_revision`. */
function encode(obj: KubeObject): Buffer {
  const { resourceVersion: _, ...metadata } = obj.metadata;
  return Buffer.from(toJson({ ...obj, metadata }));
}

function decodeKv(kv: IKeyValue): KubeObject | undefined {
  const object = decodeObject(kv.value.toString());
  return object && withRv(object, Number(kv.mod_revision));
}

function withRv(obj: KubeObject, rv: number): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}

async function withTimeout<T>(work: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
