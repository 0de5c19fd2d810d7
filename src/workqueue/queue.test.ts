import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.ts';
import { WorkQueue } from './queue.ts';
import { itemExponential } from './ratelimit.ts';

function setup() {
  const clock = new FakeClock();
  return { clock, q: new WorkQueue<string>({ clock }) };
}

/** Lets resolved promises run their callbacks. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

async function next(q: WorkQueue<string>): Promise<string> {
  const result = await q.get();
  if (result.shutdown) throw new Error('unexpected shutdown');
  return result.key;
}

/** Takes and finishes every queued key, in hand-out order. */
async function drain(q: WorkQueue<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const key = await next(q);
    out.push(key);
    q.done(key);
  }
  return out;
}

/** A get() whose result can be inspected without awaiting it. */
function pendingGet(q: WorkQueue<string>) {
  const state: { key?: string; shutdown?: boolean } = {};
  void q.get().then((r) => Object.assign(state, r));
  return state;
}

describe('WorkQueue: adds', () => {
  it.each([
    { adds: ['a', 'a', 'a'], out: ['a'] },
    { adds: ['c', 'a', 'b'], out: ['c', 'a', 'b'] },
    { adds: ['a', 'b', 'a', 'c', 'b', 'a'], out: ['a', 'b', 'c'] },
    { adds: [], out: [] },
  ])('coalesces waiting duplicates and keeps FIFO order: $adds', async ({ adds, out }) => {
    const { q } = setup();
    for (const key of adds) q.add(key);
    expect(q.len()).toBe(out.length);
    expect(await drain(q)).toEqual(out);
  });

  it('keeps FIFO order across thousands of keys taken while others arrive', async () => {
    const { q } = setup();
    const keys = Array.from({ length: 6000 }, (_, i) => `k${i}`);
    for (const key of keys.slice(0, 3000)) q.add(key);
    const out: string[] = [];
    for (let i = 0; i < 2000; i++) out.push(await next(q));
    for (const key of keys.slice(3000)) q.add(key);
    out.push(...(await drain(q)));
    expect(out).toEqual(keys);
  });

  it('runs a key added during processing exactly once more, after done', async () => {
    const { q } = setup();
    q.add('a');
    expect(await next(q)).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    const second = pendingGet(q);
    await settle();
    expect(second.key).toBeUndefined(); // not handed to a second worker while the first holds it
    q.done('a');
    await settle();
    expect(second.key).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('ignores done for a key that is not processing', async () => {
    const { q } = setup();
    q.add('a');
    q.done('a');
    expect(q.len()).toBe(1);
    expect(await drain(q)).toEqual(['a']);
  });

  it('hands keys to waiting workers in the order they asked', async () => {
    const { q } = setup();
    const first = pendingGet(q);
    const second = pendingGet(q);
    q.add('x');
    q.add('y');
    await settle();
    expect([first.key, second.key]).toEqual(['x', 'y']);
    expect(q.len()).toBe(0);
  });
});

describe('WorkQueue: shutdown', () => {
  it('refuses adds, hands out what is queued, then reports shutdown', async () => {
    const { q } = setup();
    q.add('a');
    q.add('b');
    q.shutDown();
    q.add('c');
    expect(q.shuttingDown()).toBe(true);
    expect(await q.get()).toEqual({ key: 'a', shutdown: false });
    expect(await q.get()).toEqual({ key: 'b', shutdown: false });
    expect(await q.get()).toEqual({ key: undefined, shutdown: true });
  });

  it('wakes waiting workers with shutdown', async () => {
    const { q } = setup();
    const waiters = [pendingGet(q), pendingGet(q)];
    q.shutDown();
    await settle();
    expect(waiters.map((w) => w.shutdown)).toEqual([true, true]);
  });

  it('still runs a key added during processing before the shutdown', async () => {
    const { q } = setup();
    q.add('a');
    await next(q);
    q.add('a');
    q.shutDown();
    q.done('a');
    expect(await q.get()).toEqual({ key: 'a', shutdown: false });
  });

  it('shutDownWithDrain resolves once processing is empty', async () => {
    const { q, clock } = setup();
    q.add('a');
    q.add('b');
    await next(q);
    await next(q);
    let drained = false;
    const drain = q.shutDownWithDrain(1000).then(() => {
      drained = true;
    });
    q.done('a');
    await settle();
    expect(drained).toBe(false);
    q.done('b');
    await drain;
    expect(clock.pendingTimers).toBe(0);
  });

  it('shutDownWithDrain resolves at once when nothing is processing', async () => {
    const { q } = setup();
    q.add('a');
    await expect(q.shutDownWithDrain()).resolves.toBeUndefined();
    expect(q.len()).toBe(1);
  });

  it('shutDownWithDrain rejects after its timeout', async () => {
    const { q, clock } = setup();
    q.add('a');
    await next(q);
    const drain = q.shutDownWithDrain(1000);
    clock.step(999);
    clock.step(1);
    await expect(drain).rejects.toThrow(/drain timed out, 1 still processing/);
    q.done('a'); // a late done has nothing left to release
  });

  it('shutDown ends a pending drain', async () => {
    const { q, clock } = setup();
    q.add('a');
    await next(q);
    const drain = q.shutDownWithDrain(1000);
    q.shutDown();
    await expect(drain).resolves.toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('WorkQueue: addAfter', () => {
  it('adds each key when its delay has passed, earliest first', () => {
    const { q, clock } = setup();
    const delays: [string, number][] = [
      ['a', 30],
      ['b', 10],
      ['c', 20],
      ['d', 10],
    ];
    for (const [key, ms] of delays) q.addAfter(key, ms);
    expect(clock.pendingTimers).toBe(1);
    const seen: number[] = [];
    for (let t = 0; t < 35; t += 5) {
      seen.push(q.len());
      clock.step(5);
    }
    expect(seen).toEqual([0, 0, 2, 2, 3, 3, 4]);
  });

  it.each([
    { name: 'an earlier delay moves readyAt earlier', delays: [50, 20], readyAt: 20 },
    { name: 'a later delay leaves readyAt alone', delays: [20, 80], readyAt: 20 },
    { name: 'the earliest of several wins', delays: [90, 40, 60, 15, 70], readyAt: 15 },
  ])('$name', ({ delays, readyAt }) => {
    const { q, clock } = setup();
    for (const ms of delays) q.addAfter('a', ms);
    clock.step(readyAt - 1);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    expect(clock.pendingTimers).toBe(0); // one entry per key: nothing else is waiting
  });

  it('hands out equal readyAt in the order they were added', async () => {
    const { q, clock } = setup();
    for (const key of ['x', 'y', 'z']) q.addAfter(key, 10);
    clock.step(10);
    expect(await drain(q)).toEqual(['x', 'y', 'z']);
  });

  it('adds at once for a delay of zero or less', () => {
    const { q, clock } = setup();
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
    expect(clock.pendingTimers).toBe(0);
  });

  it('waits out delays longer than a Node timer can hold', () => {
    const { q, clock } = setup();
    q.addAfter('a', 2 ** 32);
    clock.step(2 ** 31);
    expect(q.len()).toBe(0);
    clock.step(2 ** 31);
    expect(q.len()).toBe(1);
  });

  it('drops delayed keys and clears its timer on shutdown', () => {
    const { q, clock } = setup();
    q.addAfter('a', 10);
    q.shutDown();
    q.addAfter('b', 10);
    expect(clock.pendingTimers).toBe(0);
    clock.step(100);
    expect(q.len()).toBe(0);
  });
});

describe('WorkQueue: rate limiting', () => {
  it('delays by the limiter, counts requeues and forgets', () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock, rateLimiter: itemExponential(5, 1000) });
    q.addRateLimited('a');
    q.addRateLimited('a'); // 10 ms; the pending 5 ms wins
    expect(q.numRequeues('a')).toBe(2);
    clock.step(4);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('uses the default controller limiter on the queue clock', () => {
    const { q, clock } = setup();
    for (let i = 0; i < 101; i++) q.addRateLimited(`k${i}`);
    clock.step(5);
    expect(q.len()).toBe(100);
    clock.step(95);
    expect(q.len()).toBe(101);
  });
});

/** Deterministic PRNG (mulberry32) so a failing seed can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

type Worker = { state: 'idle' } | { state: 'waiting' } | { state: 'holding'; key: string };

describe('WorkQueue: random operation sequences', () => {
  it.each(Array.from({ length: 40 }, (_, i) => i + 1))(
    'seed %i: one worker per key, no lost or phantom keys',
    async (seed) => {
      const rand = random(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
      const clock = new FakeClock();
      const q = new WorkQueue<string>({ clock });
      const keys = ['a', 'b', 'c', 'd', 'e'];
      const workers: Worker[] = Array.from({ length: 3 }, () => ({ state: 'idle' }));
      const held = new Set<string>(); // keys a worker holds now
      const owed = new Set<string>(); // keys added since their last hand-out: each must be handed out again
      const delayed = new Map<string, number>(); // earliest readyAt promised by addAfter
      const violations: string[] = [];

      const startGet = (w: number) => {
        workers[w] = { state: 'waiting' };
        void q.get().then((r) => {
          if (r.shutdown) {
            workers[w] = { state: 'idle' };
            return;
          }
          if (held.has(r.key)) violations.push(`${r.key} handed to two workers`);
          if (!owed.has(r.key)) violations.push(`${r.key} handed out without an add`);
          held.add(r.key);
          owed.delete(r.key);
          workers[w] = { state: 'holding', key: r.key };
        });
      };
      const finish = (w: number) => {
        const worker = workers[w];
        if (worker.state !== 'holding') return;
        held.delete(worker.key);
        workers[w] = { state: 'idle' };
        q.done(worker.key);
      };
      const step = (ms: number) => {
        clock.step(ms);
        for (const [key, at] of delayed) {
          if (at > clock.now()) continue;
          delayed.delete(key);
          owed.add(key);
        }
      };

      for (let op = 0; op < 300; op++) {
        const r = rand();
        const key = pick(keys);
        const w = Math.floor(rand() * workers.length);
        if (r < 0.3) {
          owed.add(key);
          q.add(key);
        } else if (r < 0.45) {
          const ms = Math.floor(rand() * 60) - 10;
          if (ms <= 0) owed.add(key);
          else delayed.set(key, Math.min(delayed.get(key) ?? Number.POSITIVE_INFINITY, clock.now() + ms));
          q.addAfter(key, ms);
        } else if (r < 0.6) {
          step(Math.floor(rand() * 30));
        } else if (r < 0.8) {
          if (workers[w].state === 'idle') startGet(w);
        } else {
          finish(w);
        }
        await settle();
      }

      // Let every delay pass, then keep all workers busy until nothing is left.
      step(100);
      for (let round = 0; round < 100; round++) {
        await settle();
        if (q.len() === 0 && workers.every((worker) => worker.state === 'waiting')) break;
        workers.forEach((worker, i) => {
          if (worker.state === 'holding') finish(i);
          if (workers[i].state === 'idle') startGet(i);
        });
      }
      expect(violations).toEqual([]);
      expect(delayed.size).toBe(0);
      expect([...owed]).toEqual([]);
      expect(workers.every((worker) => worker.state === 'waiting')).toBe(true);

      q.shutDown();
      await settle();
      expect(workers.every((worker) => worker.state === 'idle')).toBe(true);
      expect(clock.pendingTimers).toBe(0);
    },
  );
});

describe('FakeClock', () => {
  it('fires due timers in (due time, creation) order, including ones armed while stepping', () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 10);
    }, 10);
    clock.setTimeout(() => fired.push(`d@${clock.now()}`), 20);
    const cleared = clock.setTimeout(() => fired.push('never'), 5);
    clock.clearTimeout(cleared);
    clock.step(25);
    expect(fired).toEqual(['a@1010', 'b@1020', 'd@1020', 'c@1020']);
    expect(clock.now()).toBe(1025);
    expect(clock.pendingTimers).toBe(0);
  });

  it('stops a step whose timers keep re-arming at the same instant', () => {
    const clock = new FakeClock();
    const rearm = () => clock.setTimeout(rearm, 0);
    rearm();
    expect(() => clock.step(1)).toThrow(/timers fired/);
  });
});
