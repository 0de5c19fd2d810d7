/**
 * The REST client's connections over TLS to a server of HTTP/1.1 only: the connection that offered it HTTP/2 is the
 * pool's first (one handshake, not two); the pool outlives the periodic refresh of the security settings
 * while the TLS material stays the same, and is replaced when it changes; many requests in flight on one
 * caller's signal; a DELETE with a body on a kept connection; a server URL with a path, a query, and a request's
 * deadline; requests and a watch through the proxy the configuration names (HTTP CONNECT with basic proxy
 * authorization, and SOCKS5 with username and password).
 */
import { execFile } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceRegistry } from '../src/api/registry.ts';
import { KubeClient } from '../src/client/client.ts';
import { StatusError } from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { FakeClock } from '../src/util/clock.ts';
import { servingCertificate } from './support/serving-certificate.ts';

const ROOT = resolve(import.meta.dirname, '..');

describe('KubeClient connections', () => {
  let server: Server;
  let ca = '';
  let handshakes = 0;
  /** The request lines the server saw: method and URL. */
  const seen: string[] = [];

  beforeAll(async () => {
    const { cert, key } = servingCertificate();
    ca = cert;
    server = createServer({ cert, key }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
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

  /** A kubeconfig for the server whose CA text is `caText` (the same CA, written differently if asked). */
  function kubeConfig(caText: string, path = '', proxyUrl?: string): KubeConfig {
    const kc = new KubeConfig();
    const { port } = server.address() as AddressInfo;
    const url = `https://127.0.0.1:${port}${path}`;
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, caData: Buffer.from(caText).toString('base64'), proxyUrl }],
      users: [{ name: 'u', token: 'secret' }],
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
    const client = new KubeClient(kubeConfig(ca, '/k8s/clusters/c-1/'), new ResourceRegistry('orch'), { qps: 0 });
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
    const client = new KubeClient(kubeConfig(ca, '', proxyUrl), new ResourceRegistry('orch'), { qps: 0 });
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

  it('sends requests and a watch through the HTTP proxy the configuration names, with its credentials', async () => {
    const tunnels: string[] = [];
    const authorizations: (string | undefined)[] = [];
    const sockets: Socket[] = [];
    const proxy = createHttpServer();
    proxy.on('connect', (req, socket, head) => {
      tunnels.push(req.url!);
      authorizations.push(req.headers['proxy-authorization']);
      sockets.push(socket as Socket);
      const [host, port] = req.url!.split(':');
      relay(
        socket as Socket,
        host!,
        Number(port),
        () => socket.write('HTTP/1.1 200 Connection Established\r\n\r\n'),
        head,
      );
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      await throughProxy(`http://ann:p%40ss@127.0.0.1:${(proxy.address() as AddressInfo).port}`, tunnels);
      expect(new Set(authorizations)).toEqual(new Set([`Basic ${Buffer.from('ann:p@ss').toString('base64')}`]));
    } finally {
      for (const socket of sockets) socket.destroy(); // a tunnel is no longer the server's to close
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('says why a proxy opened no tunnel, and refuses a proxy-url scheme it cannot dial', async () => {
    const proxy = createHttpServer();
    proxy.on('connect', (_req, socket) => socket.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n'));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const client = new KubeClient(kubeConfig(ca, '', proxyUrl), new ResourceRegistry('orch'), { qps: 0 });
      const { port } = server.address() as AddressInfo;
      await expect(client.request('GET', '/version')).rejects.toThrow(
        `proxy refused CONNECT 127.0.0.1:${port}: HTTP/1.1 407 Proxy Authentication Required`,
      );
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
    const ftp = new KubeClient(kubeConfig(ca, '', 'ftp://127.0.0.1:21'), new ResourceRegistry('orch'), { qps: 0 });
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
        kubeConfig(ca, '', `socks5://ann:wrong@127.0.0.1:${port}`),
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
