/**
 * The daemon's HTTPS diagnostics server (the reference's secure serving on port 10257): health, metrics and
 * z-pages routes that other code registers, behind delegated authentication and authorization.
 *
 * Request flow, as the reference's handler chain: authenticate (client certificate, then bearer token via
 * TokenReview); credentials that fail answer 401. Always-allowed paths (`/healthz`, `/readyz`, `/livez` by
 * default) are then served to anyone. A request without credentials elsewhere answers 401, unless `anonymous`
 * is on, in which case it is authorized as `system:anonymous` like any user. Members of an always-allowed
 * group skip the review; everyone else needs a SubjectAccessReview that allows `<verb>` on the path, else 403.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  type AccessReviewer,
  anonymousUser,
  authenticateRequest,
  DEFAULT_ALWAYS_ALLOW_GROUPS,
  DEFAULT_ALWAYS_ALLOW_PATHS,
  pathMatcher,
  type TokenReviewer,
  type UserInfo,
} from './auth.ts';

export const DEFAULT_SECURE_PORT = 10257;
export const DEFAULT_BIND_ADDRESS = '0.0.0.0';

export interface DiagnosticsRequest {
  method: string;
  /** The normalized path, without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The authenticated user (`system:anonymous` for requests without credentials on always-allowed paths). */
  user: UserInfo;
  raw: IncomingMessage;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body: string | Uint8Array;
}

export type RouteHandler = (req: DiagnosticsRequest) => Reply | Promise<Reply>;

/** Where routes are registered; what health, z-pages and metrics code needs from the server. */
export interface RouteRegistry {
  route(path: string, handler: RouteHandler, options?: RouteOptions): void;
  /** Listed paths, sorted: what statusz reports. */
  paths(): string[];
}

export interface RouteOptions {
  /** Whether statusz lists the path (default true). */
  listed?: boolean;
}

export interface DiagnosticsServerOptions {
  /** Default `0.0.0.0`. */
  bindAddress: string;
  /** Default 10257; 0 disables serving. */
  securePort: number;
  /** Listen on a port the kernel picks instead of `securePort` (tests, laptops); ignored when serving is disabled. */
  pickFreePort?: boolean;
  /** Serving certificate (chain) and key files; both or neither. Neither: a self-signed pair made in memory. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** CA bundle that client certificates are verified against; without it client certificates are not asked for. */
  clientCaFile?: string;
  /** The same bundle as PEM text (takes precedence over the file). */
  clientCaPem?: string;
  tokenReviewer?: TokenReviewer;
  /** Without it, only always-allowed paths and groups are served. */
  accessReviewer?: AccessReviewer;
  /** Authorize requests without credentials as `system:anonymous` instead of answering 401 (default false). */
  anonymous?: boolean;
  alwaysAllowPaths?: readonly string[];
  alwaysAllowGroups?: readonly string[];
  logger?: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;
}

export const DEFAULT_DIAGNOSTICS_SERVER_OPTIONS: DiagnosticsServerOptions = {
  bindAddress: DEFAULT_BIND_ADDRESS,
  securePort: DEFAULT_SECURE_PORT,
  alwaysAllowPaths: DEFAULT_ALWAYS_ALLOW_PATHS,
  alwaysAllowGroups: DEFAULT_ALWAYS_ALLOW_GROUPS,
};

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

/** `404 page not found`, as Go's mux answers unknown paths. */
export function notFound(): Reply {
  return textReply(404, '404 page not found\n');
}

export function textReply(status: number, body: string): Reply {
  return { status, headers: { 'Content-Type': TEXT, 'X-Content-Type-Options': 'nosniff' }, body };
}

/** The reference's Status body for 401 and 403 answers. */
function statusReply(code: 401 | 403, reason: string, message: string): Reply {
  const status: Record<string, unknown> = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
  };
  if (code === 403) status.details = {};
  status.code = code;
  return { status: code, headers: { 'Content-Type': JSON_TYPE }, body: JSON.stringify(status) };
}

export interface ServingCertificate {
  certPem: string;
  keyPem: string;
  /** The in-memory CA of a self-signed certificate (undefined with given files). */
  caPem?: string;
}

