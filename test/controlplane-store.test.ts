/**
 * The control plane's persistent stores: a restart keeps objects and resourceVersions and lets
 * watches resume (or answers 410 for what is no longer kept), a record torn by a crash is dropped
 * whole, and `kill -9` in the middle of writes from several clients loses no acknowledged write.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, truncate } from 'node:fs/promises';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ClassicLevel } from 'classic-level';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject, WatchEvent } from '../src/api/meta.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import { SharedInformerFactory } from '../src/cache/factory.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { ControlPlane, type ControlPlaneOptions, type StorageKind } from '../src/controlplane/control-plane.ts';
import { testStorage } from './support/cluster.ts';
import { etcdAvailable, startEtcd } from './support/etcd.ts';
import { eventually } from './support/eventually.ts';

const ROOT = join(import.meta.dirname, '..');
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-store-'));
  dirs.push(dir);
  return dir;
}

const configMap = (name: string, value: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: { value },
});

/** Starts (or restarts, with the same options and port) a control plane and a client of it. */
async function start(options: Partial<ControlPlaneOptions>) {
  const cp = new ControlPlane(options);
  await cp.start();
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const client = new KubeClient(kc, cp.registry, { qps: 0 });
  return { cp, client, configMaps: client.kind('ConfigMap') };
}

/** The events of a watch from `resourceVersion` until `count` arrived (or the server ended the stream). */
async function watchFrom(client: KubeClient, resourceVersion: string, count: number): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  const abort = new AbortController();
  const done = client.kind('ConfigMap').watch(
    'default',
    { resourceVersion, timeoutSeconds: 10 },
    (e) => {
      events.push(e);
      if (events.length >= count) abort.abort();
    },
    abort.signal,
  );
  await done.catch((err) => {
    if (!abort.signal.aborted) throw err;
  });
  return events;
}

const stores: { kind: StorageKind; skip: boolean }[] = [
  { kind: 'embedded', skip: false },
  { kind: 'etcd', skip: !etcdAvailable },
];

