/**
 * The embedded control plane under load through real HTTPS: creates/s and patches/s (each round paired
 * with a bare HTTPS JSON echo on the same machine and the same client; `creates` runs the clients in their
 * own processes), a 10k-object list,
 * watch fan-out to 10 watchers, and heap per 10k stored objects. Then the stores: creates/s of the
 * embedded and etcd stores as a ratio to the memory store (interleaved rounds), and the restart time
 * with 50k objects.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResourceRegistry } from '../src/api/registry.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { ControlPlane, type ControlPlaneOptions, type StorageKind } from '../src/controlplane/control-plane.ts';
import { Storage } from '../src/controlplane/storage.ts';
import { startTestCluster, testStorage } from '../test/support/cluster.ts';
import { etcdAvailable } from '../test/support/etcd.ts';
import { type Figure, inParallel, interleaved, median, pairedFigure, print } from './run.ts';
import { startEchoServer } from './support/echo.ts';

const configMap = (i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: `cm-${String(i).padStart(6, '0')}`,
    namespace: 'default',
    labels: { app: 'bench', shard: String(i % 10) },
  },
  data: { key: `value-${i}`, payload: 'x'.repeat(200) },
});

/**
 * The same client against a server that only parses the JSON body and echoes it: the transport limit.
 * Returns the writes/s of `n` POSTs.
 */
