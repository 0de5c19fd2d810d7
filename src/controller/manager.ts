/**
 * The manager: runs the selected controllers only while this replica leads. On winning the lease
 * it registers the controllers' informers, starts them, and starts each controller's workers once the
 * caches it reads have synced (naming any that do not sync in time). On losing the lease or on shutdown it stops workers
 * and informers within a bounded time. Losing the lease ends `run` with `lostLeadership` so the
 * process can exit non-zero, as the reference does, and its supervisor restarts it.
 */
import { setMaxListeners } from 'node:events';
import type { Lease, LeaseCandidate } from '../api/types/coordination.ts';
import { SharedInformerFactory } from '../cache/factory.ts';
import type { KubeClient } from '../client/client.ts';
import { type LeaseCandidateApi, LeaseCandidateClient } from '../leaderelection/candidate.ts';
import { type LeaderElectionConfig, LeaderElector } from '../leaderelection/elector.ts';
import type { LeaseGuard } from '../leaderelection/guard.ts';
import type { LeaderElectionHealth } from '../leaderelection/health.ts';
import { leaderElectionMetrics } from '../leaderelection/metrics.ts';
import { type ControllerContext, type ControllerDefinition, ControllerLoop } from './controller.ts';

export interface LeaderElectionOptions {
  enabled: boolean;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  releaseOnCancel: boolean;
  /** This replica's LeaseCandidate, published while it takes part in the election. */
  candidate?: { binaryVersion: string; emulationVersion: string; strategy: string };
  /** Coordinated mode: the election controller assigns the Lease; this replica only renews it while it holds it. */
  coordinated?: boolean;
  /** How often the LeaseCandidate is renewed (default 5 min); sharded replicas find each other by it. */
  candidateRenewMs?: number;
}

export interface ManagerOptions {
  controllers: ControllerDefinition[];
  /** Worker counts by controller name, from `--concurrent-*-syncs`. */
  workers: Record<string, number>;
  leaderElection: LeaderElectionOptions;
  /** How long informers may take to sync before start-up fails. */
  syncTimeoutMs: number;
  /** How long stopping may take before running reconciles are abandoned. */
  shutdownTimeoutMs: number;
  health?: LeaderElectionHealth;
  /**
   * Fences the controllers' writes: the context's client consults it, the elector renews it. Lease and
   * LeaseCandidate calls then go through a client without it, with `/leader-election` in its user agent.
   */
  guard?: LeaseGuard;
}

export type RunOutcome = 'stopped' | 'lostLeadership';

export class Manager {
  private loops: ControllerLoop[] = [];
  private informers?: SharedInformerFactory;
  private synced = false;
  private leading = false;
  private candidate?: LeaseCandidateClient;

  constructor(
    /** Everything controllers share except the informers, which are made anew for each term as leader. */
    private readonly ctx: Omit<ControllerContext, 'informers'>,
    private readonly opts: ManagerOptions,
  ) {}

