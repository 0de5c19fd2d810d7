/**
 * Watch-list (`sendInitialEvents`) on the embedded control plane: the initial state streamed as the
 * client takes it, the initial-events-end bookmark, live changes held until after it and resumable
 * from it, and the parameter errors in the reference's words.
 */
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KubeObject, WatchEvent } from '../src/api/meta.ts';
import type { ResourceType } from '../src/api/registry.ts';
import { StatusError } from '../src/client/errors.ts';
import { DEFAULT_CONTROL_PLANE_OPTIONS } from '../src/controlplane/control-plane.ts';
import { parseRequest, type ResourceRequest } from '../src/controlplane/request-info.ts';
import { type WatchSink, WatchStream } from '../src/controlplane/watch.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const WATCH_LIST = 'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
/** Enough bytes of initial events that neither the socket nor the kernel can take them all at once. */
const BIG = { objects: 2_000, payloadBytes: 4_096 };

let cluster: TestCluster;
let refusing: TestCluster;
let cms: ResourceType;

beforeAll(async () => {
  [cluster, refusing] = await Promise.all([
    startTestCluster({ storage: 'memory' }),
    startTestCluster({ storage: 'memory', featureGates: { WatchList: false } }),
  ]);
  cms = cluster.cp.registry.byKind('ConfigMap')!;
});

afterAll(async () => {
  await Promise.all([cluster?.stop(), refusing?.stop()]);
});

function configMap(namespace: string, name: string, payloadBytes = 16): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name }, data: { v: 'x'.repeat(payloadBytes) } };
}

async function namespaceWith(name: string, objects: number, payloadBytes?: number): Promise<string> {
  await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (let i = 0; i < objects; i++) {
    cluster.cp.seed(configMap(name, `cm-${String(i).padStart(5, '0')}`, payloadBytes));
  }
  return name;
}

interface OpenWatch {
  status: number;
  events: WatchEvent[];
  /** Starts taking the stream (it is not read until then). */
  read(): void;
  close(): void;
}

