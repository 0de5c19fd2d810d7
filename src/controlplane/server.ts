/** The HTTPS front of the embedded control plane: routing, authentication, content negotiation, watch streams. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { setImmediate as afterThisTurn } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import type { KubeList, KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/registry.ts';
import type { VersionInfo } from '../build-info.ts';
import { TurnGate } from '../util/turn-gate.ts';
import type { UserInfo } from './admission.ts';
import type { Aggregator } from './aggregator.ts';
import type { ApiServer, Reply, RequestBody } from './api.ts';
import type { AuditLog } from './audit.ts';
import { authenticate, type TokenAuthenticator } from './authn.ts';
import {
  AGGREGATED_MEDIA,
  aggregated,
  apiVersions,
  groupList,
  groupOne,
  partialObjectMetadata,
  resourceList,
  tableParts,
} from './discovery.ts';
import {
  ApiError,
  badRequest,
  internalError,
  methodNotAllowed,
  notAcceptable,
  tooManyRequests,
  unauthorized,
} from './errors.ts';
import { Faults } from './faults.ts';
import { isOpenApiPath, openApiAnswer } from './openapi/index.ts';
import { prettyParam } from './options.ts';
import { isPodStream, servePodStream } from './pod-streams.ts';
import {
  encodeKubernetesProtobuf,
  isProtobufMediaType,
  PROTOBUF_MEDIA_TYPE,
  ProtobufError,
  type ProtobufListEncoder,
  protobufListEncoder,
} from './protobuf/index.ts';
import {
  checkSegments,
  parseRequest,
  type RequestAuthorizer,
  type ResourceRequest,
  requestTarget,
} from './request-info.ts';
import { drained, mapInSlices, sendList } from './sliced.ts';
import { answerJson, toItemJson, toJson, type WatchSettings, WatchStream, withoutTypeMeta } from './watch.ts';
import { toYaml, yamlSequenceItem } from './yaml.ts';

export interface ServerOptions {
  key: string;
  cert: string;
  /** CA bundle that client certificates are verified against. */
  clientCa: string;
  tokens: TokenAuthenticator;
  /** Requests without credentials are `system:anonymous`, left to `authorize` (else 401), as `--anonymous-auth`. */
  anonymous: boolean;
  authorize?: RequestAuthorizer;
  /** The identity a request acts as, from its impersonation headers (raw: name, value, ...); throws when refused. */
  impersonate?: (user: UserInfo, rawHeaders: readonly string[]) => UserInfo;
  watch: WatchSettings;
  version: VersionInfo;
  /** Largest accepted request body, as the reference's 3 MiB. */
  maxBodyBytes: number;
  /** Orders discovery by the APIServices and proxies the group versions they send elsewhere. */
  aggregator?: Aggregator;
  /** Where every write is recorded (`--audit-log-path`). */
  audit?: AuditLog;
}

const JSON_TYPE = 'application/json';
/** Largest request line and headers, Go's `http.DefaultMaxHeaderBytes` as the reference serves with. */
const MAX_HEADER_BYTES = 1 << 20;
const YAML_TYPE = 'application/yaml';
const ALLOWED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

export class ControlPlaneServer {
  readonly http: Server;
  readonly faults: Faults;
  private readonly watches = new Set<{ rt: ResourceType; stream: WatchStream }>();
  private readonly sockets = new Set<Socket>();
  /**
   * The first request since the event loop last ran its `setImmediate` callbacks is served at once (alone, waiting
   * would only add latency); those that come after it wait for that phase and are then served together, and their
   * writes together once more after their bodies were read. Each step's code then runs back to back for all of them,
   * still in the CPU's caches (under load, 10–15% less server CPU per create: `npm run bench -- creates`).
   */
  private readonly arrivals = new TurnGate();
  private readonly writes = new TurnGate();