export class DiagnosticsServer implements RouteRegistry {
  readonly options: DiagnosticsServerOptions;
  private readonly routes = new Map<string, { handler: RouteHandler; listed: boolean }>();
  private readonly allowedPath: (path: string) => boolean;
  private http?: Server;
  private boundPort?: number;
  private serving?: ServingCertificate;
  private started = false;

  constructor(options: Partial<DiagnosticsServerOptions> = {}) {
    this.options = { ...DEFAULT_DIAGNOSTICS_SERVER_OPTIONS, ...options };
    const { tlsCertFile, tlsPrivateKeyFile, securePort } = this.options;
    if (Boolean(tlsCertFile) !== Boolean(tlsPrivateKeyFile)) {
      throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
    }
    if (!Number.isInteger(securePort) || securePort < 0 || securePort > 65535) {
      throw new Error(`secure port ${securePort} must be between 0 and 65535, inclusive (0 turns serving off)`);
    }
    this.allowedPath = pathMatcher(this.options.alwaysAllowPaths ?? DEFAULT_ALWAYS_ALLOW_PATHS);
  }

  /** Whether the server serves at all (`securePort` 0 turns it off). */
  get enabled(): boolean {
    return this.options.securePort !== 0;
  }

  /** The port listened on, once started. */
  get port(): number | undefined {
    return this.boundPort;
  }

  /** The serving certificate in use, once started. */
  get servingCertificate(): ServingCertificate | undefined {
    return this.serving;
  }

  route(path: string, handler: RouteHandler, options: RouteOptions = {}): void {
    if (!path.startsWith('/')) throw new Error(`route "${path}" must start with /`);
    if (this.routes.has(path)) throw new Error(`route "${path}" is already registered`);
    this.routes.set(path, { handler, listed: options.listed ?? true });
  }

  paths(): string[] {
    return [...this.routes]
      .filter(([, r]) => r.listed)
      .map(([p]) => p)
      .sort();
  }

  /** Loads or makes the certificate and listens; resolves with the port, or undefined when serving is disabled. */
  async start(): Promise<number | undefined> {
    if (this.started) throw new Error('the diagnostics server was already started');
    this.started = true;
    const o = this.options;
    if (!this.enabled) {
      o.logger?.info('secure serving of diagnostics is disabled (secure port 0)');
      return undefined;
    }
    this.serving = await this.loadServingCertificate();
    const clientCa = o.clientCaPem ?? (o.clientCaFile ? await readFile(o.clientCaFile, 'utf8') : undefined);
    const tls = clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: false } : {};
    const http = createServer(
      { key: this.serving.keyPem, cert: this.serving.certPem, minVersion: 'TLSv1.2', ...tls },
      (req, res) => {
        this.handle(req, res, clientCa !== undefined).catch((err) => {
          o.logger?.error({ err, path: req.url }, 'diagnostics request failed');
          if (!res.headersSent) this.write(req, res, textReply(500, 'Internal Server Error\n'));
          else res.end();
        });
      },
    );
    http.keepAliveTimeout = 5_000;
    http.requestTimeout = 60_000;
    http.headersTimeout = 30_000;
    this.http = http;
    const port = o.pickFreePort ? 0 : o.securePort;
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, o.bindAddress, () => {
        http.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (http.address() as AddressInfo).port;
    o.logger?.info({ address: o.bindAddress, port: this.boundPort }, 'serving diagnostics securely');
    return this.boundPort;
  }

  /** Stops listening and closes every connection, idle or not. */
  async stop(): Promise<void> {
    const http = this.http;
    this.http = undefined;
    if (!http) return;
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
  }

  private async loadServingCertificate(): Promise<ServingCertificate> {
    const { tlsCertFile, tlsPrivateKeyFile } = this.options;
    if (tlsCertFile && tlsPrivateKeyFile) {
      const [certPem, keyPem] = await Promise.all([readFile(tlsCertFile, 'utf8'), readFile(tlsPrivateKeyFile, 'utf8')]);
      return { certPem, keyPem };
    }
    return selfSignedServingCertificate();
  }

