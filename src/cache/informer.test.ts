import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import { FakeClock } from '../util/clock.ts';
import { type DeletedFinalStateUnknown, isTombstone, type ResourceEventHandler, SharedInformer } from './informer.ts';
import { keyOf } from './store.ts';
import { FakeListerWatcher, page, pod, settle } from './testing.ts';

type Seen = string[];

/** A handler that records `add a@1`, `update a@1→a@2`, `delete a@2`, `tombstone a@2`. */
function recorder(seen: Seen): ResourceEventHandler<KubeObject> {
  const id = (o: KubeObject) => `${o.metadata.name}@${o.metadata.resourceVersion}`;
  return {
    add: (o) => seen.push(`add ${id(o)}`),
    update: (old, o) => seen.push(`update ${id(old)}→${id(o)}`),
    delete: (o) => seen.push(isTombstone(o) ? `tombstone ${o.key} ${id(o.obj)}` : `delete ${id(o)}`),
  };
}

const END = 'orch.io/initial-events-end';
const endBookmark = (rv: string) => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { resourceVersion: rv, annotations: { [END]: 'true' } },
});

function setup(opts: { resyncMs?: number; watchList?: boolean; trimManagedFields?: boolean } = {}) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher<KubeObject>();
  const errors: unknown[] = [];
  const informer = new SharedInformer<KubeObject>(lw, {
    name: 'pods[namespace=ns]',
    clock,
    random: () => 0,
    onError: (e) => errors.push(e),
    initialEventsEndAnnotation: END,
    ...opts,
  });
  return { clock, lw, informer, errors };
}

describe('SharedInformer: handler fan-out', () => {
  it('a handler blocked on a promise does not delay another; each keeps its order', async () => {
    const { lw, informer } = setup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: Seen = [];
    const fast: Seen = [];
    const rec = recorder(slow);
    informer.addEventHandler({
      add: async (o) => {
        rec.add!(o);
        if (o.metadata.name === 'a') await gate;
      },
      update: rec.update,
      delete: rec.delete,
    });
    informer.addEventHandler(recorder(fast));
    lw.onList = () => page([pod('a', '1')], '1');
    informer.start();
    await settle();
    const w = lw.lastWatch;
    w.emit('ADDED', pod('b', '2'));
    w.emit('MODIFIED', pod('a', '3'));
    w.emit('DELETED', pod('b', '4'));
    await settle();
    const all = ['add a@1', 'add b@2', 'update a@1→a@3', 'delete b@4'];
    expect(fast).toEqual(all);
    expect(slow).toEqual(['add a@1']);
    // The reflector kept going too: the cache is current.
    expect(informer.getStore().keys()).toEqual(['ns/a']);
    release();
    await settle();
    expect(slow).toEqual(all);
    await informer.stop();
  });

  it('async handlers with uneven delays still see their events in order', async () => {
    const { lw, informer } = setup();
    const seen: Seen = [];
    const rec = recorder(seen);
    const delays = [5, 0, 3, 1, 4, 0, 2];
    informer.addEventHandler({
      add: async (o) => {
        await new Promise((r) => setTimeout(r, delays[Number(o.metadata.resourceVersion) % delays.length]));
        rec.add!(o);
      },
    });
    informer.start();
    await settle();
    for (let i = 1; i <= 7; i++) lw.lastWatch.emit('ADDED', pod(`p${i}`, String(i)));
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7].map((i) => `add p${i}@${i}`));
    await informer.stop();
  });

  it('a throwing handler is reported and keeps receiving', async () => {
    const { lw, informer, errors } = setup();
    const seen: Seen = [];
    informer.addEventHandler({
      add: (o) => {
        seen.push(o.metadata.name!);
        if (o.metadata.name === 'a') throw new Error('handler bug');
      },
    });
    informer.start();
    await settle();
    lw.lastWatch.emit('ADDED', pod('a', '2'));
    lw.lastWatch.emit('ADDED', pod('b', '3'));
    await settle();
    expect(seen).toEqual(['a', 'b']);
    expect(String(errors[0])).toMatch(/informer pods\[namespace=ns\]: handler failed: handler bug/);
    await informer.stop();
  });
});

