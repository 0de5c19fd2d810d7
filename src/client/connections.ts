/**
 * The connections to one server: HTTP/2 when the server offers it (kube-apiserver does), else undici's pool of
 * HTTP/1.1 connections, one per request in flight.
 *
 * Over HTTP/2, every request and watch shares one connection until it holds as many streams as the server allows
 * (kube-apiserver: 100); then another is opened, as Go's transport does for client-go. Why: a TLS connection costs
 * this process 3.5–4 ms of CPU to open. Over HTTP/1.1 a start opens one per informer (16 at once, ahead of its
 * first reconcile) and a burst of creates one per request in flight; over HTTP/2 a start needs one. And why not
 * only one: a watch holds its stream for good, and a StatefulSet's batch of 500 creates would wait its turn
 * behind the server's limit.
 */
import { once } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect as connectHttp2,
  constants,
  type IncomingHttpHeaders as Http2Headers,
} from 'node:http2';
import type { Readable } from 'node:stream';
import { type ConnectionOptions, connect as connectTls, type TLSSocket } from 'node:tls';
import type { Dispatcher } from 'undici';
import request from 'undici/lib/api/api-request.js';
import buildConnector from 'undici/lib/core/connect.js';
import Agent from 'undici/lib/dispatcher/agent.js';
import type { Tunnel } from './tunnel.ts';

/** client-go's dial timeout. */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * client-go's HTTP/2 health check: a connection silent for `readIdleMs` is pinged, and dropped when the ping is not
 * answered within `pingTimeoutMs`. An extra connection silent that long with nothing in flight is closed instead.
 */
export interface Http2Health {
  /** 0: no pings (an extra connection is still closed after the default's 30 s). */
  readIdleMs: number;
  pingTimeoutMs: number;
}

const DEFAULT_READ_IDLE_SECONDS = 30;
const DEFAULT_PING_TIMEOUT_SECONDS = 15;

/**
 * client-go's HTTP2_READ_IDLE_TIMEOUT_SECONDS (30; 0 turns the pings off) and HTTP2_PING_TIMEOUT_SECONDS (15; 0 is
 * the default, as in Go's transport). A value that is not a whole number leaves the default, as there.
 */
export function http2HealthFrom(env: NodeJS.ProcessEnv): Http2Health {
  const seconds = (name: string, otherwise: number) => {
    const raw = env[name];
    return raw && /^[+-]?\d+$/.test(raw) ? Math.max(0, Number(raw)) : otherwise;
  };
  return {
    readIdleMs: seconds('HTTP2_READ_IDLE_TIMEOUT_SECONDS', DEFAULT_READ_IDLE_SECONDS) * 1000,
    pingTimeoutMs: (seconds('HTTP2_PING_TIMEOUT_SECONDS', 0) || DEFAULT_PING_TIMEOUT_SECONDS) * 1000,
  };
}

/**
 * Bytes a server may send on one stream before this client reads them (HTTP/2's default is 64 KiB, a round trip
 * per 64 KiB of a list); a paused watch holds up to this much.
 */
const STREAM_WINDOW_BYTES = 1 << 20;
/**
 * The same over all streams. HTTP/2's default of 64 KiB would hold every answer and watch event up behind a few
 * busy milliseconds of this thread (TCP's own buffer is larger); client-go's is 1 GiB, leaving the bound to each
 * stream's window.
 */
const SESSION_WINDOW_BYTES = 32 << 20;
/**
 * Streams the first connection is given until the server's SETTINGS name its limit: Go's assumption, and
 * kube-apiserver's limit. A later one is given the limit its predecessor learnt.
 */
const INITIAL_MAX_STREAMS = 100;
/** HTTP/2 connections at most: past that, a request waits on the least busy one for a stream to free. */
const MAX_HTTP2_CONNECTIONS = 10;

