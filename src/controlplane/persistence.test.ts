/** The journal on a real LevelDB store: group commit, watchers held until durable, restore, failures. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import { ResourceRegistry } from '../api/registry.ts';
import { openLevelStore } from './kv-level.ts';
import { Journal, type KeyValueStore, type KvOp } from './persistence.ts';
import { Storage, type StoredEvent } from './storage.ts';

const registry = new ResourceRegistry('orch');
const configMaps = registry.byKind('ConfigMap')!;
const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  data: { name },
});

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A LevelDB store in a fresh directory that records the size of every write it is given. */
async function recordingStore(): Promise<{ kv: KeyValueStore; writes: KvOp[][][] }> {
  dir ||= await mkdtemp(join(tmpdir(), 'orch-journal-'));
  const level = await openLevelStore(join(dir, 'store'));
  const writes: KvOp[][][] = [];
  return {
    writes,
    kv: {
      ...level,
      write: (groups) => {
        writes.push(groups);
        return level.write(groups);
      },
    },
  };
}

describe('journal', () => {
  it('commits in groups: changes made while a write is in flight go together in the next one', async () => {
    const { kv, writes } = await recordingStore();
    const storage = new Storage();
    const { journal } = await Journal.open(storage, kv, registry, 100);
    for (let i = 0; i < 50; i++) storage.create(configMaps, configMap(`cm-${i}`));
    expect(storage.isDurable()).toBe(false);
    await storage.durable();
    // The first change starts a write at once; the other 49 queue behind it and go in one more.
    expect(writes.map((w) => w.length)).toEqual([1, 49]);
    await journal.close();
  });

  it('shows watchers a change only once it is durable, in order', async () => {
    const { kv } = await recordingStore();
    const storage = new Storage();
    const { journal } = await Journal.open(storage, kv, registry, 100);
    const seen: StoredEvent[] = [];
    storage.watch(configMaps, { deliver: (e) => seen.push(e), stop: () => {} });
    storage.create(configMaps, configMap('a'));
    storage.update(configMaps, { ...configMap('a'), data: { name: 'changed' } });
    expect(seen).toEqual([]);
    expect(storage.deliveredRv()).toBe(0);
    await storage.durable();
    expect(seen.map((e) => [e.type, e.rv])).toEqual([
      ['ADDED', 1],
      ['MODIFIED', 2],
    ]);
    expect(storage.deliveredRv()).toBe(2);
    await journal.close();
  });

  it('restores objects, uids, resourceVersions and the kept events; older versions answer 410', async () => {
    const first = await recordingStore();
    const storage = new Storage();
    const opened = await Journal.open(storage, first.kv, registry, 3);
    for (const name of ['a', 'b', 'c']) storage.create(configMaps, configMap(name));
    storage.remove(configMaps, 'default/b');
    await opened.journal.close();

    const restored = new Storage();
    const reopened = await Journal.open(restored, await openLevelStore(join(dir, 'store')), registry, 3);
    expect(restored.list(configMaps).map((o) => [o.metadata.name, o.metadata.resourceVersion])).toEqual([
      ['a', '1'],
      ['c', '3'],
    ]);
    expect(restored.locate('uid-c')).toEqual({ rt: configMaps, key: 'default/c' });
    expect(restored.currentRv()).toBe(4);
    // Three events kept (rv 2 to 4): a watch from 1 resumes, one from before it cannot.
    expect(restored.eventsSince(configMaps, 1).map((e) => [e.type, e.object.metadata.name, e.rv])).toEqual([
      ['ADDED', 'b', 2],
      ['ADDED', 'c', 3],
      ['DELETED', 'b', 4],
    ]);
    expect(restored.eventsSince(configMaps, 1)[2].previous?.metadata.resourceVersion).toBe('2');
    expect(() => restored.eventsSince(configMaps, 0)).toThrow(/too old/);
    // A resource with no kept events starts its history after the restart point too.
    expect(() => restored.eventsSince(registry.byKind('Secret')!, 0)).toThrow(/too old/);
    expect(restored.create(configMaps, configMap('d')).metadata.resourceVersion).toBe('5');
    await reopened.journal.close();
  });

  it('keeps an Event written through either API under the one core Event key, and restores it for both', async () => {
    const first = await recordingStore();
    const storage = new Storage();
    const opened = await Journal.open(storage, first.kv, registry, 10);
    const coreEvents = registry.resource('', 'v1', 'events')!;
    const groupEvents = registry.resource('events.orch.io', 'v1', 'events')!;
    const metadata = (name: string) => ({ name, namespace: 'default', uid: `uid-${name}` });
    storage.create(groupEvents, { apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: metadata('g'), note: 'n' });
    storage.create(coreEvents, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: metadata('c'),
      message: 'm',
    } as KubeObject);
    await opened.journal.close();
    const keys: string[] = [];
    const written = await openLevelStore(join(dir, 'store'));
    for await (const [key] of written.scan('o/')) keys.push(key);
    await written.close();
    expect(keys).toEqual(['o/v1/events|default/c', 'o/v1/events|default/g']);

    const restored = new Storage();
    const reopened = await Journal.open(restored, await openLevelStore(join(dir, 'store')), registry, 10);
    expect(restored.list(coreEvents).map((e) => [e.metadata.name, e.apiVersion, (e as any).message])).toEqual([
      ['c', 'v1', 'm'],
      ['g', 'v1', 'n'],
    ]);
    expect(restored.list(groupEvents).map((e) => [e.metadata.name, e.apiVersion, (e as any).note])).toEqual([
      ['c', 'events.orch.io/v1', 'm'],
      ['g', 'events.orch.io/v1', 'n'],
    ]);
    expect(restored.eventsSince(groupEvents, 0).map((e) => [e.object.apiVersion, (e.object as any).note])).toEqual([
      ['events.orch.io/v1', 'n'],
      ['events.orch.io/v1', 'm'],
    ]);
    await reopened.journal.close();
  });

  it('takes an object kept without a valid resourceVersion, or under another name, for a corrupt object', async () => {
    // As one flipped bit leaves it in a value that still decodes: "resourceVersion" turned into "zesourceVersion"
    // (seen after --repair-store), a digit turned into ';', a letter of the name changed.
    const { kv } = await recordingStore();
    const kept = (name: string, metadata: Record<string, string>) => ({
      type: 'put' as const,
      key: `o/v1/configmaps|default/${name}`,
      value: JSON.stringify({ ...configMap(name), metadata: { ...configMap(name).metadata, ...metadata } }),
    });
    await kv.write([
      [
        kept('good', { resourceVersion: '24' }),
        kept('renamed', { zesourceVersion: '25' }),
        kept('digit', { resourceVersion: '2;' }),
        kept('moved', { resourceVersion: '23', name: 'mover' }),
      ],
    ]);
    const storage = new Storage();
    const { journal } = await Journal.open(storage, kv, registry, 100);
    expect(storage.currentRv()).toBe(24);
    expect(storage.isCorrupt(configMaps, 'default/renamed')).toBe(true);
    expect(storage.isCorrupt(configMaps, 'default/digit')).toBe(true);
    expect(storage.isCorrupt(configMaps, 'default/moved')).toBe(true);
    expect(storage.get(configMaps, 'default/mover')).toBeUndefined();
    // Requests wait for durability: it comes (with a resourceVersion that is no number, it never did).
    storage.create(configMaps, configMap('new'));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve('still waiting after 5 s'), 5000);
    });
    expect(await Promise.race([storage.durable().then(() => 'durable'), timeout])).toBe('durable');
    clearTimeout(timer);
    expect(storage.get(configMaps, 'default/new')?.metadata.resourceVersion).toBe('25');
    await journal.close();
  });

  it('fails every request waiting for durability when the store cannot write', async () => {
    const storage = new Storage();
    const broken: KeyValueStore = {
      write: () => Promise.reject(new Error('disk full')),
      scan: async function* () {},
      close: async () => {},
    };
    const { journal } = await Journal.open(storage, broken, registry, 100);
    storage.create(configMaps, configMap('a'));
    await expect(storage.durable()).rejects.toThrow('the store could not persist a change: disk full');
    storage.create(configMaps, configMap('b'));
    await expect(storage.durable()).rejects.toThrow(/disk full/);
    await journal.close();
  });
});
