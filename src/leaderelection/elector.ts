/**
 * Classic leader election on a Lease lock, after client-go's `leaderelection.LeaderElector`.
 *
 * Expiry follows the observed-time model: a foreign lease is valid until `leaseDurationSeconds` after this
 * process *saw* its record change, by the local monotonic clock. Timestamps inside the record are written
 * but never compared with the local clock, so absolute clock skew between members does not matter.
 * There is no fencing: design the leader's work for "at most briefly two leaders".
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Lease } from '../api/types/coordination.ts';
import { isConflict, isNotFound } from '../client/errors.ts';
import { type Clock, realClock } from '../util/clock.ts';
import { rfc3339Micro } from '../util/time.ts';
import { coordinatedRenewal, coordinatedVerdict } from './coordinated.ts';
import type { LeaseGuard } from './guard.ts';
import type { LeaderMetrics } from './metrics.ts';
import { type LeaderElectionRecord, leaseSpecFromRecord, recordFromLease } from './record.ts';
import { pause, withDeadline } from './timing.ts';

/** Acquire retries wait `retryPeriod · [1, 1 + JITTER_FACTOR)`. */
export const JITTER_FACTOR = 1.2;

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** Event reason of `became leader` / `stopped leading`. */
export const LEADER_ELECTION_REASON = 'LeaderElection';

/** The Lease calls the elector makes; a `ResourceClient<Lease>` (`client.kind('Lease')`) fits. */
export interface LeaseApi {
  readonly apiVersion: string;
  get(namespace: string, name: string, opts: { signal?: AbortSignal }): Promise<Lease>;
  create(lease: Lease, opts: { signal?: AbortSignal }): Promise<Lease>;
  replace(lease: Lease, opts: { signal?: AbortSignal }): Promise<Lease>;
}

export interface LeaderCallbacks {
  /**
   * Runs on its own once leadership is won; `signal` aborts when leadership ends. On a graceful stop the
   * lease is released only once the returned promise settles (at most renewDeadline later).
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Always called once when `run` ends, whether or not this process ever led. */
  onStoppedLeading(): void;
  /** Called asynchronously whenever the observed holder differs from the last one reported. */
  onNewLeader?(identity: string): void;
}

export interface ElectorLogger {
  info(msg: string): void;
  error(msg: string): void;
}

export interface LeaderElectionConfig {
  lock: { namespace: string; name: string };
  leases: LeaseApi;
  /** Unique per process; see {@link newIdentity}. */
  identity: string;
  /** Name in metrics and health messages; defaults to the lock's name. */
  name?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /**
   * When leadership ends (stop, or a failed renew as in client-go), write a released record if the last
   * observed one is still ours, so others need not wait for expiry.
   */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  /** Monotonic clock for waits and observed times. */
  clock?: Clock;
  /** Wall time for the record's MicroTime stamps. */
  wallClock?: () => Date;
  /** Source of jitter in [0, 1). */
  random?: () => number;
  metrics?: LeaderMetrics;
  /** Told of every successful renewal and of the end of leadership; it fences the controllers' writes. */
  guard?: LeaseGuard;
  /** `(reason, message)` for an event on the Lease: `<identity> became leader` / `<identity> stopped leading`. */
  onEvent?(reason: string, message: string): void;
  logger?: ElectorLogger;
  /**
   * Coordinated mode (gate `CoordinatedLeaderElection`): never create or take the Lease, renew only while the
   * election controller names this process as holder and asks nobody else to take over (see coordinated.ts).
   */
  coordinated?: boolean;
  /**
   * The Lease as the caller already observed it, and when (on `clock`): the elector starts from that observation,
   * so a Lease the caller has watched expire is taken at once instead of after another leaseDuration.
   */
  observed?: { lease: Lease; atMs: number };
}

/** `<hostname>_<uuid>`, the identity KCM uses. */
export function newIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