/** A watch over real HTTPS whose response is not read until `read()`. */
async function openWatch(
  on: TestCluster,
  path: string,
  query: string,
  accept = 'application/json',
): Promise<OpenWatch> {
  const server = new URL(on.kc.getCurrentCluster()!.server);
  const options: RequestOptions = {
    hostname: server.hostname,
    port: server.port,
    path: `${path}?${query}`,
    headers: { Accept: accept },
  };
  Object.assign(options, (await on.kc.credentials()).tls);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpsRequest(options, resolve);
    req.on('error', reject);
    req.end();
  });
  const events: WatchEvent[] = [];
  let partial = '';
  return {
    status: res.statusCode ?? 0,
    events,
    read: () => {
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        const lines = (partial + text).split('\n');
        partial = lines.pop()!;
        for (const line of lines) if (line) events.push(JSON.parse(line));
      });
    },
    close: () => res.destroy(),
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const summary = (events: WatchEvent[]) => events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`.trim());

describe('watch-list over HTTPS', () => {
  it('streams the initial state, then the end bookmark, then live changes made meanwhile, resumable from the bookmark', async () => {
    const ns = await namespaceWith('big', BIG.objects, BIG.payloadBytes);
    const snapshotRv = cluster.cp.storage.currentRv();
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const watchers = cluster.cp.storage.watcherCount(cms);
    const w = await openWatch(cluster, path, WATCH_LIST);
    expect(w.status).toBe(200);
    try {
      await until(() => cluster.cp.storage.watcherCount(cms) > watchers, 'the watch to subscribe');
      // Changes while the client has taken nothing yet: they must follow the initial state, not interleave.
      const client = cluster.client.kind('ConfigMap');
      await client.create(configMap(ns, 'live'));
      await client.delete(ns, 'cm-00000');
      const first = (await client.get(ns, 'cm-00001')) as KubeObject;
      await client.replace({ ...first, data: { v: 'changed' } } as KubeObject);
      w.read();
      await until(() => w.events.some((e) => e.type === 'MODIFIED'), 'the live update');

      const initial = w.events.slice(0, BIG.objects);
      expect(initial.every((e) => e.type === 'ADDED')).toBe(true);
      expect(initial.map((e) => e.object.metadata.name)).toEqual(
        Array.from({ length: BIG.objects }, (_, i) => `cm-${String(i).padStart(5, '0')}`),
      );
      const end = w.events[BIG.objects];
      expect(end.type).toBe('BOOKMARK');
      expect(end.object.metadata.annotations).toEqual({ 'orch.io/initial-events-end': 'true' });
      expect(end.object.metadata.resourceVersion).toBe(String(snapshotRv));
      const live = w.events.slice(BIG.objects + 1).filter((e) => e.type !== 'BOOKMARK');
      expect(summary(live)).toEqual(['ADDED live', 'DELETED cm-00000', 'MODIFIED cm-00001']);
      for (const e of live) expect(Number(e.object.metadata.resourceVersion)).toBeGreaterThan(snapshotRv);

      // A client that lost the stream resumes from the bookmark: the same live changes, no initial state.
      const resumed = await openWatch(cluster, path, `watch=true&resourceVersion=${snapshotRv}`);
      try {
        resumed.read();
        await until(() => resumed.events.length >= 3, 'the resumed events');
        expect(summary(resumed.events)).toEqual(['ADDED live', 'DELETED cm-00000', 'MODIFIED cm-00001']);
      } finally {
        resumed.close();
      }
    } finally {
      w.close();
    }
  });

  it('sends the bookmark alone for an empty collection, and nothing initial with sendInitialEvents=false', async () => {
    const ns = await namespaceWith('empty', 0);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const w = await openWatch(cluster, path, WATCH_LIST);
    const rv = cluster.cp.storage.currentRv();
    const quiet = await openWatch(
      cluster,
      path,
      `watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=${rv}`,
    );
    try {
      w.read();
      quiet.read();
      await until(() => w.events.length >= 1, 'the end bookmark');
      expect(w.events[0]).toMatchObject({
        type: 'BOOKMARK',
        object: { metadata: { annotations: { 'orch.io/initial-events-end': 'true' } } },
      });
      await cluster.client.kind('ConfigMap').create(configMap(ns, 'after'));
      await until(() => quiet.events.length >= 1 && w.events.length >= 2, 'the live event on both');
      expect(summary(quiet.events)).toEqual(['ADDED after']);
      expect(summary(w.events.slice(1))).toEqual(['ADDED after']);
    } finally {
      w.close();
      quiet.close();
    }
  });

  it.each([
    {
      what: 'sendInitialEvents on a list',
      query: 'sendInitialEvents=true',
      code: 422,
      field: 'sendInitialEvents',
      message: 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
    },
    {
      what: 'resourceVersionMatch on a watch without sendInitialEvents',
      query: 'watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1',
      code: 422,
      field: 'resourceVersionMatch',
      message:
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    },
    {
      what: 'sendInitialEvents with resourceVersionMatch=Exact',
      query: 'watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1',
      code: 422,
      // Forbidden, then (as the reference adds for a value other than none) NotSupported: `Exact`.
      field: ['resourceVersionMatch', 'resourceVersionMatch'],
      message:
        'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    },
    {
      what: 'sendInitialEvents where the WatchList gate is off',
      on: 'refusing',
      query: WATCH_LIST,
      code: 422,
      field: 'sendInitialEvents',
      message:
        'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
    },
  ])('refuses $what with $code', async ({ query, code, field, message, on }) => {
    const target = on === 'refusing' ? refusing : cluster;
    const err = await target.client.request('GET', `/api/v1/namespaces/default/configmaps?${query}`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StatusError);
    const status = err as StatusError;
    expect(status.code).toBe(code);
    expect(status.message).toContain(message);
    if (field) expect(status.causes.map((c) => c.field)).toEqual([field].flat());
  });

  it('refuses a watch-list asked for as a Table with 406, and still serves a plain watch as one', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const table = `application/json;as=Table;v=v1;g=${cluster.cp.registry.naming.protocol.metaGroup}`;
    const listed = await openWatch(cluster, path, WATCH_LIST, table);
    const plain = await openWatch(cluster, path, 'watch=true', table);
    listed.close();
    plain.close();
    expect([listed.status, plain.status]).toEqual([406, 200]);
  });
});

describe('watch-list write pacing', () => {
  const settings = { ...DEFAULT_CONTROL_PLANE_OPTIONS.watch, bookmarkIntervalMs: 0, defaultTimeoutSeconds: 60 };

  function watchListRequest(ns: string) {
    const query = new URLSearchParams(WATCH_LIST);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    return { query, req: parseRequest(cluster.cp.registry, 'GET', path, query) as ResourceRequest };
  }

  /** A sink standing for a client that reads nothing until told to: what is written stays queued. */
  function slowSink() {
    const written: string[] = [];
    let queued = 0;
    let release: () => void = () => {};
    let waits = 0;
    const sink: WatchSink = {
      write: (lines) => {
        written.push(lines);
        queued += Buffer.byteLength(lines);
        return false;
      },
      close: () => {},
      backlog: () => queued,
      drained: () => {
        waits++;
        return new Promise<void>((r) => {
          release = r;
        });
      },
    };
    return {
      sink,
      written,
      bytes: () => Buffer.byteLength(written.join('')),
      waits: () => waits,
      /** The client takes everything queued. */
      take: async () => {
        queued = 0;
        release();
        await new Promise((r) => setImmediate(r));
      },
    };
  }

  it('stops writing initial events while about 1 MiB waits for the client, and sends live events after the bookmark', async () => {
    const objects = 400;
    const ns = await namespaceWith('paced', objects, 8_192);
    const { query, req } = watchListRequest(ns);
    const slow = slowSink();
    const stream = new WatchStream(cluster.cp.api, req, query, slow.sink, settings);
    stream.start();
    try {
      // About 3.2 MiB to send: it stops once 1 MiB is queued, and waits.
      expect(slow.waits()).toBe(1);
      expect(slow.bytes()).toBeGreaterThanOrEqual(1024 * 1024);
      expect(slow.bytes()).toBeLessThan(1024 * 1024 + 128 * 1024);
      await cluster.client.kind('ConfigMap').create(configMap(ns, 'live'));
      const before = slow.written.length;
      await new Promise((r) => setImmediate(r));
      expect(slow.written.length).toBe(before);
      for (let turns = 0; turns < 20 && !slow.written.join('').includes('initial-events-end'); turns++) {
        await slow.take();
      }
      expect(slow.waits()).toBeGreaterThanOrEqual(3);
      const lines = slow.written
        .join('')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as WatchEvent);
      expect(lines.slice(0, objects).every((e) => e.type === 'ADDED')).toBe(true);
      expect(summary(lines.slice(objects))).toEqual(['BOOKMARK', 'ADDED live']);
    } finally {
      stream.stop();
    }
  });

  it('ends the stream with an ERROR event when an object cannot be written midway', async () => {
    const ns = await namespaceWith('unwritable', 200, 1_024);
    const { query, req } = watchListRequest(ns);
    const lines: string[] = [];
    let closed = false;
    const sink: WatchSink = {
      write: (l) => lines.push(l) > 0,
      close: () => {
        closed = true;
      },
      backlog: () => 0,
      drained: async () => {},
    };
    const render = (obj: KubeObject) => {
      if (obj.metadata.name === 'cm-00150') throw new Error('cannot render cm-00150');
      return JSON.stringify(obj);
    };
    const stream = new WatchStream(cluster.cp.api, req, query, sink, settings, undefined, render);
    const logged = vi.spyOn(cluster.cp.log, 'error').mockImplementation(() => {});
    try {
      stream.start();
      await new Promise((r) => setImmediate(r));
      const events = lines
        .join('')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as WatchEvent);
      const last = events[events.length - 1];
      expect(last.type).toBe('ERROR');
      expect(last.object).toMatchObject({ code: 500, message: 'Internal error occurred: cannot render cm-00150' });
      expect(events.some((e) => e.type === 'BOOKMARK')).toBe(false);
      expect(closed).toBe(true);
      expect(logged).toHaveBeenCalledOnce();
    } finally {
      logged.mockRestore();
      stream.stop();
    }
  });
});
