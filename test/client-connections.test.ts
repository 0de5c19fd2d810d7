/**
 * The REST client's connections over TLS to a server of HTTP/1.1 only: the connection that offered it HTTP/2 is the
 * pool's first (one handshake, not two); the pool outlives the periodic refresh of the security settings
 * while the TLS material stays the same, and is replaced when it changes; many requests in flight on one
 * caller's signal; a DELETE with a body on a kept connection; a server URL with a path, a query, and a request's
 * deadline; requests and a watch through the proxy the configuration names (HTTP CONNECT with basic proxy
 * authorization, and SOCKS5 with username and password), and through HTTPS_PROXY but for what NO_PROXY names; an
 * exec plugin run again after the server refused its credential.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceRegistry } from '../src/api/registry.ts';
import { KubeClient } from '../src/client/client.ts';
import { StatusError } from '../src/client/errors.ts';
import { KubeConfig, type User } from '../src/client/kubeconfig.ts';
import { FakeClock } from '../src/util/clock.ts';
import { servingCertificate } from './support/serving-certificate.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** A name only the proxies of these tests resolve (to 127.0.0.1); the server's certificate carries it. */
const PROXIED_NAME = 'apiserver.proxied.test';

describe('KubeClient connections', () => {
  let server: Server;
  let ca = '';
  let handshakes = 0;
  /** The request lines the server saw: method and URL. */
  const seen: string[] = [];

  beforeAll(async () => {
    const { cert, key } = servingCertificate([PROXIED_NAME]);
    ca = cert;
    server = createServer({ cert, key }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.headers.authorization === 'Bearer refused') {
        res.statusCode = 401;
        res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}');
        return;
      }
      // `/slow` answers after 200 ms: long enough for a batch of requests to be in flight together.
      if (req.url === '/slow') setTimeout(() => res.end('{}'), 200);
      else if (req.url?.includes('watch=true')) res.end('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n');
      else if (req.url?.includes('/echo')) res.end(JSON.stringify({ url: req.url, headers: req.headers }));
      else res.end('{}');
    });
    server.on('secureConnection', () => handshakes++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /**
   * A kubeconfig for the server whose CA text is `caText` (the same CA, written differently if asked), by the
   * address or name `host`, with the token `secret` unless another `user` is given.
   */
  function kubeConfig(
    caText: string,
    {
      path = '',
      proxyUrl,
      host = '127.0.0.1',
      user,
    }: { path?: string; proxyUrl?: string; host?: string; user?: User } = {},
  ): KubeConfig {
    const kc = new KubeConfig();
    const { port } = server.address() as AddressInfo;
    const url = `https://${host}:${port}${path}`;
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, caData: Buffer.from(caText).toString('base64'), proxyUrl }],
      users: [{ name: 'u', ...(user ?? { token: 'secret' }) }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    return kc;
  }

  it('serves requests made one after another on one connection, kept across the refresh of the security settings; dials again when the CA changes', async () => {
    const clock = new FakeClock(0);
    const kc = kubeConfig(ca);
    const client = new KubeClient(kc, new ResourceRegistry('orch'), { qps: 0, clock });
    const before = handshakes;
    // Each request made as soon as the answer before it is read: one connection serves them all.
    for (let i = 0; i < 5; i++) await client.request('GET', '/version');
    expect(handshakes).toBe(before + 1);
    const warm = handshakes;
    clock.step(31_000); // past the refresh
    await client.request('GET', '/version');
    expect(handshakes).toBe(warm);

    // The same CA with a trailing blank line: other TLS material as far as the client can tell.
    const rotated = kubeConfig(`${ca}\n`);
    kc.clusters = rotated.clusters;
    clock.step(31_000);
    await client.request('GET', '/version');
    expect(handshakes).toBe(warm + 1);
  });

  it('keeps many requests in flight on one caller signal without a listener warning, and aborts them all with it', async () => {
    const client = new KubeClient(kubeConfig(ca), new ResourceRegistry('orch'), { qps: 0 });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const stop = new AbortController();
      // Twice the default listener limit, as 20 workers sharing a controller's stop signal make.
      const answered = Array.from({ length: 20 }, () =>
        client.request('GET', '/slow', { signal: stop.signal }).then(() => 'answered'),
      );
      expect(await Promise.all(answered)).toEqual(Array(20).fill('answered'));
      const cut = Array.from({ length: 20 }, () =>
        client.request('GET', '/slow', { signal: stop.signal }).then(
          () => 'answered',
          (err: Error) => err.name,
        ),
      );
      stop.abort();
      expect(await Promise.all(cut)).toEqual(Array(20).fill('AbortError'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('keeps its connection after a DELETE with a body (DeleteOptions)', async () => {
    const client = new KubeClient(kubeConfig(ca), new ResourceRegistry('orch'), { qps: 0 });
    // Two requests first, as above: a new pool may dial a second connection.
    await client.request('GET', '/version');
    await client.request('GET', '/version');
    const warm = handshakes;
    for (let i = 0; i < 5; i++) {
      await client.request('DELETE', '/gone', { body: { kind: 'DeleteOptions', preconditions: { uid: 'u' } } });
    }
    await client.request('GET', '/version');
    expect(handshakes).toBe(warm);
  });

  it('sends a request under the path of the server URL, with its query, and reads the answer', async () => {
    const client = new KubeClient(kubeConfig(ca, { path: '/k8s/clusters/c-1/' }), new ResourceRegistry('orch'), {
      qps: 0,
    });
    const res = await client.request<{ url: string; headers: Record<string, string> }>('PUT', '/echo/a%2Fb', {
      query: { fieldSelector: 'metadata.name=x y', limit: 5, skipped: undefined },
      body: { kind: 'Thing' },
      caller: 'tester',
    });
    expect(res.status).toBe(200);
    expect(res.body.url).toBe('/k8s/clusters/c-1/echo/a%2Fb?fieldSelector=metadata.name%3Dx+y&limit=5');
    expect(res.body.headers['content-type']).toBe('application/json');
    expect(res.body.headers['user-agent']).toBe('orch-controller-manager/tester');
    expect(res.body.headers.authorization).toBe('Bearer secret');
  });

  it('answers 504 naming the request when no answer comes within the timeout, and keeps serving after it', async () => {
    const client = new KubeClient(kubeConfig(ca), new ResourceRegistry('orch'), { qps: 0, timeoutMs: 50 });
    const err = await client.request('GET', '/slow').catch((e: StatusError) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(504);
    expect((err as StatusError).message).toBe('request GET /slow timed out after 50 ms');
    expect((await client.request('GET', '/version')).status).toBe(200);
  });

  /** A request and a watch through `proxyUrl`: what they answered, and the tunnels the proxy says it opened. */
  async function throughProxy(proxyUrl: string, tunnels: string[]): Promise<void> {
    const client = new KubeClient(kubeConfig(ca, { proxyUrl }), new ResourceRegistry('orch'), { qps: 0 });
    const res = await client.request<{ url: string }>('GET', '/echo/through');
    expect(res.body.url).toBe('/echo/through');
    const events: unknown[] = [];
    await client.watch('/api/v1/pods', {}, (e) => events.push(e), new AbortController().signal);
    expect(events).toEqual([{ type: 'ADDED', object: { metadata: { name: 'a' } } }]);
    const { port } = server.address() as AddressInfo;
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels)).toEqual(new Set([`127.0.0.1:${port}`]));
  }

  /** Relays bytes both ways between a proxy's client and the server it asked for. */
  function relay(socket: Socket, host: string, port: number, opened: () => void, head?: Buffer): Socket {
    const upstream = connect(port, host, () => {
      opened();
      if (head?.length) upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
    return upstream;
  }

  /**
   * An HTTP CONNECT proxy on 127.0.0.1 that relays each tunnel asked for (PROXIED_NAME to 127.0.0.1), with the
   * tunnels and Proxy-Authorization headers it saw; `close` ends its tunnels too.
   */
  async function connectProxy(): Promise<{
    port: number;
    tunnels: string[];
    authorizations: (string | undefined)[];
    close: () => Promise<void>;
  }> {
    const tunnels: string[] = [];
    const authorizations: (string | undefined)[] = [];
    const sockets: Socket[] = [];
    const proxy = createHttpServer();
    proxy.on('connect', (req, socket, head) => {
      tunnels.push(req.url!);
      authorizations.push(req.headers['proxy-authorization']);
      sockets.push(socket as Socket);
      const [host, port] = req.url!.split(':');
      const opened = () => socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      relay(socket as Socket, host === PROXIED_NAME ? '127.0.0.1' : host!, Number(port), opened, head);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const close = async () => {
      for (const socket of sockets) socket.destroy(); // a tunnel is no longer the server's to close
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    };
    return { port: (proxy.address() as AddressInfo).port, tunnels, authorizations, close };
  }

  it('sends requests and a watch through the HTTP proxy the configuration names, with its credentials', async () => {
    const proxy = await connectProxy();
    try {
      await throughProxy(`http://ann:p%40ss@127.0.0.1:${proxy.port}`, proxy.tunnels);
      expect(new Set(proxy.authorizations)).toEqual(new Set([`Basic ${Buffer.from('ann:p@ss').toString('base64')}`]));
    } finally {
      await proxy.close();
    }
  });

  it('goes through HTTPS_PROXY when the cluster names no proxy, except to a server NO_PROXY names', async () => {
    const proxy = await connectProxy();
    const saved = { HTTPS_PROXY: process.env.HTTPS_PROXY, NO_PROXY: process.env.NO_PROXY };
    const { port } = server.address() as AddressInfo;
    // PROXIED_NAME resolves only at the proxy: an answer proves the request went through it.
    const byName = () =>
      new KubeClient(kubeConfig(ca, { host: PROXIED_NAME }), new ResourceRegistry('orch'), { qps: 0 });
    try {
      process.env.HTTPS_PROXY = `127.0.0.1:${proxy.port}`; // no scheme: an http proxy, as Go reads it
      process.env.NO_PROXY = 'example.com, 10.0.0.0/8';
      expect((await byName().request('GET', '/version')).status).toBe(200);
      expect(proxy.tunnels).toEqual([`${PROXIED_NAME}:${port}`]);
      // A loopback server is never proxied.
      expect(
        (await new KubeClient(kubeConfig(ca), new ResourceRegistry('orch'), { qps: 0 }).request('GET', '/version'))
          .status,
      ).toBe(200);
      expect(proxy.tunnels).toHaveLength(1);

      process.env.NO_PROXY = `example.com,.proxied.test:${port}`;
      const direct = await byName()
        .request('GET', '/version')
        .catch((err: Error) => err);
      expect(String(direct)).toContain(`getaddrinfo ENOTFOUND ${PROXIED_NAME}`);
      expect(proxy.tunnels).toHaveLength(1);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await proxy.close();
    }
  });

  it('says why a proxy opened no tunnel, and refuses a proxy-url scheme it cannot dial', async () => {
    const proxy = createHttpServer();
    proxy.on('connect', (_req, socket) => socket.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n'));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const client = new KubeClient(kubeConfig(ca, { proxyUrl }), new ResourceRegistry('orch'), { qps: 0 });
      const { port } = server.address() as AddressInfo;
      await expect(client.request('GET', '/version')).rejects.toThrow(
        `proxy refused CONNECT 127.0.0.1:${port}: HTTP/1.1 407 Proxy Authentication Required`,
      );
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
    const ftp = new KubeClient(kubeConfig(ca, { proxyUrl: 'ftp://127.0.0.1:21' }), new ResourceRegistry('orch'), {
      qps: 0,
    });
    await expect(ftp.request('GET', '/version')).rejects.toThrow(
      'proxy-url ftp://127.0.0.1:21: unsupported scheme ftp (http, https, socks5)',
    );
  });

  it('sends requests and a watch through the SOCKS5 proxy the configuration names, with its credentials', async () => {
    const tunnels: string[] = [];
    const sockets: Socket[] = [];
    // RFC 1928 and 1929, one message a packet (the client waits for each answer before it sends on).
    const proxy = createTcpServer((socket) => {
      sockets.push(socket);
      socket.once('data', (greeting) => {
        expect([...greeting]).toEqual([5, 2, 0, 2]); // no authentication, or username/password
        socket.write(Buffer.from([5, 2]));
        socket.once('data', (auth) => {
          const user = auth.subarray(2, 2 + auth[1]!).toString();
          const password = auth.subarray(3 + auth[1]!).toString();
          const accepted = user === 'ann' && password === 'p@ss';
          socket.write(Buffer.from([1, accepted ? 0 : 1]));
          socket.once('data', (request) => {
            expect([...request.subarray(0, 4)]).toEqual([5, 1, 0, 1]); // CONNECT to an IPv4 address
            const host = [...request.subarray(4, 8)].join('.');
            const port = request.readUInt16BE(8);
            tunnels.push(`${host}:${port}`);
            relay(socket, host, port, () => socket.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0])));
          });
        });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as AddressInfo).port;
      await throughProxy(`socks5://ann:p%40ss@127.0.0.1:${port}`, tunnels);
      const refused = new KubeClient(
        kubeConfig(ca, { proxyUrl: `socks5://ann:wrong@127.0.0.1:${port}` }),
        new ResourceRegistry('orch'),
        {
          qps: 0,
        },
      );
      await expect(refused.request('GET', '/version')).rejects.toThrow('username/password authentication failed');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('runs the exec plugin again after the server refuses its credential (401), not before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exec-401-'));
    try {
      // Its first credential is one the server refuses (see the server above), every later one is accepted.
      const runs = join(dir, 'runs');
      const command = join(dir, 'plugin.mjs');
      writeFileSync(
        command,
        [
          '#!/usr/bin/env node',
          "import { appendFileSync, readFileSync } from 'node:fs';",
          `appendFileSync(${JSON.stringify(runs)}, 'run\\n');`,
          `const n = readFileSync(${JSON.stringify(runs)}, 'utf8').split('\\n').length - 1;`,
          "const token = n === 1 ? 'refused' : 'accepted-' + n;",
          "console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } }));",
        ].join('\n'),
      );
      chmodSync(command, 0o755);
      const exec = {
        apiVersion: 'client.authentication.k8s.io/v1',
        command,
        args: [],
        env: [],
        provideClusterInfo: false,
      };
      const user = { name: 'u', exec };
      const client = new KubeClient(kubeConfig(ca, { user }), new ResourceRegistry('orch'), { qps: 0 });
      const runCount = () => readFileSync(runs, 'utf8').split('\n').length - 1;

      const refused = await client.request('GET', '/version').catch((err: StatusError) => err);
      expect((refused as StatusError).code).toBe(401);
      expect(runCount()).toBe(1);
      for (let i = 0; i < 3; i++) {
        const res = await client.request<{ headers: Record<string, string> }>('GET', '/echo/auth');
        expect(res.body.headers.authorization).toBe('Bearer accepted-2');
      }
      expect(runCount()).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a process whose only work is one request alive until the answer, and not one that only connected', {
    timeout: 30_000,
  }, async () => {
    // The connection that asked for HTTP/2 goes to the pool ref'd: undici refs and unrefs it from then on. Until
    // then it holds nothing: a process that only connected ahead (preconnect) ends.
    const { port } = server.address() as AddressInfo;
    const script = [
      `import { KubeConfig } from ${JSON.stringify(join(ROOT, 'src/client/kubeconfig.ts'))};`,
      `import { KubeClient } from ${JSON.stringify(join(ROOT, 'src/client/client.ts'))};`,
      `import { ResourceRegistry } from ${JSON.stringify(join(ROOT, 'src/api/registry.ts'))};`,
      'const kc = new KubeConfig();',
      `kc.loadFromOptions(${JSON.stringify({
        clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca).toString('base64') }],
        users: [{ name: 'u', token: 'secret' }],
        contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
        currentContext: 'c',
      })});`,
      "const client = new KubeClient(kc, new ResourceRegistry('orch'), { qps: 0 });",
      "if (process.argv[1] === 'preconnect') await client.preconnect();",
      "else console.log((await client.request('GET', '/slow')).status);",
    ].join('\n');
    const run = (what: string) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', script, what],
          { cwd: ROOT, timeout: 20_000 },
          (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(stdout)),
        ),
      );
    expect(await run('request')).toBe('200\n');
    const before = handshakes;
    expect(await run('preconnect')).toBe('');
    expect(handshakes).toBe(before + 1);
  });
});
