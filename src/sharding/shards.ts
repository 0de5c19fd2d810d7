/**
 * The shard Leases of one `--sharding` replica. It watches the shard Leases and the replicas' LeaseCandidates in
 * the leader-election namespace, asks the balancing core (balance.ts) which shards to campaign for or let go, and
 * runs one classic {@link LeaderElector} per shard it wants: the same acquire, renew, guard and release as the
 * leader Lease. Each term has its own {@link LeaseGuard}, so a write for a shard leaves the process only while
 * this replica can prove it holds that shard.
 */
import type { Logger } from 'pino';
import type { Lease, LeaseCandidate } from '../api/types/coordination.ts';
import { SharedInformerFactory } from '../cache/factory.ts';
import type { Lister } from '../cache/informer.ts';
import type { KubeClient } from '../client/client.ts';
import { Counter, Gauge, type Registry } from '../diagnostics/metrics/prom-client.ts';
import { type LeaderElectionConfig, LeaderElector } from '../leaderelection/elector.ts';
import { LeaseGuard } from '../leaderelection/guard.ts';
import { pause } from '../leaderelection/timing.ts';
import type { Clock } from '../util/clock.ts';
import { balance, type MemberView, type ShardLeaseView } from './balance.ts';

/** Why a shard changed hands, as the handover metric counts it. */
export type HandoverReason = 'acquired' | 'takeover' | 'rebalanced' | 'lost' | 'shutdown';

export interface ShardSetConfig {
  /** Unfenced client for Leases and LeaseCandidates. */
  client: KubeClient;
  namespace: string;
  /** The leader Lease the replicas' LeaseCandidates name: the membership. */
  leaderLease: string;
  /** Shard Lease `i` is `<prefix>-<i, two digits at least>`. */
  prefix: string;
  shards: number;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  clock: Clock;
  logger: Logger;
  metrics: Registry;
  metricPrefix: string;
  /** The held set changed. */
  onChange(): void;
  /** A held shard is being let go: resolves once nothing writes for it any more (waited for at most renewDeadline). */
  onReleasing(shard: number): Promise<void>;
}

interface Term {
  stop: AbortController;
  guard: LeaseGuard;
  /** Wall time the shard was acquired; undefined while campaigning. */
  since?: Date;
  /** Why we stop it, when we do. */
  ending?: HandoverReason;
  done: Promise<void>;
}

/** One row of the shard map, as /debug/shards and `kubectl orch shards` show it. */
export interface HeldShard {
  shard: number;
  lease: string;
  since: Date;
}

/** How often the plan is looked at, besides every change seen. */
const TICK_MS = 500;
const SYNC_TIMEOUT_MS = 60_000;

export function shardLeaseName(prefix: string, shard: number): string {
  return `${prefix}-${String(shard).padStart(2, '0')}`;
}

export class ShardSet {
  private readonly terms = new Map<number, Term>();
  /** Monotonic time each shard's last term of ours ended, its release written (or tried). */
  private readonly endedAt = new Map<number, number>();
  /** Monotonic time each other replica was seen releasing its last shard; pruned with its candidate. */
  private readonly departedAt = new Map<string, number>();
  /** Local monotonic time each Lease's spec, and each candidate's renewTime, last changed. */
  private readonly seen = new Map<string, { raw: string; atMs: number }>();
  private readonly names: string[];
  private readonly held: Gauge;
  private readonly handovers: Counter;
  private wake: () => void = () => {};

  constructor(private readonly config: ShardSetConfig) {
    this.names = Array.from({ length: config.shards }, (_, i) => shardLeaseName(config.prefix, i));
    const registers = [config.metrics];
    const heldName = `${config.metricPrefix}_shards_held`;
    const handoverName = `${config.metricPrefix}_shard_handovers_total`;
    this.held =
      (config.metrics.getSingleMetric(heldName) as Gauge | undefined) ??
      new Gauge({ name: heldName, help: 'Number of shards this replica holds.', registers });
    this.handovers =
      (config.metrics.getSingleMetric(handoverName) as Counter | undefined) ??
      new Counter({
        name: handoverName,
        help: 'Shards this replica took or let go, by reason: acquired, takeover (expired), rebalanced, lost, shutdown.',
        labelNames: ['reason'],
        registers,
      });
    this.held.set(0);
  }

