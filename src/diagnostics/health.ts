/**
 * `/healthz`, `/livez` and `/readyz` with named checks, answering with the reference's plain-text bodies:
 * `ok`, or with `?verbose` one `[+]name ok` / `[-]name failed: reason withheld` line per check and a final
 * `<endpoint> check passed`; a failing endpoint always answers 500 with the lines and `<endpoint> check failed`.
 * `?exclude=<name>` (repeatable) skips checks; names that match nothing are reported in a `warn:` line.
 * `/<endpoint>/<name>` runs one check and shows its reason. Runs of the root endpoints of healthz and readyz are
 * recorded for the health SLIs.
 */
import type { Logger } from 'pino';
import { type Clock, realClock } from '../util/clock.ts';
import { type DiagnosticsRequest, type Reply, type RouteRegistry, textReply } from './server.ts';

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';
export const HEALTH_ENDPOINTS: readonly HealthEndpoint[] = ['healthz', 'livez', 'readyz'];

export interface CheckResult {
  ok: boolean;
  message?: string;
}

export type HealthCheck = () => CheckResult | Promise<CheckResult>;

/** The SLI recorder (`recordHealthCheck` of the metrics' slis module): `type` is the endpoint. */
export type RecordHealthCheck = (type: 'healthz' | 'readyz', name: string, ok: boolean) => void;

/** Endpoints whose runs feed the health SLIs (the spec's `type` label values). */
const SLI_ENDPOINTS = new Set<HealthEndpoint>(['healthz', 'readyz']);

export interface HealthOptions {
  recordHealthCheck?: RecordHealthCheck;
  /** A check that has not answered within this is failed (default 10 s). */
  checkTimeoutMs?: number;
  /** Register the always-passing `ping` check on every endpoint (default true). */
  ping?: boolean;
  clock?: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
  logger?: Pick<Logger, 'info'>;
}

export interface CheckOutcome {
  name: string;
  ok: boolean;
  excluded: boolean;
  message?: string;
}

export interface EndpointOutcome {
  ok: boolean;
  checks: CheckOutcome[];
  /** Excluded names no check has, sorted. */
  unmatched: string[];
}

interface Registered {
  name: string;
  check: HealthCheck;
  endpoints: Set<HealthEndpoint>;
}

export class HealthChecks {
  private readonly checks: Registered[] = [];
  private registry?: RouteRegistry;
  private readonly timeoutMs: number;
  private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>;

  constructor(private readonly options: HealthOptions = {}) {
    this.timeoutMs = options.checkTimeoutMs ?? 10_000;
    this.clock = options.clock ?? realClock;
    if (options.ping ?? true) this.add('ping', () => ({ ok: true }));
  }

  /**
   * Registers a check on endpoints: by default all three (a liveness check, which readyz includes too); pass
   * `['readyz']` for readiness-only checks such as informer sync. healthz always has exactly the livez set, as
   * in the reference, so naming either one means both.
   */
  add(name: string, check: HealthCheck, endpoints: readonly HealthEndpoint[] = HEALTH_ENDPOINTS): this {
    if (!name || name.includes('/')) throw new Error(`invalid health check name "${name}"`);
    if (this.checks.some((c) => c.name === name)) throw new Error(`health check "${name}" is already registered`);
    if (endpoints.length === 0) throw new Error(`health check "${name}" needs at least one endpoint`);
    const set = new Set(endpoints);
    if (set.has('healthz') || set.has('livez')) {
      set.add('healthz');
      set.add('livez');
    }
    const registered: Registered = { name, check, endpoints: set };
    this.checks.push(registered);
    if (this.registry) this.installCheck(this.registry, registered);
    return this;
  }

  /** Names of an endpoint's checks, in registration order. */
  names(endpoint: HealthEndpoint): string[] {
    return this.of(endpoint).map((c) => c.name);
  }

  /** Runs an endpoint's checks (concurrently), skipping `exclude`d ones. */
  async run(endpoint: HealthEndpoint, exclude: readonly string[] = []): Promise<EndpointOutcome> {
    const excluded = new Set(exclude);
    const checks = this.of(endpoint);
    const outcomes = await Promise.all(
      checks.map(async (c): Promise<CheckOutcome> => {
        if (excluded.has(c.name)) return { name: c.name, ok: true, excluded: true };
        const result = await this.runOne(c);
        return { name: c.name, ok: result.ok, excluded: false, ...(result.message ? { message: result.message } : {}) };
      }),
    );
    const known = new Set(checks.map((c) => c.name));
    const unmatched = [...excluded].filter((n) => !known.has(n)).sort();
    return { ok: outcomes.every((o) => o.ok), checks: outcomes, unmatched };
  }

