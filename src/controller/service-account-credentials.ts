/**
 * `--use-service-account-credentials`, as kube-controller-manager's: each controller's requests authenticate as
 * its own service account in the system namespace (`system:serviceaccount:<ns>:certificate-controller`, ...), with
 * a bound token from the TokenRequest API, the account created when missing, and the token renewed before it
 * expires. Each controller's events go with its account too; the informers and the leader election keep the
 * daemon's own credentials, as there.
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../api/meta.ts';
import { group, type Naming } from '../api/naming.ts';
import { serviceAccountUsername } from '../api/service-accounts.ts';
import { type BearerSource, KubeClient, sleep } from '../client/client.ts';
import { isAlreadyExists, isNotFound } from '../client/errors.ts';
import { KubeConfig } from '../client/kubeconfig.ts';
import type { Clock } from '../util/clock.ts';
import type { ControllerDefinition } from './controller.ts';

/** The lifetime asked for each token, as the reference's client builder (one hour). */
export const TOKEN_EXPIRATION_SECONDS = 3600;
/** The share of a token's lifetime left when it is renewed (the reference's leeway, 20%). */
const LEEWAY_PERCENT = 20;
/** A shorter lifetime than this is taken for a clock skew and counted as this (the server's minimum). */
const MIN_LIFETIME_MS = 10 * 60_000;
/** Attempts per renewal and the first wait between them, doubling (the reference's backoff: 0.5 s, 1 s, 2 s). */
const ATTEMPTS = 4;
const FIRST_BACKOFF_MS = 500;

/** When a token is renewed and when it stops being sent, in the clock's (monotonic) milliseconds. */
export interface TokenTimes {
  renewAtMs: number;
  expiresAtMs: number;
}

/**
 * The times of a token that the server says expires at `expirationTimestamp`, received at wall time `wallNowMs`
 * and monotonic time `nowMs`: renewed once 80% of its lifetime has passed; a lifetime under ten minutes (the
 * server's clock ahead of ours) is counted as ten minutes, as the reference does.
 */
export function tokenTimes(expirationTimestamp: string, wallNowMs: number, nowMs: number): TokenTimes {
  const expires = Date.parse(expirationTimestamp);
  const lifetime = Math.max(Number.isNaN(expires) ? 0 : expires - wallNowMs, MIN_LIFETIME_MS);
  return { renewAtMs: nowMs + lifetime - (lifetime * LEEWAY_PERCENT) / 100, expiresAtMs: nowMs + lifetime };
}

/** What a held token is good for at `nowMs`: sent as is, sent while a renewal runs, or not sent (wait for one). */
export function tokenUse(held: TokenTimes | undefined, nowMs: number): 'use' | 'renew' | 'wait' {
  if (!held || nowMs >= held.expiresAtMs) return 'wait';
  return nowMs < held.renewAtMs ? 'use' : 'renew';
}

/** The TokenRequest answer's part this reads. */
interface TokenRequest extends KubeObject {
  status?: { token?: string; expirationTimestamp?: string };
}

interface Held extends TokenTimes {
  token: string;
  obtainedAtMs: number;
}

export interface TokenSourceOptions {
  /** The daemon's own client (its credentials), unfenced: it reads and creates the account and requests tokens. */
  root: KubeClient;
  naming: Naming;
  namespace: string;
  name: string;
  clock: Clock;
  logger: Logger;
  /** Wall time in ms (tokens' expiry is a wall time). */
  wallNow?: () => number;
}

/**
 * One service account's token: requested on first use (its account created when the server has none), renewed in
 * the background once 80% of its lifetime has passed (requests keep the held token meanwhile), and requested again
 * at once after the server refused it.
 * One renewal at a time, each of at most four attempts with backoff; `stop` ends a renewal in progress.
 */
export class ServiceAccountToken implements BearerSource {
  private held?: Held;
  private renewal?: Promise<Held>;
  private readonly stopped = new AbortController();

  constructor(private readonly o: TokenSourceOptions) {}

  async token(signal?: AbortSignal): Promise<string> {
    const use = tokenUse(this.held, this.o.clock.now());
    if (use === 'use') return this.held!.token;
    if (!this.renewal) {
      const renewal = this.renew().finally(() => {
        this.renewal = undefined;
      });
      renewal.catch((err) => this.o.logger.error({ err: String(err) }, 'service account token renewal failed'));
      this.renewal = renewal;
    }
    if (use === 'renew') return this.held!.token;
    return (await (signal ? abortable(this.renewal, signal) : this.renewal)).token;
  }

  refused(sentAtMs: number): void {
    if (this.held && this.held.obtainedAtMs <= sentAtMs) this.held = undefined;
  }

