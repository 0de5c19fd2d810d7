/**
 * client-go's Reflector: keeps a sink in step with the server by LIST (paged) then WATCH from the
 * list's resourceVersion, re-watching when a stream ends and relisting when the history it needs
 * is gone. Optionally streams the initial state instead of listing (watch-list).
 *
 * Convergence after a fault takes seconds: a stream that ends is watched again at once from the last
 * resourceVersion, and the first failure after a working stream (a 410, a dropped connection) is retried
 * at once. Only consecutive failures wait, on client-go's backoff (800 ms doubling to 30 s), and never
 * less than the server's Retry-After.
 */
import type { KubeList, KubeObject, WatchEvent } from '../api/meta.ts';
import { sleep } from '../client/client.ts';
import { isExpired, isNotFound, isTooManyRequests, StatusError } from '../client/errors.ts';
import type { ListOptions, ListPage, WatchOptions } from '../client/resource.ts';
import { type Clock, realClock } from '../util/clock.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import type { Store } from './store.ts';

/** What the reflector needs from a resource client; `ResourceClient` fits. */
export interface ListerWatcher<T extends KubeObject> {
  list(namespace: string | undefined, opts: ListOptions & { signal?: AbortSignal }): Promise<KubeList<T>>;
  /** A page whose metadata comes before its items: lets the next page be fetched while this one is parsed. */
  listPage?(namespace: string | undefined, opts: ListOptions & { signal?: AbortSignal }): Promise<ListPage<T>>;
  watch(
    namespace: string | undefined,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void>;
}

/** Where the reflector writes; the informer wraps a `Store` to notify handlers. */
export interface ReflectorSink<T extends KubeObject> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  /** Swaps the whole content for a list, or for a store from `emptyCopy` holding the full state. */
  replace(items: readonly T[] | Store<T>, resourceVersion: string): void;
  /** An empty store, indexed as the sink is, that a watch-list fills with its initial events as they arrive. */
  emptyCopy(): Store<T>;
}

export interface ReflectorOptions {
  /** Names the reflector in errors and logs. */
  name: string;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** LIST page size (client-go's pager default: 500). */
  pageSize?: number;
  /** Stream the initial state (sendInitialEvents) instead of a LIST. */
  watchList?: boolean;
  /** The objects' managedFields are not wanted (the informer drops them): watches may leave them out. */
  withoutManagedFields?: boolean;
  /** Annotation marking the bookmark that ends a watch-list's initial events; required with watchList. */
  initialEventsEndAnnotation?: string;
  clock?: Clock;
  backoff?: Partial<BackoffOptions>;
  /** Source of randomness for jitter and watch timeouts, in [0, 1). */
  random?: () => number;
  /** Every error the loop recovers from (it never stops on its own). */
  onError?: (err: unknown) => void;
}

export const LIST_PAGE_SIZE = 500;
/** Watches ask the server to end them after a random [300, 600) s, spreading reconnects. */
export const MIN_WATCH_TIMEOUT_SECONDS = 300;
/** A stream that ends this soon with no event at all counts as a failure (client-go: "very short watch"). */
export const VERY_SHORT_WATCH_MS = 1000;
/** Beyond timeoutSeconds, how long we wait before giving up on a server that never ends the stream. */
const WATCH_GRACE_MS = 30_000;

/** The watch-list could not produce the initial state for a reason retrying would not fix. */
class WatchListFailed extends Error {
  constructor(cause: unknown) {
    super(`watch-list failed, falling back to LIST: ${(cause as Error)?.message ?? cause}`, { cause });
  }
}

export class Reflector<T extends KubeObject> {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly backoff: Backoff;
  private readonly onError: (err: unknown) => void;
  private lastRv = '';
  /** Set when the server said our resourceVersion is unusable: the next read is a consistent one (""). */
  private rvUnavailable = false;
  private synced = false;
  /** Failures since the last stream that worked. */
  private failures = 0;
  private abort?: AbortController;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly sink: ReflectorSink<T>,
    private readonly opts: ReflectorOptions,
  ) {
    if (opts.watchList && !opts.initialEventsEndAnnotation) {
      throw new Error(`reflector ${opts.name}: watchList needs initialEventsEndAnnotation`);
    }
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.backoff = new Backoff(this.clock, opts.backoff, this.random);
    this.onError = opts.onError ?? (() => {});
  }

  /** True once the sink got its first full state. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** The resourceVersion the sink reflects: the last list's or the last event's. */
  lastSyncResourceVersion(): string {
    return this.lastRv;
  }

  start(): void {
    if (this.abort) throw new Error(`reflector ${this.opts.name} already started`);
    this.abort = new AbortController();
    this.running = this.run(this.abort.signal);
  }

  /** Ends the current request or wait and resolves once the loop has exited. */
  async stop(): Promise<void> {
    this.abort?.abort();
    await this.running;
  }