/** An answer's status, headers and body, the body not read yet (a watch's stream). */
export interface Opened {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** A request as the client makes it: its path already holds the server's prefix and the query. */
export interface Outgoing {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
}

/** A client's connections to its server, shared by the clients derived from it. */
export class ServerConnections {
  /** Our pool of HTTP/1.1 connections. */
  private readonly http1: Agent;
  /** The open HTTP/2 connections, oldest first, each until it closes or the server sends GOAWAY. */
  private readonly live: Http2Connection[] = [];
  /** The connection being made, for the requests that wait for it. */
  private connecting?: Promise<Http2Connection | undefined>;
  /** The server answered the offer of HTTP/2 with HTTP/1.1 (or the client may not use it). */
  private http1Only: boolean;
  /** The connection that found out, handed to the pool's first connect rather than thrown away. */
  private spare?: TLSSocket;

  /** Through `tunnel`, when the configuration names a proxy, every connection is made. */
  constructor(
    private readonly origin: string,
    private readonly tls: ConnectionOptions,
    http2: boolean,
    private readonly health: Http2Health,
    private readonly tunnel?: Tunnel,
  ) {
    this.http1Only = !http2 || !origin.startsWith('https:');
    const dial = buildConnector({ ...tls, timeout: CONNECT_TIMEOUT_MS } as buildConnector.BuildOptions);
    this.http1 = new Agent({
      connect: (options, callback) => {
        const spare = this.spare;
        this.spare = undefined;
        // Called back later, as a connector does: undici's client goes on with the connection it started only then.
        // Ref'd again: undici takes a socket it is handed for one that is, and unrefs it itself when idle.
        if (spare && !spare.destroyed) process.nextTick(callback, null, spare.ref());
        else if (!tunnel) dial(options, callback);
        else {
          const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
          tunnel(options.hostname, port, CONNECT_TIMEOUT_MS).then(
            // TLS over the tunnel, as over a socket of its own (plain HTTP goes on it as it is).
            (raw) =>
              options.protocol === 'https:' ? dial({ ...options, httpSocket: raw }, callback) : callback(null, raw),
            (err: Error) => callback(err, null),
          );
        }
      },
    });
  }

  /** Sends one request through undici's dispatch API (HTTP/1.1) or the same handler calls over HTTP/2. */
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, retried = false): void {
    if (this.http1Only) {
      this.http1.dispatch(options, handler);
      return;
    }
    const again = retried ? undefined : () => this.dispatch(options, handler, true);
    const send = (connection: Http2Connection | undefined) => {
      if (connection) exchangeOverHttp2(connection, options, handler, again);
      else this.http1.dispatch(options, handler);
    };
    const pick = this.connection();
    if (pick instanceof Promise)
      this.whenConnected(pick, send).catch((err) => handler.onResponseError?.(abortOnly, err));
    else send(pick);
  }

  /** Opens a streamed answer (a watch): resolves with its status and headers, the body to be read. */
  async open(out: Outgoing, signal: AbortSignal): Promise<Opened> {
    const stream = this.http1Only
      ? undefined
      : await this.whenConnected(this.connection(), (connection) => {
          signal.throwIfAborted();
          return connection?.open(out, true);
        });
    if (!stream) {
      const res = await request.call(this.http1, {
        origin: this.origin,
        path: out.path,
        method: out.method as Dispatcher.HttpMethod,
        headers: out.headers,
        signal,
        bodyTimeout: 0,
      });
      return { statusCode: res.statusCode, headers: res.headers, body: res.body };
    }
    const cancel = () => stream.close(constants.NGHTTP2_CANCEL);
    signal.addEventListener('abort', cancel, { once: true });
    stream.once('close', () => signal.removeEventListener('abort', cancel));
    const headers = await responseOf(stream, signal);
    return { statusCode: Number(headers[':status']), headers, body: stream };
  }

  /** Connects now (when the protocol is not known yet, or is HTTP/2) rather than at the first request. */
  preconnect(): void {
    if (this.http1Only) return;
    const free = this.connection();
    if (free instanceof Promise) free.catch(() => {}); // the first request connects again and sees it fail
  }

  /** Ends the connections once their requests are answered. */
  close(): void {
    this.spare?.destroy();
    for (const connection of this.live) connection.session.close();
    void this.connecting?.then((c) => c?.session.close());
    void this.http1.close();
  }

