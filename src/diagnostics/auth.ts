/**
 * Delegated authentication and authorization for the diagnostics server, as the reference's delegating
 * authenticator and authorizer: client certificates verified against a client CA bundle (CN is the user,
 * O entries the groups), bearer tokens checked with a TokenReview, then a SubjectAccessReview for the
 * request's non-resource path. Reviews are cached for a short while (10 s by default, both ways), and
 * concurrent identical reviews share one call to the API server.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { group, type Naming } from '../api/naming.ts';
import type { KubeClient } from '../client/client.ts';
import { type Clock, realClock } from '../util/clock.ts';

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** Members of this group skip the SubjectAccessReview, as the reference's `AlwaysAllowGroups`. */
export const PRIVILEGED_GROUP = 'system:masters';

export const DEFAULT_ALWAYS_ALLOW_PATHS: readonly string[] = ['/healthz', '/readyz', '/livez'];
export const DEFAULT_ALWAYS_ALLOW_GROUPS: readonly string[] = [PRIVILEGED_GROUP];
/** The reference's token cache TTL and its authorized/unauthorized webhook cache TTLs. */
export const DEFAULT_REVIEW_CACHE_TTL_MS = 10_000;

const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE_OID = '2.5.29.37.0';

export function anonymousUser(): UserInfo {
  return { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}

// ---------------------------------------------------------------------------------------------
// reviewers

export interface TokenReviewResult {
  authenticated: boolean;
  user?: UserInfo;
  /** The reviewer's explanation when the token was not accepted. */
  error?: string;
}

/** Resolves a bearer token to a user; throws when the review itself fails (network, 5xx). */
export type TokenReviewer = (token: string) => Promise<TokenReviewResult>;

export interface NonResourceAttributes {
  path: string;
  verb: string;
}

export interface AccessReviewResult {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

/** Decides whether a user may use a non-resource path; throws when the review itself fails. */
export type AccessReviewer = (user: UserInfo, attrs: NonResourceAttributes) => Promise<AccessReviewResult>;

type Requester = Pick<KubeClient, 'request'>;

interface TokenReviewBody {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}

/** A TokenReviewer that creates `TokenReview`s in `authentication.<suffix>/v1` through the client. */
export function apiTokenReviewer(client: Requester, naming: Naming, audiences: string[] = []): TokenReviewer {
  const apiVersion = `${group(naming, 'authentication')}/v1`;
  return async (token) => {
    const spec: Record<string, unknown> = { token };
    if (audiences.length) spec.audiences = audiences;
    const res = await client.request<TokenReviewBody>('POST', `/apis/${apiVersion}/tokenreviews`, {
      body: { apiVersion, kind: 'TokenReview', metadata: {}, spec },
    });
    const status = res.body?.status ?? {};
    // As the reference's webhook authenticator: `error` only matters for a token that was not accepted.
    if (!status.authenticated)
      return status.error ? { authenticated: false, error: status.error } : { authenticated: false };
    const u = status.user ?? {};
    const user: UserInfo = { username: u.username ?? '', groups: [...(u.groups ?? [])] };
    if (u.uid) user.uid = u.uid;
    if (u.extra && Object.keys(u.extra).length) user.extra = u.extra;
    return { authenticated: true, user };
  };
}

interface AccessReviewBody {
  status?: AccessReviewResult;
}

/** An AccessReviewer that creates `SubjectAccessReview`s in `authorization.<suffix>/v1` through the client. */
export function apiAccessReviewer(client: Requester, naming: Naming): AccessReviewer {
  const apiVersion = `${group(naming, 'authorization')}/v1`;
  return async (user, attrs) => {
    const spec: Record<string, unknown> = {
      nonResourceAttributes: { path: attrs.path, verb: attrs.verb },
      user: user.username,
      groups: user.groups,
    };
    if (user.uid) spec.uid = user.uid;
    if (user.extra && Object.keys(user.extra).length) spec.extra = user.extra;
    const res = await client.request<AccessReviewBody>('POST', `/apis/${apiVersion}/subjectaccessreviews`, {
      body: { apiVersion, kind: 'SubjectAccessReview', metadata: {}, spec },
    });
    const status = res.body?.status;
    const out: AccessReviewResult = { allowed: status?.allowed === true };
    if (status?.denied) out.denied = true;
    if (status?.reason) out.reason = status.reason;
    if (status?.evaluationError) out.evaluationError = status.evaluationError;
    return out;
  };
}

// ---------------------------------------------------------------------------------------------
// caches

/** A map whose entries expire after their TTL; the oldest entry makes room when it is full. No timers. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly clock: Pick<Clock, 'now'> = realClock,
    private readonly maxEntries = 4096,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.clock.now() >= entry.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (ttlMs <= 0) return;
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.clock.now() + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Runs `fn` once per key at a time: callers arriving while a call is in flight share its outcome. */
class SingleFlight<V> {
  private readonly inflight = new Map<string, Promise<V>>();

  run(key: string, fn: () => Promise<V>): Promise<V> {
    const running = this.inflight.get(key);
    if (running) return running;
    const p = fn().finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }
}

export interface TokenCacheOptions {
  /** How long an accepted token is trusted (default 10 s). */
  successTtlMs?: number;
  /** How long a rejected token stays rejected (default 10 s). */
  failureTtlMs?: number;
  clock?: Pick<Clock, 'now'>;
  maxEntries?: number;
}

/**
 * Caches TokenReview answers by the token's SHA-256 (the token itself is never a key). Answers carrying a
 * reviewer error and failed reviews are not cached, as the reference's cached token authenticator.
 */
export function cachedTokenReviewer(inner: TokenReviewer, options: TokenCacheOptions = {}): TokenReviewer {
  const { successTtlMs = DEFAULT_REVIEW_CACHE_TTL_MS, failureTtlMs = DEFAULT_REVIEW_CACHE_TTL_MS } = options;
  const cache = new TtlCache<TokenReviewResult>(options.clock, options.maxEntries);
  const flights = new SingleFlight<TokenReviewResult>();
  return (token) => {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache.get(key);
    if (hit) return Promise.resolve(hit);
    return flights.run(key, async () => {
      const result = await inner(token);
      if (result.error === undefined) cache.set(key, result, result.authenticated ? successTtlMs : failureTtlMs);
      return result;
    });
  };
}

export interface AccessCacheOptions {
  /** How long an allowed decision is reused (default 10 s). */
  allowTtlMs?: number;
  /** How long a denied decision is reused (default 10 s). */
  denyTtlMs?: number;
  clock?: Pick<Clock, 'now'>;
  maxEntries?: number;
}

/** Caches SubjectAccessReview decisions by the review's whole subject and attributes. Failed reviews are not cached. */
export function cachedAccessReviewer(inner: AccessReviewer, options: AccessCacheOptions = {}): AccessReviewer {
  const { allowTtlMs = DEFAULT_REVIEW_CACHE_TTL_MS, denyTtlMs = DEFAULT_REVIEW_CACHE_TTL_MS } = options;
  const cache = new TtlCache<AccessReviewResult>(options.clock, options.maxEntries);
  const flights = new SingleFlight<AccessReviewResult>();
  return (user, attrs) => {
    const extra = Object.entries(user.extra ?? {})
      .map(([k, v]) => [k, [...v].sort()] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const key = JSON.stringify([user.username, user.uid ?? '', [...user.groups].sort(), extra, attrs.path, attrs.verb]);
    const hit = cache.get(key);
    if (hit) return Promise.resolve(hit);
    return flights.run(key, async () => {
      const result = await inner(user, attrs);
      cache.set(key, result, result.allowed ? allowTtlMs : denyTtlMs);
      return result;
    });
  };
}

export interface DelegatedReviewOptions extends Pick<TokenCacheOptions, 'clock'> {
  tokenTtlMs?: number;
  allowTtlMs?: number;
  denyTtlMs?: number;
  audiences?: string[];
}

/** Both reviewers against the API server the client talks to, cached as the reference's delegating options. */
export function delegatedReviewers(
  client: Requester,
  naming: Naming,
  options: DelegatedReviewOptions = {},
): { tokenReviewer: TokenReviewer; accessReviewer: AccessReviewer } {
  const { clock, tokenTtlMs, allowTtlMs, denyTtlMs, audiences } = options;
  return {
    tokenReviewer: cachedTokenReviewer(apiTokenReviewer(client, naming, audiences), {
      clock,
      successTtlMs: tokenTtlMs,
      failureTtlMs: tokenTtlMs,
    }),
    accessReviewer: cachedAccessReviewer(apiAccessReviewer(client, naming), { clock, allowTtlMs, denyTtlMs }),
  };
}

// ---------------------------------------------------------------------------------------------
// authentication of one request

export type AuthenticationResult =
  | { kind: 'user'; user: UserInfo; method: 'x509' | 'token' }
  | { kind: 'anonymous' }
  | { kind: 'failed'; reason: string };

export interface RequestAuthenticationOptions {
  /** Whether the TLS layer asked for client certificates (a client CA is configured). */
  clientCertificates: boolean;
  tokenReviewer?: TokenReviewer;
}

/**
 * Authenticates a request as the reference's union: a verified client certificate first, then a bearer
 * token. A request that presents no credentials is anonymous; one whose credentials all fail is `failed`.
 */
export async function authenticateRequest(
  req: IncomingMessage,
  options: RequestAuthenticationOptions,
): Promise<AuthenticationResult> {
  const errors: string[] = [];
  if (options.clientCertificates) {
    const socket = req.socket as TLSSocket;
    const cert = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate(false) : undefined;
    if (cert && Object.keys(cert).length > 0) {
      const described = `"${firstOf(cert.subject?.CN) ?? ''}"`;
      if (!socket.authorized) {
        errors.push(
          `verifying certificate ${described} failed: ${String(socket.authorizationError ?? 'unknown error')}`,
        );
      } else if (!allowsClientAuth(cert as DetailedPeerCertificate)) {
        errors.push(`verifying certificate ${described} failed: certificate specifies an incompatible key usage`);
      } else {
        const user = certificateUser(cert as DetailedPeerCertificate);
        if (user) return { kind: 'user', user: withAuthenticated(user), method: 'x509' };
      }
    }
  }
  const token = bearerToken(req.headers.authorization);
  if (token !== undefined) {
    if (!options.tokenReviewer) errors.push('invalid bearer token');
    else {
      try {
        const result = await options.tokenReviewer(token);
        if (result.authenticated && result.user?.username) {
          return { kind: 'user', user: withAuthenticated(result.user), method: 'token' };
        }
        errors.push(result.error ? `invalid bearer token, ${result.error}` : 'invalid bearer token');
      } catch (err) {
        errors.push(`token review failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }
  if (errors.length) return { kind: 'failed', reason: errors.join('; ') };
  return { kind: 'anonymous' };
}

/** `Authorization: Bearer <token>` as the reference reads it; undefined when absent or another scheme. */
export function bearerToken(header: string | undefined): string | undefined {
  const auth = header?.trim();
  if (!auth) return undefined;
  const parts = auth.split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return undefined;
  return parts[1] ? parts[1] : undefined;
}

function certificateUser(cert: DetailedPeerCertificate): UserInfo | undefined {
  const cn = firstOf(cert.subject?.CN);
  if (!cn) return undefined;
  const o = cert.subject?.O as string | string[] | undefined;
  const groups = o === undefined ? [] : Array.isArray(o) ? [...o] : [o];
  return { username: cn, groups };
}

/** A certificate without the extended key usage extension may be used for anything, as in x509 verification. */
function allowsClientAuth(cert: DetailedPeerCertificate): boolean {
  const usages = cert.ext_key_usage;
  if (!usages || usages.length === 0) return true;
  return usages.includes(CLIENT_AUTH_OID) || usages.includes(ANY_EXTENDED_KEY_USAGE_OID);
}

function firstOf(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function withAuthenticated(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

// ---------------------------------------------------------------------------------------------
// always-allowed paths

/**
 * The reference's path authorizer: each entry matches its path exactly, or, ending in `*`, every path with
 * that prefix (`/healthz/*`, `/metrics*`). `*` anywhere else is an error.
 */
export function pathMatcher(alwaysAllowPaths: readonly string[]): (path: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const raw of alwaysAllowPaths) {
    const p = raw.replace(/^\//, '');
    if (p.length === 0) {
      exact.add(p);
      continue;
    }
    if (p.slice(0, -1).includes('*')) throw new Error(`only trailing * allowed in "${raw}"`);
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (path) => {
    const p = path.replace(/^\//, '');
    return exact.has(p) || prefixes.some((prefix) => p.startsWith(prefix));
  };
}
