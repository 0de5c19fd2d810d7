import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.ts';
import { Backoff } from './backoff.ts';

describe('Backoff (reflector defaults)', () => {
  it('doubles from 800 ms and stays at 30 s, waits at the bottom of [d, 2d) with zero jitter draw', () => {
    const b = new Backoff(new FakeClock(), {}, () => 0);
    const waits = Array.from({ length: 9 }, () => b.next());
    expect(waits).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
  });

  it('each wait lies in [d, 2d)', () => {
    const draws = [0, 0.5, 0.999999];
    for (const draw of draws) {
      const b = new Backoff(new FakeClock(), {}, () => draw);
      let d = 800;
      for (let i = 0; i < 8; i++) {
        const w = b.next();
        expect(w).toBeGreaterThanOrEqual(d);
        expect(w).toBeLessThan(2 * d);
        expect(w).toBeCloseTo(d * (1 + draw), 6);
        d = Math.min(2 * d, 30_000);
      }
    }
  });

  it('starts over after more than 2 min between waits, not at exactly 2 min', () => {
    const clock = new FakeClock();
    const b = new Backoff(clock, {}, () => 0);
    b.next();
    b.next();
    clock.step(120_000);
    expect(b.next()).toBe(3200);
    clock.step(120_001);
    expect(b.next()).toBe(800);
    expect(b.next()).toBe(1600);
  });
});
