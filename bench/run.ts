/**
 * `npm run bench [-- name ...]`: runs the benchmarks (every `bench/*.bench.ts`, or those named) one
 * after another and prints their figures, each with the ratio to its peer or limit.
 */
import { readdirSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KubeObject, objectKey } from '../src/api/meta.ts';
import type { ResourceClient } from '../src/client/resource.ts';
import type { ControllerDefinition, Enqueuer } from '../src/controller/controller.ts';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** What the value is compared with, e.g. "bare HTTPS echo" or "client-node informer". */
  against?: { name: string; value: number };
  /** The per-round ratios of value to `against` when both were measured in paired rounds. */
  ratios?: number[];
}

export function print(group: string, figures: Figure[]): void {
  console.log(`\n## ${group}`);
  for (const f of figures) {
    const value = `${format(f.value)} ${f.unit}`;
    const ratio = f.ratios
      ? `  (${format(median(f.ratios))}× ${f.against?.name}: ${format(f.against?.value ?? Number.NaN)} ${f.unit};` +
        ` paired ratio median of ${f.ratios.length} rounds, range ${format(Math.min(...f.ratios))}–${format(Math.max(...f.ratios))})`
      : f.against
        ? `  (${format(f.value / f.against.value)}× ${f.against.name}: ${format(f.against.value)} ${f.unit})`
        : '';
    console.log(`${f.name.padEnd(48)} ${value.padStart(18)}${ratio}`);
  }
}

/** The median (the mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** One round of a figure and of its floor, in the same unit. */
export interface Round {
  ours: number;
  floor: number;
}

/**
 * Measures `ours` and `floor` in `rounds` alternating rounds (see `pairedRound`), so that a change in machine
 * load hits both alike.
 */
export async function interleaved(
  rounds: number,
  ours: (round: number) => Promise<number>,
  floor: (round: number) => Promise<number>,
): Promise<Round[]> {
  const out: Round[] = [];
  for (let r = 0; r < rounds; r++)
    out.push(
      await pairedRound(
        r,
        () => ours(r),
        () => floor(r),
      ),
    );
  return out;
}

/** One round: the floor first in even rounds, ours first in odd ones. */
export async function pairedRound(
  round: number,
  ours: () => Promise<number>,
  floor: () => Promise<number>,
): Promise<Round> {
  if (round % 2 === 0) {
    const f = await floor();
    return { floor: f, ours: await ours() };
  }
  const o = await ours();
  return { ours: o, floor: await floor() };
}

/** A figure from paired rounds: the medians of each side and the median and range of the per-round ratios. */
export function pairedFigure(name: string, unit: string, floorName: string, rounds: Round[]): Figure {
  return {
    name,
    unit,
    value: median(rounds.map((r) => r.ours)),
    against: { name: floorName, value: median(rounds.map((r) => r.floor)) },
    ratios: rounds.map((r) => r.ours / r.floor),
  };
}

/**
 * For benchmarks with more than two sides: `rounds` rounds of every side, the side that goes first rotating each
 * round so that none always runs on a warmer (or more loaded) machine; per round, each side's value.
 */
export async function rotatedRounds<K extends string, V = number>(
  rounds: number,
  sides: Record<K, (round: number) => Promise<V>>,
): Promise<Record<K, V>[]> {
  const order = Object.keys(sides) as K[];
  const out: Record<K, V>[] = [];
  for (let r = 0; r < rounds; r++) {
    const values = {} as Record<K, V>;
    for (let i = 0; i < order.length; i++) {
      const side = order[(r + i) % order.length];
      values[side] = await sides[side](r);
    }
    out.push(values);
  }
  return out;
}

/** A figure and its floor before the rounds are summarised. */
export interface Paired {
  name: string;
  unit: string;
  floorName: string;
  rounds: Round[];
}

export function printPaired(group: string, figures: Paired[]): void {
  print(
    group,
    figures.map((f) => pairedFigure(f.name, f.unit, f.floorName, f.rounds)),
  );
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

/**
 * Resolves once `done` holds for the objects of `resource` in `namespace` (all namespaces if undefined), keyed
 * `namespace/name` (`name` alone when cluster-scoped), as a
 * watch shows them, listed first and then kept current by the events: completion seen as a client sees it,
 * not by polling the server's storage. A watch that ends or fails early is listed and watched again. Rejects
 * after `timeoutMs`.
 */
export async function watchUntil<T extends KubeObject>(
  resource: ResourceClient<T>,
  namespace: string | undefined,
  done: (objects: ReadonlyMap<string, T>) => boolean,
  timeoutMs: number,
): Promise<void> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(new Error(`not done within ${timeoutMs} ms`)), timeoutMs);
  try {
    while (!stop.signal.aborted) {
      const { items, resourceVersion } = await resource.listAll(namespace);
      const objects = new Map(items.map((o) => [objectKey(o.metadata), o]));
      if (done(objects)) return;
      const seen = new AbortController();
      let finished = false;
      await resource
        .watch(
          namespace,
          { resourceVersion },
          (e) => {
            const key = objectKey(e.object.metadata);
            if (e.type === 'DELETED') objects.delete(key);
            else if (e.type === 'ADDED' || e.type === 'MODIFIED') objects.set(key, e.object);
            if (!finished && done(objects)) {
              finished = true;
              seen.abort();
            }
          },
          AbortSignal.any([stop.signal, seen.signal]),
        )
        // An error (a resource version too old, a broken connection) is met like an end: listed again.
        .catch(() => new Promise((resolve) => setTimeout(resolve, 100)));
      if (finished) return;
    }
    throw stop.signal.reason;
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
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

/** The machine a run's figures belong to, with its load at the time. */
export function machine(): string {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const ram = `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`;
  return `node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, ${ram}, load average ${load}`;
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
    console.log(`\n# ${basename(f, '.bench.ts')} (${new Date().toISOString()}; ${machine()})`);
    await mod.run();
  }
  console.log(`\n# done (${new Date().toISOString()}; ${machine()})`);
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
