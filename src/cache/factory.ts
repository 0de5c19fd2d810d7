/**
 * Hands out one shared informer per (resource, namespace, label selector, field selector), so
 * controllers watching the same thing share one reflector and one cache; starts, stops and waits
 * for them together.
 */
import { setMaxListeners } from 'node:events';
import type { KubeObject } from '../api/meta.ts';
import { apiVersionOf, type ResourceType } from '../api/registry.ts';
import type { KubeClient } from '../client/client.ts';
import { isExpired } from '../client/errors.ts';
import { type Clock, realClock } from '../util/clock.ts';
import type { BackoffOptions } from './backoff.ts';
import { SharedInformer } from './informer.ts';
import type { ListerWatcher } from './reflector.ts';
import { type ShardFilter, shardedListerWatcher } from './sharded.ts';

export interface InformerRequest {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Default resync for this informer's handlers. An informer is shared across callers: the first
   * caller's value sticks, so later callers wanting another period pass it to addEventHandler.
   */
  resyncMs?: number;
}

export interface FactoryOptions {
  /** Default resync for informers whose request names none; 0 = none. */
  resyncMs?: number;
  /**
   * Stream the initial state with watch-list instead of LIST (default: true, as client-go's
   * WatchListClient gate). A round the server refuses it in lists instead.
   */
  watchList?: boolean;
  pageSize?: number;
  backoff?: Partial<BackoffOptions>;
  /** Drop `metadata.managedFields` from the cached objects (see SharedInformerOptions). */
  trimManagedFields?: boolean;
  /** Errors the reflectors recovered from. Default: a warning on stderr, expired versions excepted. */
  onError?: (informer: string, err: unknown) => void;
  /** Informers of the resources `applies` to list and watch with this `shardSelector` (see sharded.ts). */
  shard?: ShardFilter;
}

export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  private stopped = false;
  /** While `requestedBy` runs: the informers asked for. */
  private recording?: Set<SharedInformer<KubeObject>>;

  constructor(
    private readonly client: KubeClient,
    private readonly clock: Clock = realClock,
    private readonly options: FactoryOptions = {},
  ) {}

  /** The shared informer for these arguments, created (not started) on first request. */
  informerFor<T extends KubeObject = KubeObject>(rt: ResourceType, req: InformerRequest = {}): SharedInformer<T> {
    if (this.stopped) throw new Error('the informer factory is stopped');
    // A cluster-scoped resource has no namespace: ignore one rather than create a second informer.
    const namespace = rt.namespaced ? req.namespace || undefined : undefined;
    const labelSelector = req.labelSelector || undefined;
    const fieldSelector = req.fieldSelector || undefined;
    const id = JSON.stringify([apiVersionOf(rt), rt.plural, namespace, labelSelector, fieldSelector]);
    let informer = this.informers.get(id);
    if (!informer) {
      const name = informerName(rt, namespace, labelSelector, fieldSelector);
      const report = this.options.onError ?? defaultReport;
      const shard = this.options.shard?.applies(rt) ? this.options.shard : undefined;
      const resource: ListerWatcher<KubeObject> = this.client.resource(rt);
      const lw = shard ? shardedListerWatcher(resource, shard, name) : resource;
      informer = new SharedInformer<KubeObject>(lw, {
        name,
        namespace,
        labelSelector,
        fieldSelector,
        resyncMs: req.resyncMs ?? this.options.resyncMs,
        watchList: this.options.watchList ?? true,
        initialEventsEndAnnotation: this.client.registry.naming.annotations.initialEventsEnd,
        pageSize: this.options.pageSize,
        backoff: this.options.backoff,
        trimManagedFields: this.options.trimManagedFields,
        clock: this.clock,
        onError: (err) => report(name, err),
      });
      this.informers.set(id, informer);
    }
    this.recording?.add(informer);
    return informer as unknown as SharedInformer<T>;
  }

  /** Runs `fn` (a controller's setup) and returns the informers it asked for, shared or not. */
  requestedBy(fn: () => void): SharedInformer<KubeObject>[] {
    const requested = new Set<SharedInformer<KubeObject>>();
    this.recording = requested;
    try {
      fn();
    } finally {
      this.recording = undefined;
    }
    return [...requested];
  }

  /** Every informer handed out so far, in creation order. */
  all(): SharedInformer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /** Starts the informers not yet started (informers requested later need another start()). */
  start(): void {
    if (this.stopped) throw new Error('the informer factory is stopped');
    for (const informer of this.informers.values()) if (!informer.isRunning()) informer.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  /** Resolves when every informer (or each of `informers`) has synced; else rejects naming the first that did not. */
  async waitForSync(timeoutMs: number, signal?: AbortSignal, informers = this.all()): Promise<void> {
    // One listener on the caller's signal; the waits listen on a signal of their own, one each: a
    // known number, not a leak, so its listener limit is raised to match.
    const cancel = new AbortController();
    setMaxListeners(informers.length + 1, cancel.signal);
    const onAbort = () => cancel.abort();
    if (signal?.aborted) cancel.abort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    // Each wait settles by the timeout at the latest, so this is bounded.
    const results = await Promise.allSettled(informers.map((i) => i.waitForSync(timeoutMs, cancel.signal)));
    signal?.removeEventListener('abort', onAbort);
    const failed = informers.findIndex((i) => !i.hasSynced());
    if (failed < 0) return;
    const result = results[failed];
    throw result.status === 'rejected' ? result.reason : new Error(`informer ${informers[failed].name} did not sync`);
  }
}

function informerName(rt: ResourceType, namespace?: string, labelSelector?: string, fieldSelector?: string): string {
  const parts = [
    namespace && `namespace=${namespace}`,
    labelSelector && `labelSelector=${labelSelector}`,
    fieldSelector && `fieldSelector=${fieldSelector}`,
  ].filter(Boolean);
  const resource = rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
  return parts.length ? `${resource}[${parts.join(',')}]` : resource;
}

function defaultReport(informer: string, err: unknown): void {
  // An expired version is routine (the reflector relists); only other failures are worth a warning.
  if (isExpired(err)) return;
  console.warn(`informer ${informer}: ${(err as Error)?.message ?? err}`);
}