async function echoFloor(
  cp: ControlPlane,
  kc: KubeConfig,
): Promise<{ rate: (n: number) => Promise<number>; close(): void }> {
  const server = await startEchoServer(cp.clusterCa);
  const echo = new KubeConfig();
  echo.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${server.port}` })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  const client = new KubeClient(echo, cp.registry, { qps: 0 });
  return {
    rate: async (n) =>
      n /
      (await inParallel(n, (i) =>
        client.request('POST', '/api/v1/namespaces/default/configmaps', { body: configMap(i) }),
      )),
    close: () => server.close(),
  };
}

function heapPer10k(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return Number.NaN;
  const registry = new ResourceRegistry('orch');
  const rt = registry.byKind('Pod')!;
  const storage = new Storage({ historySize: 100 });
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 10_000; i++) {
    storage.create(rt, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, namespace: 'default', uid: crypto.randomUUID(), labels: { app: 'web' } },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'app', image: 'registry.example/app:1.0', ports: [{ containerPort: 8080 }] }],
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    });
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  if (storage.size(rt) !== 10_000) throw new Error('storage lost objects');
  return (after - before) / 1024 / 1024;
}

export async function run(): Promise<void> {
  await stores();
  const cluster = await startTestCluster({ storage: 'memory', historySize: 20_000 });
  const { cp, kc, client } = cluster;
  const cms = client.kind('ConfigMap');
  try {
    const floor = await echoFloor(cp, kc);
    await floor.rate(1000); // warm-up: JIT and TLS sessions
    // Warm-up in another namespace, so the timed creates run on compiled code too.
    const warmNamespace = cp.registry.naming.initialNamespaces[1];
    await inParallel(1000, (i) =>
      cms.create({ ...configMap(i), metadata: { ...configMap(i).metadata, namespace: warmNamespace } }),
    );
    const n = 2000;
    const createRounds = await interleaved(
      ROUNDS,
      async (round) => n / (await inParallel(n, (i) => cms.create(configMap(round * n + i)))),
      () => floor.rate(n),
    );
    const patchRounds = await interleaved(
      ROUNDS,
      async (round) =>
        n /
        (await inParallel(n, (i) =>
          cms.patch('default', configMap(i).metadata.name, { data: { key: `patched-${round}-${i}` } }, 'merge'),
        )),
      () => floor.rate(n),
    );
    floor.close();
    const created = ROUNDS * n;
    await inParallel(10_000 - created, (i) => cms.create(configMap(created + i)));
    const listTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const list = await cms.list('default');
      listTimes.push(performance.now() - t);
      if (list.items.length !== 10_000) throw new Error(`listed ${list.items.length}`);
    }
    listTimes.sort((a, b) => a - b);
    const pagedStart = performance.now();
    await cms.listAll('default', { pageSize: 500 });
    const pagedMs = performance.now() - pagedStart;

    const watchers = 10;
    const updates = 5000;
    const abort = new AbortController();
    let received = 0;
    let resolveAll: () => void = () => {};
    const allReceived = new Promise<void>((r) => {
      resolveAll = r;
    });
    const rv = (await cms.list('default', { limit: 1 })).metadata.resourceVersion;
    for (let w = 0; w < watchers; w++) {
      void cms
        .watch(
          'default',
          { resourceVersion: rv },
          (e) => {
            if (e.type === 'MODIFIED' && ++received === watchers * updates) resolveAll();
          },
          abort.signal,
        )
        .catch(() => undefined);
    }
    while (cp.storage.watcherCount() < watchers) await new Promise((r) => setTimeout(r, 10));
    // Changes are made in-process so the figure is the fan-out itself, not the write path.
    const rt = cms.rt;
    const watchStart = performance.now();
    for (let i = 0; i < updates; i++) {
      const current = cp.storage.get(rt, `default/${configMap(i).metadata.name}`)!;
      cp.storage.update(rt, { ...current, data: { key: `w-${i}` } });
    }
    await allReceived;
    const watchSeconds = (performance.now() - watchStart) / 1000;
    abort.abort();

    print(
      `embedded control plane (HTTPS, one in-process client, 64 concurrent requests, QPS unlimited, memory store)`,
      [
        pairedFigure('creates/s', 'req/s', 'bare HTTPS JSON echo', createRounds),
        pairedFigure('merge patches/s', 'req/s', 'bare HTTPS JSON echo', patchRounds),
        { name: 'list of 10k ConfigMaps (median of 5)', value: listTimes[2], unit: 'ms' },
        {
          name: 'paged list of 10k (limit 500)',
          value: pagedMs,
          unit: 'ms',
          against: { name: 'one-shot list', value: listTimes[2] },
        },
        { name: 'watch fan-out to 10 watchers', value: (watchers * updates) / watchSeconds, unit: 'events/s' },
        { name: 'heap per 10k stored pods (needs --expose-gc)', value: heapPer10k(), unit: 'MiB' },
      ],
    );
  } finally {
    await cluster.stop();
  }
}

const ROUNDS = 5;
const CREATES_PER_ROUND = 1000;
/** Fewer requests in flight than above: on a loaded machine 64 connections time out while connecting. */
const STORE_CONCURRENCY = 16;
const SEED_BATCH = 500;
const RESTART_OBJECTS = 50_000;

/** A control plane with one store, in its own directory (or etcd prefix), and a client of it. */
async function planeWith(kind: StorageKind, dataDir: string, extra: Partial<ControlPlaneOptions> = {}) {
  const cp = new ControlPlane({ port: 0, dataDir, ...(await testStorage(kind)), ...extra });
  await cp.start();
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  return { cp, cms: new KubeClient(kc, cp.registry, { qps: 0 }).kind('ConfigMap') };
}

/** Creates/s per store through HTTPS as a ratio to memory, rounds interleaved; restart time with 50k objects. */
async function stores(): Promise<void> {
  const kinds: StorageKind[] = ['memory', 'embedded', ...(etcdAvailable ? ['etcd' as const] : [])];
  if (!etcdAvailable) console.log('(etcd is not installed: the etcd store is left out)');
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-stores-'));
  const figures: Figure[] = [];
  try {
    const planes = new Map<StorageKind, Awaited<ReturnType<typeof planeWith>>>();
    for (const kind of kinds) planes.set(kind, await planeWith(kind, join(dir, kind)));
    const rates = new Map<StorageKind, number[]>(kinds.map((k) => [k, []]));
    for (let round = -1; round < ROUNDS; round++) {
      for (const kind of kinds) {
        const { cms } = planes.get(kind)!;
        const offset = (round + 1) * CREATES_PER_ROUND;
        const seconds = await inParallel(
          CREATES_PER_ROUND,
          (i) => cms.create(configMap(offset + i)),
          STORE_CONCURRENCY,
        );
        // Round -1 warms up JIT, TLS sessions and the stores.
        if (round >= 0) rates.get(kind)!.push(CREATES_PER_ROUND / seconds);
      }
    }
    for (const { cp } of planes.values()) await cp.stop();
    const memory = rates.get('memory')!;
    figures.push({ name: 'creates/s, memory store', value: median(memory), unit: 'req/s' });
    for (const kind of kinds.filter((k) => k !== 'memory')) {
      // Each round against the memory store's run next to it: the machine's load drifts between rounds.
      const ratios = rates.get(kind)!.map((r, i) => r / memory[i]);
      const spread = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
      figures.push({ name: `creates/s ÷ memory store, ${kind} (range ${spread})`, value: median(ratios), unit: '×' });
    }
    for (const kind of kinds.filter((k) => k !== 'memory'))
      figures.push(await restartTime(kind, join(dir, `${kind}-restart`)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const title = `stores (HTTPS, ${STORE_CONCURRENCY} concurrent creates, client QPS unlimited, ${ROUNDS} interleaved rounds of ${CREATES_PER_ROUND}, median)`;
  print(title, figures);
}

/** Start-up of a control plane whose store holds 50k ConfigMaps, against the start-up of an empty one. */
async function restartTime(kind: StorageKind, dataDir: string): Promise<Figure> {
  const storage = await testStorage(kind);
  const timedStart = async () => {
    const started = performance.now();
    const cp = new ControlPlane({ port: 0, dataDir, ...storage });
    await cp.start();
    return { cp, ms: performance.now() - started };
  };
  const empty = await timedStart();
  // In concurrent batches: one etcd transaction after another would take minutes.
  for (let i = 0; i < RESTART_OBJECTS; i += SEED_BATCH) {
    await Promise.all(Array.from({ length: SEED_BATCH }, (_, j) => empty.cp.seed(configMap(i + j))));
  }
  await empty.cp.storage.durable();
  await empty.cp.stop();
  const full = await timedStart();
  const loaded = full.cp.storage.size(full.cp.registry.byKind('ConfigMap')!);
  await full.cp.stop();
  if (loaded !== RESTART_OBJECTS) throw new Error(`the ${kind} store restarted with ${loaded} objects`);
  return {
    name: `restart with 50k objects, ${kind} store`,
    value: full.ms,
    unit: 'ms',
    against: { name: 'empty start', value: empty.ms },
  };
}
