import { Counter, Gauge, type Metric, type Registry } from '../diagnostics/metrics/prom-client.ts';
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

/** One classic histogram series as plain numbers: per-bucket counts (the last is +Inf), not cumulative. */
class Durations {
  readonly counts = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]) bucket++;
    this.counts[bucket]++;
    this.sum += seconds;
    this.count++;
  }
}

/**
 * The values of one queue name, shared by the queues of that name. The queue's hot path only bumps these
 * numbers (prom-client's labelled calls cost microseconds each, five per key); the metrics read them when
 * scraped.
 */
class Tally {
  depth = 0;
  adds = 0;
  retries = 0;
  readonly queueDuration = new Durations();
  readonly workDuration = new Durations();
}

type Sample = { metricName: string; labels: Record<string, string | number>; value: number };

/** A histogram registered like prom-client's, with the same samples, whose series are the tallies' durations. */
class TallyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly tallies: Map<string, Tally>,
    private readonly series: (tally: Tally) => Durations,
  ) {}

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const [name, tally] of this.tallies) {
      const { counts, sum, count } = this.series(tally);
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: { le, name }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', name }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels: { name }, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: { name }, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** prom-client's `resetMetrics()`: the tallies are the queues' own state and are kept, as depth must be. */
  reset(): void {}
}

interface Family {
  /** Queue name → its values; a name once used stays exported, as prom-client's labelled series do. */
  tallies: Map<string, Tally>;
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
  const tallies = new Map<string, Tally>();
  // Everything is computed when scraped: exact, no per-call label hashing, and nothing to stop.
  const fromTallies = (value: (tally: Tally) => number) =>
    function (this: Gauge<'name'> | Counter<'name'>) {
      this.reset();
      for (const [name, tally] of tallies) this.inc({ name }, value(tally));
    };
  // Queues sharing a name add up.
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
  const help = 'Current depth of the work queue.';
  new Gauge({ name: 'workqueue_depth', help, labelNames, registers, collect: fromTallies((t) => t.depth) });
  new Counter({
    name: 'workqueue_adds_total',
    help: 'Adds handled by the work queue.',
    labelNames,
    registers,
    collect: fromTallies((t) => t.adds),
  });
  const histograms = [
    new TallyHistogram(
      'workqueue_queue_duration_seconds',
      'Seconds a key waits in the work queue before a worker takes it.',
      tallies,
      (t) => t.queueDuration,
    ),
    new TallyHistogram(
      'workqueue_work_duration_seconds',
      'Seconds a worker spends processing a key.',
      tallies,
      (t) => t.workDuration,
    ),
  ];
  for (const histogram of histograms) registry.registerMetric(histogram as unknown as Metric);
  new Counter({
    name: 'workqueue_retries_total',
    help: 'Retries handled by the work queue.',
    labelNames,
    registers,
    collect: fromTallies((t) => t.retries),
  });
  const family: Family = { tallies, live };
  families.set(registry, family);
  return family;
}

class Recorder<K> implements QueueMetrics<K>, InProgress {
  readonly name: string;
  private readonly family: Family;
  private readonly tally: Tally;
  private readonly clock: Clock;
  // When each key waiting for a worker was first added since it was last handed out.
  private readonly addedAt = new Map<K, number>();
  // When each key being processed was handed out.
  private readonly startedAt = new Map<K, number>();

  constructor(name: string, family: Family, clock: Clock) {
    this.name = name;
    this.family = family;
    this.clock = clock;
    // Shared with same-named queues, so their values are kept; exported from the start.
    let tally = family.tallies.get(name);
    if (!tally) {
      tally = new Tally();
      family.tallies.set(name, tally);
    }
    this.tally = tally;
    family.live.add(this);
  }

  add(key: K): void {
    this.tally.depth++;
    this.tally.adds++;
    if (!this.addedAt.has(key)) this.addedAt.set(key, this.clock.now());
  }

  get(key: K): void {
    const now = this.clock.now();
    this.tally.depth--;
    const addedAt = this.addedAt.get(key);
    if (addedAt !== undefined) {
      this.tally.queueDuration.observe((now - addedAt) / 1000);
      this.addedAt.delete(key);
    }
    this.startedAt.set(key, now);
  }

  done(key: K): void {
    const startedAt = this.startedAt.get(key);
    if (startedAt === undefined) return;
    this.tally.workDuration.observe((this.clock.now() - startedAt) / 1000);
    this.startedAt.delete(key);
  }

  retry(): void {
    this.tally.retries++;
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
