import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import { StatusError } from '../client/errors.ts';
import { FakeClock } from '../util/clock.ts';
import { Reflector, type ReflectorOptions } from './reflector.ts';
import { keyOf, Store } from './store.ts';
import { FakeListerWatcher, page, pod, settle } from './testing.ts';

const END = 'orch.io/initial-events-end';

function setup(opts: Partial<ReflectorOptions> = {}) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher<KubeObject>();
  const store = new Store<KubeObject>();
  const errors: unknown[] = [];
  // random = 0: every backoff wait is exactly d, every watch timeout 300 s.
  const r = new Reflector(lw, store, {
    name: 'pods',
    clock,
    random: () => 0,
    onError: (e) => errors.push(e),
    initialEventsEndAnnotation: END,
    ...opts,
  });
  return { clock, lw, store, errors, r };
}

async function started(opts: Partial<ReflectorOptions> = {}, listRv = '10') {
  const s = setup(opts);
  s.lw.onList = () => page([pod('a', '5')], listRv);
  s.r.start();
  await settle();
  return s;
}

const expired = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code: 410,
  reason: 'Expired',
  message: 'too old resource version: 5 (9)',
};

describe('Reflector: LIST', () => {
  it('pages by 500 following continue, replaces, then watches from the list version', async () => {
    const { lw, store, r } = setup({ random: () => 0.5 });
    const items = Array.from({ length: 1200 }, (_, i) => pod(`p${i}`, String(i + 1)));
    lw.onList = (o) => {
      const start = o.continue ? Number(o.continue) : 0;
      const next = start + 500 < items.length ? String(start + 500) : undefined;
      return page(items.slice(start, start + 500), '1300', next);
    };
    r.start();
    await settle();
    expect(lw.lists).toEqual([
      { labelSelector: undefined, fieldSelector: undefined, resourceVersion: undefined, limit: 500 },
      { labelSelector: undefined, fieldSelector: undefined, continue: '500', limit: 500 },
      { labelSelector: undefined, fieldSelector: undefined, continue: '1000', limit: 500 },
    ]);
    expect(store.size).toBe(1200);
    expect(r.hasSynced()).toBe(true);
    expect(r.lastSyncResourceVersion()).toBe('1300');
    expect(lw.watches).toHaveLength(1);
    expect(lw.lastWatch.opts).toMatchObject({
      resourceVersion: '1300',
      allowWatchBookmarks: true,
      timeoutSeconds: 450,
    });
    await r.stop();
  });

  it.each([
    { draw: 0, seconds: 300 },
    { draw: 0.999999, seconds: 599 },
  ])('watch timeoutSeconds is in [300, 600): draw $draw → $seconds', async ({ draw, seconds }) => {
    const { lw, r } = await started({ random: () => draw });
    expect(lw.lastWatch.opts.timeoutSeconds).toBe(seconds);
    await r.stop();
  });

  it('a continue token that expires mid-way becomes one unpaged list at the original version', async () => {
    const { lw, store, r, clock } = await started();
    lw.lastWatch.emit('ERROR', { ...expired, code: 500, reason: 'InternalError' });
    lw.onList = (o) => {
      if (o.continue) throw new StatusError(410, 'Expired', 'continue expired');
      if (o.limit) return page([pod('a', '5')], '12', 'next');
      return page([pod('a', '5'), pod('b', '11')], '12');
    };
    await settle();
    clock.step(800);
    await settle();
    expect(lw.lists.slice(1)).toEqual([
      expect.objectContaining({ resourceVersion: '10', resourceVersionMatch: 'NotOlderThan', limit: 500 }),
      expect.objectContaining({ continue: 'next', limit: 500 }),
      expect.objectContaining({ resourceVersion: '10', resourceVersionMatch: 'NotOlderThan' }),
    ]);
    expect(lw.lists[3].limit).toBeUndefined();
    expect(store.keys().sort()).toEqual(['ns/a', 'ns/b']);
    await r.stop();
  });

  it('a LIST answered 410 is repeated at once with resourceVersion ""', async () => {
    const { lw, r, clock } = await started();
    lw.lastWatch.emit('ERROR', { ...expired, code: 500, reason: 'InternalError' });
    let calls = 0;
    lw.onList = () => {
      if (calls++ === 0) throw new StatusError(410, 'Expired', 'too old resource version');
      return page([], '30');
    };
    await settle();
    clock.step(800);
    await settle();
    expect(lw.lists.slice(1).map((l) => [l.resourceVersion, l.resourceVersionMatch])).toEqual([
      ['10', 'NotOlderThan'],
      [undefined, undefined],
    ]);
    expect(r.lastSyncResourceVersion()).toBe('30');
    await r.stop();
  });

  it('retries a failed list at once, then backs off while failures are consecutive: 800, 1600, 3200 ms', async () => {
    const { lw, r, clock, errors } = setup();
    lw.onList = () => {
      throw new StatusError(500, 'InternalError', 'boom');
    };
    r.start();
    await settle();
    const at: number[] = [];
    for (let t = 0; t <= 6000; t += 100) {
      while (at.length < lw.lists.length) at.push(t);
      clock.step(100);
      await settle(2);
    }
    expect(at.slice(0, 5)).toEqual([0, 0, 800, 2400, 5600]);
    expect(errors.length).toBeGreaterThanOrEqual(5);
    expect(r.hasSynced()).toBe(false);
    await r.stop();
  });

  it('waits at least the Retry-After of a failed list', async () => {
    const { lw, r, clock } = setup();
    let calls = 0;
    lw.onList = () => {
      if (calls++ === 0) throw new StatusError(503, 'ServiceUnavailable', 'busy', [], 3);
      return page([], '7');
    };
    r.start();
    await settle();
    clock.step(2_999);
    await settle();
    expect(lw.lists).toHaveLength(1);
    clock.step(1);
    await settle();
    expect(lw.lists).toHaveLength(2);
    expect(r.hasSynced()).toBe(true);
    await r.stop();
  });
});