  constructor(
    private readonly api: ApiServer,
    private readonly opts: ServerOptions,
  ) {
    this.faults = new Faults({
      dropWatches: (rt) => {
        let n = 0;
        for (const w of [...this.watches]) {
          if (!rt || w.rt === rt) {
            w.stream.stop();
            n++;
          }
        }
        return n;
      },
      compact: async (rt) => {
        await api.storage.backend.compact();
        api.storage.compact(rt);
      },
      corrupt: (rt, namespace, name) => api.storage.backend.corrupt(rt, namespace ? `${namespace}/${name}` : name),
      restart: async (downMs) => {
        const addr = this.http.address();
        if (!addr || typeof addr === 'string') throw new Error('the server is not listening');
        await this.close();
        await new Promise((r) => setTimeout(r, downMs));
        await this.listen(addr.port, addr.address);
      },
    });
    this.http = createServer(
      {
        key: opts.key,
        cert: opts.cert,
        ca: opts.clientCa,
        requestCert: true,
        rejectUnauthorized: false,
        maxHeaderSize: MAX_HEADER_BYTES,
      },
      (req, res) => {
        if (req.socket.isPaused()) readAsStream(req.socket);
        const serve = () => this.handle(req, res).catch((err) => this.fail(res, err, req));
        if (this.arrivals.first()) serve();
        else setImmediate(serve);
      },
    );
    this.http.keepAliveTimeout = 60_000;
    // A request HTTP itself cannot parse is still answered with a Status, then the connection closed.
    this.http.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (!socket.writable) return;
      const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
      const status = new ApiError(
        tooLarge ? 431 : 400,
        'BadRequest',
        tooLarge ? `request headers larger than ${MAX_HEADER_BYTES} bytes` : `malformed HTTP request: ${err.message}`,
      ).toStatus();
      const body = JSON.stringify(status);
      socket.end(
        `HTTP/1.1 ${status.code} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
          `Content-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    // As the reference's (Go's TLS server has no renegotiation), and so a connection's client certificate is fixed.
    this.http.on('secureConnection', (socket: TLSSocket) => socket.disableRenegotiation());
    // Raw sockets, including those still in their TLS handshake, which closeAllConnections does not know.
    this.http.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(port, host, () => {
        this.http.off('error', reject);
        const addr = this.http.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      });
    });
  }

  async close(): Promise<void> {
    this.faults.dropWatches();
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  activeWatches(): number {
    return this.watches.size;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const { path, query } = requestTarget(req.url ?? '/');
    const failure = this.faults.takeFailure(method, path);
    if (this.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, this.faults.latencyMs));
    if (failure) {
      const err =
        failure.code === 429
          ? tooManyRequests('Too many requests, please try again later.', failure.retryAfterSeconds ?? 1)
          : new ApiError(failure.code, 'InternalError', 'injected failure', {
              retryAfterSeconds: failure.retryAfterSeconds,
            });
      return this.fail(res, err, req);
    }
    if (!ALLOWED_METHODS.has(method)) throw methodNotAllowed();
    const authenticated = authenticate(req, this.opts.tokens, this.api.registry.naming.domain, this.opts.anonymous);
    if (!authenticated) throw unauthorized();
    const user = this.opts.impersonate?.(authenticated, req.rawHeaders) ?? authenticated;
    const remote = this.opts.aggregator?.remoteFor(path);
    if (remote) return this.opts.aggregator!.proxy(req, res, path, query, remote, user);
    const info = parseRequest(this.api.registry, method, path, query);
    await this.opts.authorize?.(user, info, method);
    if (info.kind === 'unserved') return this.notFound(res, path);
    if (info.kind === 'nonresource') return this.nonResource(req, res, path, query);
    checkSegments(info);
    // Before any other warning of the answer, which headersOf appends.
    if (info.rt.deprecation) res.setHeader('Warning', [warningHeader(info.rt.deprecation)]);
    return this.resource(req, res, info, query, user);
  }

  /**
   * A path nothing serves: a JSON NotFound Status under the core API or a served group, as the reference's API
   * handlers answer; elsewhere (an unknown group, a top-level path) its mux's plain-text `404 page not found`.
   */
  private notFound(res: ServerResponse, path: string): void {
    const [root, groupName] = path.split('/').filter(Boolean);
    const served =
      root === 'api' ||
      (root === 'apis' &&
        [...this.api.registry.groups(), ...(this.opts.aggregator?.discoveryGroups() ?? [])].some(
          (g) => g.name === groupName,
        ));
    if (served) throw notFoundPath();
    res
      .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' })
      .end('404 page not found\n');
  }

  private async nonResource(
    req: IncomingMessage,
    res: ServerResponse,
    rawPath: string,
    query: URLSearchParams,
  ): Promise<void> {
    const path = rawPath.replace(/\/+$/, '') || '/';
    const registry = this.api.registry;
    const accept = req.headers.accept ?? '';
    const discoveryGroup = registry.naming.protocol.discoveryGroup;
    // Only the v2 form is served (v2beta1 is gone, as from the reference's 1.33): other asks get the legacy one.
    const wantsAggregated = accept.split(',').some((part) => {
      const params = part.split(';').map((p) => p.trim());
      return (
        params.includes('as=APIGroupDiscoveryList') && params.includes('v=v2') && params.includes(`g=${discoveryGroup}`)
      );
    });
    const groups = this.opts.aggregator?.discoveryGroups();
    if (['/healthz', '/livez', '/readyz'].includes(path)) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
      return;
    }
    if (isOpenApiPath(path)) {
      const answer = openApiAnswer(registry, path, query, req.headers, this.api.options.now());
      // The reference's OpenAPI handler answers a group version it does not serve with a bare 404.
      if (!answer) return void res.writeHead(404).end();
      res.writeHead(answer.status, answer.headers).end(answer.body);
      return;
    }
    let body: object | undefined;
    let contentType = JSON_TYPE;
    if (path === '/version') body = this.opts.version;
    else if ((path === '/api' || path === '/apis') && wantsAggregated) {
      await this.opts.aggregator?.refreshRemoteDiscovery();
      body = aggregated(registry, path === '/api', groups, this.opts.aggregator?.servedElsewhere);
      contentType = AGGREGATED_MEDIA(discoveryGroup);
    } else if (path === '/api') body = apiVersions(`${req.socket.localAddress}:${req.socket.localPort}`);
    else if (path === '/apis') body = groupList(registry, groups);
    else {
      const parts = path.split('/').filter(Boolean);
      if (parts[0] === 'api' && parts.length === 2) body = resourceList(registry, '', parts[1]);
      if (parts[0] === 'apis' && parts.length === 2) body = groupOne(registry, parts[1], groups);
      if (parts[0] === 'apis' && parts.length === 3) body = resourceList(registry, parts[1], parts[2]);
    }
    if (!body) return this.notFound(res, path);
    this.send(res, 200, JSON.stringify(body, null, prettyParam(query) ? 2 : undefined), [], contentType);
  }

  private async resource(
    req: IncomingMessage,
    res: ServerResponse,
    info: ResourceRequest,
    query: URLSearchParams,
    user: UserInfo,
  ): Promise<void> {
    const api = this.api;
    if (isPodStream(info)) return servePodStream(api, req, res, info, query);
    const tableAccept = viewRequested(req.headers.accept, api.registry.naming.protocol.metaGroup);
    const format = tableAccept ? 'json' : outputFormat(req.headers.accept, info.verb === 'watch');
    // A read without resourceVersion (or continue) is a consistent read: the cache first shows everything
    // written before it (through any control plane sharing the store).
    const read = info.verb === 'get' || info.verb === 'list' || info.verb === 'watch';
    if (read && !query.get('resourceVersion') && !query.get('continue')) await api.storage.backend.caughtUp(info.rt);
    if (info.verb === 'watch') return this.watch(req, res, info, query, tableAccept);
    if (info.verb === 'get' || info.verb === 'list') {
      if (info.rt.virtual) throw methodNotAllowed();
      const body = info.verb === 'get' ? api.get(info, query) : api.list(info, query);
      // Nothing is shown that a crash could still take back.
      await api.storage.durable();
      if (tableAccept && !info.subresource) {
        const list = info.verb === 'list' ? (body as KubeList) : undefined;
        const { head, row } = tableParts(
          api.registry,
          info.rt,
          list ? list.metadata : { resourceVersion: body.metadata.resourceVersion },
          query.get('includeObject') ?? 'Metadata',
          api.options.now(),
          viewVersion(req.headers.accept, api.registry.naming.protocol.metaGroup),
        );
        if (!list) return this.send(res, 200, JSON.stringify({ ...head, rows: [row(body)] }), [], tableAccept);
        const start = `${JSON.stringify(head).slice(0, -1)},"rows":[`;
        const encode = (o: KubeObject, i: number) => separated(i, JSON.stringify(row(o)));
        return sendList(res, 200, headersOf(res, tableAccept, []), start, list.items, encode, ']}');
      }
      // Metadata only, when asked for as PartialObjectMetadata (a get) or PartialObjectMetadataList (a list).
      const metaGroup = api.registry.naming.protocol.metaGroup;
      const list = info.verb === 'list' ? (body as KubeList) : undefined;
      if (viewRequested(req.headers.accept, metaGroup, list ? 'PartialObjectMetadataList' : 'PartialObjectMetadata')) {
        const partial = list
          ? {
              kind: 'PartialObjectMetadataList',
              apiVersion: `${metaGroup}/v1`,
              metadata: list.metadata,
              // An empty list's items are null there (a nil Go slice).
              items: list.items.length ? list.items.map((o) => partialObjectMetadata(metaGroup, o)) : null,
            }
          : partialObjectMetadata(metaGroup, body);
        return this.send(res, 200, JSON.stringify(partial), [], JSON_TYPE);
      }
      return await this.reply(res, { status: 200, body, warnings: [] }, query, format);
    }
    const received = new Date();
    let reply: Reply | undefined;
    let code = 500;
    try {
      reply = await this.write(req, info, query, user);
      code = reply.status;
    } catch (err) {
      if (err instanceof ApiError) code = err.code;
      throw err;
    } finally {
      this.opts.audit?.record({
        info,
        requestURI: req.url ?? '',
        user,
        sourceIp: req.socket.remoteAddress,
        userAgent: req.headers['user-agent'],
        code,
        produced: reply?.body,
        annotations: reply?.auditAnnotations,
        received,
      });
    }
    await this.reply(res, reply, query, format);
  }

  /** A create, update, patch or delete: the handler's reply, or the ApiError it threw. */
  private async write(
    req: IncomingMessage,
    info: ResourceRequest,
    query: URLSearchParams,
    user: UserInfo,
  ): Promise<Reply> {
    const api = this.api;
    const body = await readBody(req, this.opts.maxBodyBytes);
    if (!this.writes.first()) await afterThisTurn();
    if (info.rt.virtual && info.verb !== 'create') throw methodNotAllowed();
    // POST serves collections (and subresources such as eviction), a namespaced kind's only within a namespace;
    // PUT and PATCH serve named objects.
    const itemVerb = info.verb === 'update' || info.verb === 'patch';
    const everyNamespace = info.rt.namespaced && !info.rt.virtual && info.namespace === undefined;
    if (
      (info.verb === 'create' && ((info.name !== undefined && !info.subresource) || everyNamespace)) ||
      (itemVerb && info.name === undefined) ||
      (!info.subresource && !info.rt.verbs.includes(info.verb))
    ) {
      throw methodNotAllowed();
    }
    const reply = await api[WRITE_METHODS[info.verb as keyof typeof WRITE_METHODS]](info, query, body, user);
    // A write is acknowledged only once durable (the journal commits writes in groups).
    await api.storage.durable();
    return reply;
  }

  private watch(
    req: IncomingMessage,
    res: ServerResponse,
    info: ResourceRequest,
    query: URLSearchParams,
    tableAccept: string | undefined,
  ): void {
    const api = this.api;
    // As the reference: a watch-list's initial state is objects, never table rows.
    if (tableAccept && api.watchOptions(query).sendInitialEvents) {
      throw notAcceptable([JSON_TYPE]);
    }
    let headersSent = false;
    const ensureHeaders = () => {
      if (headersSent) return;
      headersSent = true;
      res.writeHead(200, {
        'Content-Type': tableAccept ?? JSON_TYPE,
        'Transfer-Encoding': 'chunked',
        'Cache-Control': 'no-cache, private',
      });
      res.flushHeaders();
    };
    const entry = { rt: info.rt, stream: undefined as unknown as WatchStream };
    // As the reference's watch of Tables: each event a one-row Table at its object's resourceVersion, the row's
    // object its metadata unless asked otherwise, the column definitions in the first event only (null after).
    const version = viewVersion(req.headers.accept, api.registry.naming.protocol.metaGroup);
    let first = true;
    const render = tableAccept
      ? (obj: KubeObject) => {
          const rv = { resourceVersion: obj.metadata.resourceVersion };
          const includeObject = query.get('includeObject') ?? 'Metadata';
          const { head, row } = tableParts(api.registry, info.rt, rv, includeObject, api.options.now(), version);
          const columns = first ? {} : { columnDefinitions: null };
          first = false;
          return JSON.stringify({ ...head, ...columns, rows: [row(obj)] });
        }
      : toJson;
    entry.stream = new WatchStream(
      api,
      info,
      query,
      {
        write: (lines) => {
          ensureHeaders();
          // As a Buffer: a string chunk would be measured for its chunk header and then encoded again.
          return res.write(Buffer.from(lines));
        },
        close: () => {
          ensureHeaders();
          res.end();
          // A client that does not take the end of the stream either would keep its unsent bytes here.
          if (!res.writableFinished && !res.destroyed) {
            const giveUp = setTimeout(() => res.destroy(), this.opts.watch.slowWatcherGraceMs).unref();
            res.once('close', () => clearTimeout(giveUp));
          }
        },
        backlog: () => res.writableLength,
        drained: () => drained(res),
      },
      this.opts.watch,
      () => this.watches.delete(entry),
      render,
    );
    this.watches.add(entry);
    try {
      entry.stream.start();
    } catch (err) {
      this.watches.delete(entry);
      throw err;
    }
    // Only a started stream is stopped on disconnect: a rejected one was answered with an error
    // Status, and closing its sink would write headers a second time.
    req.on('close', () => entry.stream.stop());
    // A client that left before the watch started (while its request waited) closed it already.
    if (req.destroyed) entry.stream.stop();
    ensureHeaders();
  }

  private async reply(res: ServerResponse, reply: Reply, query: URLSearchParams, format: OutputFormat): Promise<void> {
    const body = reply.body as Record<string, unknown>;
    if (isList(body)) return this.replyList(res, reply.status, reply.warnings, body, query, format);
    if (format === 'protobuf') {
      const bytes = protobufOrUndefined(body);
      if (bytes) {
        this.send(res, reply.status, bytes, reply.warnings, PROTOBUF_MEDIA_TYPE);
        return;
      }
    }
    if (format === 'yaml') {
      this.send(res, reply.status, toYaml(body), reply.warnings, YAML_TYPE);
      return;
    }
    const text = prettyParam(query) ? JSON.stringify(body, null, 2) : answerJson(body);
    this.send(res, reply.status, text, reply.warnings, JSON_TYPE);
  }

  /** A list in any format, its items encoded a slice at a time (see sliced.ts). */
  private async replyList(
    res: ServerResponse,
    status: number,
    warnings: string[],
    list: Record<string, unknown> & { items: KubeObject[] },
    query: URLSearchParams,
    format: OutputFormat,
  ): Promise<void> {
    const { items, ...head } = list;
    if (format === 'protobuf') {
      try {
        const encoder = protobufListEncoder(list);
        const item = (o: KubeObject) => cachedItem(o, encoder);
        const parts = await mapInSlices(res, items, item);
        if (!parts) return;
        const { head, tail } = encoder.frame(parts.reduce((n, p) => n + p.length, 0));
        return await sendList(res, status, headersOf(res, PROTOBUF_MEDIA_TYPE, warnings), head, parts, same, tail);
      } catch (err) {
        // What protobuf cannot carry (a free-form field) is answered as JSON.
        if (!(err instanceof ProtobufError)) throw err;
      }
    }
    if (format === 'yaml') {
      const start = items.length ? `${toYaml(head)}items:\n` : toYaml(list);
      const item = (o: KubeObject) => yamlSequenceItem(withoutTypeMeta(o));
      return sendList(res, status, headersOf(res, YAML_TYPE, warnings), start, items, item, '');
    }
    if (prettyParam(query)) {
      // Exactly JSON.stringify(list, null, 2): each item two levels in.
      const start = `${JSON.stringify(head, null, 2).slice(0, -2)},\n  "items": [`;
      const item = (o: KubeObject, i: number) =>
        separated(i, `\n    ${JSON.stringify(withoutTypeMeta(o), null, 2).replace(/\n/g, '\n    ')}`);
      return sendList(
        res,
        status,
        headersOf(res, JSON_TYPE, warnings),
        start,
        items,
        item,
        items.length ? '\n  ]\n}' : ']\n}',
      );
    }
    // Items are stored objects whose JSON is cached: spliced rather than serialized again.
    const start = `${JSON.stringify(head).slice(0, -1)},"items":[`;
    const item = (o: KubeObject, i: number) => separated(i, toItemJson(o));
    return sendList(res, status, headersOf(res, JSON_TYPE, warnings), start, items, item, ']}');
  }

  private send(
    res: ServerResponse,
    status: number,
    text: string | Uint8Array,
    warnings: string[],
    contentType: string,
  ): void {
    // Encoded once here: given a string, Node would measure its byte length and then encode it again.
    const body = typeof text === 'string' ? Buffer.from(text) : text;
    const headers = headersOf(res, contentType, warnings);
    res.writeHead(status, headers);
    res.end(body);
  }

  private fail(res: ServerResponse, err: unknown, req: IncomingMessage): void {
    const apiErr = err instanceof ApiError ? err : internalError((err as Error)?.message ?? String(err));
    if (!(err instanceof ApiError))
      this.api.options.log.error({ err, verb: req.method, uri: req.url }, 'unexpected error');
    if (res.headersSent) {
      res.end();
      return;
    }
    // A Status in YAML or protobuf when the client asked for that first, as the reference negotiates errors too.
    const first = req.headers.accept?.split(',')[0].split(';')[0].trim();
    const status = apiErr.toStatus();
    const [contentType, body] =
      first === YAML_TYPE
        ? [YAML_TYPE, toYaml(status)]
        : first === PROTOBUF_MEDIA_TYPE
          ? [PROTOBUF_MEDIA_TYPE, encodeKubernetesProtobuf(status as unknown as Record<string, unknown>)]
          : [JSON_TYPE, JSON.stringify(status)];
    const headers: Record<string, string> = { 'Content-Type': contentType };
    const retry = apiErr.details?.retryAfterSeconds;
    if (retry !== undefined && (apiErr.code === 429 || apiErr.code >= 500)) headers['Retry-After'] = String(retry);
    res.writeHead(apiErr.code, headers);
    res.end(body);
  }
}

