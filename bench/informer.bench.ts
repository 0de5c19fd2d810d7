/**
 * Initial sync of 50,000 ConfigMaps from the embedded control plane, four sides each in a child
 * process of its own, on the same server in the same run:
 *
 * - `ours`: our SharedInformer with its defaults (watch-list: one stream of the initial state);
 * - `ours-paged`: the same informer told not to use watch-list (LIST pages of 500, then WATCH);
 * - `client-node`: @kubernetes/client-node's informer (one unpaged LIST, then WATCH);
 * - `floor`: one bare client doing the same LIST pages as `ours-paged` (undici GET, JSON.parse,
 *   Map.set), nothing else.
 *
 * A side's time runs from the start of its sync (after its imports) to the informer saying it is
 * synced with the whole state in its cache (client-node: its list applied and 50,000 objects
 * cached). Its peak RSS is the child's kernel high-water mark at that moment (`maxRSS`), imports
 * included, as is: nothing subtracted. Rounds rotate which side goes first; each figure is the
 * median of the per-round ratios, with the per-round values. The child's CPU time over the sync is
 * reported too: on a shared machine it moves less with other load than the wall time. With
 * `INFORMER_BENCH_PROFILE=<dir>`, CPU profiles of the server (this process) and of each child over
 * each sync are written there.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../src/api/meta.ts';
import type { ControlPlane } from '../src/controlplane/control-plane.ts';
import { median, rotatedRounds } from './run.ts';
import { profiled } from './support/profile.ts';

const OBJECTS = 50_000;
const ROUNDS = Number(process.env.INFORMER_BENCH_ROUNDS ?? 5);
const NAMESPACE = 'default';
const PAGE_SIZE = 500;
const CHILD_TIMEOUT_MS = 120_000;
const SIDES = ['ours', 'ours-paged', 'client-node', 'floor'] as const;
type Side = (typeof SIDES)[number];
const QPS: Record<Side, string> = {
  ours: 'unlimited (qps 0); watch-list makes one request',
  'ours-paged': 'unlimited (qps 0)',
  'client-node': 'none (it has no client-side rate limiter)',
  floor: 'none (bare requests, one at a time)',
};

/** A ConfigMap of about 1 KiB, shaped like an application's: labels, annotations, a few keys. */
const configMap = (i: number): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `cm-${String(i).padStart(6, '0')}`,
      namespace: NAMESPACE,
      labels: { app: 'bench', shard: String(i % 10), 'app.kubernetes.io/managed-by': 'helm' },
      annotations: { 'meta.helm.sh/release-name': `release-${i % 100}`, 'meta.helm.sh/release-namespace': NAMESPACE },
    },
    data: {
      'application.properties': `server.port=8080\nlogging.level=INFO\ninstance=${i}\n${'feature.flag=true\n'.repeat(12)}`,
      'endpoints.json': JSON.stringify({ upstream: `http://svc-${i % 50}.${NAMESPACE}.svc:8080`, retries: 3 }),
      checksum: 'sha256:'.padEnd(71, String(i % 10)),
      payload: 'x'.repeat(256),
    },
  }) as KubeObject;

interface Result {
  syncMs: number;
  /** The child's CPU time (user + system) over the sync: less swayed by other load than the wall time. */
  cpuMs: number;
  peakRssMiB: number;
}

type ChildMessage = ({ type: 'synced' } & Result) | { type: 'error'; message: string };

// ---------------------------------------------------------------------------------------------
// Parent
// ---------------------------------------------------------------------------------------------

