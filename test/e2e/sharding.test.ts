/**
 * Sharded active-active replicas on both substrates (the real cluster's kube-apiserver runs with the
 * ShardedListAndWatch gate, as the embedded plane does here): three `--sharding` replicas of the CSR approver and
 * signer, the StatefulSet and the disruption controllers split 16 shards, and CSRs and namespaces each with a
 * StatefulSet and a PDB converge; the API server filters `shardSelector` by the same hash as the replicas (so none
 * of them had to filter on the client); `kill -9` of one replica: the others take its shards over and new objects
 * converge. test/sharding-e2e.test.ts covers the rest (cache shares, fencing, rolling restart) on the embedded plane.
 */
import { afterAll, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/meta.ts';
import { type ShardKey, shardOf, shardSelector } from '../../src/sharding/ranges.ts';
import { eventually } from '../support/eventually.ts';
import {
  createCsrs,
  createNamespaces,
  orchShardsSteady,
  shardHolders,
  unconverged,
} from '../support/sharding-workload.ts';
import { describeOnSubstrate, type SubstrateDaemon } from '../support/substrate.ts';

const SHARDS = 16;
const REPLICAS = 3;
const CSRS = 60;
const NAMESPACES = 9;
const LEASE_MS = 10_000;
const CONVERGE_MS = 240_000;
/** The daemon's words when the server let an object outside the selector through (src/sharding/controllers.ts). */
const CLIENT_SIDE = 'the server does not apply shardSelector';

describeOnSubstrate('sharding', (s) => {
  const replicas: SubstrateDaemon[] = [];
  const csrNames: string[] = [];
  const namespaces: string[] = [];
  const tag = (base: string) => s().name(base);
  /** The shard Leases' holders now; the last answer for a failure's message. */
  let held: string[] = [];
  const holders = async () => {
    held = await shardHolders(s().admin, s().naming, SHARDS);
    return held;
  };
  const ours = async () => (await unconverged(s().admin)).filter((x) => x.includes(`/${tag('')}`));
  const converge = (what: string) => eventually(async () => (await ours()).length === 0, CONVERGE_MS, what, 500);

  const addWorkload = async (base: string, csrs: number, nss: number) => {
    await createCsrs(s().admin, s().naming, tag(`${base}-csr`), csrs);
    await createNamespaces(s().admin, tag(`${base}-ns`), nss);
    for (let i = 0; i < csrs; i++) csrNames.push(`${tag(`${base}-csr`)}-${i}`);
    for (let i = 0; i < nss; i++) namespaces.push(`${tag(`${base}-ns`)}-${i}-apps`);
  };

  const replica = (k: number) =>
    s().startDaemon({
      name: `sharding-${k}`,
      controllers: 'csrapproving,csrsigning,statefulset,disruption',
      waitStarted: false,
      args: [
        '--sharding',
        `--shards=${SHARDS}`,
        `--leader-elect-lease-duration=${LEASE_MS}ms`,
        '--leader-elect-renew-deadline=5s',
        '--leader-elect-retry-period=1s',
      ],
    });

  afterAll(async () => {
    // The real cluster serves the next suites: what this one made goes.
    const csrs = s().admin.kind('CertificateSigningRequest');
    for (const name of csrNames) await csrs.delete(undefined, name).catch(() => undefined);
    for (const name of namespaces)
      await s()
        .admin.kind('Namespace')
        .delete(undefined, name)
        .catch(() => undefined);
  });

  it('filters shardSelector on the server by the replicas’ hash', async () => {
    await addWorkload('first', CSRS, NAMESPACES);
    // Four shards of the CSRs by uid and of the StatefulSets by namespace: the server's answer to each shard's
    // selector is exactly what the replicas' hash puts in that shard.
    const probe = async (kind: string, key: ShardKey, keyOf: (o: KubeObject) => string) => {
      const all = (await s().admin.kind(kind).listAll()).items.filter(
        (o) => o.metadata.name?.startsWith(tag('')) || o.metadata.namespace?.startsWith(tag('')),
      );
      for (let i = 0; i < 4; i++) {
        const served = await s()
          .admin.kind(kind)
          .list(undefined, { shardSelector: shardSelector(key, [i], 4) });
        const want = all
          .filter((o) => shardOf(keyOf(o), 4) === i)
          .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
        const got = served.items.filter((o) => all.some((a) => a.metadata.uid === o.metadata.uid));
        expect(got.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort(), `${kind} shard ${i} of 4`).toEqual(
          want.sort(),
        );
      }
    };
    await probe('CertificateSigningRequest', 'uid', (o) => o.metadata.uid ?? '');
    await probe('StatefulSet', 'namespace', (o) => o.metadata.namespace ?? '');
  });

  it('splits the shards among the replicas and converges', { timeout: CONVERGE_MS + 120_000 }, async () => {
    for (let k = 1; k <= REPLICAS; k++) replicas.push(await replica(k));
    await eventually(
      async () => {
        const h = await holders();
        const counts = replicas.map((r) => h.filter((x) => x === r.proc.identity).length);
        return h.every(Boolean) && counts.every((c) => c >= 5 && c <= 6);
      },
      120_000,
      () => `the shards to balance among the ${REPLICAS} replicas; holders ${JSON.stringify(held)}`,
      500,
    );
    // `kubectl orch shards` prints the same map from the Leases.
    const printed = await orchShardsSteady(s().admin, s().naming, SHARDS, s(), ['--no-headers']);
    expect(printed.lines.map((l) => l.split(/\s+/)[2])).toEqual(printed.holders);
    await converge('the workload to converge');
    // The server filtered: no replica saw an object outside its shards.
    for (const r of replicas) expect(r.log()).not.toContain(CLIENT_SIDE);
  });

  it('takes the shards of a replica killed with SIGKILL over, and still converges', {
    timeout: CONVERGE_MS + 120_000,
  }, async () => {
    const [victim, ...survivors] = replicas;
    const its = (await holders()).flatMap((h, i) => (h === victim.proc.identity ? [i] : []));
    expect(its.length).toBeGreaterThan(0);
    victim.proc.child.kill('SIGKILL');
    const killedAt = performance.now();
    const ids = survivors.map((r) => r.proc.identity);
    await eventually(
      async () => (await holders()).every((h) => ids.includes(h)),
      // A lease duration and a retry, with slack for a loaded 2-core machine.
      LEASE_MS + 15_000,
      () => `the survivors to hold every shard; holders ${JSON.stringify(held)}`,
      250,
    );
    console.log(
      `sharding on ${s().kind}: shards ${its.join(',')} taken over in ${Math.round(performance.now() - killedAt)} ms`,
    );
    await addWorkload('after-kill', 30, 3);
    await converge('the workload to converge after the kill');
  });
});
