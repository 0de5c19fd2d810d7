import { type Clock, realClock } from '../util/clock.ts';

/** Decides how long a failed key waits before its retry (client-go's workqueue rate limiter). */
export interface RateLimiter<K = string> {
  /** Milliseconds to wait before retrying `key`; counts one more failure. */
  when(key: K): number;
  /** Drops `key`'s failure history, typically after it succeeded. */
  forget(key: K): void;
  /** Failures counted for `key` since it was last forgotten. */
  numRequeues(key: K): number;
}

/** Per key: `baseMs · 2^n` where n counts the earlier failures, capped at `maxMs`. */
export function itemExponential<K = string>(baseMs: number, maxMs: number): RateLimiter<K> {
  const failures = new Map<K, number>();
  return {
    when(key) {
      const n = failures.get(key) ?? 0;
      failures.set(key, n + 1);
      // A product that overflows is Infinity, so the cap covers it too.
      return Math.min(baseMs * 2 ** n, maxMs);
    },
    forget(key) {
      failures.delete(key);
    },
    numRequeues: (key) => failures.get(key) ?? 0,
  };
}

/** Per key: the first `maxFast` failures wait `fastMs`, later ones `slowMs`. */
export function itemFastSlow<K = string>(fastMs: number, slowMs: number, maxFast: number): RateLimiter<K> {
  const failures = new Map<K, number>();
  return {
    when(key) {
      const n = (failures.get(key) ?? 0) + 1;
      failures.set(key, n);
      return n <= maxFast ? fastMs : slowMs;
    },
    forget(key) {
      failures.delete(key);
    },
    numRequeues: (key) => failures.get(key) ?? 0,
  };
}

/**
 * One token bucket shared by all keys: `burst` tokens, refilled at `qps` per second. Every `when` reserves a
 * token, possibly one that only exists in the future, and returns the wait until it does (0 while tokens remain).
 */
export function tokenBucket(qps: number, burst: number, clock: Clock = realClock): RateLimiter<unknown> {
  let tokens = burst;
  let last = clock.now();
  return {
    when() {
      const now = clock.now();
      tokens = Math.min(burst, tokens + ((now - last) * qps) / 1000) - 1;
      last = now;
      return tokens >= 0 ? 0 : (-tokens * 1000) / qps;
    },
    forget() {},
    numRequeues: () => 0,
  };
}

/** The longest wait of all `limiters`. Every limiter's `when` runs, so a bucket spends tokens even when outvoted. */
export function maxOf<K = string>(...limiters: RateLimiter<K>[]): RateLimiter<K> {
  return {
    when(key) {
      let wait = 0;
      for (const limiter of limiters) wait = Math.max(wait, limiter.when(key));
      return wait;
    },
    forget(key) {
      for (const limiter of limiters) limiter.forget(key);
    },
    numRequeues(key) {
      let n = 0;
      for (const limiter of limiters) n = Math.max(n, limiter.numRequeues(key));
      return n;
    },
  };
}

/**
 * client-go's default: per key 5 ms doubling up to 1000 s, and at most 10 retries per second overall after a
 * burst of 100. Controllers that need other numbers compose their own, e.g. the CSR controllers use
 * `maxOf(itemExponential(200, 1_000_000), tokenBucket(10, 100))`.
 */
export function defaultControllerRateLimiter<K = string>(clock: Clock = realClock): RateLimiter<K> {
  return maxOf<K>(itemExponential<K>(5, 1_000_000), tokenBucket(10, 100, clock));
}
