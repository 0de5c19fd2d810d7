/**
 * The REST client over HTTP/2, against a server that offers it (as kube-apiserver does): one connection for every
 * request and watch, another once one holds as many streams as the server allows (10 at most) and closed again once
 * idle, the health settings from the environment, every warning of an answer, a request's deadline, a refused
 * watch, a server that ends its session, a refused stream sent again, a request given up on during the handshake, a
 * connection made ahead, the one connection through the tunnel of a proxy; and HTTP/1.1 to the same server when
 * HTTP/2 is turned off (client-go's DISABLE_HTTP2).
 */

import { createServer as createHttpServer } from 'node:http';
import {
  constants,
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import { type AddressInfo, connect as connectTcp, createServer as createTcpServer } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject, WatchEvent } from '../src/api/meta.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import { type ClientOptions, KubeClient } from '../src/client/client.ts';
import { http2HealthFrom } from '../src/client/connections.ts';
import { StatusError } from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { servingCertificate } from './support/serving-certificate.ts';

const pod = (name: string) => ({ kind: 'Pod', apiVersion: 'v1', metadata: { name, namespace: 'default' } });

describe('KubeClient over HTTP/2', () => {
  let server: Http2SecureServer;
  let ca = '';
  let servingKey = '';
  let handshakes = 0;
  const sessions: ServerHttp2Session[] = [];
  /** Each request the server saw: its HTTP version and URL. */
  let seen: string[] = [];
  /** How many more requests for `/refused` the server refuses (RST_STREAM REFUSED_STREAM). */
  let refuse = 0;

  beforeAll(async () => {
    const { cert, key } = servingCertificate();
    ca = cert;
    servingKey = key;
    server = createSecureServer({ cert, key, allowHTTP1: true }, (req, res) => {
      seen.push(`${req.httpVersion} ${req.url}`);
      const url = new URL(req.url, 'https://x');
      if (url.pathname === '/slow') setTimeout(() => res.end('{}'), 300);
      else if (url.pathname === '/refused' && refuse > 0) {
        refuse--;
        req.stream.close(constants.NGHTTP2_REFUSED_STREAM);
      } else if (url.pathname === '/warned') {
        res.setHeader('warning', ['299 - "first, with a comma"', '299 - "second \\"quoted\\""']);
        res.end('{}');
      } else if (url.searchParams.get('watch') === 'true') watch(req, res);
      else res.end(JSON.stringify({ path: url.pathname }));
    });
    server.on('secureConnection', () => handshakes++);
    server.on('session', (s) => sessions.push(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  /** A watch of pods: three events, then the stream stays open; `/refused` pods answer 403. */
  function watch(req: Http2ServerRequest, res: Http2ServerResponse) {
    if (req.url.startsWith('/refused')) {
      res.statusCode = 403;
      res.end(
        JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Forbidden', message: 'not you', code: 403 }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    for (const name of ['a', 'b', 'c']) res.write(`${JSON.stringify({ type: 'ADDED', object: pod(name) })}\n`);
  }

  beforeEach(() => {
    seen = [];
  });

  afterAll(async () => {
    for (const s of sessions) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function client(options: Partial<ClientOptions> = {}, port = serverPort(), proxyUrl?: string): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca).toString('base64'), proxyUrl },
      ],
      users: [{ name: 'u', token: 'secret' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    return new KubeClient(kc, new ResourceRegistry('kubernetes'), { qps: 0, http2: true, ...options });
  }

  const serverPort = () => (server.address() as AddressInfo).port;

  /** Watches `path` until three events have come, then aborts: the events' object names. */
  async function threeEvents(c: KubeClient, path: string): Promise<string[]> {
    const stop = new AbortController();
    const names: string[] = [];
    await c.watch(
      path,
      {},
      (e: WatchEvent<KubeObject>) => {
        names.push(e.object.metadata.name!);
        if (names.length === 3) stop.abort();
      },
      stop.signal,
    );
    return names;
  }

  it('sends requests in flight together and a watch over one connection', async () => {
    const c = client();
    const before = handshakes;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => c.request<{ path: string }>('GET', `/api/v1/namespaces/n${i}`)),
    );
    expect(answers.map((a) => a.body.path)).toEqual(Array.from({ length: 20 }, (_, i) => `/api/v1/namespaces/n${i}`));
    expect(await threeEvents(c, '/api/v1/pods')).toEqual(['a', 'b', 'c']);
    expect((await c.request('POST', '/api/v1/namespaces', { body: { kind: 'Namespace' } })).status).toBe(200);
    expect(handshakes).toBe(before + 1);
    expect(new Set(seen.map((line) => line.split(' ')[0]))).toEqual(new Set(['2.0']));
  });

  /**
   * A server that allows `maxStreams` streams per connection and holds every `/held` request until `together` are
   * open at once (those after answered at once); `body` gets a client of it.
   */
  async function heldServer(
    maxStreams: number,
    together: number,
    body: (c: KubeClient, seen: { most: number; connections: number }, sessions: ServerHttp2Session[]) => Promise<void>,
    options: Partial<ClientOptions> = {},
  ): Promise<void> {
    const held: (() => void)[] = [];
    let open = 0;
    const seen = { most: 0, connections: 0 };
    const limited = createSecureServer({ cert: ca, key: servingKey, settings: { maxConcurrentStreams: maxStreams } });
    limited.on('request', (req: Http2ServerRequest, res: Http2ServerResponse) => {
      if (!req.url.startsWith('/held') || seen.most >= together) return res.end('{}');
      seen.most = Math.max(seen.most, ++open);
      res.once('close', () => open--);
      held.push(() => res.end('{}'));
      if (held.length === together) for (const answer of held.splice(0)) answer();
    });
    limited.on('secureConnection', () => seen.connections++);
    const limitedSessions: ServerHttp2Session[] = [];
    limited.on('session', (s) => limitedSessions.push(s));
    await new Promise<void>((resolve) => limited.listen(0, '127.0.0.1', resolve));
    try {
      const c = client(options, (limited.address() as AddressInfo).port);
      await c.request('GET', '/first'); // the server's SETTINGS are known from then on
      await body(c, seen, limitedSessions);
    } finally {
      for (const s of limitedSessions) s.destroy();
      await new Promise<void>((resolve) => limited.close(() => resolve()));
    }
  }

  const heldRequests = (c: KubeClient, n: number) =>
    Promise.all(Array.from({ length: n }, (_, i) => c.request('GET', `/held/${i}`).then((a) => a.status)));

  it("opens another connection when one holds as many streams as the server allows, as Go's transport does", async () => {
    await heldServer(4, 10, async (c, seen) => {
      expect(await heldRequests(c, 10)).toEqual(Array(10).fill(200));
      expect(seen).toEqual({ most: 10, connections: 3 });
    });
  });

  it('opens 10 connections at most: past them, a request waits for a stream to free', async () => {
    await heldServer(1, 10, async (c, seen) => {
      expect(await heldRequests(c, 14)).toEqual(Array(14).fill(200));
      expect(seen).toEqual({ most: 10, connections: 10 });
    });
  });

  it('closes an extra connection silent for the read-idle time with nothing in flight, and keeps the oldest', async () => {
    const health = { readIdleMs: 300, pingTimeoutMs: 15_000 };
    await heldServer(
      4,
      10,
      async (c, seen, sessions) => {
        await heldRequests(c, 10);
        expect(seen.connections).toBe(3);
        await vi.waitFor(() => expect(sessions.filter((s) => s.destroyed)).toHaveLength(2), { timeout: 5_000 });
        expect((await c.request('GET', '/after')).status).toBe(200);
        expect(seen.connections).toBe(3);
        expect(sessions.filter((s) => !s.destroyed)).toHaveLength(1);
      },
      { http2Health: health },
    );
  });

  it("reads HTTP/2's health settings from the environment as client-go does", () => {
    expect(http2HealthFrom({})).toEqual({ readIdleMs: 30_000, pingTimeoutMs: 15_000 });
    const env = { HTTP2_READ_IDLE_TIMEOUT_SECONDS: '0', HTTP2_PING_TIMEOUT_SECONDS: '5' };
    expect(http2HealthFrom(env)).toEqual({ readIdleMs: 0, pingTimeoutMs: 5_000 });
    const invalid = { HTTP2_READ_IDLE_TIMEOUT_SECONDS: '1.5', HTTP2_PING_TIMEOUT_SECONDS: '0' };
    expect(http2HealthFrom(invalid)).toEqual({ readIdleMs: 30_000, pingTimeoutMs: 15_000 });
  });

  it('speaks HTTP/2 through the tunnel of the proxy the configuration names, one tunnel for everything', async () => {
    const tunnels: string[] = [];
    const sockets: Duplex[] = [];
    const proxy = createHttpServer();
    proxy.on('connect', (req, socket) => {
      tunnels.push(req.url!);
      sockets.push(socket);
      const [host, port] = req.url!.split(':');
      const upstream = connectTcp(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(socket).pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const c = client({}, serverPort(), `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
      await Promise.all([c.request('GET', '/api/v1/namespaces/a'), c.request('GET', '/api/v1/namespaces/b')]);
      expect(await threeEvents(c, '/api/v1/pods')).toEqual(['a', 'b', 'c']);
      expect(tunnels).toEqual([`127.0.0.1:${serverPort()}`]);
      expect(new Set(seen.map((line) => line.split(' ')[0]))).toEqual(new Set(['2.0']));
    } finally {
      for (const socket of sockets) socket.destroy(); // a tunnel is no longer the proxy's to close
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('speaks HTTP/1.1 to the same server when HTTP/2 is off', async () => {
    const c = client({ http2: false });
    await c.request('GET', '/api/v1/namespaces/a');
    expect(await threeEvents(c, '/api/v1/pods')).toEqual(['a', 'b', 'c']);
    expect(seen.map((line) => line.split(' ')[0])).toEqual(['1.1', '1.1']);
  });

  it('reads every warning of an answer, over either protocol', async () => {
    for (const http2 of [true, false]) {
      const res = await client({ http2 }).request('GET', '/warned');
      expect(res.warnings).toEqual(['first, with a comma', 'second "quoted"']);
    }
  });

  it('answers 504 when no answer comes within the timeout, and keeps its connection', async () => {
    const c = client({ timeoutMs: 50 });
    await c.request('GET', '/version');
    const warm = handshakes;
    const err = await c.request('GET', '/slow').catch((e: StatusError) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(504);
    expect((err as StatusError).message).toBe('request GET /slow timed out after 50 ms');
    expect((await c.request('GET', '/version')).status).toBe(200);
    expect(handshakes).toBe(warm);
  });

  it("rejects a refused watch with the server's status", async () => {
    const err = await client()
      .watch('/refused/pods', {}, () => {}, new AbortController().signal)
      .catch((e: StatusError) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(403);
    expect((err as StatusError).message).toBe('not you');
  });

  it('connects again after the server ends its session', async () => {
    const c = client();
    await c.request('GET', '/version');
    const warm = handshakes;
    const last = sessions.at(-1)!;
    await new Promise<void>((resolve) => last.close(resolve));
    expect((await c.request('GET', '/version')).status).toBe(200);
    expect(handshakes).toBe(warm + 1);
  });

  it('does not send a request given up on while its connection was being made', async () => {
    // The server behind a relay that waits 300 ms before it lets the handshake through.
    const relay = createTcpServer((socket) => {
      setTimeout(() => socket.pipe(connectTcp(serverPort(), '127.0.0.1')).pipe(socket), 300);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const c = client({}, (relay.address() as AddressInfo).port);
      const err = await c
        .request('POST', '/given-up', { body: { kind: 'Thing' }, signal: AbortSignal.timeout(50) })
        .catch((e: Error) => e);
      expect((err as Error).name).toBe('TimeoutError');
      expect((await c.request('GET', '/after')).status).toBe(200);
      expect(seen).toEqual(['2.0 /after']);
    } finally {
      relay.close();
    }
  });

  it('connects ahead of the first request when asked, which then needs no handshake', async () => {
    const c = client();
    const before = handshakes;
    await c.preconnect();
    await vi.waitFor(() => expect(handshakes).toBe(before + 1));
    await c.request('GET', '/version');
    expect(handshakes).toBe(before + 1);
  });

  it('sends a request the server refused (one it had not begun) once more, and fails on a second refusal', async () => {
    const c = client();
    await c.request('GET', '/version');
    refuse = 1;
    seen = [];
    const res = await c.request('POST', '/refused', { body: { kind: 'Thing' } });
    expect(res.status).toBe(200);
    expect(seen).toEqual(['2.0 /refused', '2.0 /refused']);
    refuse = 2;
    const err = await c.request('POST', '/refused', { body: { kind: 'Thing' } }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/REFUSED_STREAM|code 7/);
  });
});
