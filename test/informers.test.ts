/**
 * Informers against the embedded control plane: paged sync, live changes, dropped watches,
 * compaction (410 → relist with tombstones), 429/500 storms, watch-list. Every case ends by
 * comparing the cache, and the view rebuilt from handler notifications, with a fresh LIST.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import type { ResourceType } from '../src/api/registry.ts';
import { SharedInformerFactory } from '../src/cache/factory.ts';
import { isTombstone, SharedInformer } from '../src/cache/informer.ts';
import type { ListerWatcher } from '../src/cache/reflector.ts';
import { keyOf } from '../src/cache/store.ts';
import { StatusError } from '../src/client/errors.ts';
import type { ListOptions, ResourceClient, WatchOptions } from '../src/client/resource.ts';
import { realClock } from '../src/util/clock.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let cluster: TestCluster;
let podRt: ResourceType;
let pods: ResourceClient;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  cluster = await startTestCluster();
  podRt = cluster.cp.registry.byKind('Pod')!;
  pods = cluster.client.kind('Pod');
});

afterEach(async () => {
  cluster.cp.faults.clear();
  for (const stop of cleanups.splice(0)) await stop();
});

afterAll(async () => {
  await cluster?.stop();
});

function pod(namespace: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
}

async function namespace(name: string, seeded = 0): Promise<string> {
  await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  // Bulk fixtures go straight into storage: 1,200 API round trips would dominate the file's time budget.
  for (let i = 0; i < seeded; i++) await cluster.cp.seed(pod(name, `seed-${String(i).padStart(4, '0')}`));
  return name;
}

function newFactory(opts: ConstructorParameters<typeof SharedInformerFactory>[2] = {}) {
  const errors: unknown[] = [];
  const factory = new SharedInformerFactory(cluster.client, realClock, {
    // Fast retries keep storms short; the default schedule is covered by the unit tests.
    backoff: { initialMs: 20, capMs: 200 },
    onError: (_name, err) => errors.push(err),
    ...opts,
  });
  cleanups.push(() => factory.stop());
  return { factory, errors };
}

/** A ListerWatcher that records what the reflector asked the server for. */
function recording(rc: ResourceClient) {
  const lists: ListOptions[] = [];
  const watches: WatchOptions[] = [];
  /** When each page was asked for and when its items were parsed. */
  const pages: string[] = [];
  const lw: ListerWatcher<KubeObject> = {
    list: (ns, o) => {
      const { signal: _s, ...rest } = o;
      lists.push(rest);
      return rc.list(ns, o);
    },
    listPage: async (ns, o) => {
      const { signal: _s, ...rest } = o;
      const n = lists.push(rest) - 1;
      pages.push(`fetch ${n}`);
      const page = await rc.listPage(ns, o);
      return {
        metadata: page.metadata,
        items: () => {
          pages.push(`parse ${n}`);
          return page.items();
        },
      };
    },
    watch: (ns, o, onEvent, signal) => {
      watches.push(o);
      return rc.watch(ns, o, onEvent, signal);
    },
  };
  return { lw, lists, watches, pages };
}

/** The state a handler would rebuild from its notifications: key → resourceVersion. */
function handlerView(informer: SharedInformer<KubeObject>) {
  const view = new Map<string, string>();
  const log: string[] = [];
  informer.addEventHandler({
    add: (o) => {
      view.set(keyOf(o), o.metadata.resourceVersion!);
      log.push(`add ${keyOf(o)}`);
    },
    update: (_old, o) => {
      view.set(keyOf(o), o.metadata.resourceVersion!);
      log.push(`update ${keyOf(o)}`);
    },
    delete: (o) => {
      const key = isTombstone(o) ? o.key : keyOf(o);
      view.delete(key);
      log.push(`${isTombstone(o) ? 'tombstone' : 'delete'} ${key}`);
    },
  });
  return { view, log };
}