  /** The shards held now, lowest first. */
  heldShards(): HeldShard[] {
    return [...this.terms.entries()]
      .flatMap(([shard, t]) => (t.since ? [{ shard, lease: this.names[shard], since: t.since }] : []))
      .sort((a, b) => a.shard - b.shard);
  }

  /** The guard of the shard's current term, undefined when not held. */
  guardFor(shard: number): LeaseGuard | undefined {
    const term = this.terms.get(shard);
    return term?.since ? term.guard : undefined;
  }

  /** Campaigns and balances until `signal` aborts; then releases every shard held before resolving. */
  async run(signal: AbortSignal): Promise<void> {
    const { client, namespace, clock } = this.config;
    const informers = new SharedInformerFactory(client, clock, {
      onError: (informer, err) => this.config.logger.warn({ informer, err: String(err) }, 'shard informer recovering'),
    });
    const leaseInformer = informers.informerFor<Lease>(client.registry.byKind('Lease')!, { namespace });
    const candidateInformer = informers.informerFor<LeaseCandidate>(client.registry.byKind('LeaseCandidate')!, {
      namespace,
    });
    const changed = () => this.wake();
    leaseInformer.addEventHandler({
      add: (l) => this.observe(l),
      update: (old, l) => {
        this.noteRelease(old, l, leaseInformer.lister());
        this.observe(l);
      },
      delete: changed,
    });
    candidateInformer.addEventHandler({ add: (c) => this.observe(c), update: (_, c) => this.observe(c) });
    informers.start();
    try {
      await informers.waitForSync(SYNC_TIMEOUT_MS, signal);
      const leases = leaseInformer.lister();
      const candidates = candidateInformer.lister();
      while (!signal.aborted) {
        const nextExpiry = this.step(leases, candidates);
        const woken = new AbortController();
        this.wake = () => woken.abort();
        // Looked at again when the next Lease expires, so a dead holder's shard is taken on time.
        const wait = Math.min(TICK_MS, Math.max(0, nextExpiry - clock.now() + 1));
        await pause(clock, wait, AbortSignal.any([signal, woken.signal]));
      }
    } finally {
      for (const term of this.terms.values()) {
        term.ending ??= 'shutdown';
        term.stop.abort();
      }
      await Promise.all([...this.terms.values()].map((t) => t.done));
      await informers.stop();
    }
  }

  /** Notes when a Lease's spec or a candidate's renewTime changed, by the local clock, and looks at the plan. */
  private observe(obj: Lease | LeaseCandidate): void {
    const key = `${obj.kind}/${obj.metadata.name}`;
    const holder = obj.kind === 'Lease' ? (obj as Lease).spec?.holderIdentity : undefined;
    if (holder) this.departedAt.delete(holder);
    const raw = JSON.stringify(obj.kind === 'Lease' ? obj.spec : (obj as LeaseCandidate).spec?.renewTime);
    if (this.seen.get(key)?.raw !== raw) this.seen.set(key, { raw, atMs: this.config.clock.now() });
    this.wake();
  }

  /** A replica seen releasing its last shard Lease is stopping: no replica lets go of its last shard to balance. */
  private noteRelease(old: Lease, lease: Lease, leases: Lister<Lease>): void {
    const was = old.spec?.holderIdentity;
    if (!was || was === this.config.identity || lease.spec?.holderIdentity) return;
    if (!this.names.includes(lease.metadata.name ?? '')) return;
    const holdsMore = this.names.some((name) => leases.get(this.config.namespace, name)?.spec?.holderIdentity === was);
    if (!holdsMore) this.departedAt.set(was, this.config.clock.now());
  }

  private observedAt(kind: string, name: string): number {
    return this.seen.get(`${kind}/${name}`)?.atMs ?? this.config.clock.now();
  }