  stop(): void {
    this.stopped.abort();
  }

  private async renew(): Promise<Held> {
    const { namespace, name, clock } = this.o;
    const signal = this.stopped.signal;
    let last: unknown;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(FIRST_BACKOFF_MS * 2 ** (attempt - 1), clock, signal);
      try {
        // The account usually exists: asked for first, its token costs one round trip, not two.
        const answer = await this.requestToken(signal).catch(async (err) => {
          if (!isNotFound(err)) throw err;
          await this.createAccount(signal);
          return this.requestToken(signal);
        });
        const token = answer.status?.token;
        if (!token) throw new Error('the TokenRequest answer has no token');
        const now = clock.now();
        const times = tokenTimes(answer.status?.expirationTimestamp ?? '', (this.o.wallNow ?? Date.now)(), now);
        this.held = { token, obtainedAtMs: now, ...times };
        return this.held;
      } catch (err) {
        if (signal.aborted) throw err;
        last = err;
        this.o.logger.warn({ serviceAccount: `${namespace}/${name}`, err: String(err) }, 'service account token');
      }
    }
    throw new Error(`failed to get a token for ${namespace}/${name}: ${(last as Error)?.message ?? last}`);
  }

  /** The missing account (and its namespace, whose creation may fail: the account's then says why). */
  private async createAccount(signal: AbortSignal): Promise<void> {
    const { root, namespace, name } = this.o;
    const accounts = root.kind('ServiceAccount');
    const namespaces = root.kind('Namespace');
    await namespaces.get(undefined, namespace, { signal }).catch(async (err) => {
      if (!isNotFound(err)) return;
      const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } };
      await namespaces.create(ns, { signal }).catch(() => undefined);
    });
    const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace, name } };
    await accounts.create(account, { signal }).catch((err) => {
      if (!isAlreadyExists(err)) throw err;
    });
  }

  private async requestToken(signal: AbortSignal): Promise<TokenRequest> {
    const { root, naming, namespace, name } = this.o;
    const path = `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`;
    const body = {
      apiVersion: `${group(naming, 'authentication')}/v1`,
      kind: 'TokenRequest',
      spec: { expirationSeconds: TOKEN_EXPIRATION_SECONDS },
    };
    return (await root.request<TokenRequest>('POST', path, { body, signal })).body;
  }
}

/** `promise`, or the signal's reason once it aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The configuration's cluster (server, CA, TLS name, proxy) with no credentials: clients on it send only the
 * bearer token they are given, no client certificate (the reference's `AnonymousClientConfig`).
 */
export function anonymousKubeConfig(kc: KubeConfig): KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no current cluster');
  const anonymous = new KubeConfig();
  anonymous.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'anonymous', cluster: cluster.name, user: 'anonymous' }],
    currentContext: 'anonymous',
  });
  return anonymous;
}

/** Each controller's client with its service account's token; one token per account, shared by its controllers. */
export class ServiceAccountCredentials {
  private readonly tokens = new Map<string, ServiceAccountToken>();
  private readonly anonymous: KubeClient;

  constructor(private readonly o: Omit<TokenSourceOptions, 'name'>) {
    this.anonymous = new KubeClient(anonymousKubeConfig(o.root.kubeConfig), o.root.registry, o.root.options);
    // Its connection (other TLS material than the daemon's: one of its own) made while the informers sync, as the
    // tokens are requested: in a start's trace, the first reconcile's access review waited 28 ms for its handshake.
    this.anonymous.preconnect().catch(() => undefined);
  }

  /**
   * The client `d` sends its requests through: `base`'s options (rate limiter, write guard, user agent) with its
   * account's token; `base` itself for a controller the reference runs in the API server, which has no account.
   */
  clientFor(d: ControllerDefinition, base: KubeClient): KubeClient {
    const name = d.serviceAccount?.(this.o.naming);
    if (!name) return base;
    let token = this.tokens.get(name);
    if (!token) {
      token = new ServiceAccountToken({ ...this.o, name, logger: this.o.logger.child({ serviceAccount: name }) });
      this.tokens.set(name, token);
      // Requested now, while the informers sync, as the reference requests it when it builds the controller's
      // client: the first reconcile does not wait for it (a failure is logged by the renewal).
      token.token().catch(() => undefined);
    }
    // The account's user name ends the user agent, as the reference's client for an account says who it is.
    const userAgent = `${base.options.userAgent}/${serviceAccountUsername(this.o.namespace, name)}`;
    return this.anonymous.derive({ ...base.options, bearer: token, userAgent });
  }

  /** Ends the renewals in progress (shutdown). */
  stop(): void {
    for (const token of this.tokens.values()) token.stop();
  }
}