/**
 * A request that arrives while the answer to the one before it is still queued (a large answer whose write completes
 * in a later turn: the TurnGate's batches write in the `setImmediate` phase) has Node's HTTP server pause its
 * connection until that answer drains. Its parser, fed straight by the TLS layer, is paused too, but the TLS layer
 * goes on handing it the rest of what it already decrypted, and a paused parser fails that with "Parse Error: Paused"
 * (a 400 for a request that was fine). A 'data' listener has the server read that connection as a stream instead,
 * which holds what arrives while paused. Only such connections: the stream costs some CPU on every read.
 */
function readAsStream(socket: Socket): void {
  if (!socket.listeners('data').includes(readByParser)) socket.on('data', readByParser);
}

/** Only its presence matters: the HTTP server's own listener parses what the socket reads. */
function readByParser(): void {}

/** The ApiServer method that serves each write verb. */
const WRITE_METHODS = {
  create: 'create',
  update: 'update',
  patch: 'patch',
  delete: 'delete',
  deletecollection: 'deleteCollection',
} as const satisfies Record<string, keyof ApiServer>;

function notFoundPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

type OutputFormat = 'json' | 'yaml' | 'protobuf';

/**
 * The format of the answer by `Accept`: the first type listed that the server produces, as the reference
 * negotiates: protobuf (kubectl's `protobuf,json`; answers protobuf cannot carry, such as a free-form field, fall
 * back to JSON), JSON or a wildcard, YAML (protobuf and YAML not for watch streams, which are JSON); 406 for none.
 */
