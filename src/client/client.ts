/**
 * The REST client: configuration, authentication and TLS from a kubeconfig (kubeconfig.ts), raw JSON in and out
 * over HTTP/2 (one connection until it is full) or undici's HTTP/1.1 pool (connections.ts), client-side rate
 * limiting (QPS and burst), Retry-After handling, request timeouts, a user agent naming the component, and
 * streaming watches.
 */
import { setMaxListeners } from 'node:events';
import { type IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { finished } from 'node:stream/promises';
import { createSecureContext } from 'node:tls';
import type { Dispatcher } from 'undici';
import type { KubeObject, WatchEvent } from '../api/meta.ts';
import { isProtobufMediaType, PROTOBUF_MEDIA_TYPE } from '../api/protobuf.ts';
import type { ResourceRegistry, ResourceType } from '../api/registry.ts';
import { type Clock, realClock } from '../util/clock.ts';
import { type Http2Health, http2HealthFrom, ServerConnections } from './connections.ts';
import { StatusError } from './errors.ts';
import type { KubeConfig, TlsSettings } from './kubeconfig.ts';
import { decodeObject, ProtobufWatchDecoder } from './protobuf/decode.ts';
import { proxyFromEnvironment, readProxyEnvironment } from './proxy-environment.ts';
import { ResourceClient } from './resource.ts';
import type { RequestOptions, Response, Transport } from './transport.ts';
import { tunnelThrough } from './tunnel.ts';

export type { RequestOptions, Response } from './transport.ts';

import { WatchDecoder } from './watch-decoder.ts';

/** Decoding time of one watch after which it lets other I/O in (see `watch`). */
const WATCH_SLICE_MS = 5;

/** What a client consults before each write (the leader election's lease guard). */
export interface WriteGuard {
  /**
   * Throws unless a write may leave the process now; `what` names the write, `target` is what it writes. Answers
   * its permit, which the client settles once the write is over.
   */
  admit(what: string, target: WriteTarget): WritePermit;
}

/** A write let out of the process. */
export interface WritePermit {
  /** The ms within which the write must be over (the writer's term can end then): its request's deadline. */
  deadlineMs?: number;
  /** The write is over: answered, failed or abandoned. */
  settle(): void;
}

/** A write as the guard sees it: its path and body (an object, or text already serialized). */
export interface WriteTarget {
  path: string;
  body?: unknown;
}

/** A bearer token per request (a service account's, renewed as it expires). */
export interface BearerSource {
  token(signal?: AbortSignal): Promise<string>;
  /** The server refused a token sent at `sentAtMs` (clock time): one obtained before then is not sent again. */
  refused(sentAtMs: number): void;
}

export interface ClientOptions {
  qps: number;
  burst: number;
  /** Per-request deadline (not applied to watches, which have their own server-side timeout). */
  timeoutMs: number;
  userAgent: string;
  /** How many times a 429 or a 5xx with Retry-After is retried, as client-go's 10. */
  maxRetries: number;
  clock: Clock;
  /** Extra request headers (a header may repeat, e.g. `Impersonate-Group`), from the configuration. */
  headers?: Record<string, readonly string[]>;
  /** Consulted before every request that is not a read: it throws to keep the write in the process. */
  writeGuard?: WriteGuard;
  /** Sent as `Authorization: Bearer` with every request (give the client a configuration without credentials). */
  bearer?: BearerSource;
  /**
   * Whether HTTP/2 is offered to the server (one connection for every request and watch); off, as client-go's,
   * when the environment sets DISABLE_HTTP2.
   */
  http2: boolean;
  /** HTTP/2's pings, from the environment as client-go reads it. */
  http2Health: Http2Health;
  /** Whether a watch that may be read from protobuf asks for it (`--kube-api-content-type`); else JSON only. */
  protobuf: boolean;
  /** Called once per completed HTTP exchange (metrics). */
  observe?: (o: { method: string; code: number; host: string; seconds: number; path: string }) => void;
}

export const DEFAULT_CLIENT_OPTIONS: ClientOptions = {
  qps: 20,
  burst: 30,
  timeoutMs: 30_000,
  userAgent: 'orch-controller-manager',
  maxRetries: 10,
  clock: realClock,
  http2: !process.env.DISABLE_HTTP2,
  http2Health: http2HealthFrom(process.env),
  protobuf: true,
};

/** Token bucket that hands out reservations, so waiting callers are served in order. */
class Throttle {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    if (this.qps <= 0) return;
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    const waitMs = (-this.tokens * 1000) / this.qps;
    await sleep(waitMs, this.clock, signal);
  }
}

