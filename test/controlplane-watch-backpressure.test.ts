/**
 * Watch backpressure: each watcher's queue is bounded in events and bytes, and a watcher that stays over the bound
 * is ended as the reference's watch cache ends a slow consumer, so the server's memory does not follow its clients.
 *
 * The end-to-end case runs the control plane as its own process (`bin/orch-control-plane.js`), so that the memory
 * measured (its /proc VmRSS and VmHWM) is the server's alone, not the test's clients'.
 */
import { readFile } from 'node:fs/promises';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONTROL_PLANE_OPTIONS } from '../src/controlplane/control-plane.ts';
import { queueVerdict } from '../src/controlplane/watch.ts';
import { type Plane, spawnPlane, stalledWatch, stopPlane } from './support/child-plane.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { waitFor } from './support/daemons.ts';
import { RawClient } from './support/raw-https.ts';

describe('the buffer policy of one watcher', () => {
  const limits = { maxQueuedEvents: 100, maxQueuedBytes: 1000, slowWatcherGraceMs: 500 };
  it.each([
    // events, bytes, over for (ms), verdict
    [0, 0, undefined, 'ok'],
    [100, 1000, undefined, 'ok'],
    [100, 1000, 10_000, 'ok'],
    [101, 0, undefined, 'over'],
    [0, 1001, undefined, 'over'],
    [150, 1500, 499, 'over'],
    [101, 0, 500, 'end'],
    [0, 1001, 900, 'end'],
    [0, 2001, 0, 'end'],
    [200, 2000, 0, 'over'],
    [100_000, 2000, 0, 'over'],
    [100_000, 2000, 500, 'end'],
  ] as const)('%i events, %i bytes, over for %s ms: %s', (events, bytes, overFor, verdict) => {
    expect(queueVerdict({ events, bytes }, limits, overFor)).toBe(verdict);
  });

  it('defaults to the reference watcher channel of 100 events, 16 MiB and a 5 s grace', () => {
    expect(DEFAULT_CONTROL_PLANE_OPTIONS.watch).toMatchObject({
      maxQueuedEvents: 100,
      maxQueuedBytes: 16 * 1024 * 1024,
      slowWatcherGraceMs: 5_000,
    });
  });
});

const STALLED = 20;
const UPDATES = 200;
const VALUE_BYTES = 200 * 1024;
/**
 * What the server's peak RSS may grow by. The same updates with no stalled watcher grow it by about 90 MB (the watch
 * history of 200 versions of a 200 KB object, with their JSON); each stalled watcher may add its connection queue
 * (~1 MiB and one event); the rest is slack for garbage not yet collected. Before the bounds: about 800 MB.
 */
const RSS_GROWTH_BOUND_MB = 200;
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const FORCED_CLOSE = 'Forcing configmaps watcher close due to unresponsiveness';

/** Resident and peak resident memory of a process, in MB, from /proc. */
async function memoryMb(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Reads a stalled watch's stream from now on; resolves with all it got once the chunked stream's end arrives. */
function readToStreamEnd(socket: TLSSocket, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let tail = '';
    const timer = setTimeout(() => reject(new Error(`no end of stream within ${timeoutMs} ms`)), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      tail = (tail + c.toString('latin1')).slice(-16);
      if (tail.endsWith('\r\n0\r\n\r\n')) done();
    });
    socket.once('close', done);
    socket.resume();
  });
}

/** A watch that reads as fast as it is sent to, keeping of each event only its type and the object's `data.round`. */
function readingWatch(tls: RequestOptions, port: number, path: string) {
  const events: { type: string; round?: string }[] = [];
  /** The pieces of body the client was handed: one per HTTP chunk, as the server wrote them. */
  const pieces = { count: 0 };
  let rest = '';
  const req = httpsRequest({ ...tls, host: '127.0.0.1', port, path, agent: false }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (text: string) => {
      pieces.count++;
      const lines = (rest + text).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const event = JSON.parse(line);
        events.push({ type: event.type, round: event.object.data?.round });
      }
    });
  });
  req.on('error', () => {});
  req.end();
  return { events, pieces, close: () => req.destroy() };
}

