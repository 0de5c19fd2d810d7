import { describe, expect, it } from 'vitest';
import type { KubeList, KubeObject, WatchEvent } from '../api/meta.ts';
import { shardOf, shardSelector } from '../sharding/ranges.ts';
import type { ListerWatcher } from './reflector.ts';
import { shardedListerWatcher } from './sharded.ts';

const pod = (namespace: string): KubeObject => ({ metadata: { namespace, name: 'p', resourceVersion: '1' } });

/** A server that ignores shardSelector: it answers everything and records the selectors it was sent. */
function unfilteredServer(objects: KubeObject[]) {
  const sent: (string | undefined)[] = [];
  const lw: ListerWatcher<KubeObject> = {
    async list(_ns, opts) {
      sent.push(opts.shardSelector);
      return { metadata: { resourceVersion: '5' }, items: objects } as KubeList<KubeObject>;
    },
    async watch(_ns, opts, onEvent) {
      sent.push(opts.shardSelector);
      for (const object of objects) onEvent({ type: 'ADDED', object });
      onEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } });
    },
  };
  return { lw, sent };
}

describe('shardedListerWatcher', () => {
  const namespaces = Array.from({ length: 40 }, (_, i) => `team-${i}-apps`);
  const held = [0, 1, 2, 3];
  const selector = shardSelector('namespace', held, 16)!;
  const mine = (ns: string) => held.includes(shardOf(ns, 16));

  it('sends the selector, keeps only the held shards’ objects from a server that ignores it, and says so once', async () => {
    const { lw, sent } = unfilteredServer(namespaces.map(pod));
    const told: string[] = [];
    const sharded = shardedListerWatcher(
      lw,
      { selector, applies: () => true, onUnfiltered: (i) => told.push(i) },
      'pods',
    );
    const listed = await sharded.list(undefined, {});
    expect(listed.items.map((o) => o.metadata.namespace)).toEqual(namespaces.filter(mine));
    expect(listed.items.length).toBeGreaterThan(0);
    const events: WatchEvent<KubeObject>[] = [];
    await sharded.watch(undefined, {}, (e) => events.push(e), new AbortController().signal);
    expect(events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.namespace)).toEqual(
      namespaces.filter(mine),
    );
    expect(events.at(-1)?.type).toBe('BOOKMARK');
    expect(sent).toEqual([selector, selector]);
    expect(told).toEqual(['pods']);
  });

  it('says nothing when the server filtered', async () => {
    const { lw } = unfilteredServer(namespaces.filter(mine).map(pod));
    const told: string[] = [];
    const sharded = shardedListerWatcher(
      lw,
      { selector, applies: () => true, onUnfiltered: (i) => told.push(i) },
      'pods',
    );
    await sharded.list(undefined, {});
    expect(told).toEqual([]);
  });
});