for (const { kind, skip } of stores) {
  describe.skipIf(skip)(`${kind} store across a restart`, () => {
    if (skip) console.warn(`skipping the etcd store tests: etcd is not installed (Debian package etcd-server)`);

    it('keeps objects and resourceVersions; watches resume from a kept version, 410 from an older one', async () => {
      const options = { port: 0, dataDir: await tempDir(), historySize: 20, ...(await testStorage(kind)) };
      // On etcd a start writes one key (the end of its history replay): one revision.
      const startRevisions = kind === 'etcd' ? 1 : 0;
      const first = await start(options);
      const created: KubeObject[] = [];
      for (let i = 0; i < 30; i++) created.push(await first.configMaps.create(configMap(`cm-${i}`, `v${i}`)));
      await first.configMaps.patch('default', 'cm-3', { data: { value: 'patched' } }, 'merge');
      await first.configMaps.delete('default', 'cm-4');
      const before = await first.configMaps.list('default');
      const rv = Number(before.metadata.resourceVersion);
      const paged = await first.configMaps.list('default', { limit: 5 });
      await first.cp.stop();

      // Same port and credentials: the first client survives the restart.
      const second = await start({ ...options, port: first.cp.port });
      try {
        const after = await first.configMaps.list('default');
        expect(after.items).toEqual(before.items);
        expect(after.metadata.resourceVersion).toBe(String(rv + startRevisions));
        expect(second.cp.storage.currentRv()).toBe(rv + startRevisions);
        // The list snapshot behind a continue token did not survive: 410, and the client lists again
        // (never another list's snapshot that happens to have the same id in the new process).
        await first.client.kind('Namespace').list(undefined, { limit: 1 });
        await expect(
          first.configMaps.list('default', { limit: 5, continue: paged.metadata.continue }),
        ).rejects.toMatchObject({
          code: 410,
        });

        // The last three changes (create cm-29, patch cm-3, delete cm-4) are replayed from rv - 3.
        const replay = await watchFrom(first.client, String(rv - 3), 3);
        expect(replay.map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion])).toEqual([
          ['ADDED', 'cm-29', String(rv - 2)],
          ['MODIFIED', 'cm-3', String(rv - 1)],
          ['DELETED', 'cm-4', String(rv)],
        ]);
        // A resume from the last version sees the next write, with the next resourceVersion.
        const live = watchFrom(first.client, String(rv), 1);
        await eventually(() => second.cp.storage.watcherCount() > 0, 10_000, 'the watch to start');
        await first.configMaps.create(configMap('after-restart', 'x'));
        expect((await live).map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([
          ['ADDED', String(rv + startRevisions + 1)],
        ]);
        // The first writes fell out of the 20 events kept: resuming there answers 410 Expired.
        const expired = await watchFrom(first.client, created[0].metadata.resourceVersion!, 1);
        expect(expired).toHaveLength(1);
        expect(expired[0].type).toBe('ERROR');
        expect(expired[0].object).toMatchObject({ code: 410, reason: 'Expired' });
      } finally {
        await second.cp.stop();
      }
    });

    it.skipIf(kind === 'etcd')('refuses a second control plane on the same store while the first runs', async () => {
      const options = { port: 0, dataDir: await tempDir(), ...(await testStorage(kind)) };
      const first = await start(options);
      try {
        await expect(new ControlPlane(options).start()).rejects.toThrow(
          /is in use by another process .*; stop that process or pass another --data-dir/,
        );
      } finally {
        await first.cp.stop();
      }
    });

    it('watches opened amid concurrent writes see every change once, in resourceVersion order', async () => {
      const { cp, client, configMaps } = await start({
        port: 0,
        dataDir: await tempDir(),
        ...(await testStorage(kind)),
      });
      try {
        const from = (await configMaps.list('default')).metadata.resourceVersion!;
        const writes = Promise.all(
          Array.from({ length: 200 }, (_, i) => configMaps.create(configMap(`amid-${i}`, String(i)))),
        );
        // Watches start while the writes are queued behind fsyncs: from a version, and from a fresh list.
        const resumed = watchFrom(client, from, 200);
        await new Promise((resolve) => setTimeout(resolve, 20));
        const initial = watchFrom(client, '', 200);
        const created = await writes;
        const expected = created.map((o) => o.metadata.resourceVersion).sort((a, b) => Number(a) - Number(b));
        const rvs = (events: WatchEvent[]) => events.map((e) => e.object.metadata.resourceVersion);
        expect(rvs(await resumed)).toEqual(expected);
        // The fresh watch lists what exists, then continues: each object exactly once.
        const names = (await initial).map((e) => e.object.metadata.name);
        expect(new Set(names).size).toBe(names.length);
        expect(names.length).toBe(200);
      } finally {
        await cp.stop();
      }
    });

    killNineTest(kind);
  });
}