describe('SharedInformer: relist', () => {
  it('delivers adds for new objects, updates for changed versions, tombstones for vanished ones', async () => {
    const { lw, informer, clock } = setup();
    const seen: Seen = [];
    informer.addEventHandler(recorder(seen));
    lw.onList = () => page([pod('a', '1'), pod('b', '2'), pod('c', '3')], '3');
    informer.start();
    await settle();
    seen.length = 0;
    lw.onList = () => page([pod('a', '1'), pod('b', '5'), pod('d', '6')], '7');
    lw.lastWatch.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    await settle();
    clock.step(800);
    await settle();
    expect(seen).toEqual(['update b@2→b@5', 'add d@6', 'tombstone ns/c c@3']);
    expect(informer.getStore().keys().sort()).toEqual(['ns/a', 'ns/b', 'ns/d']);
    await informer.stop();
  });

  it('a tombstone carries the last cached state', async () => {
    const { lw, informer, clock } = setup();
    const deleted: (KubeObject | DeletedFinalStateUnknown<KubeObject>)[] = [];
    informer.addEventHandler({ delete: (o) => deleted.push(o) });
    lw.onList = () => page([pod('c', '3')], '3');
    informer.start();
    await settle();
    lw.lastWatch.emit('MODIFIED', pod('c', '4', { last: 'state' }));
    lw.onList = () => page([], '9');
    lw.lastWatch.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'gone' });
    await settle();
    clock.step(800);
    await settle();
    expect(deleted).toHaveLength(1);
    const t = deleted[0] as DeletedFinalStateUnknown<KubeObject>;
    expect(isTombstone(t)).toBe(true);
    expect(t.key).toBe('ns/c');
    expect(t.obj.metadata).toMatchObject({ resourceVersion: '4', labels: { last: 'state' } });
    await informer.stop();
  });
});

describe('SharedInformer: watch-list', () => {
  it('indexes the initial events as they arrive, notifies at the end bookmark, and relists into tombstones', async () => {
    const { lw, informer } = setup({ watchList: true });
    informer.addIndexer('app', (o) => (o.metadata.labels?.app ? [o.metadata.labels.app] : []));
    const seen: Seen = [];
    informer.addEventHandler(recorder(seen));
    informer.start();
    await settle();
    lw.lastWatch.emit('ADDED', pod('a', '1', { app: 'web' }));
    lw.lastWatch.emit('ADDED', pod('b', '2', { app: 'db' }));
    // An index added while the initial events arrive covers them too.
    informer.addIndexer('tier', (o) => [o.metadata.labels?.app === 'web' ? 'front' : 'back']);
    lw.lastWatch.emit('ADDED', pod('c', '3', { app: 'web' }));
    await settle();
    expect(seen).toEqual([]);
    expect(informer.hasSynced()).toBe(false);
    lw.lastWatch.emit('BOOKMARK', endBookmark('3'));
    await settle();
    expect(seen).toEqual(['add a@1', 'add b@2', 'add c@3']);
    const l = informer.lister();
    expect(l.byIndex('app', 'web').map(keyOf)).toEqual(['ns/a', 'ns/c']);
    expect(l.byIndex('tier', 'back').map(keyOf)).toEqual(['ns/b']);
    expect(l.list('ns')).toHaveLength(3);
    // The history is gone: the next watch-list brings a new full state.
    seen.length = 0;
    lw.lastWatch.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    await settle();
    expect(lw.lastWatch.opts.sendInitialEvents).toBe(true);
    lw.lastWatch.emit('ADDED', pod('a', '1', { app: 'web' }));
    lw.lastWatch.emit('ADDED', pod('b', '5', { app: 'web' }));
    lw.lastWatch.emit('BOOKMARK', endBookmark('6'));
    await settle();
    expect(seen).toEqual(['update b@2→b@5', 'tombstone ns/c c@3']);
    expect(l.byIndex('app', 'web').map(keyOf)).toEqual(['ns/a', 'ns/b']);
    expect(l.byIndex('app', 'db')).toEqual([]);
    await informer.stop();
  });
});