const entries = (objs: Iterable<[string, string]>) => [...objs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * Waits until the cache and the handler view both equal a fresh LIST (same keys, same
 * resourceVersions), then asserts it. The LIST goes through the all-namespaces path with a field
 * selector so request faults aimed at the namespaced path do not hit it.
 */
async function expectConverged(
  informer: SharedInformer<KubeObject>,
  view: Map<string, string>,
  ns: string,
  labelSelector?: string,
) {
  let fresh: [string, string][] = [];
  const cache = () =>
    entries(
      informer
        .getStore()
        .list()
        .map((o) => [keyOf(o), o.metadata.resourceVersion!]),
    );
  for (let attempt = 0; attempt < 200; attempt++) {
    const listed = await pods.listAll(undefined, { fieldSelector: `metadata.namespace=${ns}`, labelSelector });
    fresh = entries(listed.items.map((o) => [keyOf(o), o.metadata.resourceVersion!]));
    if (JSON.stringify(cache()) === JSON.stringify(fresh) && JSON.stringify(entries(view)) === JSON.stringify(fresh))
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(cache()).toEqual(fresh);
  expect(entries(view)).toEqual(fresh);
  return fresh;
}

/** Waits (bounded) until `cond` holds. */
async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !cond(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('informers against the embedded control plane', () => {
  it('syncs 1,200 objects through 500-item pages', async () => {
    const ns = await namespace('paged', 1200);
    const rec = recording(pods);
    const informer = new SharedInformer<KubeObject>(rec.lw, { name: 'pods[namespace=paged]', namespace: ns });
    cleanups.push(() => informer.stop());
    const { view, log } = handlerView(informer);
    informer.start();
    await informer.waitForSync(10_000);
    expect(rec.lists.map((l) => [l.limit, Boolean(l.continue)])).toEqual([
      [500, false],
      [500, true],
      [500, true],
    ]);
    // Pipelined: each page's successor is on its way before the page's items are parsed.
    expect(rec.pages).toEqual(['fetch 0', 'fetch 1', 'parse 0', 'fetch 2', 'parse 1', 'parse 2']);
    expect(informer.getStore().size).toBe(1200);
    const fresh = await expectConverged(informer, view, ns);
    expect(fresh).toHaveLength(1200);
    expect(log.filter((l) => l.startsWith('add'))).toHaveLength(1200);
    expect(rec.watches[0]).toMatchObject({
      resourceVersion: informer.lastSyncResourceVersion(),
      allowWatchBookmarks: true,
    });
  });

  it('follows live adds, updates and deletes, in order per object', async () => {
    const ns = await namespace('live');
    const { factory, errors } = newFactory();
    const informer = factory.informerFor(podRt, { namespace: ns });
    const { view, log } = handlerView(informer);
    factory.start();
    await factory.waitForSync(10_000);
    for (const name of ['a', 'b', 'c']) await pods.create(pod(ns, name));
    await pods.patch(ns, 'b', { metadata: { labels: { touched: 'yes' } } }, 'merge');
    await pods.delete(ns, 'c');
    await expectConverged(informer, view, ns);
    expect(log.filter((l) => l.endsWith(`${ns}/b`))).toEqual([`add ${ns}/b`, `update ${ns}/b`]);
    // A pod no node runs is deleted at once, its deletion marks written first as kube-apiserver does: an update.
    expect(log.filter((l) => l.endsWith(`${ns}/c`))).toEqual([`add ${ns}/c`, `update ${ns}/c`, `delete ${ns}/c`]);
    expect(informer.lister().get(ns, 'b')?.metadata.labels).toEqual({ touched: 'yes' });
    expect(errors).toEqual([]);
  });

  it('a label-selected informer drops objects that stop matching', async () => {
    const ns = await namespace('selected');
    const { factory } = newFactory();
    const informer = factory.informerFor(podRt, { namespace: ns, labelSelector: 'app=web' });
    const { view, log } = handlerView(informer);
    factory.start();
    await factory.waitForSync(10_000);
    await pods.create(pod(ns, 'web-1', { app: 'web' }));
    await pods.create(pod(ns, 'db-1', { app: 'db' }));
    await pods.patch(ns, 'web-1', { metadata: { labels: { app: 'moved' } } }, 'merge');
    await pods.create(pod(ns, 'web-2', { app: 'web' }));
    await expectConverged(informer, view, ns, 'app=web');
    expect(log).toEqual([`add ${ns}/web-1`, `delete ${ns}/web-1`, `add ${ns}/web-2`]);
  });

  it('resumes a dropped watch from its resourceVersion without loss and without relisting', async () => {
    const ns = await namespace('dropped', 20);
    const { factory, errors } = newFactory();
    const informer = factory.informerFor(podRt, { namespace: ns });
    const { view } = handlerView(informer);
    factory.start();
    await factory.waitForSync(10_000);
    // One event on the stream first, so its end is a normal close rather than a "very short watch".
    await pods.create(pod(ns, 'first'));
    await until(() => view.has(`${ns}/first`), 'the first event');
    expect(cluster.cp.faults.dropWatches(podRt)).toBeGreaterThan(0);
    await pods.create(pod(ns, 'during-1'));
    await pods.delete(ns, 'seed-0003');
    await pods.patch(ns, 'seed-0004', { metadata: { labels: { x: '1' } } }, 'merge');
    await expectConverged(informer, view, ns);
    expect(errors).toEqual([]);
    // Dropping again and again still converges (an empty stream dropped at once may cost a relist).
    for (let i = 0; i < 3; i++) {
      cluster.cp.faults.dropWatches(podRt);
      await pods.create(pod(ns, `again-${i}`));
    }
    await expectConverged(informer, view, ns);
  });

  it('relists after compaction (410) and delivers objects deleted meanwhile as tombstones', async () => {
    const ns = await namespace('compacted', 10);
    const { factory, errors } = newFactory();
    const informer = factory.informerFor(podRt, { namespace: ns });
    const { view, log } = handlerView(informer);
    factory.start();
    await factory.waitForSync(10_000);
    await pods.create(pod(ns, 'seen'));
    await until(() => view.has(`${ns}/seen`), 'the live event');
    log.length = 0;
    // Behind the informer's back: its requests are held (the latency fault) until the history is compacted.
    const storage = cluster.cp.storage;
    cluster.cp.faults.latencyMs = 2000;
    cluster.cp.faults.dropWatches(podRt);
    const gone = ['seed-0001', 'seed-0002', 'seed-0003'].map((n) => `${ns}/${n}`);
    for (const key of gone) await storage.backend.remove(podRt, key);
    const changed = storage.get(podRt, `${ns}/seed-0005`)!;
    const labels = { changed: 'yes' };
    await storage.backend.update(podRt, { ...changed, metadata: { ...changed.metadata, labels } });
    await cluster.cp.seed(pod(ns, 'created-meanwhile'));
    await cluster.cp.faults.compact(podRt);
    cluster.cp.faults.latencyMs = 0;

    await expectConverged(informer, view, ns);
    expect(errors.some((e) => e instanceof StatusError && e.code === 410)).toBe(true);
    expect(log.filter((l) => l.startsWith('tombstone')).sort()).toEqual(gone.map((k) => `tombstone ${k}`));
    expect(log.filter((l) => !l.startsWith('tombstone')).sort()).toEqual([
      `add ${ns}/created-meanwhile`,
      `update ${ns}/seed-0005`,
    ]);
  });

  it('converges through 500 and 429 storms', async () => {
    const ns = await namespace('storm', 10);
    const { factory, errors } = newFactory();
    const informer = factory.informerFor(podRt, { namespace: ns });
    const { view } = handlerView(informer);
    factory.start();
    await factory.waitForSync(10_000);
    const reads = (method: string, path: string) => method === 'GET' && path === `/api/v1/namespaces/${ns}/pods`;

    // 500s: the re-watch fails, so the reflector relists, and those lists fail too for a while.
    cluster.cp.faults.failRequests({ code: 500, count: 6, match: reads });
    cluster.cp.faults.dropWatches(podRt);
    await pods.create(pod(ns, 'in-500-storm'));
    await pods.delete(ns, 'seed-0000');
    await expectConverged(informer, view, ns);
    expect(errors.some((e) => e instanceof StatusError && e.code === 500)).toBe(true);

    // 429s: watch starts are refused; the reflector backs off and watches again.
    await pods.create(pod(ns, 'before-429'));
    await until(() => view.has(`${ns}/before-429`), 'the live event');
    cluster.cp.faults.failRequests({ code: 429, count: 6, retryAfterSeconds: 0, match: reads });
    cluster.cp.faults.dropWatches(podRt);
    await pods.create(pod(ns, 'in-429-storm'));
    await pods.delete(ns, 'seed-0001');
    await expectConverged(informer, view, ns);
    expect(errors.some((e) => e instanceof StatusError && e.code === 429)).toBe(true);
  });

  it('converges after a server restart, with changes made while it was down', async () => {
    const ns = await namespace('restart', 10);
    const { factory } = newFactory();
    const informer = factory.informerFor(podRt, { namespace: ns });
    const { view } = handlerView(informer);
    factory.start();
    await factory.waitForSync(10_000);
    const restarted = cluster.cp.faults.restart(1_500);
    // While the server is down: writes land in storage as if another API server took them.
    const storage = cluster.cp.storage;
    await storage.backend.remove(podRt, `${ns}/seed-0002`);
    await cluster.cp.seed(pod(ns, 'created-while-down'));
    await restarted;
    await pods.create(pod(ns, 'created-after-restart'));
    await expectConverged(informer, view, ns);
    expect(view.has(`${ns}/created-while-down`)).toBe(true);
    expect(view.has(`${ns}/seed-0002`)).toBe(false);
  });

  it('streams the initial state with watch-list, then follows the same stream', async () => {
    const ns = await namespace('watchlist', 30);
    const rec = recording(pods);
    const informer = new SharedInformer<KubeObject>(rec.lw, {
      name: 'pods[namespace=watchlist]',
      namespace: ns,
      watchList: true,
      initialEventsEndAnnotation: cluster.cp.registry.naming.annotations.initialEventsEnd,
    });
    cleanups.push(() => informer.stop());
    const { view } = handlerView(informer);
    informer.start();
    await informer.waitForSync(10_000);
    expect(informer.getStore().size).toBe(30);
    await pods.create(pod(ns, 'live'));
    await pods.delete(ns, 'seed-0000');
    await expectConverged(informer, view, ns);
    expect(rec.lists).toEqual([]);
    expect(rec.watches).toHaveLength(1);
    expect(rec.watches[0]).toMatchObject({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' });
  });

  it('the factory syncs with watch-list by default: one WATCH request, no LIST', async () => {
    const ns = await namespace('watchlist-default', 20);
    const requests: string[] = [];
    const client = cluster.client.derive({ observe: (o) => requests.push(`${o.method} ${o.code}`) });
    const factory = new SharedInformerFactory(client);
    cleanups.push(() => factory.stop());
    const informer = factory.informerFor(podRt, { namespace: ns });
    factory.start();
    await factory.waitForSync(10_000);
    expect(informer.getStore().size).toBe(20);
    expect(requests).toEqual(['WATCH 200']);
  });

  it('falls back to LIST and WATCH, and syncs, where the server refuses watch-list', async () => {
    const refusing = await startTestCluster({ storage: 'memory', featureGates: { WatchList: false } });
    for (let i = 0; i < 12; i++) refusing.cp.seed(pod('default', `p-${i}`));
    const requests: string[] = [];
    const errors: unknown[] = [];
    const client = refusing.client.derive({ observe: (o) => requests.push(`${o.method} ${o.code}`) });
    const factory = new SharedInformerFactory(client, realClock, { onError: (_name, err) => errors.push(err) });
    cleanups.push(
      () => factory.stop(),
      () => refusing.stop(),
    );
    const informer = factory.informerFor(podRt, { namespace: 'default' });
    const { view } = handlerView(informer);
    factory.start();
    await factory.waitForSync(10_000);
    expect(informer.getStore().size).toBe(12);
    await until(() => requests.length >= 3, 'the watch after the list');
    expect(requests).toEqual(['WATCH 422', 'GET 200', 'WATCH 200']);
    expect(String(errors[0])).toMatch(/watch-list failed, falling back to LIST: .*WatchList feature gate/);
    await refusing.client.kind('Pod').create(pod('default', 'live'));
    await until(() => view.has('default/live'), 'the live add');
  });

  it('the factory shares informers per arguments and names the one that did not sync', async () => {
    const ns = await namespace('factory');
    const { factory } = newFactory();
    const a = factory.informerFor(podRt, { namespace: ns });
    expect(factory.informerFor(podRt, { namespace: ns, resyncMs: 5000 })).toBe(a);
    expect(factory.informerFor(podRt, { namespace: ns, labelSelector: 'x=y' })).not.toBe(a);
    expect(factory.informerFor(podRt)).not.toBe(a);
    const nodes = cluster.cp.registry.byKind('Node')!;
    expect(factory.informerFor(nodes, { namespace: 'ignored' })).toBe(factory.informerFor(nodes));
    const cms = cluster.cp.registry.byKind('ConfigMap')!;
    factory.informerFor(cms, { namespace: ns });
    cluster.cp.faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (m, p) => m === 'GET' && p === `/api/v1/namespaces/${ns}/configmaps`,
    });
    factory.start();
    await expect(factory.waitForSync(1500)).rejects.toThrow(
      `informer configmaps[namespace=${ns}] did not sync within 1500 ms`,
    );
    expect(a.hasSynced()).toBe(true);
  });
});
