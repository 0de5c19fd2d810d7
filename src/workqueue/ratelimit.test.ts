import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.ts';
import {
  defaultControllerRateLimiter,
  itemExponential,
  itemFastSlow,
  maxOf,
  type RateLimiter,
  tokenBucket,
} from './ratelimit.ts';

const whens = <K>(limiter: RateLimiter<K>, key: K, n: number) => Array.from({ length: n }, () => limiter.when(key));

describe('itemExponential', () => {
  it('doubles from 5 ms to 655.36 s on the 18th failure, then stays at the 1000 s cap', () => {
    const limiter = itemExponential(5, 1_000_000);
    const expected = [
      5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10_240, 20_480, 40_960, 81_920, 163_840, 327_680, 655_360,
      1_000_000, 1_000_000,
    ];
    expect(whens(limiter, 'a', 20)).toEqual(expected);
    expect(limiter.numRequeues('a')).toBe(20);
  });

  it('keeps keys independent and starts over after forget', () => {
    const limiter = itemExponential(5, 1_000_000);
    whens(limiter, 'a', 3);
    expect(limiter.when('b')).toBe(5);
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
    expect(limiter.numRequeues('b')).toBe(1);
  });

  it('caps when the power of two overflows', () => {
    const limiter = itemExponential(1, Number.MAX_VALUE);
    const last = whens(limiter, 'a', 1100).at(-1);
    expect(last).toBe(Number.MAX_VALUE);
  });
});

describe('itemFastSlow', () => {
  it('waits fast for the first maxFast failures, then slow, until forgotten', () => {
    const limiter = itemFastSlow(5, 10_000, 3);
    expect(whens(limiter, 'a', 5)).toEqual([5, 5, 5, 10_000, 10_000]);
    expect(limiter.numRequeues('a')).toBe(5);
    expect(limiter.when('b')).toBe(5);
    limiter.forget('a');
    expect(limiter.when('a')).toBe(5);
  });
});

describe('tokenBucket', () => {
  it('lets the burst through, then spaces reservations 1/qps apart', () => {
    const clock = new FakeClock();
    const limiter = tokenBucket(10, 100, clock);
    expect(whens(limiter, 'x', 100).every((w) => w === 0)).toBe(true);
    expect(whens(limiter, 'x', 3)).toEqual([100, 200, 300]);
  });

  it('refills over time, never above the burst', () => {
    const clock = new FakeClock();
    const limiter = tokenBucket(10, 2, clock);
    whens(limiter, 'x', 2);
    expect(limiter.when('x')).toBe(100); // reserves the token due at 100 ms
    clock.step(200); // that token, plus one more
    expect(whens(limiter, 'x', 2)).toEqual([0, 100]);
    clock.step(10_000);
    expect(whens(limiter, 'x', 3)).toEqual([0, 0, 100]);
  });

  it('has no per-key history', () => {
    const limiter = tokenBucket(10, 1, new FakeClock());
    whens(limiter, 'x', 5);
    expect(limiter.numRequeues('x')).toBe(0);
  });
});

describe('maxOf', () => {
  function spy(wait: number, requeues: number) {
    const calls = { when: 0, forget: 0 };
    const limiter: RateLimiter = {
      when: () => {
        calls.when++;
        return wait;
      },
      forget: () => {
        calls.forget++;
      },
      numRequeues: () => requeues,
    };
    return { limiter, calls };
  }

  it('returns the longest wait and the most requeues, and consults every limiter', () => {
    const short = spy(5, 7);
    const long = spy(300, 2);
    const limiter = maxOf(short.limiter, long.limiter);
    expect(limiter.when('a')).toBe(300);
    expect(limiter.numRequeues('a')).toBe(7);
    limiter.forget('a');
    expect(short.calls).toEqual({ when: 1, forget: 1 });
    expect(long.calls).toEqual({ when: 1, forget: 1 });
  });

  it('spends bucket tokens even when the per-item term dominates', () => {
    const bucket = tokenBucket(10, 2, new FakeClock());
    const limiter = maxOf(itemExponential(1000, 1_000_000), bucket);
    expect([limiter.when('a'), limiter.when('b')]).toEqual([1000, 1000]);
    expect(bucket.when('c')).toBe(100); // the burst of 2 went to the outvoted calls
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is the 5 ms exponential per key, throttled by a 10 qps bucket after 100 retries', () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter(clock);
    expect(whens(limiter, 'a', 3)).toEqual([5, 10, 20]);
    const others = Array.from({ length: 97 }, (_, i) => limiter.when(`k${i}`));
    expect(others.every((w) => w === 5)).toBe(true);
    expect([limiter.when('x'), limiter.when('y')]).toEqual([100, 200]);
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });
});
