/**
 * One `--sharding` replica's share of the work: its shard Leases (ShardSet) and the sharded controllers over
 * the shards it holds (ShardedControllers), their writes fenced shard by shard (ShardGuard).
 */
import type { ControllerContext, ControllerDefinition } from '../controller/controller.ts';
import { electionClient, type LeaderElectionOptions } from '../controller/manager.ts';
import { ShardedControllers } from './controllers.ts';
import { ShardGuard } from './guard.ts';
import { type HeldShard, ShardSet } from './shards.ts';

export interface ShardedReplicaOptions {
  /**
   * Everything controllers share but the informers; its client is the unfenced base the guards derive from, and its
   * `recorderFor` makes each shard context's recorder, through the fenced client.
   */
  ctx: Omit<ControllerContext, 'informers' | 'recorder'> & Required<Pick<ControllerContext, 'recorderFor'>>;
  controllers: ControllerDefinition[];
  workers: Record<string, number>;
  shards: number;
  leaderElection: LeaderElectionOptions;
  syncTimeoutMs: number;
  shutdownTimeoutMs: number;
}

/** What /debug/shards and statusz show of one replica. */
export interface ShardReport {
  identity: string;
  shards: number;
  held: HeldShard[];
  /** Objects in each sharded cache. */
  cached: Record<string, number>;
  /** Their JSON size in bytes, when asked for (it serializes every cached object). */
  cachedBytes?: Record<string, number>;
}

export class ShardedReplica {
  readonly set: ShardSet;
  readonly controllers: ShardedControllers;

  constructor(private readonly o: ShardedReplicaOptions) {
    const { ctx, leaderElection: le } = o;
    this.controllers = new ShardedControllers({
      controllers: o.controllers,
      workers: o.workers,
      shards: o.shards,
      held: () => this.set.heldShards().map((h) => h.shard),
      contextFor: (key) => {
        const client = ctx.client.derive({ writeGuard: new ShardGuard(key, o.shards, (i) => this.set.guardFor(i)) });
        return { ...ctx, client, recorder: ctx.recorderFor(client) };
      },
      watchList: ctx.features('WatchListClient'),
      syncTimeoutMs: o.syncTimeoutMs,
      shutdownTimeoutMs: o.shutdownTimeoutMs,
      clock: ctx.clock,
      logger: ctx.logger.child({ sharded: true }),
    });
    this.set = new ShardSet({
      client: electionClient(ctx.client),
      namespace: le.namespace,
      leaderLease: le.name,
      prefix: ctx.naming.shardLeasePrefix,
      shards: o.shards,
      identity: le.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      clock: ctx.clock,
      logger: ctx.logger.child({ sharding: true }),
      metrics: ctx.metrics,
      metricPrefix: ctx.naming.metricPrefix,
      onChange: () => this.controllers.changed(),
      onReleasing: () => this.controllers.releasing(),
    });
  }

  /** Until `signal` aborts; on the way out the controllers stop before the shards are released. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([this.set.run(signal), this.controllers.run(signal)]);
  }

  report(opts: { bytes?: boolean } = {}): ShardReport {
    return {
      identity: this.o.leaderElection.identity,
      shards: this.o.shards,
      held: this.set.heldShards(),
      cached: this.controllers.cached(),
      ...(opts.bytes && { cachedBytes: this.controllers.cachedBytes() }),
    };
  }
}
