/**
 * The candidate side of coordinated leader election (client-go's `leasecandidate`): keeps a LeaseCandidate
 * object alive, renewing it every 5 minutes and at once when the election controller pings it.
 */
import type { KubeList, WatchEvent } from '../api/meta.ts';
import type { LeaseCandidate, LeaseCandidateSpec } from '../api/types/coordination.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.ts';
import type { ListOptions, WatchOptions } from '../client/resource.ts';
import { type Clock, realClock, type Timer } from '../util/clock.ts';
import { rfc3339Micro } from '../util/time.ts';
import { defaultControllerRateLimiter, itemExponential, type RateLimiter } from '../workqueue/ratelimit.ts';
import type { ElectorLogger } from './elector.ts';
import { pause, withDeadline } from './timing.ts';

export const CANDIDATE_RENEW_INTERVAL_MS = 5 * 60_000;

/** The LeaseCandidate calls made; a `ResourceClient<LeaseCandidate>` (`client.kind('LeaseCandidate')`) fits. */
export interface LeaseCandidateApi {
  readonly apiVersion: string;
  get(namespace: string, name: string, opts: { signal?: AbortSignal }): Promise<LeaseCandidate>;
  list(namespace: string, opts: ListOptions & { signal?: AbortSignal }): Promise<KubeList<LeaseCandidate>>;
  watch(
    namespace: string,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<LeaseCandidate>) => void,
    signal: AbortSignal,
  ): Promise<void>;
  create(obj: LeaseCandidate, opts: { signal?: AbortSignal }): Promise<LeaseCandidate>;
  replace(obj: LeaseCandidate, opts: { signal?: AbortSignal }): Promise<LeaseCandidate>;
}

export interface LeaseCandidateConfig {
  candidates: LeaseCandidateApi;
  namespace: string;
  /** The candidate's name: the same identity the elector uses. */
  name: string;
  /** The Lease contended for. */
  leaseName: string;
  binaryVersion: string;
  /** Required when strategy is `OldestEmulationVersion`. */
  emulationVersion?: string;
  strategy: string;
  clock?: Clock;
  wallClock?: () => Date;
  renewIntervalMs?: number;
  logger?: ElectorLogger;
}

/** A watch that ends sooner than this counts as a failure and backs off. */
const SHORT_WATCH_MS = 1_000;
/** Deadline of one write or read of the candidate. */
const REQUEST_TIMEOUT_MS = 30_000;
const KEY = 'candidate';

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A MicroTime in microseconds since the epoch (Date.parse alone stops at milliseconds); absent is -Infinity. */
export function microTime(t: string | undefined): number {
  if (t === undefined) return Number.NEGATIVE_INFINITY;
  const fraction = /\.(\d+)(?:Z|[+-]\d\d:\d\d)$/i.exec(t)?.[1] ?? '';
  return Math.floor(Date.parse(t) / 1000) * 1e6 + Number(fraction.padEnd(6, '0').slice(0, 6));
}

export class LeaseCandidateClient {
  private readonly clock: Clock;
  private readonly renewIntervalMs: number;
  private readonly log: ElectorLogger;
  private readonly stopper = new AbortController();
  private readonly ensureLimiter: RateLimiter<string>;
  private readonly watchBackoff = itemExponential<string>(800, 30_000);
  /** The object as last listed, watched or written; undefined when it does not exist (yet). */
  private cached: LeaseCandidate | undefined;
  private synced = false;
  private timer: Timer | undefined;
  private ensuring: Promise<void> | undefined;
  private again = false;
  /** The pingTime last acknowledged, so one ping is answered once even if clocks disagree. */
  private answeredPing: string | undefined;
  private watching: Promise<void> | undefined;

  constructor(private readonly config: LeaseCandidateConfig) {
    for (const field of ['namespace', 'name', 'leaseName', 'binaryVersion', 'strategy'] as const) {
      if (!config[field]) throw new Error(`${field} may not be empty`);
    }
    if (config.strategy === 'OldestEmulationVersion' && !config.emulationVersion) {
      throw new Error('emulationVersion may not be empty when strategy is OldestEmulationVersion');
    }
    this.clock = config.clock ?? realClock;
    this.renewIntervalMs = config.renewIntervalMs ?? CANDIDATE_RENEW_INTERVAL_MS;
    this.log = config.logger ?? { info() {}, error() {} };
    this.ensureLimiter = defaultControllerRateLimiter<string>(this.clock);
  }

  /** Starts watching; the first renew (or create) follows the first list. */
  start(): void {
    if (this.watching || this.stopper.signal.aborted) return;
    this.watching = this.watchLoop(this.stopper.signal);
  }

