import { describe, expect, it } from 'vitest';
import { LeaseGuard, LeaseLostError } from '../leaderelection/guard.ts';
import { FakeClock } from '../util/clock.ts';
import { ShardGuard } from './guard.ts';
import { shardOf } from './ranges.ts';

const SHARDS = 16;

/** A guard holding exactly `held`, each renewed at 0; the renew deadline is 10 s. */
function guards(held: number[]) {
  const clock = new FakeClock();
  const terms = new Map(held.map((i) => [i, new LeaseGuard(10_000, clock)]));
  for (const g of terms.values()) g.renewed(0);
  return { clock, guardFor: (i: number) => terms.get(i) };
}

describe('ShardGuard', () => {
  const ns = 'team-a';
  const mine = shardOf(ns, SHARDS);
  const other = (mine + 1) % SHARDS;

  it('lets a namespaced write through only under the term of its namespace’s shard', () => {
    const path = `/apis/apps/v1/namespaces/${ns}/statefulsets/web/status`;
    expect(() => new ShardGuard('namespace', SHARDS, guards([mine]).guardFor).admit('PUT x', { path })).not.toThrow();
    expect(() => new ShardGuard('namespace', SHARDS, guards([other]).guardFor).admit('PUT x', { path })).toThrow(
      `refusing PUT x: this replica does not hold shard ${mine}`,
    );
  });

  it('refuses once the shard’s last renewal is older than the renew deadline (a paused replica)', () => {
    const { clock, guardFor } = guards([mine]);
    clock.step(10_000);
    const guard = new ShardGuard('namespace', SHARDS, guardFor);
    expect(() => guard.admit('POST p', { path: `/api/v1/namespaces/${ns}/pods` })).toThrow(LeaseLostError);
  });

  it('finds a CSR’s shard by the uid in its body, object or text', () => {
    const uid = '0b7f9d0e-1111-4c5e-9d2a-52f8f1b7a001';
    const shard = shardOf(uid, SHARDS);
    const path = '/apis/certificates.orch.io/v1/certificatesigningrequests/csr-1/approval';
    const body = { metadata: { name: 'csr-1', uid } };
    const held = new ShardGuard('uid', SHARDS, guards([shard]).guardFor);
    expect(() => held.admit('PUT a', { path, body })).not.toThrow();
    expect(() => held.admit('PUT a', { path, body: JSON.stringify(body) })).not.toThrow();
    const notHeld = new ShardGuard('uid', SHARDS, guards([(shard + 1) % SHARDS]).guardFor);
    expect(() => notHeld.admit('PUT a', { path, body })).toThrow(`does not hold shard ${shard}`);
  });

  it('a write naming no shard (a review, an event of a cluster-scoped object) needs some shard held', () => {
    const path = '/apis/authorization.orch.io/v1/subjectaccessreviews';
    expect(() => new ShardGuard('uid', SHARDS, guards([3]).guardFor).admit('POST r', { path, body: {} })).not.toThrow();
    expect(() => new ShardGuard('uid', SHARDS, guards([]).guardFor).admit('POST r', { path, body: {} })).toThrow(
      'refusing POST r: this replica does not hold any shard',
    );
  });
});