  /** Whether the pool has a connection no request holds but none free yet (see KubeClient's `connectionBack`). */
  connectionComingBack(): boolean {
    if (!this.http1Only) return false;
    const pool = this.http1.stats[this.origin];
    return !!pool && 'free' in pool && pool.free === 0 && pool.connected > pool.running;
  }

  /**
   * An open HTTP/2 connection with a stream to spare, else the one being made (undefined when HTTP/1.1 it is).
   * At the most connections, the least busy one.
   */
  private connection(): Http2Connection | Promise<Http2Connection | undefined> {
    let leastBusy: Http2Connection | undefined;
    for (const c of this.live) {
      if (c.session.closed || c.session.destroyed) continue;
      if (c.streams < c.maxStreams) return c;
      if (!leastBusy || c.streams < leastBusy.streams) leastBusy = c;
    }
    if (leastBusy && this.live.length >= MAX_HTTP2_CONNECTIONS) return leastBusy;
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /**
   * Hands `use` a connection with a stream to spare once there is one, in the turn it is picked: the stream it opens
   * counts before the next pick. The requests that waited for one new connection may be more than it takes, so they
   * pick again: MAX_HTTP2_CONNECTIONS rounds at most, as each round waits for one more connection.
   */
  private async whenConnected<T>(
    pick: Http2Connection | Promise<Http2Connection | undefined>,
    use: (connection: Http2Connection | undefined) => T,
  ): Promise<T> {
    for (let round = 1; pick instanceof Promise; round++) {
      const made = await pick;
      if (!made || round >= MAX_HTTP2_CONNECTIONS) return use(made);
      pick = this.connection();
    }
    return use(pick);
  }

  private async connect(): Promise<Http2Connection | undefined> {
    const url = new URL(this.origin);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 443);
    const tunneled = await this.tunnel?.(host, port, CONNECT_TIMEOUT_MS);
    const socket = connectTls({
      ...this.tls,
      host,
      port,
      socket: tunneled,
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error(`connect timed out to ${this.origin}`)));
    await once(socket, 'secureConnect');
    socket.setTimeout(0);
    if (socket.alpnProtocol !== 'h2') {
      this.http1Only = true;
      // Until the pool's first connect takes it, it does not hold the process (nor after a preconnect no request
      // followed).
      this.spare = socket.unref();
      return undefined;
    }
    const session = connectHttp2(this.origin, {
      createConnection: () => socket,
      settings: { initialWindowSize: STREAM_WINDOW_BYTES },
    });
    session.setLocalWindowSize(SESSION_WINDOW_BYTES);
    session.on('error', () => {}); // its streams fail with it
    const connection = new Http2Connection(session, this.live.at(-1)?.maxStreams ?? INITIAL_MAX_STREAMS);
    const forget = () => {
      const at = this.live.indexOf(connection);
      if (at >= 0) this.live.splice(at, 1); // the next request takes another, or connects again
    };
    session.once('close', forget);
    session.once('goaway', forget);
    // A silent connection is pinged, so that a dead peer shows; one with nothing in flight is closed instead, but for
    // the oldest, as client-go closes idle connections.
    const { readIdleMs, pingTimeoutMs } = this.health;
    session.setTimeout(readIdleMs || DEFAULT_READ_IDLE_SECONDS * 1000, () => {
      if (connection.streams === 0 && this.live[0] !== connection) session.close();
      else if (readIdleMs > 0) ping(session, pingTimeoutMs);
    });
    this.live.push(connection);
    return connection;
  }
}

/** One HTTP/2 connection and the streams it has open. */
class Http2Connection {
  /** Streams open now. */
  streams = 0;
  constructor(
    readonly session: ClientHttp2Session,
    /** How many streams the server allows at once, as its SETTINGS say once they come. */
    public maxStreams: number,
  ) {
    session.on('remoteSettings', (settings) => {
      this.maxStreams = settings.maxConcurrentStreams ?? this.maxStreams;
    });
    // Like undici's sockets, a session keeps the process alive only while a request is in flight.
    session.unref();
  }