  /** Whether every check of an endpoint passes (the watchdog's health function). */
  async passing(endpoint: HealthEndpoint, exclude: readonly string[] = []): Promise<boolean> {
    return (await this.run(endpoint, exclude)).ok;
  }

  /** The handler of `/<endpoint>`. */
  handler(endpoint: HealthEndpoint): (req: Pick<DiagnosticsRequest, 'query'>) => Promise<Reply> {
    return async (req) => {
      const outcome = await this.run(endpoint, req.query.getAll('exclude'));
      if (SLI_ENDPOINTS.has(endpoint)) {
        for (const c of outcome.checks) {
          if (!c.excluded) this.options.recordHealthCheck?.(endpoint as 'healthz' | 'readyz', c.name, c.ok);
        }
      }
      let lines = '';
      for (const c of outcome.checks) {
        if (c.excluded) lines += `[+]${c.name} excluded: ok\n`;
        else if (c.ok) lines += `[+]${c.name} ok\n`;
        else lines += `[-]${c.name} failed: reason withheld\n`;
      }
      if (outcome.unmatched.length) {
        lines += `warn: some health checks cannot be excluded: no matches for ${outcome.unmatched.map((n) => JSON.stringify(n)).join(', ')}\n`;
      }
      if (!outcome.ok) {
        const failed = outcome.checks.filter((c) => !c.ok);
        this.options.logger?.info(
          { checks: failed.map((c) => c.name), reasons: failed.map((c) => `[-]${c.name} failed: ${c.message ?? ''}`) },
          `${endpoint} check failed`,
        );
        return textReply(500, `${lines}${endpoint} check failed\n`);
      }
      if (!req.query.has('verbose')) return textReply(200, 'ok');
      return textReply(200, `${lines}${endpoint} check passed\n`);
    };
  }

  /** The handler of `/<endpoint>/<name>`: `ok`, or 500 with the check's reason. */
  checkHandler(name: string): () => Promise<Reply> {
    return async () => {
      const registered = this.checks.find((c) => c.name === name);
      if (!registered) return textReply(404, '404 page not found\n');
      const result = await this.runOne(registered);
      if (result.ok) return textReply(200, 'ok');
      return textReply(500, `internal server error: ${result.message ?? 'check failed'}\n`);
    };
  }

  /** Registers the three endpoints and every check's own path; checks added later get theirs at once. */
  install(registry: RouteRegistry): void {
    if (this.registry) throw new Error('health checks are already installed');
    this.registry = registry;
    for (const endpoint of HEALTH_ENDPOINTS) registry.route(`/${endpoint}`, this.handler(endpoint));
    for (const c of this.checks) this.installCheck(registry, c);
  }

  private installCheck(registry: RouteRegistry, c: Registered): void {
    for (const endpoint of HEALTH_ENDPOINTS) {
      if (c.endpoints.has(endpoint))
        registry.route(`/${endpoint}/${c.name}`, this.checkHandler(c.name), { listed: false });
    }
  }

  private of(endpoint: HealthEndpoint): Registered[] {
    return this.checks.filter((c) => c.endpoints.has(endpoint));
  }

  /** One check, with thrown errors and timeouts turned into failures; the timer is always cleared. */
  private async runOne(c: Registered): Promise<CheckResult> {
    let timer: ReturnType<typeof this.clock.setTimeout> | undefined;
    const timeout = new Promise<CheckResult>((resolve) => {
      timer = this.clock.setTimeout(
        () => resolve({ ok: false, message: `check did not answer within ${this.timeoutMs} ms` }),
        this.timeoutMs,
      );
    });
    try {
      const result = await Promise.race([Promise.resolve().then(c.check), timeout]);
      return result && typeof result.ok === 'boolean' ? result : { ok: false, message: 'check returned no result' };
    } catch (err) {
      return { ok: false, message: (err as Error)?.message ?? String(err) };
    } finally {
      if (timer !== undefined) this.clock.clearTimeout(timer);
    }
  }
}