  /** Whether the first list has completed (readiness: "candidate informer synced"). */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Ends the watch, the timer and any write in flight. */
  async stop(): Promise<void> {
    this.stopper.abort();
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.watching, this.ensuring]);
  }

  /** Lists then watches the one object, again and again, backing off after errors and very short watches. */
  private async watchLoop(signal: AbortSignal): Promise<void> {
    const { candidates, namespace, name } = this.config;
    const fieldSelector = `metadata.name=${name}`;
    while (!signal.aborted) {
      const started = this.clock.now();
      let failed = false;
      try {
        const list = await candidates.list(namespace, { fieldSelector, signal });
        this.observe(list.items[0]);
        if (!this.synced) {
          this.synced = true;
          this.schedule(0);
        }
        const stream = new AbortController();
        const watchSignal = AbortSignal.any([signal, stream.signal]);
        const opts: WatchOptions = { fieldSelector, resourceVersion: list.metadata.resourceVersion };
        await candidates.watch(namespace, opts, (e) => this.onWatchEvent(e, stream), watchSignal);
      } catch (err) {
        if (signal.aborted) return;
        failed = true;
        this.log.error(`watch of LeaseCandidate ${namespace}/${name} failed: ${errorText(err)}`);
      }
      const short = this.clock.now() - started < SHORT_WATCH_MS;
      if (!failed && !short) this.watchBackoff.forget(KEY);
      await pause(this.clock, failed || short ? this.watchBackoff.when(KEY) : 0, signal);
    }
  }

  private onWatchEvent(e: WatchEvent<LeaseCandidate>, stream: AbortController): void {
    if (e.type === 'ADDED' || e.type === 'MODIFIED') this.observe(e.object);
    else if (e.type === 'DELETED') this.cached = undefined;
    else if (e.type === 'ERROR') stream.abort(); // e.g. 410 Gone: list again
  }

  /** Caches the object and answers a ping newer than the last renew. */
  private observe(obj: LeaseCandidate | undefined): void {
    this.cached = obj;
    const ping = obj?.spec?.pingTime;
    if (ping === undefined || ping === this.answeredPing) return;
    if (microTime(ping) > microTime(obj?.spec?.renewTime)) {
      this.answeredPing = ping;
      this.schedule(0);
    }
  }

  /** Arms the single timer for an ensure in `ms`; while an ensure runs, asks for another right after it. */
  private schedule(ms: number): void {
    if (this.stopper.signal.aborted) return;
    if (this.ensuring) {
      this.again = true;
      return;
    }
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.ensuring = this.ensureAndReschedule();
    }, ms);
  }

  private async ensureAndReschedule(): Promise<void> {
    const ok = await this.ensure(this.stopper.signal);
    this.ensuring = undefined;
    const again = this.again;
    this.again = false;
    if (ok) this.ensureLimiter.forget(KEY);
    this.schedule(again ? 0 : ok ? this.renewIntervalMs : this.ensureLimiter.when(KEY));
  }

  /** Creates the candidate, or renews a copy of the cached one with renewTime = now. Never throws. */
  private async ensure(signal: AbortSignal): Promise<boolean> {
    const { candidates, namespace, name } = this.config;
    const now = rfc3339Micro(this.config.wallClock?.() ?? new Date());
    const cached = this.cached;
    try {
      this.cached = await this.call(signal, (s) => {
        if (!cached) return candidates.create(this.fresh(now), { signal: s });
        const spec = { ...(cached.spec as LeaseCandidateSpec), renewTime: now };
        return candidates.replace({ ...cached, spec }, { signal: s });
      });
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      this.log.error(`failed to ensure LeaseCandidate ${namespace}/${name}: ${errorText(err)}`);
      if (isNotFound(err)) this.cached = undefined;
      else if (isConflict(err) || isAlreadyExists(err)) await this.refresh(signal);
      return false;
    }
  }

  /** Re-reads the object after a lost race, so the retry does not repeat it. */
  private async refresh(signal: AbortSignal): Promise<void> {
    try {
      const { candidates, namespace, name } = this.config;
      this.cached = await this.call(signal, (s) => candidates.get(namespace, name, { signal: s }));
    } catch (err) {
      if (isNotFound(err)) this.cached = undefined;
    }
  }

  private call<T>(signal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(this.clock, signal, REQUEST_TIMEOUT_MS, 'LeaseCandidate request', fn);
  }

  private fresh(renewTime: string): LeaseCandidate {
    const c = this.config;
    const spec: LeaseCandidateSpec = {
      leaseName: c.leaseName,
      binaryVersion: c.binaryVersion,
      strategy: c.strategy,
      renewTime,
    };
    if (c.emulationVersion) spec.emulationVersion = c.emulationVersion;
    return {
      apiVersion: c.candidates.apiVersion,
      kind: 'LeaseCandidate',
      metadata: { namespace: c.namespace, name: c.name },
      spec,
    };
  }
}
