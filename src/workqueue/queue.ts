import { type Registry, register } from '../diagnostics/metrics/prom-client.ts';
import { type Clock, realClock, type Timer } from '../util/clock.ts';
import { Fifo } from '../util/fifo.ts';
import { MAX_TIMER_MS } from '../util/time.ts';
import { type HeapEntry, MinHeap } from './heap.ts';
import { noopMetrics, type QueueMetrics, queueMetrics } from './metrics.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimit.ts';

export interface WorkQueueOptions<K> {
  /** The `name` label of the queue's metrics; unnamed queues report none. */
  name?: string;
  /** Default: {@link defaultControllerRateLimiter} on the queue's clock. */
  rateLimiter?: RateLimiter<K>;
  clock?: Clock;
  /** Where the metrics register. Default: prom-client's global registry. */
  registry?: Registry;
}

/** A key to process, or `shutdown` once the queue is shut down and empty. */
export type GetResult<K> = { key: K; shutdown: false } | { key: undefined; shutdown: true };

interface Waiting<K> extends HeapEntry {
  key: K;
  readyAt: number;
  /** Insertion order, so equal readyAt values come out first-in first-out. */
  seq: number;
}

/**
 * client-go's rate-limiting work queue: keys coalesce while waiting, each key is processed by one worker at a
 * time, and a key added while it is processing runs once more after done().
 */
export class WorkQueue<K = string> {
  // Keys waiting for a worker, oldest first. Each is in `dirty` and not in `processing`; no duplicates.
  private readonly fifo = new Fifo<K>();
  // Keys that need a run: everything in `fifo`, plus processing keys added again (queued by done()).
  private readonly dirty = new Set<K>();
  // Keys handed out by get() and not yet done(): one worker per key.
  private readonly processing = new Set<K>();
  // Pending get() calls, oldest first. Non-empty only while `fifo` is empty and the queue is not shut down.
  private waiters: Array<(result: GetResult<K>) => void> = [];
  // Pending shutDownWithDrain() calls, released once `processing` is empty or by shutDown().
  private readonly drainers = new Set<() => void>();
  private shutting = false;

  // Delayed adds, earliest readyAt first; `waitingByKey` holds the same entries, at most one per key.
  private readonly waiting = new MinHeap<Waiting<K>>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
  );
  private readonly waitingByKey = new Map<K, Waiting<K>>();
  private seq = 0;
  // The single delay timer, armed for `timerAt` = the heap head's readyAt; both undefined when the heap is empty.
  private timer: Timer | undefined;
  private timerAt: number | undefined;

  private readonly name: string | undefined;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<K>;
  private readonly metrics: QueueMetrics<K>;

  constructor(options: WorkQueueOptions<K> = {}) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
    this.metrics = this.name ? queueMetrics<K>(this.name, options.registry ?? register, this.clock) : noopMetrics;
  }

  /** Marks `key` for processing. No-op if it already waits or the queue is shutting down. */
  add(key: K): void {
    if (this.shutting || this.dirty.has(key)) return;
    this.metrics.add(key);
    this.dirty.add(key);
    if (this.processing.has(key)) return; // done() queues it
    this.enqueue(key);
  }

  /** Resolves with the next key, waiting if none. After shutdown, queued keys still come out until none are left. */
  get(): Promise<GetResult<K>> {
    if (this.fifo.length > 0) return Promise.resolve(this.take(this.fifo.shift()));
    if (this.shutting) return Promise.resolve({ key: undefined, shutdown: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends the processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    // A key not handed out is ignored: queueing it would break the no-duplicates invariant.
    if (!this.processing.delete(key)) return;
    this.metrics.done(key);
    if (this.dirty.has(key)) this.enqueue(key);
    if (this.processing.size === 0) this.releaseDrainers();
  }

  /** Keys waiting for a worker (not those processing or delayed). */
  len(): number {
    return this.fifo.length;
  }

  /** Adds `key` after `delayMs`; an earlier pending delay for it wins. Counts a retry. */
  addAfter(key: K, delayMs: number): void {
    if (this.shutting) return;
    this.metrics.retry();
    // Written so that NaN also adds at once instead of poisoning the heap.
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const entry = this.waitingByKey.get(key);
    if (entry === undefined) {
      const created: Waiting<K> = { key, readyAt, seq: this.seq++, index: -1 };
      this.waitingByKey.set(key, created);
      this.waiting.push(created);
    } else if (readyAt < entry.readyAt) {
      entry.readyAt = readyAt;
      this.waiting.decreased(entry);
    }
    this.arm();
  }

  /** Adds `key` after the rate limiter's delay for it. */
  addRateLimited(key: K): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Clears `key`'s retry history, typically after it succeeded. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** Stops accepting adds, drops delayed adds and wakes every waiting get(). Also ends shutDownWithDrain(). */
  shutDown(): void {
    this.stop();
    this.releaseDrainers();
  }

  /**
   * Shuts down like {@link shutDown}, then resolves once no key is processing. Rejects after `timeoutMs` if
   * keys are still processing then; timeouts beyond Node's timer limit (about 24.8 days) mean no timeout.
   */
  shutDownWithDrain(timeoutMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stop();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let timer: Timer | undefined;
      const release = () => {
        if (timer !== undefined) this.clock.clearTimeout(timer);
        resolve();
      };
      this.drainers.add(release);
      if (timeoutMs <= MAX_TIMER_MS) {
        timer = this.clock.setTimeout(() => {
          this.drainers.delete(release);
          const label = this.name ? ` ${this.name}` : '';
          reject(new Error(`workqueue${label}: drain timed out, ${this.processing.size} still processing`));
        }, timeoutMs);
      }
    });
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  private enqueue(key: K): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.take(key));
    else this.fifo.push(key);
  }

  private take(key: K): GetResult<K> {
    this.metrics.get(key);
    this.processing.add(key);
    this.dirty.delete(key);
    return { key, shutdown: false };
  }

  private stop(): void {
    if (this.shutting) return;
    this.shutting = true;
    this.metrics.stop();
    this.waiting.clear();
    this.waitingByKey.clear();
    this.arm();
    // Waiters exist only while the queue is empty, so each of them gets the shutdown result.
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter({ key: undefined, shutdown: true });
  }

  private releaseDrainers(): void {
    for (const release of this.drainers) release();
    this.drainers.clear();
  }

  /** Points the delay timer at the heap head, leaving it alone if it already is. */
  private arm(): void {
    const head = this.waiting.peek();
    if (head?.readyAt === this.timerAt) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = head?.readyAt;
    if (head === undefined) return;
    // A longer wait fires early and re-arms.
    const delay = Math.min(Math.max(0, head.readyAt - this.clock.now()), MAX_TIMER_MS);
    this.timer = this.clock.setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = undefined;
    const now = this.clock.now();
    for (let head = this.waiting.peek(); head !== undefined && head.readyAt <= now; head = this.waiting.peek()) {
      this.waiting.pop();
      this.waitingByKey.delete(head.key);
      this.add(head.key);
    }
    this.arm();
  }
}