export function outputFormat(accept: string | undefined, watch: boolean): OutputFormat {
  if (!accept) return 'json';
  for (const part of accept.split(',')) {
    const type = part.split(';')[0].trim().toLowerCase();
    if (type === JSON_TYPE || type === '*/*' || type === 'application/*' || type === '') return 'json';
    if (!watch && type === PROTOBUF_MEDIA_TYPE) return 'protobuf';
    if (!watch && type === YAML_TYPE) return 'yaml';
  }
  throw notAcceptable(watch ? [JSON_TYPE] : [JSON_TYPE, YAML_TYPE, PROTOBUF_MEDIA_TYPE]);
}

/**
 * The Content-Type of a meta.k8s.io view (`as`: a server-side Table as kubectl get asks, or PartialObjectMetadata[List])
 * when the client asks for one: the reference names only its serializer's media type, `application/json`, without
 * the `as=` the request gave.
 */
function viewRequested(accept: string | undefined, metaGroup: string, as = 'Table'): string | undefined {
  return viewVersion(accept, metaGroup, as) && JSON_TYPE;
}

/** The meta group version of the first view of that name the client accepts: `v1`, or the older `v1beta1`. */
function viewVersion(accept: string | undefined, metaGroup: string, as = 'Table'): string | undefined {
  for (const part of accept?.split(',') ?? []) {
    const params = part.split(';').map((p) => p.trim());
    if (params[0] !== JSON_TYPE || !params.includes(`as=${as}`) || !params.includes(`g=${metaGroup}`)) continue;
    const version = params.find((p) => p.startsWith('v='))?.slice(2) ?? 'v1';
    if (version === 'v1' || version === 'v1beta1') return version;
  }
  return undefined;
}

