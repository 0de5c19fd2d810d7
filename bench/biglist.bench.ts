/**
 * `npm run bench -- biglist`: one unpaged LIST of 50,000 ConfigMaps in one namespace from the embedded control
 * plane (memory store, alone in this process) in each format — JSON, Table (`kubectl get`'s), protobuf, YAML — and
 * what it does to everyone else: a client in a process of its own (not the lister's) GETs one ConfigMap over and
 * over (one at a time, 2 ms apart) while the list is encoded and sent. Per format: the LIST's time (against JSON's,
 * in the same round) and the p99 of those GETs (against the same GETs on the idle server for 1 s: the floor,
 * measured next to it, the order alternating by round). Goals: p99 ≤ 50 ms in every format, protobuf ≤ 1× JSON.
 *
 * The 50,000 are made fast: one ConfigMap is created through the API (so it carries what a real create stores,
 * such as managed fields) and copied under other names and uids into the store in-process (`ControlPlane.seed`),
 * 500 at a time. Rounds run every format, the one going first rotating; a warm-up round before them is not counted
 * in the medians but its list times are printed too (the first LIST of each format after start: the server has
 * made no item's JSON or protobuf yet). Also printed, per LIST in the server: the most CPU spent in one turn of the
 * event loop (what the loop was held by work, whatever the machine's load), the longest event-loop delay (wall
 * clock) and the longest GC pause. `BIGLIST_BENCH_ROUNDS=<n>` changes the number of rounds (5);
 * `BIGLIST_BENCH_PROFILE=<dir>` writes a CPU profile of the server per list.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { KubeObject } from '../src/api/meta.ts';
import { startTestCluster } from '../test/support/cluster.ts';
import { watchLoopTurns } from '../test/support/loop-turns.ts';
import { type Figure, median, print, rotatedRounds } from './run.ts';
import { profiled } from './support/profile.ts';

const OBJECTS = 50_000;
const SEED_BATCH = 500;
const IDLE_MS = 1000;
const ROUNDS = Number(process.env.BIGLIST_BENCH_ROUNDS ?? 5);
const GOAL_P99_MS = 50;

const FORMATS = {
  JSON: 'application/json',
  Table: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  protobuf: 'application/vnd.kubernetes.protobuf',
  YAML: 'application/yaml',
} as const;
type Format = keyof typeof FORMATS;

interface Side {
  listMs: number;
  bytes: number;
  busyP99: number;
  idleP99: number;
  /** The longest the server's event loop was held during the LIST. */
  loopMaxMs: number;
  /** The longest garbage-collection pause in the server during the LIST. */
  gcMaxMs: number;
  /** The most CPU the server's process spent between two turns of its event loop during the LIST. */
  turnCpuMs: number;
}

interface Reply {
  listMs?: number;
  bytes?: number;
  probesMs?: number[];
  error?: string;
}

/** The client process and a way to send it one command and read its answer. */
function startClient(tls: Record<string, string>): { child: ChildProcess; ask(command: object): Promise<Reply> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'support', 'biglist-client.ts')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...tls },
    },
  );
  const replies = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    child,
    async ask(command) {
      child.stdin!.write(`${JSON.stringify(command)}\n`);
      const next = await replies.next();
      if (next.done) throw new Error('the bench client exited');
      const reply = JSON.parse(next.value as string) as Reply;
      if (reply.error) throw new Error(`bench client: ${reply.error}`);
      return reply;
    },
  };
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)]!;
}

