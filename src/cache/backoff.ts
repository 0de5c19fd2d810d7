/** The reflector's retry delays: jittered exponential backoff that forgets after a quiet spell. */
import type { Clock } from '../util/clock.ts';

export interface BackoffOptions {
  initialMs: number;
  capMs: number;
  factor: number;
  /** Each wait is d·[1, 1 + jitter). */
  jitter: number;
  /** A wait asked for this long after the previous one starts over at `initialMs`. */
  resetAfterMs: number;
}

/** client-go's reflector backoff: 800 ms doubling to 30 s, jitter 1.0, reset after 2 min. */
export const REFLECTOR_BACKOFF: BackoffOptions = {
  initialMs: 800,
  capMs: 30_000,
  factor: 2,
  jitter: 1,
  resetAfterMs: 120_000,
};

export class Backoff {
  private readonly opts: BackoffOptions;
  private base: number;
  private lastAt: number | undefined;

  constructor(
    private readonly clock: Clock,
    opts: Partial<BackoffOptions> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.opts = { ...REFLECTOR_BACKOFF, ...opts };
    this.base = this.opts.initialMs;
  }

  /** Starts over at `initialMs`: the failures it counted are no longer consecutive. */
  reset(): void {
    this.base = this.opts.initialMs;
    this.lastAt = undefined;
  }

  /** The next wait in ms; consecutive calls grow it, a call after a quiet spell resets it. */
  next(): number {
    const now = this.clock.now();
    if (this.lastAt !== undefined && now - this.lastAt > this.opts.resetAfterMs) this.base = this.opts.initialMs;
    this.lastAt = now;
    const d = this.base;
    this.base = Math.min(d * this.opts.factor, this.opts.capMs);
    return d + this.random() * this.opts.jitter * d;
  }
}