export function sleep(ms: number, clock: Clock = realClock, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** How long security settings (headers, TLS agent) are reused before asking the KubeConfig again. */
const AUTH_REFRESH_MS = 30_000;

interface Security {
  headers: Record<string, string | string[]>;
  connections: ServerConnections;
}

/** The configuration's security settings as read at one refresh. */
interface SessionAuth extends Security {
  tls: string;
  until: number;
  /** Drops an exec plugin's credential the server refused (401), so that the next request asks the plugin again. */
  refused?: () => void;
}

/** The text of TLS settings, which tells whether they changed. */
function tlsText(tls: TlsSettings): string {
  const asText = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : v);
  return JSON.stringify(Object.values(tls).map(asText));
}

export class KubeClient implements Transport {
  readonly options: ClientOptions;
  readonly server: string;
  private readonly throttle: Throttle;
  private parsedServer?: { origin: string; prefix: string; host: string };
  /** Security settings and the connection pool; shared with derived clients. */
  private session: { auth?: SessionAuth } = {};

  constructor(
    readonly kubeConfig: KubeConfig,
    readonly registry: ResourceRegistry,
    options: Partial<ClientOptions> = {},
  ) {
    this.options = { ...DEFAULT_CLIENT_OPTIONS, ...options };
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster)
      throw new Error(`the kubeconfig's current context "${kubeConfig.currentContext}" names no cluster it has`);
    this.server = cluster.server.replace(/\/+$/, '');
    this.throttle = new Throttle(this.options.qps, this.options.burst, this.options.clock);
  }

  /**
   * A client on the same configuration with some options changed: its own rate limiter, but the same
   * connections, so its requests never wait for a TLS handshake the parent's pool would have spared.
   */
  derive(options: Partial<ClientOptions>): KubeClient {
    const child = new KubeClient(this.kubeConfig, this.registry, { ...this.options, ...options });
    child.session = this.session;
    return child;
  }

  /** A client for one resource type, e.g. `client.resource(registry.byKind('Pod')!)`. */
  resource<T extends KubeObject = KubeObject>(rt: ResourceType): ResourceClient<T> {
    return new ResourceClient<T>(this, rt);
  }

  /** A client for the resource of a kind, looked up in the registry. */
  kind<T extends KubeObject = KubeObject>(kind: string): ResourceClient<T> {
    const rt = this.registry.byKind(kind);
    if (!rt) throw new Error(`unknown kind ${kind}`);
    return this.resource<T>(rt);
  }

  /** One JSON request, retried on 429 and on 5xx with Retry-After; failures throw StatusError. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<Response<T>> {
    for (let attempt = 0; ; attempt++) {
      await this.throttle.acquire(opts.signal);
      try {
        return await this.once<T>(method, path, opts);
      } catch (err) {
        const retriable =
          err instanceof StatusError &&
          err.retryAfter !== undefined &&
          (err.code === 429 || err.code >= 500) &&
          attempt < this.options.maxRetries;
        if (!retriable) throw err;
        await sleep(Math.max(1, (err as StatusError).retryAfter!) * 1000, this.options.clock, opts.signal);
      }
    }
  }

  private async once<T>(method: string, path: string, opts: RequestOptions): Promise<Response<T>> {
    const target = this.pathAndQuery(path, opts.query);
    const security = await this.security(opts.signal);
    const { headers, connections } = security;
    await this.connectionBack(connections);
    // Checked after the last wait and on every retry, so nothing leaves that the guard would refuse now; and
    // abandoned when the guard's term can end, so that one held up on its way is not made after it.
    const permit = READ_METHODS.has(method)
      ? undefined
      : this.options.writeGuard?.admit(`${method} ${path}`, { path, body: opts.body });
    const timeoutMs = Math.min(this.options.timeoutMs, permit?.deadlineMs ?? Number.POSITIVE_INFINITY);
    const started = performance.now();
    const sentAt = this.options.clock.now();
    const body =
      opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const { origin, prefix } = this.target();
    const exchange = new Exchange(timeoutMs, opts.signal);
    let res: Answer;
    try {
      exchange.send(connections, {
        origin,
        path: `${prefix}${target}`,
        method: method as Dispatcher.HttpMethod,
        headers: {
          ...headers,
          accept: 'application/json',
          'user-agent': this.userAgent(opts.caller),
          ...(body !== undefined ? { 'content-type': opts.contentType ?? 'application/json' } : {}),
        },
        body,
        // undici closes the connection after a DELETE that has a body (DeleteOptions) unless told otherwise: a TLS
        // handshake for the next request, hundreds in a StatefulSet's rolling update.
        ...(body !== undefined ? { reset: false } : {}),
      });
      res = await exchange.answer;
    } catch (err) {
      this.observe(method, 0, path, started);
      if (exchange.expired && !opts.signal?.aborted) {
        const why = timeoutMs < this.options.timeoutMs ? ", when the writer's lease term can end" : '';
        throw new StatusError(
          504,
          'Timeout',
          `request ${method} ${path} timed out after ${Math.round(timeoutMs)} ms${why}`,
        );
      }
      throw err;
    } finally {
      permit?.settle();
    }
    const { statusCode, text } = res;
    this.observe(method, statusCode, path, started);
    if (statusCode === 401) this.refused(security, sentAt);
    if (statusCode >= 300) {
      const retryAfter = res.headers['retry-after'];
      throw StatusError.fromResponse(statusCode, text || (STATUS_CODES[statusCode] ?? ''), first(retryAfter));
    }
    const warnings = [res.headers.warning ?? []].flat().flatMap(parseWarnings);
    const decode = opts.decode ?? JSON.parse;
    return { status: statusCode, body: (text ? decode(text) : undefined) as T, warnings };
  }

  /**
   * Streams a watch: `onEvent` gets every event in order; resolves when the server ends the stream
   * (or the signal aborts), rejects with StatusError when the watch cannot start.
   */
  async watch<T extends KubeObject = KubeObject>(
    path: string,
    query: RequestOptions['query'],
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
    caller?: string,
    protobuf = false,
  ): Promise<void> {
    await this.throttle.acquire(signal);
    const target = this.pathAndQuery(path, { ...query, watch: true });
    const security = await this.security(signal);
    const { connections } = security;
    await this.connectionBack(connections);
    const started = performance.now();
    const sentAt = this.options.clock.now();
    const accept = protobuf && this.options.protobuf ? `${PROTOBUF_MEDIA_TYPE}, application/json` : 'application/json';
    const headers = { ...security.headers, accept, 'user-agent': this.userAgent(caller) };
    const res = await connections.open({ method: 'GET', path: `${this.target().prefix}${target}`, headers }, signal);
    this.observe('WATCH', res.statusCode, path, started);
    if (res.statusCode === 401) this.refused(security, sentAt);
    const answeredProtobuf = isProtobufMediaType(first(res.headers['content-type']) ?? '');
    if (res.statusCode !== 200) {
      const body = await buffer(res.body);
      const status = answeredProtobuf ? protobufStatusText(body) : body.toString();
      throw StatusError.fromResponse(res.statusCode, status, first(res.headers['retry-after']));
    }
    // Decoded as each chunk arrives ('data', not an async iterator: no promise per chunk).
    const decoder = answeredProtobuf
      ? new ProtobufWatchDecoder<WatchEvent<T>>(onEvent, true)
      : new WatchDecoder<WatchEvent<T>>(onEvent);
    const body = res.body;
    // A big initial state (thousands of pods) arrives as fast as it can be read: decoded in one go, it would hold
    // every other response on this thread (a CSR's access review) until the end. So the stream pauses after each
    // WATCH_SLICE_MS of decoding, until the other I/O waiting meanwhile has had its turn.
    let decoding = 0;
    body.on('data', (chunk: Buffer) => {
      const started = performance.now();
      try {
        decoder.write(chunk);
      } catch (err) {
        body.destroy(err as Error);
      }
      decoding += performance.now() - started;
      if (decoding < WATCH_SLICE_MS) return;
      decoding = 0;
      body.pause();
      setImmediate(() => body.resume());
    });
    try {
      await finished(body);
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
    decoder.end();
  }

  /** `path` with its query string. */
  private pathAndQuery(path: string, query?: RequestOptions['query']): string {
    if (!query) return path;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
    const qs = params.toString();
    return qs ? `${path}?${qs}` : path;
  }

  /** The server's origin, its path prefix (a proxy's `/k8s/clusters/c-1`) and its host, parsed once. */
  private target(): { origin: string; prefix: string; host: string } {
    if (!this.parsedServer) {
      const u = new URL(this.server);
      this.parsedServer = { origin: u.origin, prefix: u.pathname.replace(/\/+$/, ''), host: u.host };
    }
    return this.parsedServer;
  }

  private async security(signal?: AbortSignal): Promise<Security> {
    const auth = await this.sharedSecurity();
    const bearer = this.options.bearer;
    if (!bearer) return auth;
    const authorization = `Bearer ${await bearer.token(signal)}`;
    return { headers: { ...auth.headers, authorization }, connections: auth.connections };
  }

  /**
   * Opens the connection to the server now, ahead of the first request, which then need not wait for a handshake
   * (a failure is for that request to see).
   */
  async preconnect(): Promise<void> {
    (await this.sharedSecurity()).connections.preconnect();
  }

  /**
   * A 401 to a request sent with `security`: the token source is told (a service account's token is asked for
   * again), or, as client-go does, an exec plugin's credential still current is dropped and the settings read
   * again at the next request.
   */
  private refused(security: Security, sentAt: number): void {
    const auth = this.session.auth;
    if (this.options.bearer) this.options.bearer.refused(sentAt);
    else if (auth?.refused && security === auth) {
      auth.refused();
      auth.until = Number.NEGATIVE_INFINITY; // read again, its connections kept while the TLS stays the same
    }
  }

  /** The headers and connections of this client and those derived from it, from the configuration. */
  private async sharedSecurity(): Promise<SessionAuth> {
    const now = this.options.clock.now();
    const shared = this.session;
    if (!shared.auth || now >= shared.auth.until) {
      const { tls, authorization, expiresAt, refused } = await this.kubeConfig.credentials();
      const headers: Record<string, string | string[]> = authorization ? { authorization } : {};
      for (const [name, values] of Object.entries(this.options.headers ?? {})) headers[name] = [...values];
      const text = tlsText(tls);
      // The same TLS material keeps the same pool: its open connections, rather than a handshake for each.
      let connections = shared.auth?.connections;
      if (!connections || shared.auth?.tls !== text) {
        connections?.close(); // once its requests are answered
        connections = this.connectionsFor(tls);
      }
      // An exec plugin's credential is asked for again as soon as it has expired (expiry is in wall-clock time).
      const expiresIn = expiresAt === undefined ? Number.POSITIVE_INFINITY : expiresAt - Date.now();
      shared.auth = { headers, connections, tls: text, until: now + Math.min(AUTH_REFRESH_MS, expiresIn), refused };
    }
    return shared.auth;
  }

  /**
   * The server's connections, sharing one TLS context, built once, where each would otherwise parse the CA, the
   * certificate and the key again; through the proxy the cluster's `proxy-url` names, else the environment's.
   */
  private connectionsFor(tls: TlsSettings): ServerConnections {
    const proxyUrl = this.kubeConfig.getCurrentCluster()?.proxyUrl;
    const fromEnvironment = proxyUrl ? undefined : proxyFromEnvironment(new URL(this.server), readProxyEnvironment());
    return new ServerConnections(
      this.target().origin,
      { ...tls, secureContext: createSecureContext(tls) },
      this.options.http2,
      this.options.http2Health,
      proxyUrl
        ? tunnelThrough(proxyUrl)
        : fromEnvironment && tunnelThrough(fromEnvironment.url, fromEnvironment.variable),
    );
  }

  /**
   * Over HTTP/1.1, undici hands a connection back to its pool one loop turn after its answer: a request made within
   * that turn (a reconcile's next step, made as soon as the answer before it is read) would open a connection of its
   * own, a TLS handshake. When the pool has none free but one that no request holds, the request waits for that turn.
   */
  private async connectionBack(connections: ServerConnections): Promise<void> {
    if (connections.connectionComingBack()) await new Promise(setImmediate);
  }

  private userAgent(caller?: string): string {
    return caller ? `${this.options.userAgent}/${caller}` : this.options.userAgent;
  }

  private observe(method: string, code: number, path: string, started: number): void {
    if (!this.options.observe) return;
    this.options.observe({
      method,
      code,
      host: this.target().host,
      seconds: (performance.now() - started) / 1000,
      path,
    });
  }
}