describe('Reflector: WATCH', () => {
  it('applies events and advances the version on each, bookmarks included', async () => {
    const { lw, store, r } = await started();
    const w = lw.lastWatch;
    w.emit('ADDED', pod('b', '11'));
    w.emit('MODIFIED', pod('a', '12', { x: 'y' }));
    w.emit('DELETED', pod('b', '13'));
    expect(store.keys()).toEqual(['ns/a']);
    expect(store.get('ns/a')?.metadata.labels).toEqual({ x: 'y' });
    expect(r.lastSyncResourceVersion()).toBe('13');
    w.emit('BOOKMARK', { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '20' } });
    expect(store.keys()).toEqual(['ns/a']);
    expect(r.lastSyncResourceVersion()).toBe('20');
    await r.stop();
  });

  it('a stream that ends after events is watched again from the last version, no relist', async () => {
    const { lw, r } = await started();
    lw.lastWatch.emit('ADDED', pod('b', '11'));
    lw.lastWatch.end();
    await settle();
    expect(lw.watches).toHaveLength(2);
    expect(lw.lastWatch.opts.resourceVersion).toBe('11');
    expect(lw.lists).toHaveLength(1);
    await r.stop();
  });

  it('an empty stream that lasted a second is a normal end too', async () => {
    const { lw, r, clock } = await started();
    clock.step(1000);
    lw.lastWatch.end();
    await settle();
    expect(lw.watches).toHaveLength(2);
    expect(lw.lists).toHaveLength(1);
    await r.stop();
  });

  it('a very short empty watch is an error: relisted at once, backed off when it happens again', async () => {
    const { lw, r, clock, errors } = await started();
    clock.step(999);
    lw.lastWatch.end();
    await settle();
    expect(String(errors[0])).toMatch(/very short watch/);
    expect(lw.lists).toHaveLength(2);
    expect(lw.lists[1]).toMatchObject({ resourceVersion: '10', resourceVersionMatch: 'NotOlderThan' });
    lw.lastWatch.end();
    await settle();
    clock.step(799);
    await settle();
    expect(lw.lists).toHaveLength(2);
    clock.step(1);
    await settle();
    expect(lw.lists).toHaveLength(3);
    await r.stop();
  });

  it('a 410 ERROR event after a working stream relists at once at the last synced version', async () => {
    const { lw, r, errors } = await started();
    lw.lastWatch.emit('ADDED', pod('b', '11'));
    lw.lastWatch.emit('ERROR', expired);
    await settle();
    expect(errors[0]).toBeInstanceOf(StatusError);
    expect((errors[0] as StatusError).code).toBe(410);
    expect(lw.lists[1]).toMatchObject({ resourceVersion: '11', resourceVersionMatch: 'NotOlderThan' });
    await r.stop();
  });

  it('a dropped stream is watched again at once; refused reconnects back off, never below Retry-After', async () => {
    const { lw, r, clock } = await started();
    const failures: unknown[] = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      new StatusError(429, 'TooManyRequests', 'slow down', [], 2),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    ];
    let attempts = 0;
    lw.onWatch = () => {
      attempts++;
      const f = failures.shift();
      if (f) throw f;
    };
    lw.lastWatch.emit('ADDED', pod('b', '11'));
    lw.lastWatch.end();
    await settle();
    expect(attempts).toBe(2); // refused at once, then the 429 (a second failure in a row)
    clock.step(1_999); // the backoff says 1600 ms, the server 2 s
    await settle();
    expect(attempts).toBe(2);
    clock.step(1);
    await settle();
    expect(attempts).toBe(3);
    clock.step(1_600); // third in a row: 1600 ms (800 was used up by the 429)
    await settle();
    expect(attempts).toBe(4);
    expect(lw.lastWatch.opts.resourceVersion).toBe('11');
    expect(lw.lists).toHaveLength(1);
    // The stream works again: the next drop is retried at once.
    lw.lastWatch.emit('ADDED', pod('c', '12'));
    failures.push(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    lw.lastWatch.end();
    await settle();
    expect(attempts).toBe(6);
    expect(lw.lastWatch.opts.resourceVersion).toBe('12');
    await r.stop();
  });

  it('any other watch start error relists', async () => {
    const { lw, r, clock } = await started();
    lw.onWatch = () => {
      lw.onWatch = () => {};
      throw new StatusError(500, 'InternalError', 'injected');
    };
    lw.lastWatch.emit('ADDED', pod('b', '11'));
    lw.lastWatch.end();
    await settle();
    clock.step(800);
    await settle();
    expect(lw.lists).toHaveLength(2);
    expect(lw.watches).toHaveLength(2);
    await r.stop();
  });
});

