/**
 * Our SharedInformer against @kubernetes/client-node's informer (ListWatch), on the same embedded
 * control plane in the same run: time to an initial sync of 50,000 ConfigMaps, steady-state watch
 * throughput (MODIFIED events/s delivered to a handler), and peak RSS.
 *
 * The parent process starts the control plane, seeds it directly through storage, then runs each
 * peer, one after the other, in a child process of its own (`--peer=ours|client-node`), so that
 * RSS is measured per peer; each peer runs ROUNDS times, alternating with the other. Children
 * report over the IPC channel; the parent makes the updates in-process (in BURSTS bursts), so the
 * throughput figure is server streaming + transport + decoding + cache + handler delivery.
 *
 * Both peers run with their defaults except that our client is unthrottled (qps 0), as client-node
 * has no client-side rate limiter: ours pages the LIST (500 per page), client-node lists in one go.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
import type { KubeObject } from '../src/api/meta.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import { SharedInformerFactory } from '../src/cache/factory.ts';
import { KubeClient } from '../src/client/client.ts';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { print } from './run.ts';

const OBJECTS = 50_000;
/** Updates per burst; the watch figure is the best of BURSTS bursts (other load only slows one down). */
const UPDATES = 10_000;
const BURSTS = 3;
/** Each peer runs this many times, alternating, so a change in machine load hits both alike. */
const ROUNDS = 2;
/** Updates made per turn of the parent's event loop, so the server streams while it writes. */
const UPDATE_BATCH = 500;
const NAMESPACE = 'default';
const CHILD_TIMEOUT_MS = 100_000;
const PEERS = ['ours', 'client-node'] as const;
type Peer = (typeof PEERS)[number];

const PAYLOAD = 'x'.repeat(256);
const name = (i: number) => `cm-${String(i).padStart(6, '0')}`;
const configMap = (i: number): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: name(i), namespace: NAMESPACE, labels: { app: 'bench', shard: String(i % 10) } },
    data: { key: `value-${i}`, payload: PAYLOAD },
  }) as KubeObject;

/** What a child reports. */
type ChildMessage =
  | { type: 'synced'; syncMs: number; cacheMs: number; heapAfterSyncMiB: number }
  | { type: 'updated' }
  | { type: 'rss'; baselineMiB: number; peakDeltaMiB: number; peakMiB: number }
  | { type: 'error'; message: string };

interface PeerResult {
  syncMs: number;
  cacheMs: number;
  heapAfterSyncMiB: number;
  eventsPerSecond: number;
  rssBaselineMiB: number;
  rssPeakDeltaMiB: number;
}