export async function run(): Promise<void> {
  // Imported here, not at the top: the children load this file too, and must not carry the server.
  const [{ ControlPlane }, { toJson }] = await Promise.all([
    import('../src/controlplane/control-plane.ts'),
    import('../src/controlplane/watch.ts'),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-informer-'));
  const cp = new ControlPlane({ port: 0, dataDir: dir, storage: 'memory' });
  await cp.start();
  const profileDir = process.env.INFORMER_BENCH_PROFILE;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  try {
    const rt = cp.registry.byKind('ConfigMap')!;
    for (let i = 0; i < OBJECTS; i++) await cp.seed(configMap(i));
    if (cp.storage.size(rt) < OBJECTS) throw new Error('seeding lost objects');
    // The server caches each stored object's JSON on first use: fill it now, not in the first side's time.
    for (const obj of cp.storage.list(rt)) toJson(obj);
    const loadBefore = loadavg()[0];
    const sides = Object.fromEntries(
      SIDES.map((side) => [
        side,
        (r: number) =>
          profiled(profileDir && join(profileDir, `server-${side}-${r}.cpuprofile`), () =>
            runSide(cp, side, r, profileDir),
          ),
      ]),
    ) as Record<Side, (round: number) => Promise<Result>>;
    const rounds = await rotatedRounds(ROUNDS, sides);
    report(rounds, loadBefore, loadavg()[0]);
  } finally {
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function report(rounds: Record<Side, Result>[], loadBefore: number, loadAfter: number): void {
  const fmt = (x: number) => (x >= 100 ? Math.round(x).toString() : x.toFixed(2));
  const line = (label: string, xs: number[], unit: string) =>
    console.log(`${label.padEnd(44)} ${fmt(median(xs)).padStart(8)}${unit}  (rounds: ${xs.map(fmt).join(', ')})`);
  const figures: [keyof Result, string, string][] = [
    ['syncMs', 'time', ' ms'],
    ['cpuMs', 'client CPU', ' ms'],
    ['peakRssMiB', 'peak RSS', ' MiB'],
  ];
  console.log(
    `\n## informer: initial sync of ${OBJECTS.toLocaleString('en-US')} ConfigMaps, one child process per side, ` +
      `${rounds.length} interleaved rounds (median; per-round values after it)`,
  );
  for (const side of SIDES) console.log(`client QPS, ${side.padEnd(12)} ${QPS[side]}`);
  for (const side of SIDES) {
    for (const [field, what, unit] of figures)
      line(
        `${what}, ${side}`,
        rounds.map((r) => r[side][field]),
        unit,
      );
  }
  for (const ours of ['ours', 'ours-paged'] as const) {
    for (const peer of ['client-node', 'floor'] as const) {
      for (const [field, what] of figures) {
        line(
          `${ours} ÷ ${peer}, ${what}`,
          rounds.map((r) => r[ours][field] / r[peer][field]),
          '×',
        );
      }
    }
  }
  console.log(
    `1-min load average: ${loadBefore.toFixed(2)} at the start, ${loadAfter.toFixed(2)} at the end, on ${availableParallelism()} CPUs`,
  );
}

async function runSide(cp: ControlPlane, side: Side, round: number, profileDir?: string): Promise<Result> {
  const rt = cp.registry.byKind('ConfigMap')!;
  const watchersBefore = cp.storage.watcherCount(rt);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      `--side=${side}`,
      `--kubeconfig=${cp.kubeconfigPath}`,
      ...(profileDir ? [`--profile=${join(profileDir, `client-${side}-${round}.cpuprofile`)}`] : []),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  try {
    const result = await firstMessage(child, side);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send('exit');
    await exited;
    // The next side must not share the server with this one's watch.
    const deadline = Date.now() + 10_000;
    while (cp.storage.watcherCount(rt) > watchersBefore && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    return result;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  }
}

/** The child's report, or a rejection if it fails, exits first or takes too long. */
function firstMessage(child: ChildProcess, side: Side): Promise<Result> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(
      () => reject(new Error(`${side}: no sync within ${CHILD_TIMEOUT_MS} ms`)),
      CHILD_TIMEOUT_MS,
    );
    child.once('message', (m: ChildMessage) => {
      clearTimeout(guard);
      if (m.type === 'error') reject(new Error(`${side}: ${m.message}`));
      else resolve({ syncMs: m.syncMs, cpuMs: m.cpuMs, peakRssMiB: m.peakRssMiB });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(guard);
      reject(new Error(`${side}: child exited with ${signal ?? code} before reporting`));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Child: one side, measured
// ---------------------------------------------------------------------------------------------

/** Starts a side's sync; resolves once it is synced with `objects` objects cached. */
type Sync = (kubeconfig: string, objects: number) => Promise<void>;

const ourSync =
  (watchList: boolean): Sync =>
  async (kubeconfig, objects) => {
    const [{ KubeConfig }, { ResourceRegistry }, { SharedInformerFactory }, { KubeClient }] = await Promise.all([
      import('../src/client/kubeconfig.ts'),
      import('../src/api/registry.ts'),
      import('../src/cache/factory.ts'),
      import('../src/client/client.ts'),
    ]);
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const registry = new ResourceRegistry('orch');
    const factory = new SharedInformerFactory(new KubeClient(kc, registry, { qps: 0 }), undefined, {
      watchList,
      pageSize: PAGE_SIZE,
    });
    const informer = factory.informerFor(registry.byKind('ConfigMap')!, { namespace: NAMESPACE });
    let adds = 0;
    const allAdds = new Promise<void>((resolve) =>
      informer.addEventHandler({ add: () => void (++adds === objects && resolve()) }),
    );
    return timed(async () => {
      factory.start();
      await Promise.all([factory.waitForSync(CHILD_TIMEOUT_MS), allAdds]);
    });
  };

const clientNodeSync: Sync = async (kubeconfig, objects) => {
  const { CoreV1Api, KubeConfig, makeInformer } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, `/api/v1/namespaces/${NAMESPACE}/configmaps`, () =>
    api.listNamespacedConfigMap({ namespace: NAMESPACE }),
  );
  let adds = 0;
  const allAdds = new Promise<void>((resolve) => informer.on('add', () => void (++adds === objects && resolve())));
  const failed = new Promise<never>((_, reject) => informer.on('error', reject));
  return timed(async () => {
    // start() resolves once the list is applied and the watch is requested.
    await Promise.race([Promise.all([informer.start(), allAdds]), failed]);
    if (informer.list().length !== objects) throw new Error(`client-node cached ${informer.list().length} objects`);
  });
};

/** The floor: the same pages, parsed and put in a Map, by the same HTTP client our client uses. */
const floorSync: Sync = async (kubeconfig, objects) => {
  const [{ Agent, request }, { parse }] = await Promise.all([import('undici'), import('yaml')]);
  const config = parse(readFileSync(kubeconfig, 'utf8'));
  const b64 = (s: string) => Buffer.from(s, 'base64').toString();
  const { cluster } = config.clusters[0];
  const { user } = config.users[0];
  const dispatcher = new Agent({
    connect: {
      ca: b64(cluster['certificate-authority-data']),
      cert: b64(user['client-certificate-data']),
      key: b64(user['client-key-data']),
    },
  });
  const path = `${cluster.server}/api/v1/namespaces/${NAMESPACE}/configmaps?limit=${PAGE_SIZE}`;
  return timed(async () => {
    const cache = new Map<string, KubeObject>();
    let token = '';
    do {
      const url = token ? `${path}&continue=${encodeURIComponent(token)}` : path;
      const res = await request(url, { dispatcher, headers: { accept: 'application/json' } });
      const list = JSON.parse(await res.body.text()) as { items: KubeObject[]; metadata: { continue?: string } };
      for (const item of list.items) cache.set(`${item.metadata.namespace}/${item.metadata.name}`, item);
      token = list.metadata.continue ?? '';
    } while (token);
    if (cache.size !== objects) throw new Error(`floor cached ${cache.size} objects`);
  });
};

/** Times `fn` (profiled with `--profile=<path>`); the peak RSS is the process's high-water mark once it is done. */
async function timed(fn: () => Promise<void>): Promise<void> {
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await profiled(arg('profile'), fn);
  const syncMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  await send({ type: 'synced', syncMs, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMiB });
}

const SYNCS: Record<Side, Sync> = {
  ours: ourSync(true),
  'ours-paged': ourSync(false),
  'client-node': clientNodeSync,
  floor: floorSync,
};

/** Resolves once the message is handed to the channel. */
function send(m: ChildMessage): Promise<void> {
  return new Promise((resolve, reject) => process.send!(m, undefined, {}, (err) => (err ? reject(err) : resolve())));
}

function arg(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && arg('side')) {
  const side = arg('side') as Side;
  const kubeconfig = arg('kubeconfig');
  if (!SIDES.includes(side) || !kubeconfig || !process.send) {
    console.error(
      `usage (from the parent bench only): --side=${SIDES.join('|')} --kubeconfig=PATH, with an IPC channel`,
    );
    process.exit(2);
  }
  // The parent ends the child once it has the report; until then the informer keeps running.
  process.once('message', () => process.exit(0));
  SYNCS[side](kubeconfig, OBJECTS).catch(async (err) => {
    await send({ type: 'error', message: (err as Error)?.stack ?? String(err) }).catch(() => undefined);
    process.exit(1);
  });
}
