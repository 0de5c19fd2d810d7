/**
 * The REST client against the embedded control plane: client-side QPS/burst (counted on the server
 * with `faults.requests`), Retry-After on 429 and 5xx, StatusError contents and predicates, request
 * timeouts; and against a bare HTTP server, the user agent and header parsing.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { type ClientOptions, KubeClient } from '../src/client/client.ts';
import {
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalid,
  isNotFound,
  isServerError,
  isTooManyRequests,
  StatusError,
} from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';

let cluster: TestCluster;
let namespace: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  namespace = `cl-${randomUUID().slice(0, 8)}`;
  await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
});

afterEach(() => {
  cluster.cp.faults.clear();
  cluster.cp.faults.recordRequests = false;
  cluster.cp.faults.requests.length = 0;
});

afterAll(async () => {
  await cluster?.stop();
});

function client(options: Partial<ClientOptions> = {}): KubeClient {
  return new KubeClient(cluster.kc, cluster.cp.registry, { qps: 0, ...options });
}

/** Requests the server saw for exactly this method and path. */
const seen = (method: string, path: string) =>
  cluster.cp.faults.requests.filter((r) => r.method === method && r.path === path);

async function failure(p: Promise<unknown>): Promise<StatusError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StatusError);
  return err as StatusError;
}

describe('KubeClient rate limiting', () => {
  it('keeps to qps 20 / burst 5: 60 requests take at least 2.75 s, spread evenly on the server', async () => {
    const c = client({ qps: 20, burst: 5 });
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    // Open the connections the burst will use first, so TLS handshakes (in this same process) do not
    // delay the burst on the server's clock; then pause to refill the bucket to its burst.
    await Promise.all(Array.from({ length: 5 }, () => c.request('GET', '/version')));
    await new Promise((resolve) => setTimeout(resolve, 500));
    cluster.cp.faults.recordRequests = true;
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 60 }, () => c.request('GET', path)));
    const elapsed = performance.now() - started;
    expect(results.every((r) => r.status === 200)).toBe(true);
    // 5 at once, then 55 more at one per 50 ms.
    expect(elapsed).toBeGreaterThanOrEqual(2_700);
    expect(elapsed).toBeLessThan(6_000);
    const at = seen('GET', path).map((r) => r.at);
    expect(at).toHaveLength(60);
    // Ideally 2.75 s; arrival stamps of a busy process can bunch by a few tens of ms (unthrottled: ~0.2 s).
    expect(at[59] - at[0]).toBeGreaterThanOrEqual(2_550);
    // No one-second window holds more than burst + qps requests, give or take a few whose arrival was
    // bunched by event-loop delays on a busy machine (unthrottled, all 60 would arrive within one window).
    for (let i = 0; i < at.length; i++) {
      const inWindow = at.filter((t) => t >= at[i] && t < at[i] + 1_000).length;
      expect(inWindow).toBeLessThanOrEqual(5 + 20 + 3);
    }
  });

  it('does not throttle with qps 0', async () => {
    const c = client({ qps: 0 });
    await c.request('GET', '/version');
    const started = performance.now();
    await Promise.all(Array.from({ length: 60 }, () => c.request('GET', `/api/v1/namespaces/${namespace}/configmaps`)));
    // Less than the 2.75 s that qps 20 / burst 5 needs for the same 60.
    expect(performance.now() - started).toBeLessThan(2_700);
  });
});