describe('SharedInformer: trimManagedFields', () => {
  const managed = (name: string, rv: string): KubeObject => {
    const p = pod(name, rv);
    p.metadata.managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {} }];
    return p;
  };
  const fieldsOf = (informer: SharedInformer<KubeObject>) =>
    informer
      .lister()
      .list()
      .map((o) => `${o.metadata.name}:${o.metadata.managedFields ? 'kept' : 'trimmed'}`);

  it.each([false, true])('drops managed fields from listed and watched objects (watch-list %s)', async (watchList) => {
    const { lw, informer } = setup({ watchList, trimManagedFields: true });
    const handled: string[] = [];
    informer.addEventHandler({ add: (o) => handled.push(`${o.metadata.name}:${o.metadata.managedFields?.length}`) });
    lw.onList = () => page([managed('a', '1')], '1');
    informer.start();
    await settle();
    if (watchList) {
      lw.lastWatch.emit('ADDED', managed('a', '1'));
      lw.lastWatch.emit('BOOKMARK', endBookmark('1'));
    }
    lw.lastWatch.emit('ADDED', managed('b', '2'));
    await settle();
    expect(fieldsOf(informer)).toEqual(['a:trimmed', 'b:trimmed']);
    expect(handled).toEqual(['a:undefined', 'b:undefined']);
    await informer.stop();
  });

  it('keeps them by default', async () => {
    const { lw, informer } = setup();
    lw.onList = () => page([managed('a', '1')], '1');
    informer.start();
    await settle();
    expect(fieldsOf(informer)).toEqual(['a:kept']);
    await informer.stop();
  });
});