  /** Runs ListAndWatch until stopped; every round ends in an error (or the stop). */
  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.listAndWatch(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.onError(err);
        await this.recover(err, signal);
      }
    }
  }

  /** The wait after a failure: none for the first, the backoff for consecutive ones, at least Retry-After. */
  private async recover(err: unknown, signal: AbortSignal): Promise<void> {
    this.failures++;
    const backoffMs = this.failures > 1 ? this.backoff.next() : 0;
    const retryAfterMs = err instanceof StatusError && err.retryAfter !== undefined ? err.retryAfter * 1000 : 0;
    const ms = Math.max(backoffMs, retryAfterMs);
    if (ms <= 0) return;
    try {
      await sleep(ms, this.clock, signal);
    } catch {
      // aborted: the caller checks the signal
    }
  }

  /** A stream worked: failures from now on are not consecutive with the earlier ones. */
  private progressed(): void {
    this.failures = 0;
    this.backoff.reset();
  }

  private async listAndWatch(signal: AbortSignal): Promise<void> {
    if (this.opts.watchList) {
      try {
        return await this.watchLoop(signal, true);
      } catch (err) {
        if (signal.aborted || !(err instanceof WatchListFailed)) throw err;
        // Making progress beats retrying forever: this round lists instead.
        this.onError(err);
      }
    }
    await this.list(signal);
    await this.watchLoop(signal, false);
  }

  private async list(signal: AbortSignal): Promise<void> {
    let result: { items: T[]; rv: string };
    try {
      result = await this.listPages(this.rvUnavailable ? '' : this.lastRv, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      if (isExpired(err) || isTooLargeResourceVersion(err)) {
        // The version we asked for cannot be served: ask again at once for the current state.
        this.rvUnavailable = true;
        result = await this.listPages('', signal);
      } else {
        // A resource that does not exist is empty, so waiters for sync are not stuck.
        if (isNotFound(err)) this.replace([], this.lastRv);
        throw err;
      }
    }
    this.replace(result.items, result.rv);
  }

  /**
   * Every page of a list at `rv` ("" = current; otherwise not older than rv). Each page's successor
   * is asked for before its items are parsed, so parsing overlaps the next round trip.
   */
  private async listPages(rv: string, signal: AbortSignal): Promise<{ items: T[]; rv: string }> {
    const { namespace, labelSelector, fieldSelector } = this.opts;
    const limit = this.opts.pageSize ?? LIST_PAGE_SIZE;
    const first: ListOptions = { labelSelector, fieldSelector, resourceVersion: rv || undefined };
    if (rv) first.resourceVersionMatch = 'NotOlderThan';
    const fetchPage = (opts: ListOptions): Promise<ListPage<T>> => {
      const page = this.page(namespace, { ...opts, limit, signal });
      // Awaited on the next pass; until then a failure must not count as unhandled.
      page.catch(() => undefined);
      return page;
    };
    const items: T[] = [];
    let listRv = '';
    let next = fetchPage(first);
    // Bounded by the list: each page moves the continue token forward until the server sends none.
    for (let page = 0; ; page++) {
      let res: ListPage<T>;
      try {
        res = await next;
      } catch (err) {
        if (page === 0 || signal.aborted || !isExpired(err)) throw err;
        // The continue token expired mid-way: list everything again, unpaged, at the original version.
        const full = await this.lw.list(namespace, { ...first, signal });
        return { items: full.items, rv: full.metadata.resourceVersion ?? '' };
      }
      if (page === 0) listRv = res.metadata.resourceVersion ?? '';
      const token = res.metadata.continue || undefined;
      if (token) next = fetchPage({ labelSelector, fieldSelector, continue: token });
      for (const item of res.items()) items.push(item);
      if (!token) return { items, rv: listRv };
    }
  }

  /** One page, through `listPage` when the lister-watcher has it. */
  private async page(namespace: string | undefined, opts: ListOptions & { signal: AbortSignal }): Promise<ListPage<T>> {
    if (this.lw.listPage) return this.lw.listPage(namespace, opts);
    const list = await this.lw.list(namespace, opts);
    return { metadata: list.metadata, items: () => list.items };
  }

  private replace(items: readonly T[] | Store<T>, rv: string): void {
    this.sink.replace(items, rv);
    this.lastRv = rv;
    this.rvUnavailable = false;
    this.synced = true;
  }

  /**
   * Watches from the last synced version until an error calls for a relist (thrown) or stop.
   * With `watchList`, the first stream also carries the initial state.
   */
  private async watchLoop(signal: AbortSignal, watchList: boolean): Promise<void> {
    let initial = watchList;
    // Bounded by stop: every pass is one stream, and a stream that ends at once with nothing throws.
    while (!signal.aborted) {
      const started = this.clock.now();
      const progress = { events: 0, initialDone: !initial };
      const worked = () => progress.events > 0 || this.clock.now() - started >= VERY_SHORT_WATCH_MS;
      try {
        await this.watchOnce(signal, progress);
      } catch (err) {
        if (signal.aborted) return;
        if (worked()) this.progressed();
        if (progress.initialDone) initial = false;
        if (isTooManyRequests(err) || isConnectionError(err)) {
          // The server or the network is overloaded, not our state: watch again from where we are.
          this.onError(err);
          await this.recover(err, signal);
          continue;
        }
        if (!initial) throw err;
        if (isExpired(err) || isTooLargeResourceVersion(err)) {
          this.rvUnavailable = true;
          throw err;
        }
        throw new WatchListFailed(err);
      }
      if (signal.aborted) return;
      if (!progress.initialDone) {
        throw new WatchListFailed(new Error('the stream ended before the initial events were complete'));
      }
      initial = false;
      if (!worked()) {
        throw new Error(
          `very short watch: ${this.opts.name}: unexpected watch close - watch lasted less than a second and no items received`,
        );
      }
      this.progressed();
    }
  }

  /**
   * One watch stream, applied to the sink as it arrives; resolves when the stream ends. Without
   * `progress.initialDone` it is a watch-list: events are collected until the end bookmark.
   */
  private async watchOnce(signal: AbortSignal, progress: { events: number; initialDone: boolean }): Promise<void> {
    const timeoutSeconds = MIN_WATCH_TIMEOUT_SECONDS + Math.floor(this.random() * MIN_WATCH_TIMEOUT_SECONDS);
    const opts: WatchOptions = {
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
      allowWatchBookmarks: true,
      timeoutSeconds,
      resourceVersion: this.lastRv,
      withoutManagedFields: this.opts.withoutManagedFields,
    };
    let collected: Store<T> | undefined;
    if (!progress.initialDone) {
      collected = this.sink.emptyCopy();
      opts.sendInitialEvents = true;
      opts.resourceVersionMatch = 'NotOlderThan';
      opts.resourceVersion = this.rvUnavailable ? '' : this.lastRv;
    }
    const onEvent = (e: WatchEvent<T>) => {
      if (e.type === 'ERROR') throw statusErrorOf(e.object);
      progress.events++;
      if (!collected) return this.apply(e);
      if (this.endsInitialEvents(e)) {
        this.replace(collected, e.object.metadata.resourceVersion ?? '');
        collected = undefined;
        progress.initialDone = true;
      } else if (e.type === 'ADDED' || e.type === 'MODIFIED') {
        collected.add(e.object);
      } else if (e.type === 'DELETED') {
        collected.delete(e.object);
      }
    };
    // Our own end for the stream, in case the server never honours timeoutSeconds (a dead connection).
    const deadline = new AbortController();
    const guard = this.clock.setTimeout(() => deadline.abort(), timeoutSeconds * 1000 + WATCH_GRACE_MS);
    try {
      await this.lw.watch(this.opts.namespace, opts, onEvent, AbortSignal.any([signal, deadline.signal]));
    } catch (err) {
      // Our deadline firing before the response started is a normal end, not a failure.
      if (!deadline.signal.aborted || signal.aborted) throw err;
    } finally {
      this.clock.clearTimeout(guard);
    }
  }

  private endsInitialEvents(e: WatchEvent<T>): boolean {
    const annotations = e.object.metadata?.annotations;
    return e.type === 'BOOKMARK' && annotations?.[this.opts.initialEventsEndAnnotation!] === 'true';
  }

  private apply(e: WatchEvent<T>): void {
    const obj = e.object;
    switch (e.type) {
      case 'ADDED':
        this.sink.add(obj);
        break;
      case 'MODIFIED':
        this.sink.update(obj);
        break;
      case 'DELETED':
        this.sink.delete(obj);
        break;
      case 'BOOKMARK':
        break;
      default:
        this.onError(new Error(`reflector ${this.opts.name}: unexpected watch event type ${JSON.stringify(e.type)}`));
        return;
    }
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.lastRv = rv;
  }
}

/** A watch ERROR event carries a Status; make it the same error a failed request would be. */
function statusErrorOf(obj: unknown): StatusError {
  const code = (obj as { code?: number } | null)?.code ?? 500;
  return StatusError.fromResponse(code, JSON.stringify(obj));
}

/** The server is behind the version we asked for (e.g. it restarted with empty storage). */
export function isTooLargeResourceVersion(err: unknown): boolean {
  return (
    err instanceof StatusError &&
    (err.causes.some((c) => c.reason === 'ResourceVersionTooLarge') || /too large resource version/i.test(err.message))
  );
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** A transport failure (refused, reset, timed out), as opposed to an answer from the server. */
export function isConnectionError(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  }
  return false;
}
