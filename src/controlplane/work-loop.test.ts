import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { WorkLoop } from './work-loop.ts';

const log = pino({ level: 'silent' });
const tick = () => new Promise((r) => setImmediate(r));
/** A loop that hands each item to `process`. */
const loopOf = (process: (n: number) => void = () => {}) => new WorkLoop<number>(() => log, 'test', process);

describe('WorkLoop', () => {
  it('processes items on a later tick, once per key, at most 500 a tick', async () => {
    const seen: number[] = [];
    const loop = loopOf((n) => seen.push(n));
    for (let i = 0; i < 600; i++) loop.enqueue(i);
    loop.enqueue(7, 'same');
    loop.enqueue(8, 'same');
    expect(seen).toEqual([]);
    await tick();
    expect(seen.length).toBe(500);
    await tick();
    expect(seen.slice(500)).toEqual([...Array.from({ length: 100 }, (_, i) => 500 + i), 8]);
    expect(loop.idle).toBe(true);
  });

  it('settles once its writes are answered, and gives up at the deadline on one that never is', async () => {
    const loop = loopOf();
    let answer = () => {};
    loop.add(() => new Promise<void>((r) => (answer = r)));
    expect(loop.idle).toBe(false);
    expect(await loop.settled(Date.now() + 50)).toBe(false);
    answer();
    expect(await loop.settled(Date.now() + 1_000)).toBe(true);
  });

  it('processes nothing once stopped', async () => {
    const seen: number[] = [];
    const loop = loopOf((n) => seen.push(n));
    loop.enqueue(1);
    loop.stop();
    loop.enqueue(2);
    await tick();
    expect(seen).toEqual([]);
  });
});
