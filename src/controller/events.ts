/**
 * The event recorder: writes `events.<group>/v1` Events about objects, as client-go's events
 * library does. Identical events (same object, type, reason, action and note) within six minutes
 * become one Event with a `series` whose count and lastObservedTime are patched at most every 30 s;
 * a token bucket per (controller, object, budget) — burst 25, one token per 5 min — stops spam. Writes
 * happen in the background, one at a time in order as client-go's event sink makes them (a burst of events
 * is not a burst of requests, each on a connection of its own), and never block a reconcile; past 1,000
 * waiting, new ones are dropped; a failed write is logged and dropped after a few tries.
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../api/meta.ts';
import type { ResourceClient } from '../client/resource.ts';
import type { Clock } from '../util/clock.ts';
import { rfc3339Micro } from '../util/time.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  /**
   * Records an event about `regarding`; `action` is what the controller did or failed to do. Events given a
   * `budget` (ones the reference does not record) are rate-limited apart, so they never crowd out the others.
   */
  event(regarding: KubeObject, type: EventType, reason: string, action: string, note: string, budget?: string): void;
  /** Drops pending series updates; nothing is written after it. */
  stop?(): void;
}

/**
 * One Event's occurrences. Only its name is kept, for the series patches, not the Event (nor the server's answer,
 * managed fields and all): there is one per object a controller created or deleted in the last six minutes, 3,300
 * in bench kcm's workloads.
 */
interface Series {
  namespace: string;
  name: string;
  count: number;
  lastObserved: number;
  flushedCount: number;
  flushTimer?: ReturnType<Clock['setTimeout']>;
}

const SERIES_WINDOW_MS = 6 * 60_000;
const SERIES_FLUSH_MS = 30_000;
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 5 * 60_000;
const MAX_NOTE = 1024;
/** Writes waiting for their turn before new ones are dropped (client-go's maxQueuedEvents). */
const MAX_QUEUED = 1000;
/** Series or buckets tracked before the stale ones are looked for. */
const PRUNE_AT = 4096;

export class ApiEventRecorder implements EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private stopped = false;
  /** Writes waiting for the one in flight. */
  private queue: (() => Promise<unknown>)[] = [];
  private writing = false;
  private dropped = 0;
  /** Last name stamp handed out, so two events within one millisecond still get distinct names. */
  private lastStamp = 0n;

  constructor(
    private readonly events: ResourceClient,
    private readonly controller: string,
    private readonly instance: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  event(regarding: KubeObject, type: EventType, reason: string, action: string, note: string, budget?: string): void {
    if (this.stopped) return;
    const m = regarding.metadata;
    const objectKey = `${regarding.kind}/${m.namespace ?? ''}/${m.name}/${m.uid ?? ''}`;
    if (!this.allow(budget ? `${objectKey}|${budget}` : objectKey)) return;
    const key = `${objectKey}|${type}|${reason}|${action}|${note}`;
    const now = this.clock.now();
    const existing = this.series.get(key);
    if (existing && now - existing.lastObserved < SERIES_WINDOW_MS) {
      existing.count++;
      existing.lastObserved = now;
      this.scheduleFlush(existing);
      return;
    }
    const namespace = m.namespace || 'default';
    const name = this.eventName(m.name ?? '');
    const event: KubeObject = {
      apiVersion: this.events.apiVersion,
      kind: 'Event',
      // client-go's `<name>.<unix nanos in hex>`: a generateName of `<name>.` is not a valid prefix (it ends in a dot).
      metadata: { namespace, name },
      eventTime: rfc3339Micro(new Date()),
      reportingController: this.controller,
      reportingInstance: this.instance,
      action,
      reason,
      type,
      note: note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 3)}...` : note,
      regarding: {
        kind: regarding.kind,
        apiVersion: regarding.apiVersion,
        namespace: m.namespace,
        name: m.name,
        uid: m.uid,
        resourceVersion: m.resourceVersion,
      },
    };
    this.series.set(key, { namespace, name, count: 1, lastObserved: now, flushedCount: 1 });
    this.prune(now);
    this.enqueue(() => this.events.create(event));
  }

  stop(): void {
    this.stopped = true;
    this.queue = [];
    for (const s of this.series.values()) if (s.flushTimer) this.clock.clearTimeout(s.flushTimer);
    this.series.clear();
  }

  private eventName(objectName: string): string {
    const wallNanos = BigInt(Date.now()) * 1_000_000n;
    this.lastStamp = wallNanos > this.lastStamp ? wallNanos : this.lastStamp + 1n;
    return `${objectName}.${this.lastStamp.toString(16)}`;
  }

  private scheduleFlush(s: Series): void {
    if (s.flushTimer) return;
    s.flushTimer = this.clock.setTimeout(() => {
      s.flushTimer = undefined;
      if (this.stopped || s.count === s.flushedCount) return;
      s.flushedCount = s.count;
      const series = { count: s.count, lastObservedTime: rfc3339Micro(new Date()) };
      this.enqueue(() => this.events.patch(s.namespace, s.name, { series }, 'merge'));
    }, SERIES_FLUSH_MS);
  }

  private allow(objectKey: string): boolean {
    const now = this.clock.now();
    const b = this.buckets.get(objectKey) ?? { tokens: SPAM_BURST, at: now };
    b.tokens = Math.min(SPAM_BURST, b.tokens + (now - b.at) / SPAM_REFILL_MS);
    b.at = now;
    this.buckets.set(objectKey, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /**
   * Forgets series older than the window, and buckets refilled to the full burst (as good as a new one), so memory
   * stays bounded however many objects ever had an event.
   */
  private prune(now: number): void {
    if (this.series.size >= PRUNE_AT) {
      for (const [k, s] of this.series) if (now - s.lastObserved > SERIES_WINDOW_MS) this.series.delete(k);
    }
    if (this.buckets.size >= PRUNE_AT) {
      for (const [k, b] of this.buckets) {
        if (b.tokens + (now - b.at) / SPAM_REFILL_MS >= SPAM_BURST) this.buckets.delete(k);
      }
    }
  }

  private enqueue(call: () => Promise<unknown>): void {
    if (this.queue.length >= MAX_QUEUED) {
      if (this.dropped++ % MAX_QUEUED === 0)
        this.logger.warn({ dropped: this.dropped }, 'event queue full: dropping events');
      return;
    }
    this.queue.push(call);
    if (!this.writing) void this.drain();
  }

  private async drain(): Promise<void> {
    this.writing = true;
    for (let call = this.queue.shift(); call && !this.stopped; call = this.queue.shift()) await this.write(call);
    this.writing = false;
  }

  private async write(call: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; attempt <= 3 && !this.stopped; attempt++) {
      try {
        await call();
        return;
      } catch (err) {
        if (attempt === 3) this.logger.warn({ err: String(err) }, 'dropping event after repeated write failures');
      }
    }
  }
}
