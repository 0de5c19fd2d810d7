/**
 * `npm run bench -- sharding`: the same workload (node-client CSRs, and namespaces each with a one-replica
 * StatefulSet and a PodDisruptionBudget; test/support/sharding-workload.ts) converged by 1, 2 and 3
 * `orch-controller-manager --sharding` replicas, each a process of its own, against a fresh embedded control plane
 * (memory store, gate ShardedListAndWatch, 3 simulated nodes) in the bench's process. The replicas start first and
 * are left to take and balance the shards; then the workload is created. Per side: the time from the first create
 * to everything converged (polled by the bench client every 250 ms); per replica the CPU seconds its process spent
 * over that window (`/proc/<pid>/stat` utime + stime, so start-up is left out, the Lease renewals in), its peak
 * RSS (VmHWM: the whole process's, nothing subtracted, so mostly the fixed cost of a Node process and the code),
 * and from its `/debug/shards` the objects in its sharded caches and their cache memory, measured as the objects'
 * JSON size (V8's heap holds them in more bytes than that, by a roughly constant factor; no heap figure separates
 * the caches from the rest of the process). The goal: each replica of N at most (1/N + 10%) of the single
 * replica's CPU and cache memory. The sides rotate each round. SHARDING_BENCH_CSRS, SHARDING_BENCH_NAMESPACES,
 * SHARDING_BENCH_ROUNDS set the size.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { type Daemon, killAll, spawnDaemon } from '../test/support/daemons.ts';
import { freePort } from '../test/support/free-port.ts';
import { createCsrs, createNamespaces, shardReport, unconverged } from '../test/support/sharding-workload.ts';
import { type Figure, median, print, rotatedRounds } from './run.ts';
import { startWithNodes } from './support/nodes.ts';

const CSRS = Number(process.env.SHARDING_BENCH_CSRS ?? 1000);
const NAMESPACES = Number(process.env.SHARDING_BENCH_NAMESPACES ?? 100);
const ROUNDS = Number(process.env.SHARDING_BENCH_ROUNDS ?? 3);
const CONVERGE_TIMEOUT_MS = 20 * 60_000;
/** How long the replicas may take to hold every shard, balanced, before the workload. */
const BALANCE_TIMEOUT_MS = 60_000;
/** /proc/<pid>/stat counts CPU in clock ticks; Linux's USER_HZ is 100. */
const TICKS_PER_SECOND = 100;

interface Side {
  wallS: number;
  cpuS: number[];
  rssMiB: number[];
  cached: number[];
  cachedMiB: number[];
}

async function processFigures(pid: number): Promise<{ cpuS: number; rssMiB: number }> {
  // Fields after the command (in parentheses, which may hold spaces): utime and stime are the 12th and 13th.
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuS = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  const hwm = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1];
  return { cpuS, rssMiB: Number(hwm) / 1024 };
}

