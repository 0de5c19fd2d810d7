import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from '../util/clock.ts';

/** The queue's hooks into its metrics; every call comes from the matching queue operation. */
export interface QueueMetrics<K> {
  /** A non-coalesced add, including one while the key is processing. */
  add(key: K): void;
  /** The key was handed to a worker. */
  get(key: K): void;
  /** The worker finished the key. */
  done(key: K): void;
  /** An addAfter or addRateLimited call. */
  retry(): void;
  /** The queue shut down: stop reporting its in-progress work. */
  stop(): void;
}

/** Unnamed queues report nothing. */
export const noopMetrics: QueueMetrics<unknown> = {
  add() {},
  get() {},
  done() {},
  retry() {},
  stop() {},
};

/** 1e-8 s … 10 s, factor 10 (client-go's workqueue buckets). */
const DURATION_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

interface Family {
  depth: Gauge<'name'>;
  adds: Counter<'name'>;
  queueDuration: Histogram<'name'>;
  workDuration: Histogram<'name'>;
  retries: Counter<'name'>;
  /** Running queues, read by the collect-time gauges. */
  live: Set<InProgress>;
}

/** A running queue's work in progress, in seconds. */
interface InProgress {
  readonly name: string;
  unfinishedSeconds(): number;
  longestSeconds(): number;
}

// One family per registry, so queues sharing a name (or a registry) share metric objects instead of clashing.
const families = new WeakMap<Registry, Family>();

function familyFor(registry: Registry): Family {
  const existing = families.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const labelNames = ['name'] as const;
  const live = new Set<InProgress>();
  // Computed when scraped rather than on a 500 ms timer: exact, and nothing to stop. Queues sharing a name add up.
  new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: 'Seconds of work in progress not yet observed by workqueue_work_duration_seconds; growth means stuck workers.',
    labelNames,
    registers,
    collect() {
      this.reset();
      for (const r of live) this.inc({ name: r.name }, r.unfinishedSeconds());
    },
  });
  new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'Seconds the longest-running worker of the queue has been processing its key.',
    labelNames,
    registers,
    collect() {
      const longest = new Map<string, number>();
      for (const r of live) longest.set(r.name, Math.max(longest.get(r.name) ?? 0, r.longestSeconds()));
      this.reset();
      for (const [name, seconds] of longest) this.set({ name }, seconds);
    },
  });
  const family: Family = {
    depth: new Gauge({ name: 'workqueue_depth', help: 'Current depth of the work queue.', labelNames, registers }),
    adds: new Counter({ name: 'workqueue_adds_total', help: 'Adds handled by the work queue.', labelNames, registers }),
    queueDuration: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'Seconds a key waits in the work queue before a worker takes it.',
      labelNames,
      buckets: DURATION_BUCKETS,
      registers,
    }),
    workDuration: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'Seconds a worker spends processing a key.',
      labelNames,
      buckets: DURATION_BUCKETS,
      registers,
    }),
    retries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Retries handled by the work queue.',
      labelNames,
      registers,
    }),
    live,
  };
  families.set(registry, family);
  return family;
}

class Recorder<K> implements QueueMetrics<K>, InProgress {
  readonly name: string;
  private readonly family: Family;
  private readonly clock: Clock;
  private readonly labels: { name: string };
  // When each key waiting for a worker was first added since it was last handed out.
  private readonly addedAt = new Map<K, number>();
  // When each key being processed was handed out.
  private readonly startedAt = new Map<K, number>();

  constructor(name: string, family: Family, clock: Clock) {
    this.name = name;
    this.family = family;
    this.clock = clock;
    this.labels = { name };
    // Export the queue's series from the start; inc(0) so a same-named queue's values are kept.
    family.depth.inc(this.labels, 0);
    family.adds.inc(this.labels, 0);
    family.retries.inc(this.labels, 0);
    family.live.add(this);
  }

  add(key: K): void {
    this.family.depth.inc(this.labels);
    this.family.adds.inc(this.labels);
    if (!this.addedAt.has(key)) this.addedAt.set(key, this.clock.now());
  }

  get(key: K): void {
    const now = this.clock.now();
    this.family.depth.dec(this.labels);
    const addedAt = this.addedAt.get(key);
    if (addedAt !== undefined) {
      this.family.queueDuration.observe(this.labels, (now - addedAt) / 1000);
      this.addedAt.delete(key);
    }
    this.startedAt.set(key, now);
  }

  done(key: K): void {
    const startedAt = this.startedAt.get(key);
    if (startedAt === undefined) return;
    this.family.workDuration.observe(this.labels, (this.clock.now() - startedAt) / 1000);
    this.startedAt.delete(key);
  }

  retry(): void {
    this.family.retries.inc(this.labels);
  }

  stop(): void {
    this.family.live.delete(this);
  }

  unfinishedSeconds(): number {
    const now = this.clock.now();
    let total = 0;
    for (const t of this.startedAt.values()) total += now - t;
    return total / 1000;
  }

  longestSeconds(): number {
    const now = this.clock.now();
    let longest = 0;
    for (const t of this.startedAt.values()) longest = Math.max(longest, now - t);
    return longest / 1000;
  }
}

/** Metrics for a queue named `name`, registered in `registry` (shared with other queues there). */
export function queueMetrics<K>(name: string, registry: Registry, clock: Clock): QueueMetrics<K> {
  return new Recorder<K>(name, familyFor(registry), clock);
}