describe.skipIf(!etcdAvailable)('etcd store when etcd goes away', () => {
  it('holds writes (and their answers) while etcd restarts, then commits them', { timeout: 90_000 }, async () => {
    const etcd = await startEtcd();
    const { cp, configMaps } = await start({
      port: 0,
      dataDir: await tempDir(),
      storage: 'etcd',
      etcdServers: [etcd.url],
    });
    try {
      await configMaps.create(configMap('before', '1'));
      await etcd.kill();
      let answered = false;
      const during = configMaps.create(configMap('during', '2')).finally(() => {
        answered = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // Not durable, so not acknowledged.
      expect(answered).toBe(false);
      await etcd.restart();
      expect((await during).metadata.name).toBe('during');
      await cp.stop();
      // What the restarted control plane loads from etcd has both.
      const again = await start({ ...cp.options, port: 0 });
      const names = (await again.configMaps.list('default')).items.map((o) => o.metadata.name);
      await again.cp.stop();
      expect(names).toEqual(['before', 'during']);
    } finally {
      await etcd.kill();
    }
  });
});

describe.skipIf(!etcdAvailable)('control planes sharing one etcd prefix', () => {
  it('serve the same objects, watches and resourceVersions (etcd revisions); a stale write is a 409', async () => {
    const storage = await etcdStorage();
    const etcd = new Etcd3({ hosts: storage.etcdServers });
    const a = await start({ port: 0, dataDir: await tempDir(), ...storage });
    const b = await start({ port: 0, dataDir: await tempDir(), ...storage });
    try {
      const from = (await b.configMaps.list('default')).metadata.resourceVersion!;
      const watched = watchFrom(b.client, from, 2);
      const created = await a.configMaps.create(configMap('shared', 'v1'));
      const stored = await etcd.get(`${storage.etcdPrefix}v1/configmaps|default/shared`).exec();
      expect(created.metadata.resourceVersion).toBe(stored.kvs[0].mod_revision);
      // Consistent reads through B wait for B's cache to show what A wrote.
      expect((await b.configMaps.get('default', 'shared')).metadata.resourceVersion).toBe(stored.kvs[0].mod_revision);
      const listed = (await b.configMaps.list('default')).items.find((o) => o.metadata.name === 'shared');
      expect(listed?.metadata.resourceVersion).toBe(created.metadata.resourceVersion);

      const updated = await a.configMaps.replace({ ...created, data: { value: 'v2' } });
      await expect(b.configMaps.replace({ ...created, data: { value: 'stale' } })).rejects.toMatchObject({ code: 409 });
      expect((await watched).map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([
        ['ADDED', created.metadata.resourceVersion],
        ['MODIFIED', updated.metadata.resourceVersion],
      ]);
      // A patch through B without a pinned version re-reads and goes through.
      await b.configMaps.patch('default', 'shared', { data: { value: 'v3' } }, 'merge');

      const rvs: number[] = [];
      for (let i = 0; i < 10; i++) {
        const via = i % 2 === 0 ? a : b;
        rvs.push(Number((await via.configMaps.create(configMap(`turn-${i}`, String(i)))).metadata.resourceVersion));
      }
      expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
      expect(new Set(rvs).size).toBe(rvs.length);

      // A delete through B is gone from A's next consistent list.
      await b.configMaps.delete('default', 'turn-0');
      const names = (await a.configMaps.list('default')).items.map((o) => o.metadata.name);
      expect(names).not.toContain('turn-0');
      expect(names).toContain('turn-1');
    } finally {
      await a.cp.stop();
      await b.cp.stop();
      etcd.close();
    }
  });
});

describe.skipIf(!etcdAvailable)('etcd store history and corrupt values', () => {
  it('a watch from before a restart resumes until etcd is compacted, then 410', async () => {
    const options = { port: 0, dataDir: await tempDir(), ...(await etcdStorage()) };
    const first = await start(options);
    const before = await first.configMaps.create(configMap('before', '1'));
    await first.configMaps.create(configMap('later', '2'));
    await first.cp.stop();
    const second = await start({ ...options, port: first.cp.port });
    const etcd = new Etcd3({ hosts: options.etcdServers });
    try {
      const resumed = await watchFrom(first.client, before.metadata.resourceVersion!, 1);
      expect(resumed.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'later']]);
      await second.cp.faults.compact();
      // etcd's own history is compacted too.
      const old = { key: Buffer.from(options.etcdPrefix), revision: Number(before.metadata.resourceVersion) };
      await expect(etcd.kv.range(old)).rejects.toThrow(/compacted/);
      const expired = await watchFrom(first.client, before.metadata.resourceVersion!, 1);
      expect(expired[0].object).toMatchObject({ code: 410, reason: 'Expired' });
    } finally {
      await second.cp.stop();
      etcd.close();
    }
  });

  it('relists when etcd compacted its watch position away: resumes from before get 410, nothing is missed', async () => {
    const storage = await etcdStorage();
    // The control plane reaches etcd through a proxy, which the test cuts while etcd moves on and compacts.
    const proxy = await tcpProxy(new URL(storage.etcdServers[0]));
    const { cp, client, configMaps } = await start({
      port: 0,
      dataDir: await tempDir(),
      ...storage,
      etcdServers: [proxy.url],
    });
    const etcd = new Etcd3({ hosts: storage.etcdServers });
    try {
      const before = await configMaps.create(configMap('before', '1'));
      proxy.cut();
      const behind = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'behind', namespace: 'default' } };
      const key = `${storage.etcdPrefix}v1/configmaps|default/behind`;
      await etcd.put(key).value(JSON.stringify({ ...behind, data: { value: 'first' } }));
      const put = await etcd.put(key).value(JSON.stringify(behind)).exec();
      // etcd keeps the compaction revision itself: the watch's next revision (the first put) is gone.
      await etcd.kv.compact({ revision: put.header.revision });
      proxy.resume();
      const loaded = () => cp.storage.get(cp.registry.byKind('ConfigMap')!, 'default/behind');
      await eventually(() => loaded() !== undefined, 30_000, 'the relist');
      expect(loaded()?.metadata.resourceVersion).toBe(put.header.revision);
      const expired = await watchFrom(client, before.metadata.resourceVersion!, 1);
      expect(expired[0].object).toMatchObject({ code: 410, reason: 'Expired' });
      // And the cache follows etcd again.
      const after = await configMaps.create(configMap('after', '3'));
      expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(put.header.revision));
    } finally {
      await cp.stop();
      etcd.close();
      proxy.close();
    }
  });

  it('compacts etcd every --etcd-compaction-interval, to the revision of the interval before', async () => {
    const options = { port: 0, dataDir: await tempDir(), ...(await etcdStorage()), etcdCompactionIntervalMs: 200 };
    const { cp, configMaps } = await start(options);
    const etcd = new Etcd3({ hosts: options.etcdServers });
    try {
      const old = Number((await configMaps.create(configMap('old', '1'))).metadata.resourceVersion);
      const range = () => etcd.kv.range({ key: Buffer.from(options.etcdPrefix), revision: old, count_only: true });
      await eventually(
        () =>
          range().then(
            () => false,
            (err) => /compacted/.test(err.message),
          ),
        10_000,
        'compaction',
      );
      // What the control plane serves is untouched.
      expect((await configMaps.get('default', 'old')).metadata.resourceVersion).toBe(String(old));
    } finally {
      await cp.stop();
      etcd.close();
    }
  });

  it('reports a value that does not decode as a corrupt object, and the unsafe delete removes its key', async () => {
    const storage = await etcdStorage();
    const { cp, client, configMaps } = await start({ port: 0, dataDir: await tempDir(), ...storage });
    const etcd = new Etcd3({ hosts: storage.etcdServers });
    const key = `${storage.etcdPrefix}v1/configmaps|default/bad`;
    try {
      await configMaps.create(configMap('bad', '1'));
      await etcd.put(key).value(Buffer.from([0xff, 0x00, 0x7b, 0x13]));
      await eventually(() => cp.storage.isCorrupt(cp.registry.byKind('ConfigMap')!, 'default/bad'), 10_000, 'corrupt');
      await expect(configMaps.get('default', 'bad')).rejects.toMatchObject({ code: 500 });
      await expect(configMaps.delete('default', 'bad')).rejects.toMatchObject({ code: 500 });
      await unsafeDelete(client, 'bad');
      expect((await etcd.get(key).exec()).kvs).toEqual([]);
      await expect(configMaps.get('default', 'bad')).rejects.toMatchObject({ code: 404 });
    } finally {
      await cp.stop();
      etcd.close();
    }
  });
});