describe('KubeClient retries', () => {
  it('honours Retry-After on 429 and retries until the request succeeds', async () => {
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    cluster.cp.faults.recordRequests = true;
    cluster.cp.faults.failRequests({ code: 429, count: 2, retryAfterSeconds: 1, match: (_m, p) => p === path });
    const codes: number[] = [];
    const c = client({ observe: (o) => o.path === path && codes.push(o.code) });
    const started = performance.now();
    const res = await c.request('GET', path);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    expect(codes).toEqual([429, 429, 200]);
    expect(seen('GET', path)).toHaveLength(3);
    expect(elapsed).toBeGreaterThanOrEqual(1_950); // two waits of Retry-After: 1
    expect(elapsed).toBeLessThan(4_000);
    const at = seen('GET', path).map((r) => r.at);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(950);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(950);
  });

  it('retries a 5xx only when it carries Retry-After', async () => {
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    cluster.cp.faults.recordRequests = true;
    cluster.cp.faults.failRequests({ code: 503, count: 1, retryAfterSeconds: 1, match: (_m, p) => p === path });
    expect((await client().request('GET', path)).status).toBe(200);
    expect(seen('GET', path)).toHaveLength(2);

    cluster.cp.faults.requests.length = 0;
    cluster.cp.faults.failRequests({ code: 500, count: 1, match: (_m, p) => p === path });
    const err = await failure(client().request('GET', path));
    expect(err.code).toBe(500);
    expect(err.reason).toBe('InternalError');
    expect(err.retryAfter).toBeUndefined();
    expect(isServerError(err)).toBe(true);
    expect(seen('GET', path)).toHaveLength(1);
  });

  it('gives up after maxRetries with the last 429 as a StatusError carrying retryAfter', async () => {
    const path = `/api/v1/namespaces/${namespace}/secrets`;
    cluster.cp.faults.recordRequests = true;
    cluster.cp.faults.failRequests({
      code: 429,
      count: Number.POSITIVE_INFINITY,
      retryAfterSeconds: 1,
      match: (_m, p) => p === path,
    });
    const err = await failure(client({ maxRetries: 1 }).request('GET', path));
    expect(err.code).toBe(429);
    expect(err.reason).toBe('TooManyRequests');
    expect(err.retryAfter).toBe(1);
    expect(err.message).toBe('Too many requests, please try again later.');
    expect(isTooManyRequests(err)).toBe(true);
    expect(seen('GET', path)).toHaveLength(2);
  });
});

describe('StatusError from the server', () => {
  const cm = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, name },
    ...extra,
  });

  it('404 NotFound', async () => {
    const err = await failure(client().kind('ConfigMap').get(namespace, 'missing'));
    expect({ code: err.code, reason: err.reason, message: err.message }).toEqual({
      code: 404,
      reason: 'NotFound',
      message: 'configmaps "missing" not found',
    });
    expect(isNotFound(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
    expect(err.status?.kind).toBe('Status');
  });

  it('409 AlreadyExists and 409 Conflict are told apart', async () => {
    const configMaps = client().kind('ConfigMap');
    const first = await configMaps.create(cm('twice'));
    const exists = await failure(configMaps.create(cm('twice')));
    expect(exists.code).toBe(409);
    expect(exists.reason).toBe('AlreadyExists');
    expect(isAlreadyExists(exists)).toBe(true);
    expect(isConflict(exists)).toBe(false);

    await configMaps.replace({ ...first, data: { v: '1' } });
    const stale = await failure(configMaps.replace({ ...first, data: { v: '2' } }));
    expect(stale.code).toBe(409);
    expect(stale.reason).toBe('Conflict');
    expect(isConflict(stale)).toBe(true);
    expect(isAlreadyExists(stale)).toBe(false);
  });

  it('422 Invalid carries its causes', async () => {
    const err = await failure(client().kind('ConfigMap').create(cm('Not_A_Valid_Name')));
    expect(err.code).toBe(422);
    expect(err.reason).toBe('Invalid');
    expect(isInvalid(err)).toBe(true);
    expect(isForbidden(err)).toBe(false);
    expect(err.causes.length).toBeGreaterThan(0);
    expect(err.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });
    expect(err.message).toContain('Not_A_Valid_Name');
  });

  it('a request that outlives the timeout is a StatusError 504 Timeout', async () => {
    cluster.cp.faults.latencyMs = 1_000;
    const started = performance.now();
    const err = await failure(client({ timeoutMs: 150 }).request('GET', `/api/v1/namespaces/${namespace}/configmaps`));
    const elapsed = performance.now() - started;
    expect(err.code).toBe(504);
    expect(err.reason).toBe('Timeout');
    expect(err.message).toContain('timed out after 150 ms');
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(900);
  });

  it('a caller abort is not reported as a timeout', async () => {
    cluster.cp.faults.latencyMs = 1_000;
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('caller gave up')), 50);
    const err = await client({ timeoutMs: 5_000 })
      .request('GET', `/api/v1/namespaces/${namespace}/configmaps`, { signal: abort.signal })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeDefined();
    expect(err).not.toBeInstanceOf(StatusError);
  });
});