  private async handle(req: IncomingMessage, res: ServerResponse, clientCertificates: boolean): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'https://localhost');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const o = this.options;
    const authn = await authenticateRequest(req, { clientCertificates, tokenReviewer: o.tokenReviewer });
    let reply: Reply;
    let user: UserInfo | undefined;
    if (authn.kind === 'failed') {
      o.logger?.debug({ path, reason: authn.reason }, 'unable to authenticate the request');
      reply = statusReply(401, 'Unauthorized', 'Unauthorized');
    } else {
      user = authn.kind === 'user' ? authn.user : anonymousUser();
      const verdict = await this.authorize(user, authn.kind === 'anonymous', method, path, req.url ?? path);
      reply =
        verdict ??
        (await this.dispatch({ method, path, query: url.searchParams, headers: req.headers, user, raw: req }));
    }
    this.write(req, res, reply);
    o.logger?.debug(
      { verb: method, path, user: user?.username, status: reply.status, ms: Math.round(performance.now() - started) },
      'diagnostics request',
    );
  }

  /** Undefined when the request may go on; otherwise the 401, 403 or 500 reply. */
  private async authorize(
    user: UserInfo,
    anonymous: boolean,
    method: string,
    path: string,
    uri: string,
  ): Promise<Reply | undefined> {
    const o = this.options;
    if (this.allowedPath(path)) return undefined;
    if (anonymous && !o.anonymous) return statusReply(401, 'Unauthorized', 'Unauthorized');
    const groups = o.alwaysAllowGroups ?? DEFAULT_ALWAYS_ALLOW_GROUPS;
    if (user.groups.some((g) => groups.includes(g))) return undefined;
    const verb = method.toLowerCase();
    let reason = '';
    if (o.accessReviewer) {
      try {
        const decision = await o.accessReviewer(user, { path, verb });
        if (decision.allowed) return undefined;
        reason = decision.reason ?? '';
      } catch (err) {
        o.logger?.warn({ err, path, user: user.username }, 'SubjectAccessReview failed');
        return textReply(
          500,
          sanitize(`Internal Server Error: ${JSON.stringify(uri)}: ${(err as Error)?.message ?? err}`) + '\n',
        );
      }
    }
    const message = sanitize(`User ${JSON.stringify(user.username)} cannot ${verb} path ${JSON.stringify(path)}`);
    return statusReply(403, 'Forbidden', `forbidden: ${reason ? `${message}: ${reason}` : message}`);
  }

  private async dispatch(req: DiagnosticsRequest): Promise<Reply> {
    const route = this.routes.get(req.path) ?? this.subtreeRoute(req.path);
    if (!route) return notFound();
    return route.handler(req);
  }

  /** As Go's mux: a pattern that ends in `/` serves the whole subtree below it, the longest pattern winning. */
  private subtreeRoute(path: string) {
    let best: string | undefined;
    for (const pattern of this.routes.keys()) {
      if (pattern.endsWith('/') && path.startsWith(pattern) && pattern.length > (best?.length ?? 0)) best = pattern;
    }
    return best === undefined ? undefined : this.routes.get(best);
  }

  private write(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
    const headers: Record<string, string> = { 'Cache-Control': 'no-cache, private', ...reply.headers };
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
    headers['Content-Length'] = String(body.byteLength);
    res.writeHead(reply.status, headers);
    if (req.method === 'HEAD') res.end();
    else res.end(body);
  }
}

const SANITIZE: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

function sanitize(text: string): string {
  return text.replace(/[&<>]/g, (c) => SANITIZE[c]);
}

/**
 * A serving certificate for `localhost` and 127.0.0.1 signed by a CA made for it, both in memory only, named as
 * the reference's self-signed pair (`localhost-ca@<unix seconds>` and `localhost@<unix seconds>`, one year).
 */
export async function selfSignedServingCertificate(now = new Date()): Promise<ServingCertificate> {
  // Loaded here, not at start: its X.509 library is a tenth of a start, and most runs serve files or no TLS.
  const { createSelfSignedCa, issueKeyAndCertificate } = await import('../pki/certs.ts');
  const stamp = Math.floor(now.getTime() / 1000);
  const ca = await createSelfSignedCa({
    commonName: `localhost-ca@${stamp}`,
    validityDays: 365,
    now: new Date(now.getTime() - 60_000),
  });
  const serving = await issueKeyAndCertificate({
    ca,
    subject: { commonName: `localhost@${stamp}` },
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
    usages: ['server auth'],
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 365 * 24 * 3600_000),
  });
  return { certPem: serving.certPem + ca.certPem, keyPem: serving.keyPem, caPem: ca.certPem };
}