  /**
   * One look at the plan: start the campaigns it asks for, end the terms it lets go. Answers when the next of the
   * Leases held now expires (monotonic time).
   */
  private step(leases: Lister<Lease>, candidates: Lister<LeaseCandidate>): number {
    const { config } = this;
    const { namespace } = config;
    const views: (ShardLeaseView | undefined)[] = this.names.map((name) => {
      const lease = leases.get(namespace, name);
      if (!lease) return undefined;
      const spec = lease.spec ?? {};
      return {
        holder: spec.holderIdentity ?? '',
        durationMs: (spec.leaseDurationSeconds ?? 0) * 1000,
        observedAtMs: this.observedAt('Lease', name),
      };
    });
    const members: MemberView[] = candidates
      .list(namespace)
      .filter((c) => c.spec?.leaseName === config.leaderLease)
      .map((c) => ({
        identity: c.metadata.name ?? '',
        observedAtMs: this.observedAt('LeaseCandidate', c.metadata.name ?? ''),
      }));
    for (const id of this.departedAt.keys()) if (!candidates.get(namespace, id)) this.departedAt.delete(id);
    const held = new Set<number>();
    const campaigning = new Set<number>();
    for (const [shard, term] of this.terms) (term.since ? held : campaigning).add(shard);
    const plan = balance({
      self: config.identity,
      shards: config.shards,
      nowMs: config.clock.now(),
      // Candidates renew every retry period here: one missing for half a lease has stopped.
      livenessMs: config.leaseDurationMs / 2,
      graceMs: 2 * config.retryPeriodMs,
      leases: views,
      members,
      held,
      campaigning,
      endedAtMs: this.endedAt,
      departedAtMs: this.departedAt,
    });
    for (const shard of plan.release) {
      const term = this.terms.get(shard);
      if (!term || term.stop.signal.aborted) continue;
      term.ending = 'rebalanced';
      term.stop.abort();
    }
    for (const shard of plan.acquire) {
      const lease = leases.get(namespace, this.names[shard]);
      const takeover = Boolean(views[shard]?.holder && views[shard]?.holder !== config.identity);
      this.campaign(shard, lease && { lease, atMs: this.observedAt('Lease', this.names[shard]) }, takeover);
    }
    const expiries = views.flatMap((v) => (v?.holder ? [v.observedAtMs + v.durationMs] : []));
    return Math.min(...expiries.filter((t) => t > config.clock.now()), Number.POSITIVE_INFINITY);
  }

  private campaign(shard: number, observed: LeaderElectionConfig['observed'], takeover: boolean): void {
    const { config } = this;
    const log = config.logger.child({ shard, lease: this.names[shard] });
    const guard = new LeaseGuard(
      config.renewDeadlineMs,
      config.clock,
      `the Lease of shard ${shard}`,
      config.leaseDurationMs,
    );
    const term: Term = { stop: new AbortController(), guard, done: Promise.resolve() };
    // A write refused for a stale renewal ends the term at once, as for the leader Lease.
    guard.onExpired(() => {
      term.ending ??= 'lost';
      term.stop.abort();
    });
    const elector = new LeaderElector({
      lock: { namespace: config.namespace, name: this.names[shard] },
      leases: config.client.kind<Lease>('Lease') as unknown as LeaderElectionConfig['leases'],
      identity: config.identity,
      leaseDurationMs: config.leaseDurationMs,
      renewDeadlineMs: config.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs,
      // A shard let go for balance is released at once, so its new holder need not wait for it to expire.
      releaseOnCancel: true,
      guard,
      observed,
      clock: config.clock,
      logger: { info: (m) => log.debug(m), error: (m) => log.warn(m) },
      callbacks: {
        onStartedLeading: (signal) => {
          term.since = new Date();
          this.count(takeover ? 'takeover' : 'acquired');
          log.info({ takeover }, 'shard acquired');
          config.onChange();
          return new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => config.onReleasing(shard).then(resolve, resolve), { once: true }),
          );
        },
        onStoppedLeading: () => {
          if (this.terms.get(shard) === term) this.terms.delete(shard);
          if (!term.since) return;
          this.endedAt.set(shard, config.clock.now());
          const reason = term.ending ?? 'lost';
          this.count(reason);
          log.info({ reason }, 'shard let go');
          config.onChange();
          this.wake();
        },
      },
    });
    this.terms.set(shard, term);
    term.done = elector.run(term.stop.signal);
  }

  private count(reason: HandoverReason): void {
    this.handovers.inc({ reason });
    this.held.set(this.heldShards().length);
  }
}
