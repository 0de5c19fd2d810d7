/**
 * Work queue add/get/done cycles per second: an unnamed queue and a named one (prom-client metrics
 * on a private registry), with one worker and with eight, against a plain peer: an array FIFO with
 * a Set for dedup and promise waiters, which has none of the processing/dirty bookkeeping.
 *
 * The queue is primed with DEPTH keys; each worker then loops get → done → add(next key), so the
 * depth stays constant and every cycle exercises all three calls. Keys come from a ring larger than
 * DEPTH + workers, so an add never coalesces with a queued or processing key.
 */

import { Registry } from 'prom-client';
import { WorkQueue } from '../src/workqueue/queue.ts';
import { interleaved, pairedFigure, print } from './run.ts';

const DEPTH = 1000;
const KEY_RING = 10_000;
const ROUND_MS = 500;
const ROUNDS = 5;
const WARMUP_MS = 300;
/** How many cycles a worker runs between looks at the clock. */
const CHECK_EVERY = 256;

interface Queue {
  add(key: string): void;
  get(): Promise<{ key: string | undefined; shutdown: boolean }>;
  done(key: string): void;
  shutDown?(): void;
}

/** The peer: FIFO array + dedup Set + waiting get()s; done() only frees the key for dedup. */
class PlainQueue implements Queue {
  private readonly items: string[] = [];
  private readonly queued = new Set<string>();
  private readonly waiters: Array<(r: { key: string; shutdown: false }) => void> = [];

  add(key: string): void {
    if (this.queued.has(key)) return;
    this.queued.add(key);
    const waiter = this.waiters.shift();
    if (waiter) waiter({ key, shutdown: false });
    else this.items.push(key);
  }

  get(): Promise<{ key: string | undefined; shutdown: boolean }> {
    if (this.items.length > 0) return Promise.resolve({ key: this.items.shift()!, shutdown: false });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    this.queued.delete(key);
  }
}

const keys = Array.from({ length: KEY_RING }, (_, i) => `default/object-${String(i).padStart(5, '0')}`);

/** Cycles per second over one round of `ms` with `workers` concurrent async workers. */
async function round(queue: Queue, workers: number, ms: number): Promise<number> {
  for (let i = 0; i < DEPTH; i++) queue.add(keys[i]);
  let next = DEPTH;
  let cycles = 0;
  let stop = false;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!stop) {
        for (let i = 0; i < CHECK_EVERY; i++) {
          const { key } = await queue.get();
          queue.done(key!);
          queue.add(keys[next++ % KEY_RING]);
          cycles++;
        }
        if (performance.now() >= deadline) stop = true;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  queue.shutDown?.();
  return cycles / seconds;
}

export async function run(): Promise<void> {
  const registry = new Registry();
  let named = 0;
  const kinds: Array<{ label: string; make: () => Queue }> = [
    { label: 'unnamed queue', make: () => new WorkQueue<string>() },
    // A new name per queue, so each round's metrics start empty; the registry (and its families) is shared.
    { label: 'named queue (metrics)', make: () => new WorkQueue<string>({ name: `bench-${named++}`, registry }) },
  ];
  const figures = [];
  for (const workers of [1, 8]) {
    await round(new PlainQueue(), workers, WARMUP_MS);
    for (const { label, make } of kinds) {
      await round(make(), workers, WARMUP_MS);
      // Each round on a fresh queue, ours and the peer's alternating.
      const rounds = await interleaved(
        ROUNDS,
        () => round(make(), workers, ROUND_MS),
        () => round(new PlainQueue(), workers, ROUND_MS),
      );
      const plural = workers > 1 ? 's' : '';
      figures.push(pairedFigure(`${label}, ${workers} worker${plural}`, 'cycles/s', 'array FIFO + Set', rounds));
    }
  }
  print(`workqueue: add/get/done cycles, depth ${DEPTH.toLocaleString('en-US')}, ${ROUNDS} paired rounds`, figures);
}