describe('Reflector: watch-list', () => {
  const endBookmark = (rv: string) => ({
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { resourceVersion: rv, annotations: { [END]: 'true' } },
  });

  it('collects the initial events until the end bookmark, replaces, then keeps consuming the stream', async () => {
    const { lw, store, r } = setup({ watchList: true });
    store.add(pod('stale', '1'));
    r.start();
    await settle();
    expect(lw.lists).toHaveLength(0);
    const w = lw.lastWatch;
    expect(w.opts).toMatchObject({
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: '',
      allowWatchBookmarks: true,
    });
    w.emit('ADDED', pod('a', '3'));
    w.emit('ADDED', pod('b', '4'));
    w.emit('MODIFIED', pod('a', '5'));
    w.emit('DELETED', pod('b', '6'));
    w.emit('BOOKMARK', { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '6' } });
    expect(r.hasSynced()).toBe(false);
    expect(store.keys()).toEqual(['ns/stale']);
    w.emit('BOOKMARK', endBookmark('7'));
    expect(r.hasSynced()).toBe(true);
    expect(store.list().map((o) => [keyOf(o), o.metadata.resourceVersion])).toEqual([['ns/a', '5']]);
    w.emit('ADDED', pod('c', '8'));
    expect(store.keys().sort()).toEqual(['ns/a', 'ns/c']);
    w.end();
    await settle();
    expect(lw.lastWatch.opts.sendInitialEvents).toBeUndefined();
    expect(lw.lastWatch.opts.resourceVersion).toBe('8');
    expect(lw.lists).toHaveLength(0);
    await r.stop();
  });

  it('falls back to LIST + WATCH in the same round when the watch-list fails', async () => {
    const { lw, store, r, errors } = setup({ watchList: true });
    lw.onWatch = (o) => {
      if (o.sendInitialEvents) throw new StatusError(400, 'BadRequest', 'sendInitialEvents is not supported');
    };
    lw.onList = () => page([pod('a', '5')], '10');
    r.start();
    await settle();
    expect(String(errors[0])).toMatch(/falling back to LIST/);
    expect(lw.lists).toHaveLength(1);
    expect(store.keys()).toEqual(['ns/a']);
    expect(lw.lastWatch.opts).toMatchObject({ resourceVersion: '10' });
    await r.stop();
  });

  it('an expired watch-list is retried with resourceVersion "" after the backoff', async () => {
    const { lw, r, clock } = setup({ watchList: true });
    r.start();
    await settle();
    lw.lastWatch.emit('BOOKMARK', endBookmark('7'));
    lw.lastWatch.end();
    await settle();
    // The plain re-watch fails with 410: a new round, which is a watch-list again.
    lw.lastWatch.emit('ERROR', expired);
    await settle();
    clock.step(800);
    await settle();
    expect(lw.lastWatch.opts).toMatchObject({ sendInitialEvents: true, resourceVersion: '7' });
    lw.lastWatch.emit('ERROR', expired);
    await settle();
    clock.step(1600);
    await settle();
    expect(lw.lastWatch.opts).toMatchObject({ sendInitialEvents: true, resourceVersion: '' });
    expect(lw.lists).toHaveLength(0);
    await r.stop();
  });
});

describe('Reflector: stop', () => {
  it('ends the stream and the loop, leaving no timers', async () => {
    const { lw, r, clock } = await started();
    const w = lw.lastWatch;
    await r.stop();
    expect(w.signal.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('ends a backoff wait', async () => {
    const { lw, r, clock } = setup();
    lw.onList = () => {
      throw new StatusError(500, 'InternalError', 'boom');
    };
    r.start();
    await settle();
    expect(clock.pendingTimers).toBe(1);
    await r.stop();
    expect(clock.pendingTimers).toBe(0);
    expect(lw.lists).toHaveLength(2);
  });
});
