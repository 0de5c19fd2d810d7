/**
 * Sharded replicas against a server that does not serve `shardSelector` (an embedded plane with the
 * ShardedListAndWatch gate off ignores the parameter, as kube-apiserver does without the gate): the replicas filter
 * on the client, each says so once in its log, and the CSRs still all converge. test/e2e/sharding.test.ts shows the
 * served case on both substrates.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type Daemon, killAll, spawnDaemon, waitFor } from './support/daemons.ts';
import { createCsrs, shardHolders, unconverged } from './support/sharding-workload.ts';

const SHARDS = 16;
const CLIENT_SIDE = 'the server does not apply shardSelector';

let cluster: TestCluster;
const daemons: Daemon[] = [];

beforeAll(async () => {
  cluster = await startTestCluster({ featureGates: { ShardedListAndWatch: false } });
}, 60_000);

afterAll(async () => {
  await killAll(daemons);
  await cluster?.stop();
});

it('filters on the client when the server ignores shardSelector, says so once, and converges', {
  timeout: 240_000,
}, async () => {
  const { certFile, keyFile } = cluster.cp.caFiles;
  await createCsrs(cluster.client, cluster.cp.registry.naming, 'fallback', 40);
  for (let k = 1; k <= 2; k++) {
    daemons.push(
      spawnDaemon(`fallback-${k}`, {
        kubeconfig: cluster.kubeconfig,
        leaseMs: 10_000,
        renewDeadlineMs: 5_000,
        retryMs: 1_000,
        controllers: 'csrapproving,csrsigning',
        extraArgs: [
          '--sharding',
          `--shards=${SHARDS}`,
          `--cluster-signing-cert-file=${certFile}`,
          `--cluster-signing-key-file=${keyFile}`,
        ],
      }),
    );
  }
  // Both replicas hold shards: each one's caches list a server that answers everything.
  await waitFor(
    'both replicas to hold shards',
    async () => {
      const h = await shardHolders(cluster.client, cluster.cp.registry.naming, SHARDS);
      return daemons.every((d) => h.includes(d.identity ?? '-')) ? true : undefined;
    },
    90_000,
  );
  await waitFor(
    'the CSRs to converge',
    async () => ((await unconverged(cluster.client)).length === 0 ? true : undefined),
    180_000,
  );
  for (const d of daemons) {
    expect(
      d.lines.filter((l) => l.msg?.startsWith(CLIENT_SIDE)),
      `${d.name}: told once`,
    ).toHaveLength(1);
  }
});