/** A TCP proxy to `target` that can drop every connection and refuse new ones for a while. */
async function tcpProxy(target: URL) {
  const sockets = new Set<Socket>();
  let refusing = false;
  const server = createServer((downstream) => {
    if (refusing) return downstream.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    const drop = () => {
      downstream.destroy();
      upstream.destroy();
    };
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('error', drop).on('close', () => {
        drop();
        sockets.delete(socket);
      });
    }
    downstream.pipe(upstream).pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cut() {
      refusing = true;
      for (const socket of sockets) socket.destroy();
    },
    resume() {
      refusing = false;
    },
    close() {
      this.cut();
      server.close();
    },
  };
}

/** This process's etcd, under a prefix of the test's own. */
async function etcdStorage(): Promise<{ storage: 'etcd'; etcdServers: string[]; etcdPrefix: string }> {
  const { etcdServers = [], etcdPrefix = '' } = await testStorage('etcd');
  return { storage: 'etcd', etcdServers, etcdPrefix };
}

/** DELETE with `ignoreStoreReadErrorWithClusterBreakingPotential`: the way to remove a corrupt object. */
async function unsafeDelete(client: KubeClient, name: string): Promise<void> {
  const body = { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true };
  await client.request('DELETE', `/api/v1/namespaces/default/configmaps/${name}`, { body });
}