/** Fixed field order, so equal records serialize equally. */
function serialize(r: LeaderElectionRecord): string {
  return JSON.stringify([
    r.holderIdentity,
    r.leaseDurationSeconds,
    r.acquireTime ?? null,
    r.renewTime ?? null,
    r.leaseTransitions,
    r.strategy ?? null,
    r.preferredHolder ?? null,
  ]);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const silent: ElectorLogger = { info() {}, error() {} };

export class LeaderElector {
  readonly identity: string;
  readonly name: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Deadline of each Lease call: max(1 s, renewDeadline / 2). */
  readonly requestTimeoutMs: number;
  private readonly clock: Clock;
  private readonly log: ElectorLogger;
  /** The holder a standby last said it waits for. */
  private waitingFor?: string;
  private readonly lockDesc: string;

  private observed: LeaderElectionRecord | undefined;
  private observedRaw = '';
  /** Local monotonic time at which the observed record last changed. */
  private observedTime = 0;
  /** The last Lease read or written: updates replace it, carrying its resourceVersion. */
  private lease: Lease | undefined;
  private reportedLeader = '';
  private started = false;
  /** The caller's observation of the Lease, until the first attempt has used it in place of a read. */
  private seeded = false;
  /** Ends a standby's wait for its next attempt early: a new observation may move that attempt. */
  private wakeAcquire?: () => void;

  constructor(private readonly config: LeaderElectionConfig) {
    const lease = config.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    const renew = config.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    const retry = config.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    if (lease <= renew) throw new Error('leaseDuration must be greater than renewDeadline');
    if (renew <= JITTER_FACTOR * retry) throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (lease <= 0) throw new Error('leaseDuration must be greater than zero');
    if (renew <= 0) throw new Error('renewDeadline must be greater than zero');
    if (retry <= 0) throw new Error('retryPeriod must be greater than zero');
    if (!config.callbacks?.onStartedLeading) throw new Error('OnStartedLeading callback must not be nil');
    if (!config.callbacks.onStoppedLeading) throw new Error('OnStoppedLeading callback must not be nil');
    if (!config.lock || !config.leases) throw new Error('Lock must not be nil.');
    if (!config.identity) throw new Error('Lock identity is empty');
    this.identity = config.identity;
    this.name = config.name ?? config.lock.name;
    this.leaseDurationMs = lease;
    this.renewDeadlineMs = renew;
    this.retryPeriodMs = retry;
    this.requestTimeoutMs = Math.max(1000, renew / 2);
    this.clock = config.clock ?? realClock;
    this.log = config.logger ?? silent;
    this.lockDesc = `${config.lock.namespace}/${config.lock.name}`;
    if (config.observed) {
      this.lease = config.observed.lease;
      this.setObserved(recordFromLease(config.observed.lease));
      this.observedTime = config.observed.atMs;
      this.seeded = true;
    }
    config.metrics?.leaderOff();
  }

  /** Whether the last observed record names this process (it may have expired since). */
  isLeader(): boolean {
    return this.observed?.holderIdentity === this.identity;
  }

  /** The holder in the last observed record, `''` when none. */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * The health verdict: an error message when this process is the observed leader but has not renewed for
   * longer than leaseDuration + `toleranceMs`, otherwise undefined.
   */
  check(toleranceMs: number): string | undefined {
    if (!this.isLeader()) return undefined;
    if (this.clock.now() - this.observedTime > this.leaseDurationMs + toleranceMs) {
      return `failed election to renew leadership on lease ${this.name}`;
    }
    return undefined;
  }

  /**
   * Campaigns until leadership is won, then renews until it is lost or `signal` aborts. Resolves after
   * `onStoppedLeading`, which is always called. An elector runs once.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('LeaderElector.run may only be called once');
    this.started = true;
    try {
      if (!(await this.acquire(signal))) return;
      const leading = new AbortController();
      const work = this.startLeading(leading.signal);
      try {
        await this.renew(signal);
      } finally {
        // A graceful stop lets the leader's work wind down while the lease is still ours, so nothing it writes
        // on the way out is refused; a lost lease stops it at once.
        if (signal.aborted) {
          leading.abort();
          await Promise.race([work, pause(this.clock, this.renewDeadlineMs, new AbortController().signal)]);
        }
        this.config.guard?.revoke();
        leading.abort();
        this.config.metrics?.leaderOff();
        this.event('stopped leading');
      }
      if (this.config.releaseOnCancel) {
        // Once released, another replica may write at once: not before our own writes on their way are over.
        await this.config.guard?.drained(this.leaseDurationMs);
        await this.release();
      }
    } finally {
      this.config.callbacks.onStoppedLeading();
    }
  }

  private event(what: string): void {
    try {
      this.config.onEvent?.(LEADER_ELECTION_REASON, `${this.identity} ${what}`);
    } catch (err) {
      this.log.error(`recording the ${what} event failed: ${errorText(err)}`);
    }
  }

  /** Runs the leader's work; the promise settles when that work ends (never rejects). */
  private startLeading(signal: AbortSignal): Promise<void> {
    return Promise.resolve()
      .then(() => this.config.callbacks.onStartedLeading(signal))
      .catch((err) => this.log.error(`leader work of ${this.identity} failed: ${errorText(err)}`));
  }

  /** Tries at once, then after every jittered retry period, until it wins (true) or `signal` aborts (false). */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info(`attempting to acquire leader lease ${this.lockDesc}...`);
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(signal);
      this.maybeReportTransition();
      if (ok) {
        this.log.info(`successfully acquired lease ${this.lockDesc}`);
        this.event('became leader');
        this.config.metrics?.leaderOn();
        return true;
      }
      const random = this.config.random ?? Math.random;
      await this.untilNextAttempt(this.clock.now() + this.retryPeriodMs * (1 + random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  /**
   * A Lease as a watch of it delivers it, observed as a read would be. A standby then learns of each renewal, and of
   * a release, as it happens rather than at its next attempt. The leader ignores it: it learns of others through
   * its renewals, as the reference's does, and a watch event older than its own write must not unseat it.
   */
  observe(lease: Lease): void {
    if (this.isLeader()) return;
    const record = recordFromLease(lease);
    if (serialize(record) === this.observedRaw) return;
    this.setObserved(record);
    this.maybeReportTransition();
    this.wakeAcquire?.();
  }

  /**
   * Waits for the next attempt after a failed one: the reference's jittered retry (`retryAt`), or sooner when the
   * Lease that attempt found held by another expires (its holder stopped renewing), or when a release is observed
   * meanwhile. The reference waits for its next jittered attempt then, up to 2.2 retry periods later. Every other
   * failure (a conflict, an error, an expired Lease not won) waits the whole period.
   */
  private async untilNextAttempt(retryAt: number, signal: AbortSignal): Promise<void> {
    const since = this.clock.now();
    while (!signal.aborted) {
      const at = Math.min(retryAt, this.earlierAttemptAt(since));
      if (this.clock.now() >= at) return;
      const woken = new AbortController();
      const wake = () => woken.abort();
      signal.addEventListener('abort', wake, { once: true });
      this.wakeAcquire = wake;
      await pause(this.clock, at - this.clock.now(), woken.signal);
      signal.removeEventListener('abort', wake);
      this.wakeAcquire = undefined;
    }
  }

  /** When the Lease as observed lets a standby waiting `since` try before its jittered retry; else Infinity. */
  private earlierAttemptAt(since: number): number {
    // A coordinated election's Lease is handed over by its coordinator, not taken at expiry.
    if (this.config.coordinated || !this.observed) return Number.POSITIVE_INFINITY;
    if (!this.observed.holderIdentity) return this.observedTime >= since ? this.observedTime : Number.POSITIVE_INFINITY;
    // isLeaseValid holds until the instant of expiry itself: 1 ms past it.
    const expiry = this.observedTime + (this.observed.leaseDurationSeconds ?? 0) * 1000 + 1;
    return expiry > since ? expiry : Number.POSITIVE_INFINITY;
  }

  /** One renew round per retry period; returns when a round gives up or `signal` aborts. */
  private async renew(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.renewRound(signal))) return;
      await pause(this.clock, this.retryPeriodMs, signal);
    }
  }

  /** Tries at once and then every retry period; false once renewDeadline has passed without a success. */
  private async renewRound(signal: AbortSignal): Promise<boolean> {
    const renewed = await withDeadline(this.clock, signal, this.renewDeadlineMs, 'renew', async (round) => {
      while (!round.aborted) {
        const ok = await this.tryAcquireOrRenew(round);
        this.maybeReportTransition();
        if (ok) return true;
        // Another holder (or a release) in the Lease: our term is over now, not at the renew deadline.
        if (!this.isLeader()) return false;
        await pause(this.clock, this.retryPeriodMs, round);
      }
      return false;
    }).catch(() => false);
    if (!renewed && !signal.aborted) this.log.info(`failed to renew lease ${this.lockDesc}: timed out`);
    return renewed;
  }

  /** One attempt (client-go's tryAcquireOrRenew). Never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    if (this.config.coordinated) return this.tryCoordinatedRenew(signal);
    const now = this.clock.now();
    const stamp = rfc3339Micro(this.config.wallClock?.() ?? new Date());
    const desired: LeaderElectionRecord = {
      holderIdentity: this.identity,
      // Rounded up, so others never wait less than our leaseDuration (client-go truncates).
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: 0,
    };

    // Fast path: still ours by our own observation, so update without reading first.
    if (this.observed && this.isLeader() && this.isLeaseValid(now)) {
      desired.acquireTime = this.observed.acquireTime;
      desired.leaseTransitions = this.observed.leaseTransitions;
      if (await this.write('replace', desired, signal)) return true;
      if (signal.aborted) return false;
      this.log.info(`fast path renew of ${this.lockDesc} failed, falling back to the slow path`);
    }

    let current: Lease;
    try {
      // A Lease the caller saw expire is written at once from that observation: a stale one only costs a conflict.
      const seeded = this.seeded && !this.isLeaseValid(now) ? this.lease : undefined;
      this.seeded = false;
      current =
        seeded ??
        (await this.call(signal, (s) =>
          this.config.leases.get(this.config.lock.namespace, this.config.lock.name, { signal: s }),
        ));
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.error(`error retrieving resource lock ${this.lockDesc}: ${errorText(err)}`);
        return false;
      }
      return this.write('create', desired, signal);
    }
    this.lease = current;
    const old = recordFromLease(current);
    this.observeRead(old);
    if (old.holderIdentity !== '' && this.isLeaseValid(now) && !this.isLeader()) {
      // A standby says so once per holder, not at every retry.
      if (this.waitingFor !== old.holderIdentity) {
        this.waitingFor = old.holderIdentity;
        this.log.info(`lock is held by ${old.holderIdentity} and has not yet expired: waiting for the lease`);
      }
      return false;
    }
    this.waitingFor = undefined;
    if (this.isLeader()) {
      desired.acquireTime = old.acquireTime;
      desired.leaseTransitions = old.leaseTransitions;
      this.config.metrics?.slowpathExercised();
    } else {
      desired.leaseTransitions = old.leaseTransitions + 1;
    }
    return this.write('replace', desired, signal);
  }

  /** One coordinated attempt (client-go's tryCoordinatedRenew): read, then renew only if coordinatedVerdict allows. */
  private async tryCoordinatedRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    const { namespace, name } = this.config.lock;
    try {
      this.lease = await this.call(signal, (s) => this.config.leases.get(namespace, name, { signal: s }));
    } catch (err) {
      const why = isNotFound(err) ? 'not created by the election controller yet' : errorText(err);
      this.log.info(`lease ${this.lockDesc} not renewed: ${why}`);
      return false;
    }
    const old = recordFromLease(this.lease);
    this.observeRead(old);
    const verdict = coordinatedVerdict(old, this.identity, this.isLeaseValid(now));
    if (!verdict.renew) {
      this.log.info(`lease ${this.lockDesc} not renewed: ${verdict.why}`);
      return false;
    }
    this.config.metrics?.slowpathExercised();
    const stamp = rfc3339Micro(this.config.wallClock?.() ?? new Date());
    const seconds = Math.ceil(this.leaseDurationMs / 1000);
    return this.write('replace', coordinatedRenewal(old, this.identity, seconds, stamp), signal);
  }

  /** Valid while `observedTime + leaseDurationSeconds` (the holder's own figure) lies after `now`. */
  private isLeaseValid(now: number): boolean {
    return this.observedTime + (this.observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  /** Creates the Lease or replaces the last one seen with `record`; on success it becomes the observed record. */
  private async write(mode: 'create' | 'replace', record: LeaderElectionRecord, signal: AbortSignal): Promise<boolean> {
    const { namespace, name } = this.config.lock;
    const spec = leaseSpecFromRecord(record);
    const leases = this.config.leases;
    const sentAt = this.clock.now();
    try {
      if (mode === 'create') {
        const body: Lease = { apiVersion: leases.apiVersion, kind: 'Lease', metadata: { namespace, name }, spec };
        this.lease = await this.call(signal, (s) => leases.create(body, { signal: s }));
      } else {
        if (!this.lease) return false;
        const body: Lease = { ...this.lease, spec };
        this.lease = await this.call(signal, (s) => leases.replace(body, { signal: s }));
      }
    } catch (err) {
      this.log.error(`failed to ${mode === 'create' ? 'create' : 'update'} lock ${this.lockDesc}: ${errorText(err)}`);
      return false;
    }
    this.setObserved(record);
    this.config.guard?.renewed(sentAt);
    return true;
  }

  /** A record just read: observedTime moves only when the record differs from the last one seen. */
  private observeRead(record: LeaderElectionRecord): void {
    if (serialize(record) !== this.observedRaw) this.setObserved(record);
  }

  private setObserved(record: LeaderElectionRecord): void {
    this.observed = record;
    this.observedRaw = serialize(record);
    this.observedTime = this.clock.now();
  }

  /** One Lease call under the per-request deadline. */
  private call<T>(signal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withDeadline(this.clock, signal, this.requestTimeoutMs, `lease request on ${this.lockDesc}`, fn);
  }

  /**
   * Writes the released record (holder "", 1 s, renew = acquire = now, transitions kept) if the last observed
   * record is still ours. A conflict re-reads the Lease and retries while it is still ours, within renewDeadline.
   */
  private async release(): Promise<void> {
    const never = new AbortController().signal;
    await withDeadline(this.clock, never, this.renewDeadlineMs, 'release', async (signal) => {
      for (let attempt = 0; attempt < 3 && this.observed && this.isLeader(); attempt++) {
        const stamp = rfc3339Micro(this.config.wallClock?.() ?? new Date());
        const released: LeaderElectionRecord = {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: stamp,
          renewTime: stamp,
          leaseTransitions: this.observed.leaseTransitions,
        };
        if (await this.writeRelease(released, signal)) return;
      }
    }).catch((err) => this.log.error(`failed to release lock ${this.lockDesc}: ${errorText(err)}`));
  }

  /** True when done (released, or a fresh read shows it is no longer ours); false to try again. */
  private async writeRelease(released: LeaderElectionRecord, signal: AbortSignal): Promise<boolean> {
    const leases = this.config.leases;
    const { namespace, name } = this.config.lock;
    try {
      const body: Lease = { ...(this.lease as Lease), spec: leaseSpecFromRecord(released) };
      this.lease = await this.call(signal, (s) => leases.replace(body, { signal: s }));
      this.setObserved(released);
      this.log.info(`released lease ${this.lockDesc}`);
      return true;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    this.lease = await this.call(signal, (s) => leases.get(namespace, name, { signal: s }));
    this.observeRead(recordFromLease(this.lease));
    return !this.isLeader();
  }

  private maybeReportTransition(): void {
    const holder = this.getLeader();
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const onNewLeader = this.config.callbacks.onNewLeader;
    if (!onNewLeader) return;
    queueMicrotask(() => {
      try {
        onNewLeader(holder);
      } catch (err) {
        this.log.error(`onNewLeader failed: ${errorText(err)}`);
      }
    });
  }
}