// ---------------------------------------------------------------------------------------------
// Parent
// ---------------------------------------------------------------------------------------------

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-informer-'));
  const cp = new ControlPlane({ port: 0, dataDir: dir, storage: 'memory' });
  await cp.start();
  try {
    const rt = cp.registry.byKind('ConfigMap')!;
    for (let i = 0; i < OBJECTS; i++) await cp.seed(configMap(i));
    if (cp.storage.size(rt) < OBJECTS) throw new Error('seeding lost objects');

    // Other work on the machine skews both peers; the load average says how much to trust the run.
    const load = loadavg()[0];
    const runs = new Map<Peer, PeerResult[]>(PEERS.map((p) => [p, []]));
    let round = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const peer of PEERS) runs.get(peer)!.push(await runPeer(cp, peer, round++));
    }
    const ours = combine(runs.get('ours')!);
    const theirs = combine(runs.get('client-node')!);
    const peerName = 'client-node informer';
    const title = `informer: ${OBJECTS.toLocaleString('en-US')} ConfigMaps, ours vs client-node (child process each, best of ${ROUNDS})`;
    print(title, [
      {
        name: 'initial sync: handler got every add',
        value: ours.syncMs,
        unit: 'ms',
        against: { name: peerName, value: theirs.syncMs },
      },
      { name: 'initial sync: ours, cache full (waitForSync)', value: ours.cacheMs, unit: 'ms' },
      {
        name: `watch throughput (best ${UPDATES.toLocaleString('en-US')}-update burst)`,
        value: ours.eventsPerSecond,
        unit: 'events/s',
        against: { name: peerName, value: theirs.eventsPerSecond },
      },
      {
        name: 'peak RSS over the run, minus baseline (worst)',
        value: ours.rssPeakDeltaMiB,
        unit: 'MiB',
        against: { name: peerName, value: theirs.rssPeakDeltaMiB },
      },
      {
        name: 'heap after sync + gc, minus baseline (worst)',
        value: ours.heapAfterSyncMiB,
        unit: 'MiB',
        against: { name: peerName, value: theirs.heapAfterSyncMiB },
      },
      {
        name: 'RSS baseline (child after imports)',
        value: ours.rssBaselineMiB,
        unit: 'MiB',
        against: { name: peerName, value: theirs.rssBaselineMiB },
      },
      { name: '1-min load average when the run began', value: load, unit: `on ${availableParallelism()} CPUs` },
    ]);
  } finally {
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function runPeer(cp: ControlPlane, peer: Peer, round: number): Promise<PeerResult> {
  const rt = cp.registry.byKind('ConfigMap')!;
  const watchersBefore = cp.storage.watcherCount(rt);
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      `--peer=${peer}`,
      `--kubeconfig=${cp.kubeconfigPath}`,
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const inbox = new Inbox(child, peer);
  const guard = setTimeout(
    () => inbox.fail(new Error(`${peer}: child did not finish within ${CHILD_TIMEOUT_MS} ms`)),
    CHILD_TIMEOUT_MS,
  );
  try {
    const synced = await inbox.next('synced');
    // The watch is open once the server counts one more watcher.
    while (cp.storage.watcherCount(rt) <= watchersBefore) await new Promise((r) => setTimeout(r, 5));

    let best = 0;
    for (let burst = 0; burst < BURSTS; burst++) {
      const updated = inbox.next('updated');
      const started = performance.now();
      for (let i = 0; i < UPDATES; i++) {
        const key = `${NAMESPACE}/${name((burst * UPDATES + i) % OBJECTS)}`;
        const current = cp.storage.get(rt, key)!;
        const data = { key: `r${round}-b${burst}-u${i}`, payload: PAYLOAD };
        cp.storage.update(rt, { ...current, data } as KubeObject);
        if ((i + 1) % UPDATE_BATCH === 0) await yieldToLoop();
      }
      await updated;
      best = Math.max(best, UPDATES / ((performance.now() - started) / 1000));
    }

    child.send({ type: 'report' });
    const rss = await inbox.next('rss');
    await inbox.exited;
    // The next peer's watch must be the only one the server counts.
    while (cp.storage.watcherCount(rt) > watchersBefore) await new Promise((r) => setTimeout(r, 5));
    return {
      syncMs: synced.syncMs,
      cacheMs: synced.cacheMs,
      heapAfterSyncMiB: synced.heapAfterSyncMiB,
      eventsPerSecond: best,
      rssBaselineMiB: rss.baselineMiB,
      rssPeakDeltaMiB: rss.peakDeltaMiB,
    };
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    throw err;
  } finally {
    clearTimeout(guard);
  }
}

/** Best of the rounds for times and rates (load only makes them worse), worst for memory. */
function combine(rs: PeerResult[]): PeerResult {
  const min = (f: (r: PeerResult) => number) => Math.min(...rs.map(f));
  const max = (f: (r: PeerResult) => number) => Math.max(...rs.map(f));
  return {
    syncMs: min((r) => r.syncMs),
    cacheMs: min((r) => r.cacheMs),
    eventsPerSecond: max((r) => r.eventsPerSecond),
    heapAfterSyncMiB: max((r) => r.heapAfterSyncMiB),
    rssBaselineMiB: max((r) => r.rssBaselineMiB),
    rssPeakDeltaMiB: max((r) => r.rssPeakDeltaMiB),
  };
}

/** The child's messages in order, awaited by type; any error, early exit or timeout rejects. */
class Inbox {
  private readonly messages: ChildMessage[] = [];
  private wake: () => void = () => {};
  private failure: Error | undefined;
  readonly exited: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    private readonly peer: Peer,
  ) {
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'error') this.fail(new Error(`${peer}: ${m.message}`));
      else this.messages.push(m);
      this.wake();
    });
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        if (code !== 0) this.fail(new Error(`${peer}: child exited with ${signal ?? code}`));
        this.wake();
        resolve();
      });
    });
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.wake();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }

  async next<T extends ChildMessage['type']>(type: T): Promise<Extract<ChildMessage, { type: T }>> {
    for (;;) {
      if (this.failure) throw this.failure;
      const i = this.messages.findIndex((m) => m.type === type);
      if (i >= 0) return this.messages.splice(i, 1)[0] as Extract<ChildMessage, { type: T }>;
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`${this.peer}: child exited before sending ${type}`);
      }
      await new Promise<void>((r) => {
        this.wake = r;
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Child: one informer, measured
// ---------------------------------------------------------------------------------------------

const MiB = 1024 * 1024;

/** Peak RSS by sampling, plus the kernel's high-water mark for what sampling misses during a long sync task. */
class RssMeter {
  readonly baseline: number;
  private peak: number;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.baseline = process.memoryUsage().rss;
    this.peak = this.baseline;
    this.timer = setInterval(() => this.sample(), 10);
    this.timer.unref();
  }

  sample(): void {
    this.peak = Math.max(this.peak, process.memoryUsage().rss);
  }

  stop(): { baselineMiB: number; peakMiB: number; peakDeltaMiB: number } {
    clearInterval(this.timer);
    this.sample();
    // maxRSS is the process's lifetime high-water mark (KiB); past the baseline it can only come from this run.
    const highWater = process.resourceUsage().maxRSS * 1024;
    const peak = Math.max(this.peak, highWater);
    return { baselineMiB: this.baseline / MiB, peakMiB: peak / MiB, peakDeltaMiB: (peak - this.baseline) / MiB };
  }
}

/** Resolves once the message is handed to the channel, so exiting right after loses nothing. */
function send(m: ChildMessage): Promise<void> {
  return new Promise((resolve, reject) => process.send!(m, undefined, {}, (err) => (err ? reject(err) : resolve())));
}

function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / MiB;
}