export async function run(): Promise<void> {
  const cluster = await startTestCluster({ storage: 'memory', historySize: 1000 });
  const { cp, client } = cluster;
  const user = cluster.kc.getCurrentUser()!;
  const tls = {
    BENCH_CA: cp.caPem,
    BENCH_CERT: Buffer.from(user.certData!, 'base64').toString(),
    BENCH_KEY: Buffer.from(user.keyData!, 'base64').toString(),
  };
  const lister = startClient(tls);
  const prober = startClient(tls);
  try {
    const cms = client.kind('ConfigMap');
    const probeNamespace = cp.registry.naming.initialNamespaces[1];
    await cms.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'probe', namespace: probeNamespace },
      data: { key: 'value' },
    });
    const template = (await cms.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'template', namespace: 'default', labels: { app: 'bench' } },
      data: { key: 'value', payload: 'x'.repeat(200) },
    })) as KubeObject;
    const { uid: _uid, resourceVersion: _rv, ...metadata } = template.metadata;
    for (let i = 0; i < OBJECTS; i += SEED_BATCH) {
      await Promise.all(
        Array.from({ length: Math.min(SEED_BATCH, OBJECTS - i) }, (_, j) => {
          const name = `cm-${String(i + j).padStart(6, '0')}`;
          return cp.seed({
            ...template,
            metadata: { ...metadata, name },
            data: { key: name, payload: 'x'.repeat(200) },
          });
        }),
      );
    }
    await cms.delete('default', 'template');
    const list = `${cp.url}/api/v1/namespaces/default/configmaps`;
    const probe = `${cp.url}/api/v1/namespaces/${probeNamespace}/configmaps/probe`;
    const profileDir = process.env.BIGLIST_BENCH_PROFILE;
    if (profileDir) await mkdir(profileDir, { recursive: true });

    const side = (format: Format) => async (round: number) => {
      const busy = async () => {
        const profile = profileDir && join(profileDir, `${format}-${round}.cpuprofile`);
        const delay = monitorEventLoopDelay({ resolution: 1 });
        let gcMaxMs = 0;
        const gc = new PerformanceObserver((entries) => {
          for (const e of entries.getEntries()) gcMaxMs = Math.max(gcMaxMs, e.duration);
        });
        gc.observe({ entryTypes: ['gc'] });
        delay.enable();
        const turns = watchLoopTurns();
        const { listed, probed } = await profiled(profile, async () => {
          await prober.ask({ probe, start: true });
          const listing = lister.ask({ list, accept: FORMATS[format] });
          // The probing is stopped whether or not the list failed, then the failure reported.
          const outcome = await listing.then(
            (r) => ({ r }),
            (err: Error) => ({ err }),
          );
          const stopped = await prober.ask({ stop: true });
          if ('err' in outcome) throw outcome.err;
          return { listed: outcome.r, probed: stopped.probesMs! };
        });
        delay.disable();
        const turnCpuMs = turns.stop();
        gc.disconnect();
        const loopMaxMs = delay.max / 1e6;
        return { listMs: listed.listMs!, bytes: listed.bytes!, busyP99: p99(probed), loopMaxMs, gcMaxMs, turnCpuMs };
      };
      const idle = async () => p99((await prober.ask({ probe, ms: IDLE_MS })).probesMs!);
      // The floor first in even rounds, second in odd ones.
      if (round % 2 === 0) {
        const idleP99 = await idle();
        return { ...(await busy()), idleP99 };
      }
      const measured = await busy();
      return { ...measured, idleP99: await idle() };
    };
    const sides = Object.fromEntries(Object.keys(FORMATS).map((f) => [f, side(f as Format)])) as Record<
      Format,
      (round: number) => Promise<Side>
    >;
    // Warm-up: JIT, TLS sessions, and the items' JSON and protobuf, which the server keeps per stored object.
    const [first] = await rotatedRounds(1, sides);
    const rounds = await rotatedRounds(ROUNDS, sides);

    const figures: Figure[] = [];
    for (const format of Object.keys(FORMATS) as Format[]) {
      const of = (pick: (s: Side) => number) => rounds.map((r) => pick(r[format]));
      const bytes = median(of((s) => s.bytes));
      figures.push({
        name: `LIST, ${format} (${(bytes / 2 ** 20).toFixed(1)} MiB)`,
        value: median(of((s) => s.listMs)),
        unit: 'ms',
        against: { name: 'JSON', value: median(rounds.map((r) => r.JSON.listMs)) },
        ratios: rounds.map((r) => r[format].listMs / r.JSON.listMs),
      });
      const busy = of((s) => s.busyP99);
      figures.push({
        name: `GET p99 during the ${format} LIST`,
        value: median(busy),
        unit: 'ms',
        against: { name: 'idle GET p99', value: median(of((s) => s.idleP99)) },
        ratios: rounds.map((r) => r[format].busyP99 / r[format].idleP99),
      });
      figures.push({
        name: `  ÷ goal (${GOAL_P99_MS} ms), worst round ${Math.max(...busy).toFixed(1)} ms`,
        value: median(busy) / GOAL_P99_MS,
        unit: '×',
      });
      const server: [string, (s: Side) => number][] = [
        ['most CPU in one loop turn', (s) => s.turnCpuMs],
        ['longest event-loop delay (wall)', (s) => s.loopMaxMs],
        ['longest GC pause', (s) => s.gcMaxMs],
      ];
      for (const [name, pick] of server)
        figures.push({ name: `  server: ${name}`, value: median(of(pick)), unit: 'ms' });
    }
    figures.push(
      ...(Object.keys(FORMATS) as Format[]).map((format) => ({
        name: `first LIST after start, ${format} (warm-up, nothing cached)`,
        value: first[format].listMs,
        unit: 'ms',
        against: { name: 'JSON', value: first.JSON.listMs },
      })),
    );
    print(
      `LIST of ${OBJECTS.toLocaleString('en-US')} ConfigMaps (HTTPS, two client processes: the LIST, and GETs ` +
        'one at a time, ' +
        `client QPS unlimited; memory store; ${ROUNDS} rounds, formats rotating, median)`,
      figures,
    );
  } finally {
    lister.child.kill();
    prober.child.kill();
    await cluster.stop();
  }
}