describe('KubeClient against a bare HTTP server', () => {
  let server: Server;
  let port = 0;
  const headers: IncomingHttpHeaders[] = [];
  let reply: (res: import('node:http').ServerResponse) => void = (res) => res.end('{}');

  beforeAll(async () => {
    server = createServer((req, res) => {
      headers.push(req.headers);
      reply(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function bare(options: Partial<ClientOptions> = {}): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'bare', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'nobody' }],
      contexts: [{ name: 'bare', cluster: 'bare', user: 'nobody' }],
      currentContext: 'bare',
    });
    return new KubeClient(kc, cluster.cp.registry, { qps: 0, ...options });
  }

  it('lets other responses through while it decodes a long watch stream', async () => {
    // 300 events of 10 kB written at once, each costing the thread 2 ms to handle; /other answers at once.
    const events = 300;
    const line = (i: number) =>
      `${JSON.stringify({ type: 'ADDED', object: { kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { blob: 'x'.repeat(10_000) } } })}\n`;
    reply = (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (!res.req.url?.startsWith('/watched')) return res.end('{}');
      res.end(Array.from({ length: events }, (_, i) => line(i)).join(''));
    };
    const c = bare();
    let handled = 0;
    let handledWhenAnswered: number | undefined;
    await c.watch(
      '/watched',
      {},
      () => {
        handled++;
        if (handled === 1) void c.request('GET', '/other').then(() => (handledWhenAnswered = handled));
        const until = performance.now() + 2;
        while (performance.now() < until);
      },
      new AbortController().signal,
    );
    await eventually(() => handledWhenAnswered !== undefined);
    expect(handled).toBe(events);
    // Decoded as fast as it arrives, the answer waited for 47 events here (one socket's read of the stream); with
    // the stream paused after each slice of decoding, 25 (a 64 kB chunk at a time).
    expect(handledWhenAnswered).toBeLessThan(events / 8);
  });

  it("rejects a refused watch with the server's status, and a line that is not JSON", async () => {
    const c = bare();
    const refusal = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'no',
    };
    reply = (res) => res.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify(refusal));
    await expect(c.watch('/watched', {}, () => undefined, new AbortController().signal)).rejects.toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'no',
    });
    const seen: unknown[] = [];
    reply = (res) => res.writeHead(200).end('{"type":"ADDED","object":{}}\nnot json\n');
    await expect(c.watch('/watched', {}, (e) => seen.push(e), new AbortController().signal)).rejects.toThrow(
      SyntaxError,
    );
    expect(seen).toHaveLength(1);
  });

  it('ends a watch when its signal aborts, delivering nothing after', async () => {
    const c = bare();
    reply = (res) => res.writeHead(200).write('{"type":"ADDED","object":{}}\n'); // and never ends
    const abort = new AbortController();
    const seen: unknown[] = [];
    const watching = c.watch(
      '/watched',
      {},
      (e) => {
        seen.push(e);
        abort.abort();
      },
      abort.signal,
    );
    await expect(watching).resolves.toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  it('sends the user agent, with the caller appended', async () => {
    headers.length = 0;
    reply = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    const c = bare({ userAgent: 'orch-controller-manager/0.1.0' });
    await c.request('GET', '/x');
    await c.request('GET', '/x', { caller: 'sample' });
    expect(headers.map((h) => h['user-agent'])).toEqual([
      'orch-controller-manager/0.1.0',
      'orch-controller-manager/0.1.0/sample',
    ]);
  });

  it('sends the configured extra headers, a repeated header as several lines', async () => {
    headers.length = 0;
    reply = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    const c = bare({ headers: { 'x-proxy-token': ['abc'], 'impersonate-group': ['team-a', 'team-b'] } });
    await c.request('GET', '/x');
    expect(headers[0]['x-proxy-token']).toBe('abc');
    // Node joins repeated request headers with ", " when it reads them.
    expect(headers[0]['impersonate-group']).toBe('team-a, team-b');
  });

  it('reads Retry-After from the header of a non-Status body, and retries on it', async () => {
    headers.length = 0;
    let calls = 0;
    reply = (res) => {
      calls++;
      if (calls === 1) res.writeHead(503, { 'Retry-After': '1' }).end('overloaded');
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    };
    const started = performance.now();
    expect((await bare().request('GET', '/y')).status).toBe(200);
    expect(calls).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);

    reply = (res) => res.writeHead(503).end('overloaded');
    const err = await failure(bare().request('GET', '/y'));
    expect({ code: err.code, reason: err.reason, message: err.message, retryAfter: err.retryAfter }).toEqual({
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'overloaded',
      retryAfter: undefined,
    });
  });
});