async function side(replicas: number): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-sharding-'));
  const cp = new ControlPlane({ port: 0, dataDir: dir, featureGates: { ShardedListAndWatch: true } });
  const daemons: { d: Daemon; port: number }[] = [];
  try {
    const { kc, client } = await startWithNodes(cp);
    const { certFile, keyFile } = cp.caFiles;
    for (let i = 0; i < replicas; i++) {
      const port = await freePort();
      const d = spawnDaemon(`bench-${i}`, {
        kubeconfig: cp.kubeconfigPath,
        leaseMs: 15_000,
        renewDeadlineMs: 10_000,
        retryMs: 2_000,
        controllers: 'csrapproving,csrsigning,statefulset,disruption',
        extraArgs: [
          '--sharding',
          `--cluster-signing-cert-file=${certFile}`,
          `--cluster-signing-key-file=${keyFile}`,
          `--secure-port=${port}`,
          '--bind-address=127.0.0.1',
          `--client-ca-file=${certFile}`,
          '--v=0',
        ],
      });
      daemons.push({ d, port });
    }
    // Idle and balanced first: every shard held, none more than one apart; then the CPU the workload costs.
    const exited = () => {
      if (daemons.some((r) => r.d.exit)) throw new Error('a replica exited');
    };
    const balancing = performance.now();
    for (;;) {
      exited();
      if (performance.now() - balancing > BALANCE_TIMEOUT_MS) {
        throw new Error(`the ${replicas} replicas did not hold every shard, balanced, within ${BALANCE_TIMEOUT_MS} ms`);
      }
      const held = await Promise.all(
        daemons.map((r) =>
          shardReport(kc, r.port).then(
            (s) => s.held.length,
            () => Number.NaN,
          ),
        ),
      );
      if (held.reduce((a, b) => a + b, 0) === 16 && Math.max(...held) - Math.min(...held) <= 1) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idle = await Promise.all(daemons.map((r) => processFigures(r.d.child.pid!)));
    const started = performance.now();
    await Promise.all([
      createCsrs(client, cp.registry.naming, 'csr', CSRS),
      createNamespaces(client, 'ns', NAMESPACES),
    ]);
    while ((await unconverged(client)).length > 0) {
      exited();
      if (performance.now() - started > CONVERGE_TIMEOUT_MS) throw new Error('the workload did not converge');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const wallS = (performance.now() - started) / 1000;
    const procs = await Promise.all(daemons.map((r) => processFigures(r.d.child.pid!)));
    const reports = await Promise.all(daemons.map((r) => shardReport(kc, r.port, true)));
    const sum = (xs: Record<string, number> = {}) => Object.values(xs).reduce((a, b) => a + b, 0);
    const cached = reports.map((r) => sum(r.cached));
    const cachedMiB = reports.map((r) => sum(r.cachedBytes) / 2 ** 20);
    const cpuS = procs.map((p, i) => p.cpuS - idle[i].cpuS);
    return { wallS, cpuS, rssMiB: procs.map((p) => p.rssMiB), cached, cachedMiB };
  } finally {
    for (const { d } of daemons) d.child.kill('SIGTERM');
    await killAll(daemons.map((r) => r.d));
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const rounds = await rotatedRounds(ROUNDS, {
    one: () => side(1),
    two: () => side(2),
    three: () => side(3),
  });
  const of = (key: 'one' | 'two' | 'three', pick: (s: Side) => number) => median(rounds.map((r) => pick(r[key])));
  const max = (xs: number[]) => Math.max(...xs);
  const single = {
    cpu: of('one', (s) => s.cpuS[0]),
    rss: of('one', (s) => s.rssMiB[0]),
    cached: of('one', (s) => s.cached[0]),
    cachedMiB: of('one', (s) => s.cachedMiB[0]),
  };
  const figures: Figure[] = [
    { name: '1 replica: first create → converged', value: of('one', (s) => s.wallS), unit: 's' },
    { name: '1 replica: CPU', value: single.cpu, unit: 's' },
    { name: '1 replica: peak RSS', value: single.rss, unit: 'MiB' },
    { name: '1 replica: objects cached', value: single.cached, unit: 'objects' },
    { name: '1 replica: cache memory (JSON size)', value: single.cachedMiB, unit: 'MiB' },
  ];
  for (const [key, n] of [
    ['two', 2],
    ['three', 3],
  ] as const) {
    const goal = (value: number) => ({ name: `(1/${n} + 10%) of 1 replica's`, value: value * (1 / n + 0.1) });
    figures.push(
      {
        name: `${n} replicas: first create → converged`,
        value: of(key, (s) => s.wallS),
        unit: 's',
        against: { name: '1 replica', value: of('one', (s) => s.wallS) },
      },
      {
        name: `${n} replicas: CPU of the busiest`,
        value: of(key, (s) => max(s.cpuS)),
        unit: 's',
        against: goal(single.cpu),
      },
      {
        name: `${n} replicas: peak RSS of the largest`,
        value: of(key, (s) => max(s.rssMiB)),
        unit: 'MiB',
        against: goal(single.rss),
      },
      {
        name: `${n} replicas: objects cached, the most`,
        value: of(key, (s) => max(s.cached)),
        unit: 'objects',
        against: goal(single.cached),
      },
      {
        name: `${n} replicas: cache memory (JSON size), the most`,
        value: of(key, (s) => max(s.cachedMiB)),
        unit: 'MiB',
        against: goal(single.cachedMiB),
      },
    );
  }
  print(
    `sharding: ${CSRS} CSRs, ${NAMESPACES} namespaces (StatefulSet + PDB each), ${ROUNDS} rounds, ${cpus().length} cores`,
    figures,
  );
  console.log(`per round: ${JSON.stringify(rounds)}`);
}