function configMap(round: number) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'big', namespace: 'default' },
    data: { round: String(round), value: String(round % 10).repeat(VALUE_BYTES) },
  };
}

describe('watchers that stop reading, through the real HTTPS server', () => {
  let plane: Plane;
  let client: RawClient;
  let tls: RequestOptions;

  beforeAll(async () => {
    plane = await spawnPlane();
    client = await RawClient.fromKubeconfig(plane.kubeconfig);
    tls = plane.tls;
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await stopPlane(plane);
  });

  it('ends 20 stalled watchers of 200 updates of a 200 KB ConfigMap, memory bounded, and a reader gets every update', async () => {
    const json = { 'Content-Type': 'application/json' };
    const created = await client.send({
      method: 'POST',
      path: CONFIGMAPS,
      headers: json,
      body: JSON.stringify(configMap(0)),
    });
    expect(created.code).toBe(201);
    const rv = created.json.metadata.resourceVersion;
    const before = await memoryMb(plane.child.pid!);

    const watchPath = `${CONFIGMAPS}?watch=true&resourceVersion=${rv}`;
    const stalled = await Promise.all(Array.from({ length: STALLED }, () => stalledWatch(tls, plane.port, watchPath)));
    const reader = readingWatch(tls, plane.port, watchPath);
    try {
      for (let round = 1; round <= UPDATES; round++) {
        const put = await client.send({
          method: 'PUT',
          path: `${CONFIGMAPS}/big`,
          headers: json,
          body: JSON.stringify(configMap(round)),
        });
        expect(put.code).toBe(200);
      }
      const modified = () => reader.events.filter((e) => e.type === 'MODIFIED').map((e) => Number(e.round));
      await waitFor('the reader to see every update', () => (modified().length >= UPDATES ? true : undefined), 15_000);
      expect(modified()).toEqual(Array.from({ length: UPDATES }, (_, i) => i + 1));

      // Every stalled watcher is ended as a slow consumer, within the grace.
      const grace = DEFAULT_CONTROL_PLANE_OPTIONS.watch.slowWatcherGraceMs;
      const forced = () => plane.logs.filter((l) => l.msg?.startsWith(FORCED_CLOSE));
      await waitFor(
        'the stalled watchers to be ended',
        () => (forced().length >= STALLED ? true : undefined),
        grace + 5_000,
      );
      expect(forced()).toHaveLength(STALLED);
      const after = await memoryMb(plane.child.pid!);
      const growth = after.hwm - before.rss;
      console.log(
        `server RSS before ${before.rss.toFixed(0)} MB, peak during ${after.hwm.toFixed(0)} MB (growth ${growth.toFixed(0)} MB), now ${after.rss.toFixed(0)} MB`,
      );
      expect(growth).toBeLessThan(RSS_GROWTH_BOUND_MB);

      // A stalled client that reads again finds the chunked stream ended cleanly, short of the last update.
      const streams = await Promise.all(stalled.map((s) => readToStreamEnd(s, grace)));
      for (const stream of streams) {
        expect(stream.startsWith('HTTP/1.1 200')).toBe(true);
        expect(stream.endsWith('\r\n0\r\n\r\n')).toBe(true);
        expect(stream.includes(`"round":"${UPDATES}"`)).toBe(false);
      }
    } finally {
      reader.close();
      for (const s of stalled) s.destroy();
    }
  }, 60_000);
});