/** The protobuf form of an answer; undefined for what protobuf cannot carry (a free-form field). */
function protobufOrUndefined(body: Record<string, unknown>): Uint8Array | undefined {
  try {
    return encodeKubernetesProtobuf(body);
  } catch (err) {
    if (err instanceof ProtobufError) return undefined;
    throw err;
  }
}

const warningHeader = (text: string) => `299 - ${JSON.stringify(text)}`;

/** The headers of an answer: its Content-Type, and its warnings after those already set on the response. */
function headersOf(res: ServerResponse, contentType: string, warnings: string[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'Content-Type': contentType };
  const already = res.getHeader('Warning');
  if (warnings.length) headers.Warning = [...[already ?? []].flat().map(String), ...warnings.map(warningHeader)];
  return headers;
}

const same = <T>(x: T): T => x;

/** An item of a JSON array after the first: with the comma before it. */
function separated(index: number, json: string): string {
  return index === 0 ? json : `,${json}`;
}

/**
 * The protobuf of stored objects as list items, made once per object (and message: one object may be served by two
 * versions) as their JSON is (see `toJson`): stored objects are never changed, and clients that list in protobuf
 * (informers relisting) list again.
 */
const protobufItems = new WeakMap<object, { table: object; bytes: Uint8Array }>();

