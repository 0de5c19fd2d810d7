/**
 * `npm run bench [-- name ...]`: runs the benchmarks (every `bench/*.bench.ts`, or those named) one
 * after another and prints their figures, each with the ratio to its peer or limit.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ControllerDefinition, Enqueuer } from '../src/controller/controller.ts';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** What the value is compared with, e.g. "bare HTTPS echo" or "client-node informer". */
  against?: { name: string; value: number };
}

export function print(group: string, figures: Figure[]): void {
  console.log(`\n## ${group}`);
  for (const f of figures) {
    const value = `${format(f.value)} ${f.unit}`;
    const ratio = f.against
      ? `  (${format(f.value / f.against.value)}× ${f.against.name}: ${format(f.against.value)} ${f.unit})`
      : '';
    console.log(`${f.name.padEnd(48)} ${value.padStart(18)}${ratio}`);
  }
}

/** Runs `fn(0..n-1)` with `concurrency` calls in flight; returns the seconds it took. */
export async function inParallel(n: number, fn: (i: number) => Promise<unknown>, concurrency = 64): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

/** A controller that counts its reconciles and hands out its queue (to enqueue everything for a resync). */
export interface Counted {
  definition: ControllerDefinition;
  reconciled(): number;
  enqueue(): Enqueuer;
}

export function counted(inner: ControllerDefinition): Counted {
  let reconciled = 0;
  let enqueue: Enqueuer | undefined;
  const definition: ControllerDefinition = {
    ...inner,
    setup(ctx, enq) {
      enqueue = enq;
      const reconciler = inner.setup(ctx, enq);
      return {
        healthy: reconciler.healthy?.bind(reconciler),
        stop: reconciler.stop?.bind(reconciler),
        async reconcile(key, signal) {
          try {
            return await reconciler.reconcile(key, signal);
          } finally {
            reconciled++;
          }
        },
      };
    },
  };
  return {
    definition,
    reconciled: () => reconciled,
    enqueue: () => {
      if (!enqueue) throw new Error(`${inner.name} has not been set up`);
      return enqueue;
    },
  };
}

function format(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  return abs >= 100 ? Math.round(n).toLocaleString('en-US') : abs >= 1 ? n.toFixed(2) : n.toPrecision(3);
}

async function main(): Promise<void> {
  const here = dirname(fileURLToPath(import.meta.url));
  const wanted = process.argv.slice(2);
  const files = readdirSync(here)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => wanted.length === 0 || wanted.includes(basename(f, '.bench.ts')))
    .sort();
  if (files.length === 0) throw new Error(`no benchmark matches ${wanted.join(', ')}`);
  for (const f of files) {
    const mod = (await import(join(here, f))) as { run: () => Promise<void> };
    await mod.run();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