describe('watch queues in an embedded control plane', () => {
  const limits = { maxQueuedEvents: 10, maxQueuedBytes: 16 * 1024 * 1024, slowWatcherGraceMs: 1_000 };
  let cluster: TestCluster;
  let tls: RequestOptions;
  let port: number;
  let client: RawClient;

  beforeAll(async () => {
    cluster = await startTestCluster({ watch: { ...DEFAULT_CONTROL_PLANE_OPTIONS.watch, ...limits } });
    tls = {};
    Object.assign(tls, (await cluster.kc.credentials()).tls);
    port = Number(new URL(cluster.kc.getCurrentCluster()!.server).port);
    client = await RawClient.fromKubeconfig(cluster.kubeconfig);
  });

  afterAll(async () => {
    client?.close();
    await cluster?.stop();
  });

  const configMaps = () => cluster.cp.registry.byKind('ConfigMap')!;
  const watchers = () => cluster.cp.storage.watcherCount(configMaps());

  async function namespaceWith(name: string, objects: number, payloadBytes: number): Promise<string> {
    await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (let i = 0; i < objects; i++) {
      const data = { v: 'x'.repeat(payloadBytes) };
      await cluster.cp.seed({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: name, name: `cm-${i}` },
        data,
      });
    }
    return name;
  }

  /** Watches namespace `ns`'s ConfigMaps from now, deletes all `n` of them, and reads until every deletion came. */
  async function watchDeletions(ns: string, n: number) {
    const rv = cluster.cp.storage.currentRv();
    const before = watchers();
    const reader = readingWatch(tls, port, `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${rv}`);
    try {
      await waitFor('the watch to start', () => (watchers() > before ? true : undefined), 5_000);
      const deleted = await client.send({ method: 'DELETE', path: `/api/v1/namespaces/${ns}/configmaps` });
      expect(deleted.code).toBe(200);
      const count = () => reader.events.filter((e) => e.type === 'DELETED').length;
      await waitFor('every deletion', () => (count() >= n ? true : undefined), 15_000);
      expect(count()).toBe(n);
      return reader;
    } finally {
      reader.close();
    }
  }

  it('a client that reads keeps up with a burst of many more events than the bound, and is not cut', async () => {
    const ns = await namespaceWith('burst', 300, 20 * 1024);
    const warned = vi.spyOn(cluster.cp.log, 'warn');
    try {
      await watchDeletions(ns, 300);
      expect(warned.mock.calls.filter(([, msg]) => String(msg).startsWith(FORCED_CLOSE))).toEqual([]);
    } finally {
      warned.mockRestore();
    }
  });

  it('hands a watcher the events of one request together, as one chunk rather than one per event', async () => {
    const ns = await namespaceWith('together', 50, 16);
    const reader = await watchDeletions(ns, 50);
    // About 20 KB of events: one chunk, or a few should the connection be short of room.
    expect(reader.pieces.count).toBeLessThanOrEqual(5);
  });

  it('ends a watch-list client that stops reading its initial events once live events pile up past the grace', async () => {
    // 12 MB of initial events: the replay stops once about 1 MiB waits for the client.
    const ns = await namespaceWith('stalled-list', 200, 64 * 1024);
    const before = watchers();
    const warned = vi.spyOn(cluster.cp.log, 'warn');
    const path = `/api/v1/namespaces/${ns}/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`;
    const stalled = await stalledWatch(tls, port, path);
    try {
      await waitFor('the watch to start', () => (watchers() > before ? true : undefined), 5_000);
      for (let i = 0; i < 2 * limits.maxQueuedEvents; i++) {
        const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `live-${i}` } });
        const created = await client.send({
          method: 'POST',
          path: `/api/v1/namespaces/${ns}/configmaps`,
          headers: { 'Content-Type': 'application/json' },
          body,
        });
        expect(created.code).toBe(201);
      }
      const grace = limits.slowWatcherGraceMs;
      await waitFor('the stalled watcher to be ended', () => (watchers() === before ? true : undefined), grace + 4_000);
      const forced = warned.mock.calls.filter(([, msg]) => String(msg).startsWith(FORCED_CLOSE));
      expect(forced).toHaveLength(1);
      expect(forced[0][1]).toContain(`key: "/configmaps/${ns}"`);
      // Reading again, it gets part of the initial events and a clean end of the chunked stream, no live event.
      const stream = await readToStreamEnd(stalled, grace);
      expect(stream.startsWith('HTTP/1.1 200')).toBe(true);
      expect(stream.endsWith('\r\n0\r\n\r\n')).toBe(true);
      expect(stream.includes('"name":"live-')).toBe(false);
    } finally {
      stalled.destroy();
      warned.mockRestore();
    }
  });
});