describe('embedded store after a crash', () => {
  it('drops a record torn by a crash whole, and keeps every one before it', async () => {
    const options = { port: 0, dataDir: await tempDir(), storage: 'embedded' as const };
    const first = await start(options);
    for (let i = 0; i < 10; i++) await first.configMaps.create(configMap(`cm-${i}`, `v${i}`));
    const rvOf = async (name: string) => (await first.configMaps.get('default', name)).metadata.resourceVersion;
    const ninth = await rvOf('cm-8');
    const tenth = await rvOf('cm-9');
    await first.cp.stop();

    // LevelDB's write-ahead log holds this session's writes, the last one last: cut into it.
    const storeDir = join(options.dataDir, 'store');
    const logs = (await readdir(storeDir)).filter((f) => f.endsWith('.log'));
    const sizes = await Promise.all(logs.map(async (f) => ({ f, size: (await stat(join(storeDir, f))).size })));
    const log = sizes.sort((a, b) => b.size - a.size)[0];
    await truncate(join(storeDir, log.f), log.size - 7);

    const second = await start({ ...options, port: first.cp.port });
    try {
      const names = (await second.configMaps.list('default')).items.map((o) => o.metadata.name);
      expect(names).toEqual(['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5', 'cm-6', 'cm-7', 'cm-8']);
      expect((await second.configMaps.get('default', 'cm-8')).metadata.resourceVersion).toBe(ninth);
      // Neither the object nor its event survived: the store resumes at the last whole change.
      expect(second.cp.storage.currentRv()).toBe(Number(ninth));
      expect(second.cp.storage.eventsSince(second.cp.registry.byKind('ConfigMap')!, Number(ninth))).toEqual([]);
      const next = await second.configMaps.create(configMap('cm-9', 'again'));
      expect(next.metadata.resourceVersion).toBe(tenth);
    } finally {
      await second.cp.stop();
    }
  });

  it('reports bytes that do not decode as a corrupt object, and the unsafe delete removes them from disk', async () => {
    const options = { port: 0, dataDir: await tempDir(), storage: 'embedded' as const };
    const first = await start(options);
    await first.configMaps.create(configMap('bad', '1'));
    await first.cp.stop();
    const storeDir = join(options.dataDir, 'store');
    const key = 'o/v1/configmaps|default/bad';
    const db = new ClassicLevel<string, string>(storeDir);
    await db.put(key, '{"metadata": garbage');
    await db.close();

    const second = await start({ ...options, port: first.cp.port });
    try {
      await expect(second.configMaps.get('default', 'bad')).rejects.toMatchObject({ code: 500 });
      await unsafeDelete(second.client, 'bad');
      await expect(second.configMaps.get('default', 'bad')).rejects.toMatchObject({ code: 404 });
    } finally {
      await second.cp.stop();
    }
    const reopened = new ClassicLevel<string, string>(storeDir);
    expect(await reopened.get(key)).toBeUndefined();
    await reopened.close();
  });
});