interface Counting {
  /** Resolves once the handler got every add and the informer says it is synced. */
  synced: Promise<void>;
  /** Resolves once the cache is full, whatever the handler has seen. */
  cacheFull: Promise<void>;
  /** Rejects if the informer gives up (client-node stops on an error); never resolves. */
  failed: Promise<never>;
  stop(): Promise<void>;
}

/** The handler: counts adds until `objects`, and calls `onUpdate` with the running count of updates. */
type Start = (kc: KubeConfig, objects: number, onUpdate: (count: number) => void) => Counting;

const startOurs: Start = (kc, objects, onUpdate) => {
  const registry = new ResourceRegistry('orch');
  const client = new KubeClient(kc, registry, { qps: 0 });
  const factory = new SharedInformerFactory(client);
  const informer = factory.informerFor(registry.byKind('ConfigMap')!, { namespace: NAMESPACE });
  let adds = 0;
  let updates = 0;
  let onAdds: () => void = () => {};
  const allAdds = new Promise<void>((r) => {
    onAdds = r;
  });
  informer.addEventHandler({
    add: () => {
      if (++adds === objects) onAdds();
    },
    update: () => onUpdate(++updates),
  });
  factory.start();
  const cacheFull = factory.waitForSync(CHILD_TIMEOUT_MS);
  return {
    synced: Promise.all([allAdds, cacheFull]).then(() => undefined),
    cacheFull,
    // The reflector retries forever and reports through onError (a warning on stderr).
    failed: new Promise<never>(() => {}),
    stop: () => factory.stop(),
  };
};

const startClientNode: Start = (kc, objects, onUpdate) => {
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, `/api/v1/namespaces/${NAMESPACE}/configmaps`, () =>
    api.listNamespacedConfigMap({ namespace: NAMESPACE }),
  );
  let adds = 0;
  let updates = 0;
  let onAdds: () => void = () => {};
  let onError: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    onError = reject;
  });
  const allAdds = new Promise<void>((r) => {
    onAdds = r;
  });
  informer.on('add', () => {
    if (++adds === objects) onAdds();
  });
  informer.on('update', () => onUpdate(++updates));
  informer.on('error', (err) => onError(err));
  // start() resolves once the list is applied and the watch request is answered.
  const started = informer.start();
  const synced = Promise.all([allAdds, started]).then(() => undefined);
  return {
    synced,
    // Its cache and its handlers are filled in the same synchronous pass.
    cacheFull: synced,
    failed,
    stop: () => informer.stop(),
  };
};

async function child(peer: Peer, kubeconfig: string): Promise<void> {
  const reportRequested = new Promise<void>((resolve) => process.once('message', () => resolve()));
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const heapBaseline = heapMiB();
  const meter = new RssMeter();
  const started = performance.now();
  const start = peer === 'ours' ? startOurs : startClientNode;
  let reported: Promise<void> = Promise.resolve();
  const counting = start(kc, OBJECTS, (count) => {
    if (count % UPDATES !== 0) return;
    meter.sample();
    reported = send({ type: 'updated' });
  });
  let cacheMs = Number.NaN;
  void counting.cacheFull.then(
    () => {
      cacheMs = performance.now() - started;
    },
    () => undefined,
  );
  await Promise.race([counting.synced, counting.failed]);
  const syncMs = performance.now() - started;
  meter.sample();
  await send({ type: 'synced', syncMs, cacheMs, heapAfterSyncMiB: heapMiB() - heapBaseline });
  await Promise.race([reportRequested, counting.failed]);
  await reported;
  const rss = meter.stop();
  await counting.stop();
  await send({ type: 'rss', ...rss });
}

function arg(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && arg('peer')) {
  const peer = arg('peer') as Peer;
  const kubeconfig = arg('kubeconfig');
  if (!PEERS.includes(peer) || !kubeconfig || !process.send) {
    console.error('usage (from the parent bench only): --peer=ours|client-node --kubeconfig=PATH, with an IPC channel');
    process.exit(2);
  }
  child(peer, kubeconfig).then(
    () => {
      process.disconnect();
      process.exit(0);
    },
    async (err) => {
      await send({ type: 'error', message: (err as Error)?.stack ?? String(err) }).catch(() => undefined);
      process.exit(1);
    },
  );
}
