/**
 * The control plane's persistent stores: a restart keeps objects and resourceVersions and lets
 * watches resume (or answers 410 for what is no longer kept), a record torn by a crash is dropped
 * whole, and `kill -9` in the middle of writes from several clients loses no acknowledged write.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject, WatchEvent } from '../src/api/meta.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import { SharedInformerFactory } from '../src/cache/factory.ts';
import { KubeClient } from '../src/client/client.ts';
import { ControlPlane, type ControlPlaneOptions, type StorageKind } from '../src/controlplane/control-plane.ts';
import { testStorage } from './support/cluster.ts';
import { etcdAvailable } from './support/etcd.ts';
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
        expect(after.metadata.resourceVersion).toBe(String(rv));
        expect(second.cp.storage.currentRv()).toBe(rv);
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
          ['ADDED', String(rv + 1)],
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

    it('refuses a second control plane on the same store while the first runs', async () => {
      const options = { port: 0, dataDir: await tempDir(), ...(await testStorage(kind)) };
      const first = await start(options);
      try {
        await expect(new ControlPlane(options).start()).rejects.toThrow(/another control plane/);
      } finally {
        await first.cp.stop();
      }
    });
  });
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

  it('kill -9 in the middle of 1,000 writes from 4 clients: every acknowledged write is there, whole; caches converge', {
    timeout: 180_000,
  }, async () => {
    const dataDir = await tempDir();
    // The default store (embedded, in the data directory), in a process of its own.
    const spawnPlane = async (port: number) => {
      const child = spawn(
        process.execPath,
        ['bin/orch-control-plane.js', `--secure-port=${port}`, `--data-dir=${dataDir}`],
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
});
