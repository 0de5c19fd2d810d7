/**
 * `npm run bench -- creates`: ConfigMap creates/s on the embedded control plane (memory store, in this process and
 * alone in it) from 2 client processes, against the floor of a bare node HTTPS server that parses each JSON body
 * and answers it back with 201, from the same 2 clients. Each client keeps HTTPS keep-alive connections and the same
 * number of requests in flight, with no rate limit; rounds alternate which server goes first. With
 * `CREATES_BENCH_PROFILE=<dir>`, a CPU profile of this process (the control plane's) over each of its runs is written
 * there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { startTestCluster } from '../test/support/cluster.ts';
import { interleaved, printPaired } from './run.ts';
import { startEchoServer } from './support/echo.ts';
import { profiled } from './support/profile.ts';

const CLIENTS = 2;
const IN_FLIGHT_PER_CLIENT = 32;
const CREATES_PER_CLIENT = 2000;
const ROUNDS = 9;

/** A client process and its replies, one line per command. */
interface Client {
  child: ChildProcess;
  replies: AsyncIterator<string>;
  lines: Interface;
}

function startClient(tls: Record<string, string>): Client {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'support', 'create-client.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...tls },
  });
  const lines = createInterface({ input: child.stdout! });
  return { child, lines, replies: lines[Symbol.asyncIterator]() };
}

/**
 * Creates/s of all clients together against `url`, and this process's CPU time per create in µs (the server's: the
 * clients run elsewhere); `tag` keeps object names apart between runs.
 */
async function createsPerSecond(clients: Client[], url: string, tag: string): Promise<{ rate: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    clients.map(async (c, i) => {
      const command = { url, n: CREATES_PER_CLIENT, concurrency: IN_FLIGHT_PER_CLIENT, prefix: `${tag}-c${i}` };
      c.child.stdin!.write(`${JSON.stringify(command)}\n`);
      const reply = JSON.parse((await c.replies.next()).value as string) as { ms?: number; error?: string };
      if (reply.error) throw new Error(`client ${i}: ${reply.error}`);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const creates = clients.length * CREATES_PER_CLIENT;
  return { rate: creates / seconds, cpuUs: (used.user + used.system) / creates };
}

export async function run(): Promise<void> {
  const cluster = await startTestCluster({ storage: 'memory', historySize: 1000 });
  const { cp } = cluster;
  const echo = await startEchoServer(cp.clusterCa);
  const echoUrl = `https://127.0.0.1:${echo.port}/api/v1/namespaces/default/configmaps`;
  const planeUrl = `${cp.url}/api/v1/namespaces/default/configmaps`;
  const user = cluster.kc.getCurrentUser()!;
  const tls = {
    BENCH_CA: cp.caPem,
    BENCH_CERT: Buffer.from(user.certData!, 'base64').toString(),
    BENCH_KEY: Buffer.from(user.keyData!, 'base64').toString(),
  };
  const clients = Array.from({ length: CLIENTS }, () => startClient(tls));
  const profileDir = process.env.CREATES_BENCH_PROFILE;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  let run = 0;
  // Each side's CPU per create, in the order of its runs: the same rounds as the rates.
  const cpu = { plane: [] as number[], bare: [] as number[] };
  const measured = async (side: keyof typeof cpu, url: string, tag: string) => {
    const profile = profileDir && join(profileDir, `${side}-${cpu[side].length}.cpuprofile`);
    const { rate, cpuUs } = await profiled(profile, () => createsPerSecond(clients, url, tag));
    cpu[side].push(cpuUs);
    return rate;
  };
  const plane = () => measured('plane', planeUrl, `r${run++}`);
  const bare = () => measured('bare', echoUrl, 'echo');
  try {
    // Warm-up of both sides: JIT, connections.
    await plane();
    await bare();
    const rounds = await interleaved(ROUNDS, plane, bare);
    const cpuRounds = rounds.map((_, i) => ({ ours: cpu.plane[i + 1], floor: cpu.bare[i + 1] }));
    printPaired(
      `ConfigMap creates, memory store, ${CLIENTS} client processes × ${IN_FLIGHT_PER_CLIENT} in flight, ` +
        `HTTPS keep-alive, client QPS unlimited (${ROUNDS} paired rounds of ${CLIENTS * CREATES_PER_CLIENT}, goal ≥ 0.75×)`,
      [
        { name: 'embedded control plane', unit: 'creates/s', floorName: 'bare HTTPS JSON echo (201)', rounds },
        { name: 'server CPU per create', unit: 'µs', floorName: 'echo', rounds: cpuRounds },
      ],
    );
  } finally {
    for (const c of clients) {
      c.lines.close();
      c.child.kill();
    }
    echo.close();
    await cluster.stop();
  }
}