describe('SharedInformer: resync', () => {
  it('re-delivers every cached object as update(obj, obj), per handler period, at least 1 s', async () => {
    const { lw, informer, clock } = setup();
    const fast: Seen = [];
    const slow: Seen = [];
    const none: Seen = [];
    informer.addEventHandler(recorder(fast), 10);
    informer.addEventHandler(recorder(slow), 3000);
    informer.addEventHandler(recorder(none));
    lw.onList = () => page([pod('a', '1'), pod('b', '2')], '2');
    informer.start();
    await settle();
    for (const s of [fast, slow, none]) s.length = 0;
    clock.step(999);
    await settle();
    expect(fast).toEqual([]);
    clock.step(1);
    await settle();
    expect(fast).toEqual(['update a@1→a@1', 'update b@2→b@2']);
    clock.step(2000);
    await settle();
    expect(fast).toHaveLength(6);
    expect(slow).toEqual(['update a@1→a@1', 'update b@2→b@2']);
    expect(none).toEqual([]);
    // Resync hands over the very cached object, old and new alike.
    let pair: [KubeObject, KubeObject] | undefined;
    informer.addEventHandler({ update: (o, n) => (pair = [o, n]) }, 1000);
    clock.step(1000);
    await settle();
    expect(pair?.[0]).toBe(pair?.[1]);
    expect(pair?.[0]).toBe(informer.getStore().get(keyOf(pair![0])));
    await informer.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it('uses the informer default period for handlers that give none', async () => {
    const { lw, informer, clock } = setup({ resyncMs: 2000 });
    const seen: Seen = [];
    informer.addEventHandler(recorder(seen));
    lw.onList = () => page([pod('a', '1')], '1');
    informer.start();
    await settle();
    clock.step(2000);
    await settle();
    expect(seen).toEqual(['add a@1', 'update a@1→a@1']);
    await informer.stop();
  });
});

describe('SharedInformer: late handlers, sync, lister, stop', () => {
  it('a handler added after start gets adds for the current contents, then live events', async () => {
    const { lw, informer } = setup();
    lw.onList = () => page([pod('a', '1'), pod('b', '2')], '2');
    informer.start();
    await settle();
    const seen: Seen = [];
    const reg = informer.addEventHandler(recorder(seen));
    expect(reg.hasSynced()).toBe(false);
    lw.lastWatch.emit('ADDED', pod('c', '3'));
    await settle();
    expect(seen).toEqual(['add a@1', 'add b@2', 'add c@3']);
    expect(reg.hasSynced()).toBe(true);
    reg.remove();
    lw.lastWatch.emit('ADDED', pod('d', '4'));
    await settle();
    expect(seen).toHaveLength(3);
    await informer.stop();
  });

  it('a registration has synced once its handler processed the first full state', async () => {
    const { lw, informer } = setup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reg = informer.addEventHandler({ add: () => gate });
    lw.onList = () => page([pod('a', '1')], '1');
    informer.start();
    await settle();
    expect(informer.hasSynced()).toBe(true);
    expect(reg.hasSynced()).toBe(false);
    release();
    await settle();
    expect(reg.hasSynced()).toBe(true);
    await informer.stop();
  });

  it('waitForSync resolves on the first replace and rejects naming the informer on timeout or stop', async () => {
    const { lw, informer, clock } = setup();
    lw.onList = () => {
      throw new Error('unreachable server');
    };
    informer.start();
    const late = informer.waitForSync(5000);
    const onStop = informer.waitForSync(60_000);
    clock.step(5000);
    await expect(late).rejects.toThrow('informer pods[namespace=ns] did not sync within 5000 ms');
    const aborted = new AbortController();
    const cancelled = informer.waitForSync(60_000, aborted.signal);
    aborted.abort();
    await expect(cancelled).rejects.toThrow(/pods\[namespace=ns\] to sync was cancelled/);
    await informer.stop();
    await expect(onStop).rejects.toThrow('informer pods[namespace=ns] stopped before it synced');
    expect(clock.pendingTimers).toBe(0);

    const ok = setup();
    ok.lw.onList = () => page([pod('a', '1')], '1');
    const waiting = ok.informer.waitForSync(5000);
    ok.informer.start();
    await expect(waiting).resolves.toBeUndefined();
    expect(ok.informer.hasSynced()).toBe(true);
    await ok.informer.stop();
  });

  it('lister reads by key, namespace and index', async () => {
    const { lw, informer } = setup();
    informer.addIndexer('app', (o) => (o.metadata.labels?.app ? [o.metadata.labels.app] : []));
    const other = {
      ...pod('x', '3', { app: 'web' }),
      metadata: { namespace: 'other', name: 'x', resourceVersion: '3', labels: { app: 'web' } },
    };
    lw.onList = () => page([pod('a', '1', { app: 'web' }), pod('b', '2', { app: 'db' }), other], '3');
    informer.start();
    await settle();
    const l = informer.lister();
    expect(l.get('ns', 'a')?.metadata.resourceVersion).toBe('1');
    expect(l.get('ns', 'x')).toBeUndefined();
    expect(l.list().map(keyOf).sort()).toEqual(['ns/a', 'ns/b', 'other/x']);
    expect(l.list('ns').map(keyOf).sort()).toEqual(['ns/a', 'ns/b']);
    expect(l.byIndex('app', 'web').map(keyOf).sort()).toEqual(['ns/a', 'other/x']);
    expect(informer.lastSyncResourceVersion()).toBe('3');
    await informer.stop();
  });

  it('stop ends the reflector, timers and deliveries, and cannot be undone', async () => {
    const { lw, informer, clock } = setup({ resyncMs: 1000 });
    const seen: Seen = [];
    informer.addEventHandler(recorder(seen));
    informer.start();
    await settle();
    const w = lw.lastWatch;
    await informer.stop();
    expect(w.signal.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    expect(() => informer.start()).toThrow(/cannot start: it is stopped/);
    expect(() => informer.addEventHandler({})).toThrow(/is stopped/);
  });
});
