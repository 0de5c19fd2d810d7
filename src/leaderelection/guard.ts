/**
 * The lease guard: a write from the controllers may leave the process only while this replica can prove it
 * leads, i.e. its last successful renewal was *sent* less than renewDeadline ago by the monotonic clock.
 * Other replicas take the lease over no sooner than leaseDuration after they saw that renewal, which came
 * later than its sending: the term ends leaseDuration after that sending at the earliest. Given leaseDuration,
 * the guard answers the time left until then, and the client gives the write no longer: one held up before the
 * server reads it is abandoned (the server writes nothing for a client gone) rather than made after the term.
 * A process resumed after a pause, or whose renewals fail, is refused at its first look at the clock.
 * It counts the writes it let out until each is over, so that a term let go early is released only once none of
 * its writes is still on its way (see {@link LeaseGuard.drained}).
 */
import type { WriteGuard, WritePermit } from '../client/client.ts';
import { type Clock, realClock } from '../util/clock.ts';
import { pause } from './timing.ts';

/** A write refused because this replica cannot prove it holds the lease. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

export class LeaseGuard implements WriteGuard {
  /** Monotonic time at which the last successful renewal was sent; undefined while not leading. */
  private renewedAt: number | undefined;
  private expiredListeners: (() => void)[] = [];
  /** Writes let out and not yet over. */
  private inFlight = 0;
  private drainedListeners: (() => void)[] = [];

  constructor(
    readonly renewDeadlineMs: number,
    private readonly clock: Clock = realClock,
    /** The Lease it fences for, in refusals. */
    private readonly lease = 'the leader lease',
    /** The Lease's duration: with it, check answers the time left in the term. */
    private readonly leaseDurationMs?: number,
  ) {}

  /** The elector's acquire or renew request sent at `sentAt` (monotonic) succeeded. */
  renewed(sentAt: number): void {
    this.renewedAt = Math.max(sentAt, this.renewedAt ?? sentAt);
  }

  /** Leadership is over (lost, another holder seen, stopped): refuse every write from now on. */
  revoke(): void {
    this.renewedAt = undefined;
  }

  /** `fn` runs once, the first time a write is refused because the last renewal is too old. */
  onExpired(fn: () => void): void {
    this.expiredListeners.push(fn);
  }

  /** {@link check}, and the write counted as in flight until its permit is settled. */
  admit(what: string): WritePermit {
    const deadlineMs = this.check(what);
    this.inFlight++;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      if (--this.inFlight === 0) for (const fn of this.drainedListeners.splice(0)) fn();
    };
    return { deadlineMs, settle };
  }

  /**
   * Resolves once no write it let out is still in flight, or after `timeoutMs`; answers whether none is. Each
   * write is abandoned by its deadline, the end of its term, so waiting for them never outlasts that much.
   */
  async drained(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return true;
    const over = new AbortController();
    const fn = () => over.abort();
    this.drainedListeners.push(fn);
    await pause(this.clock, timeoutMs, over.signal);
    this.drainedListeners = this.drainedListeners.filter((f) => f !== fn);
    return this.inFlight === 0;
  }

  /**
   * Throws {@link LeaseLostError} unless a write may leave the process now; answers the ms left before the term
   * can end (undefined without a lease duration), which the write must not outlast.
   */
  check(what: string): number | undefined {
    if (this.renewedAt === undefined) {
      throw new LeaseLostError(`refusing ${what}: this replica does not hold ${this.lease}`);
    }
    const age = this.clock.now() - this.renewedAt;
    if (age < this.renewDeadlineMs) return this.leaseDurationMs === undefined ? undefined : this.leaseDurationMs - age;
    this.revoke();
    const listeners = this.expiredListeners;
    this.expiredListeners = [];
    for (const fn of listeners) fn();
    throw new LeaseLostError(
      `refusing ${what}: the last lease renewal was ${Math.round(age)} ms ago, not within the renew deadline of ${this.renewDeadlineMs} ms`,
    );
  }
}