  /** One request's stream, counted while it is open. */
  open(out: Outgoing, endStream: boolean): ClientHttp2Stream {
    const stream = this.session.request(http2Headers(out), { endStream });
    if (this.streams++ === 0) this.session.ref();
    stream.once('close', () => {
      if (--this.streams === 0 && !this.session.destroyed) this.session.unref();
    });
    return stream;
  }
}

/** Closes a session whose ping goes unanswered within `timeoutMs`. */
function ping(session: ClientHttp2Session, timeoutMs: number): void {
  const timer = setTimeout(() => session.destroy(new Error(`no answer to a ping within ${timeoutMs} ms`)), timeoutMs);
  timer.unref();
  session.ping((err) => {
    clearTimeout(timer);
    if (err && !session.destroyed) session.destroy(err);
  });
}

/** A DispatchController whose only use here is to cancel. */
const abortOnly = { abort() {} } as unknown as Dispatcher.DispatchController;

/**
 * Drives an undici dispatch handler from one HTTP/2 stream. The handler hears of the request before it leaves, as
 * from undici: one it has given up on meanwhile (a deadline passed while connecting) does not leave at all.
 */
function exchangeOverHttp2(
  connection: Http2Connection,
  options: Dispatcher.DispatchOptions,
  handler: Dispatcher.DispatchHandler,
  again?: () => void,
): void {
  let stream: ClientHttp2Stream | undefined;
  let done = false;
  const controller = {
    abort(reason: Error) {
      if (done) return;
      done = true;
      stream?.close(constants.NGHTTP2_CANCEL);
      handler.onResponseError?.(controller, reason);
    },
  } as unknown as Dispatcher.DispatchController;
  handler.onRequestStart?.(controller, {});
  if (done) return;
  const body = options.body as string | undefined;
  try {
    const headers = options.headers as Outgoing['headers'];
    stream = connection.open({ method: options.method, path: options.path, headers }, body === undefined);
  } catch (err) {
    controller.abort(err as Error);
    return;
  }
  let answered = false;
  stream.on('response', (headers: Http2Headers) => {
    answered = true;
    if (!done) handler.onResponseStart?.(controller, Number(headers[':status']), headers, '');
  });
  stream.on('data', (chunk: Buffer) => {
    if (!done) handler.onResponseData?.(controller, chunk);
  });
  stream.on('end', () => {
    if (done) return;
    done = true;
    handler.onResponseEnd?.(controller, {});
  });
  // A stream the server refused (REFUSED_STREAM: one it had not begun, as those past its GOAWAY's last stream) is
  // sent once more, as Go's transport does (after a GOAWAY, on a new connection): the server did not act on it.
  const refused = () => {
    if (done || answered || !again || stream!.rstCode !== constants.NGHTTP2_REFUSED_STREAM) return false;
    done = true;
    again();
    return true;
  };
  stream.on('error', (err) => refused() || controller.abort(err));
  stream.on('close', () => {
    // After every answer too: the error (its stack a few µs to capture) is made only for a stream cut short.
    if (!done && !refused()) controller.abort(streamClosed(stream!));
  });
  if (body !== undefined) stream.end(body);
}

const streamClosed = (stream: ClientHttp2Stream) => new Error(`HTTP/2 stream closed (code ${stream.rstCode})`);

/** The answer's headers: rejects when the stream fails or closes first (with the signal's reason when it aborts). */
function responseOf(stream: ClientHttp2Stream, signal: AbortSignal): Promise<Http2Headers> {
  return new Promise((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
    stream.once('close', () => reject(signal.aborted ? signal.reason : streamClosed(stream)));
  });
}

/** A request's headers as HTTP/2 sends them: pseudo-headers first, names in lower case. */
function http2Headers(out: Outgoing): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { ':method': out.method, ':path': out.path };
  for (const [name, value] of Object.entries(out.headers)) headers[name.toLowerCase()] = value;
  return headers;
}