/**
 * `kill -9` of a control plane process (with the store of `kind`) in the middle of 1,000 writes from 4
 * clients, then a restart on the same port and store.
 */
function killNineTest(kind: StorageKind): void {
  it('kill -9 in the middle of 1,000 writes from 4 clients: every acknowledged write is there, whole; caches converge', {
    timeout: 180_000,
  }, async () => {
    const dataDir = await tempDir();
    // In a process of its own; embedded is the default store.
    const storage = await testStorage(kind);
    const storeFlags =
      kind === 'etcd' ? [`--etcd-servers=${storage.etcdServers![0]}`, `--etcd-prefix=${storage.etcdPrefix}`] : [];
    const spawnPlane = async (port: number) => {
      const child = spawn(
        process.execPath,
        ['bin/orch-control-plane.js', `--secure-port=${port}`, `--data-dir=${dataDir}`, ...storeFlags],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.push(child);
      const lines = createInterface({ input: child.stdout! });
      const listening = await new Promise<number>((resolve, reject) => {
        lines.on('line', (line) => {
          const m = /^port: (\d+)$/.exec(line);
          if (m) resolve(Number(m[1]));
        });
        child.once('exit', (code) => reject(new Error(`the control plane exited with ${code}`)));
      });
      return { child, port: listening };
    };
    let plane = await spawnPlane(0);
    const kc = new KubeConfig();
    kc.loadFromFile(join(dataDir, 'kubeconfig'));
    const registry = new ResourceRegistry('orch');
    const client = new KubeClient(kc, registry, { qps: 0, timeoutMs: 10_000 });
    const configMaps = client.kind('ConfigMap');
    const factory = new SharedInformerFactory(client, undefined, { onError: () => {} });
    const informer = factory.informerFor(registry.byKind('ConfigMap')!, { namespace: 'default' });
    factory.start();

    const acknowledged = new Map<string, KubeObject>();
    const sent = new Map<string, string>();
    let killed = false;
    const writer = async (id: number) => {
      for (let i = 0; i < 250; i++) {
        const name = `w${id}-${i}`;
        const value = `${name}:${'x'.repeat(200 + ((id * 250 + i) % 300))}`;
        sent.set(name, value);
        try {
          acknowledged.set(name, await configMaps.create(configMap(name, value)));
        } catch {
          // Unacknowledged (the server died under it): wait for it to come back, go on with the next.
          await eventually(
            () => killed && configMaps.list('default', { limit: 1 }).then(() => true),
            60_000,
            'restart',
          );
        }
      }
    };
    const writers = Promise.all([0, 1, 2, 3].map(writer));
    await eventually(() => acknowledged.size >= 400, 60_000, '400 acknowledged writes');
    plane.child.kill('SIGKILL');
    await new Promise((resolve) => plane.child.once('exit', resolve));
    const ackedAtKill = acknowledged.size;
    killed = true;
    plane = await spawnPlane(plane.port);
    await writers;
    expect(ackedAtKill).toBeLessThan(1000);

    const stored = new Map((await configMaps.listAll('default')).items.map((o) => [o.metadata.name!, o]));
    for (const [name, obj] of acknowledged) {
      expect(stored.get(name)?.metadata.resourceVersion, name).toBe(obj.metadata.resourceVersion);
      expect(stored.get(name)?.data, name).toEqual(obj.data);
    }
    // Whatever else is there was sent, and is there whole.
    for (const [name, obj] of stored) expect(obj.data, name).toEqual({ value: sent.get(name) });
    expect(stored.size).toBeGreaterThanOrEqual(acknowledged.size);

    // The informer that watched through the crash converges on the server's truth.
    const truth = () => [...stored.values()].map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
    const cached = () =>
      informer
        .lister()
        .list()
        .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort();
    await eventually(() => JSON.stringify(cached()) === JSON.stringify(truth()), 30_000, 'the informer cache');
    await factory.stop();
    plane.child.kill('SIGTERM');
  });
}