function cachedItem(obj: KubeObject, encoder: ProtobufListEncoder): Uint8Array {
  const cached = protobufItems.get(obj);
  if (cached?.table === encoder.itemTable) return cached.bytes;
  const bytes = encoder.item(obj);
  protobufItems.set(obj, { table: encoder.itemTable, bytes });
  return bytes;
}

function isList(body: Record<string, unknown>): body is Record<string, unknown> & { items: KubeObject[] } {
  return Array.isArray(body.items);
}

export function readBody(req: IncomingMessage, limit: number): Promise<RequestBody | undefined> {
  return new Promise((resolve, reject) => {
    // A client gone before its body arrived (its request waited for the turn to end, or for latency) sends no more.
    const cutShort = () => reject(badRequest('the client closed the connection before sending the whole request body'));
    if (req.destroyed) return cutShort();
    req.on('close', () => {
      if (!req.complete) cutShort();
    });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`));
        // Drain the rest unread, so the client gets the 413 rather than a reset connection.
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (size === 0) return resolve(undefined);
      const contentType = req.headers['content-type'] ?? JSON_TYPE;
      // Protobuf bodies are binary: one character per byte (latin1) keeps every byte.
      const encoding = isProtobufMediaType(contentType) ? 'latin1' : 'utf8';
      // A body that came in one chunk (most) is read in place.
      const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      resolve({ text: bytes.toString(encoding), contentType, userAgent: req.headers['user-agent'] });
    });
    req.on('error', reject);
  });
}
