/** Time and timers behind an interface, so tests can drive time with a {@link FakeClock}. */

declare const timerBrand: unique symbol;
/** Opaque timer handle: pass it back only to the clock that created it. */
export type Timer = { readonly [timerBrand]: true };

export interface Clock {
  /** Monotonic milliseconds, not wall time: use it for durations and deadlines only. */
  now(): number;
  /** Runs `fn` once after `ms`. Node fires delays above 2^31−1 ms almost at once, so keep below that. */
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(timer: Timer): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as Timer,
  clearTimeout: (timer) => clearTimeout(timer as unknown as NodeJS.Timeout),
};

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Timers that fire in one step; more means a timer keeps re-arming itself at the current instant. */
const MAX_FIRES_PER_STEP = 10_000;

/** A clock that only moves when told to. Timers fire synchronously inside {@link FakeClock.step}. */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Set<FakeTimer>();

  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const timer: FakeTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return timer as unknown as Timer;
  }

  clearTimeout(timer: Timer): void {
    this.timers.delete(timer as unknown as FakeTimer);
  }

  /** Timers armed and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Advances time by `ms`, firing every timer that falls due on the way in (due time, creation) order,
   * with `now()` equal to the timer's due time while it runs. Timers armed by those callbacks fire too if due.
   */
  step(ms: number): void {
    const end = this.current + ms;
    for (let fired = 0; ; fired++) {
      const next = this.nextDue(end);
      if (next === undefined) break;
      if (fired === MAX_FIRES_PER_STEP) throw new Error(`FakeClock.step: over ${MAX_FIRES_PER_STEP} timers fired`);
      this.timers.delete(next);
      this.current = next.at;
      next.fn();
    }
    this.current = end;
  }

  private nextDue(end: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (t.at <= end && (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    }
    return best;
  }
}