  /** True once every informer of the running controllers has synced (readiness). */
  hasSynced(): boolean {
    return this.synced;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Whether this replica's LeaseCandidate has been read once (readiness), when one is published. */
  candidateSynced(): boolean {
    return this.candidate?.hasSynced() ?? true;
  }

  private publishCandidate(le: LeaderElectionOptions, client: KubeClient): LeaseCandidateClient {
    const log = this.ctx.logger;
    const candidate = new LeaseCandidateClient({
      candidates: client.kind<LeaseCandidate>('LeaseCandidate') as unknown as LeaseCandidateApi,
      namespace: le.namespace,
      name: le.identity,
      leaseName: le.name,
      ...le.candidate!,
      renewIntervalMs: le.candidateRenewMs,
      clock: this.ctx.clock,
      logger: { info: (m) => log.info(m), error: (m) => log.error(m) },
    });
    candidate.start();
    return candidate;
  }

  /** Each running controller's own health. */
  controllerHealth(): { name: string; ok: boolean; message?: string }[] {
    return this.loops.map((l) => ({ name: l.definition.name, ...l.healthy() }));
  }

  /** Runs until `signal` aborts (→ 'stopped') or leadership is lost (→ 'lostLeadership'). */
  async run(signal: AbortSignal): Promise<RunOutcome> {
    const le = this.opts.leaderElection;
    if (!le.enabled) {
      this.leading = true;
      await this.lead(signal);
      return 'stopped';
    }
    const log = this.ctx.logger;
    let leadership: Promise<void> = Promise.resolve();
    // A term that cannot start (caches not synced) ends the election too, so `run` rejects with its error
    // (after releasing the lease) instead of leaving a rejected promise nobody awaits.
    let failure: { err: unknown } | undefined;
    const election = new AbortController();
    const { guard } = this.opts;
    const client = this.electionClient();
    // A write refused for a stale renewal ends the term at once, as a failed renewal would.
    guard?.onExpired(() => {
      log.error({ identity: le.identity }, 'lease renewal older than the renew deadline; stepping down');
      election.abort();
    });
    const config: LeaderElectionConfig = {
      lock: { namespace: le.namespace, name: le.name },
      guard,
      leases: client.kind<Lease>('Lease') as unknown as LeaderElectionConfig['leases'],
      identity: le.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      releaseOnCancel: le.releaseOnCancel,
      coordinated: le.coordinated,
      metrics: leaderElectionMetrics(le.name, this.ctx.metrics),
      clock: this.ctx.clock,
      logger: { info: (m) => log.info(m), error: (m) => log.error(m) },
      callbacks: {
        onStartedLeading: (leaderSignal) => {
          this.leading = true;
          log.info({ identity: le.identity }, 'became leader; starting controllers');
          leadership = this.lead(leaderSignal).catch((err) => {
            failure = { err };
            election.abort();
          });
          return leadership;
        },
        onStoppedLeading: () => {
          this.leading = false;
        },
        onNewLeader: (identity) => log.info({ leader: identity }, 'new leader observed'),
      },
    };
    const elector = new LeaderElector(config);
    this.opts.health?.attach(elector);
    this.candidate = le.candidate && this.publishCandidate(le, client);
    const leaseWatch = le.coordinated ? undefined : this.watchLease(client, le, elector);
    try {
      await elector.run(AbortSignal.any([signal, election.signal]));
    } finally {
      await Promise.all([this.candidate?.stop(), leaseWatch?.stop()]);
    }
    await leadership;
    if (failure) throw failure.err;
    return signal.aborted ? 'stopped' : 'lostLeadership';
  }

  /**
   * Watches the leader Lease alone and hands each version to the elector: a standby then counts the lease duration
   * from the last renewal itself, not from the read that next saw it, and sees a release at once. Should the watch
   * fail, the elector still has its reads, as the reference's has only them.
   */
  private watchLease(client: KubeClient, le: LeaderElectionOptions, elector: LeaderElector): SharedInformerFactory {
    const informers = new SharedInformerFactory(client, this.ctx.clock, {
      onError: (informer, err) => this.ctx.logger.warn({ informer, err: String(err) }, 'leader Lease watch recovering'),
    });
    const lease = informers.informerFor<Lease>(client.registry.byKind('Lease')!, {
      namespace: le.namespace,
      fieldSelector: `metadata.name=${le.name}`,
    });
    lease.addEventHandler({ add: (l) => elector.observe(l), update: (_, l) => elector.observe(l) });
    informers.start();
    return informers;
  }

  /** The client of the election itself: never fenced by the guard it feeds. */
  private electionClient(): KubeClient {
    return this.opts.guard ? electionClient(this.ctx.client) : this.ctx.client;
  }

  /** Starts the controllers and keeps them running until `signal` aborts. */
  private async lead(signal: AbortSignal): Promise<void> {
    // The informers and each controller get a client with a rate limiter of their own (the same QPS and burst),
    // as the reference's controllers get a client each: one busy controller does not hold back the others.
    const ctx: ControllerContext = {
      ...this.ctx,
      informers: new SharedInformerFactory(this.ctx.client.derive({}), this.ctx.clock, {
        watchList: this.ctx.features('WatchListClient'),
        trimManagedFields: true,
        onError: (informer, err) =>
          this.ctx.logger.warn({ informer, err: String(err) }, 'informer recovering from an error'),
      }),
    };
    this.informers = ctx.informers;
    this.loops = this.opts.controllers.map(
      (d) => new ControllerLoop(d, { ...ctx, client: ctx.client.derive({}) }, this.opts.workers[d.name] ?? d.workers),
    );
    const needs = this.loops.map((loop) => ctx.informers.requestedBy(() => loop.setup()));
    ctx.informers.start();
    // Each controller starts once the informers it reads have synced, as the reference's controllers each wait
    // for their own caches: a big cache (every pod) holds back only the controllers that read it.
    // One listener on the leader's signal for all those waits, which listen on a signal of their own, one each.
    const syncing = new AbortController();
    setMaxListeners(this.loops.length, syncing.signal);
    const stopSyncing = () => syncing.abort();
    if (signal.aborted) stopSyncing();
    else signal.addEventListener('abort', stopSyncing, { once: true });
    const waits = await Promise.allSettled(
      this.loops.map(async (loop, i) => {
        await ctx.informers.waitForSync(this.opts.syncTimeoutMs, syncing.signal, needs[i]);
        if (!signal.aborted) loop.start();
      }),
    );
    signal.removeEventListener('abort', stopSyncing);
    const failed = waits.find((w) => w.status === 'rejected');
    if (failed || signal.aborted) {
      await this.stopAll();
      // Shutdown during the initial sync is a stop, not a failure.
      if (signal.aborted) return;
      throw (failed as PromiseRejectedResult).reason;
    }
    this.synced = true;
    this.ctx.logger.info({ controllers: this.loops.map((l) => l.definition.name) }, 'controllers started');
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await this.stopAll();
  }

  private async stopAll(): Promise<void> {
    const deadline = this.opts.shutdownTimeoutMs;
    await Promise.all(this.loops.map((l) => l.stop(deadline)));
    await this.informers?.stop();
    this.ctx.recorder.stop?.();
    this.synced = false;
  }
}

/** A client for Lease and LeaseCandidate calls: unfenced, `/leader-election` in its user agent. */
export function electionClient(client: KubeClient): KubeClient {
  return client.derive({ writeGuard: undefined, userAgent: `${client.options.userAgent}/leader-election` });
}
