/**
 * A shard term that ends with its release failing (the server refused the renewals and then the release, so the
 * Lease still names this replica) is not counted as released: the replica takes the shard back as soon as the
 * server answers again, instead of leaving it to another replica that waits for the Lease to expire. One
 * in-process ShardSet against the embedded plane; the other replica is a Lease held by `a` for an hour.
 */
import pino from 'pino';
import { Registry } from 'prom-client';
import { expect, it } from 'vitest';
import type { Lease } from '../src/api/types/coordination.ts';
import { ShardSet, shardLeaseName } from '../src/sharding/shards.ts';
import { realClock } from '../src/util/clock.ts';
import { rfc3339Micro } from '../src/util/time.ts';
import { startTestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';

const NS = 'default';
const PREFIX = 'release-failed';
const SHARDS = 4;

it('takes back at once a shard whose term ended with its release failing', { timeout: 90_000 }, async () => {
  const cluster = await startTestCluster();
  // `a` holds shard 1 (its target is 2, as `b`'s): a free shard goes to `a` on identity ties.
  const leases = cluster.client.kind<Lease>('Lease');
  const lease: Lease = {
    apiVersion: leases.apiVersion,
    kind: 'Lease',
    metadata: { namespace: NS, name: shardLeaseName(PREFIX, 1) },
    spec: { holderIdentity: 'a', leaseDurationSeconds: 3600, renewTime: rfc3339Micro(new Date()) },
  };
  await leases.create(lease);
  const set = new ShardSet({
    client: cluster.client,
    namespace: NS,
    leaderLease: 'release-failed-leader',
    prefix: PREFIX,
    shards: SHARDS,
    identity: 'b',
    leaseDurationMs: 4_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 500,
    clock: realClock,
    logger: pino({ level: 'silent' }),
    metrics: new Registry(),
    metricPrefix: 'test',
    onChange: () => {},
    onReleasing: async () => {},
  });
  const held = () => set.heldShards().map((h) => h.shard);
  const stop = new AbortController();
  const running = set.run(stop.signal);
  try {
    // Shard 0 is b's (furthest below its target), one of 2 and 3 too, the other waits for a (its Lease missing).
    await eventually(
      async () => held().length === 2 && held()[0] === 0,
      20_000,
      () => `b to hold 0 and one more, not ${held()}`,
      100,
    );
    // The server refuses every write of shard 0's Lease: renewals fail, the term ends, its release fails too.
    const path = `/leases/${shardLeaseName(PREFIX, 0)}`;
    cluster.cp.faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (m, p) => m === 'PUT' && p.includes(path),
    });
    await eventually(
      async () => !held().includes(0),
      10_000,
      () => `b to lose shard 0, holding ${held()}`,
      100,
    );
    cluster.cp.faults.clear();
    // The Lease still names b, renewed up to two seconds ago: b takes it back well before it expires.
    await eventually(
      async () => held().includes(0),
      2_000,
      () => `b to take shard 0 back, holding ${held()}`,
      100,
    );
    expect((await leases.get(NS, shardLeaseName(PREFIX, 0))).spec?.holderIdentity).toBe('b');
  } finally {
    cluster.cp.faults.clear();
    stop.abort();
    await running;
    await cluster.stop();
  }
});