/** An answer as the client reads it: status, headers and the whole body as text. */
interface Answer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One request through undici's dispatch API, its answer read whole: ended by the caller's signal or once `ms`
 * have passed. About half the CPU of undici's `request()`, which makes a Readable stream and an async resource
 * for every answer, and of an AbortController (an EventTarget) for every deadline.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly answer: Promise<Answer>;
  expired = false;
  private settle!: (err: unknown, answer?: Answer) => void;
  private controller?: Dispatcher.DispatchController;
  private reason?: Error;
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly ms: number,
    private readonly caller?: AbortSignal,
  ) {
    this.answer = new Promise((resolve, reject) => {
      this.settle = (err, answer) => (err === undefined ? resolve(answer!) : reject(err));
    });
    this.timer = setTimeout(Exchange.expire, ms, this);
    this.timer.unref();
    if (caller?.aborted) this.handleEvent();
    else if (caller) {
      // Every request in flight listens here until it ends, so workers sharing one stop signal are no leak.
      setMaxListeners(0, caller);
      caller.addEventListener('abort', this, { once: true });
    }
  }

  send(connections: ServerConnections, options: Dispatcher.DispatchOptions): void {
    if (this.reason) return;
    try {
      connections.dispatch(options, this);
    } catch (err) {
      this.end(err);
    }
  }

  private static expire(x: Exchange): void {
    x.expired = true;
    x.abort(new DOMException(`timed out after ${x.ms} ms`, 'TimeoutError'));
  }

  /** The caller's abort (this object is its listener). */
  handleEvent(): void {
    this.abort(this.caller?.reason as Error);
  }

  /** Ends the request now, whether or not it has left yet (undici asks `onRequestStart` when it does). */
  private abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.end(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason) controller.abort(this.reason);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.statusCode = statusCode;
    this.headers = headers;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const text =
      this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    this.end(undefined, { statusCode: this.statusCode, headers: this.headers, text });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.end(err);
  }

  /** Settles the answer (the first call only counts) and stops listening. */
  private end(err: unknown, answer?: Answer): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this);
    this.settle(err, answer);
  }
}

/** An error answer in protobuf (a Status) as JSON text; empty when it is not one. */
function protobufStatusText(body: Buffer): string {
  try {
    return JSON.stringify(decodeObject(body));
  } catch {
    return '';
  }
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * `299 - "text"` → `text`; one header may hold several, comma-separated (HTTP/2 joins repeated headers so).
 */
function parseWarnings(header: string): string[] {
  const texts = [...header.matchAll(/(?:^|,\s*)\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`));
  return texts.length > 0 ? texts : [header];
}
