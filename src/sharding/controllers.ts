/**
 * The sharded controllers of one replica: they run over caches confined to the shards it holds. When the held
 * set changes, the running generation (informers and workers) stops and a new one starts over the new set;
 * with none held, none runs. Rebuilding whole caches is simple and bounded (one relist of this replica's share);
 * keeping the unmoved ranges' caches would need one informer per range behind each lister.
 */
import type { Logger } from 'pino';
import type { ResourceType } from '../api/registry.ts';
import { SharedInformerFactory } from '../cache/factory.ts';
import type { ShardFilter } from '../cache/sharded.ts';
import { type ControllerContext, type ControllerDefinition, ControllerLoop } from '../controller/controller.ts';
import { pause } from '../leaderelection/timing.ts';
import type { Clock } from '../util/clock.ts';
import { type ShardKey, shardSelector } from './ranges.ts';

export interface ShardedControllersOptions {
  controllers: ControllerDefinition[];
  workers: Record<string, number>;
  shards: number;
  /** The shards held now. */
  held(): number[];
  /** A context whose client writes under the guard of the shard of each write (see ShardGuard). */
  contextFor(key: ShardKey): Omit<ControllerContext, 'informers'>;
  watchList: boolean;
  syncTimeoutMs: number;
  shutdownTimeoutMs: number;
  clock: Clock;
  logger: Logger;
}

interface Generation {
  shards: number[];
  factories: SharedInformerFactory[];
  loops: ControllerLoop[];
  contexts: Omit<ControllerContext, 'informers'>[];
  stopped?: Promise<void>;
}

/** Held-set changes within this long are applied together (shards are taken one Lease at a time). */
const SETTLE_MS = 200;
/** The longest wait for a change before looking again (a change wakes it at once). */
const IDLE_MS = 60_000;
/** After a generation that could not start, the next try waits this long. */
const RETRY_MS = 2_000;

export class ShardedControllers {
  private current?: Generation;
  private dirty = false;
  private wake: () => void = () => {};
  private toldUnfiltered = false;

  constructor(private readonly opts: ShardedControllersOptions) {}

  /** The held set changed: rebuild soon. */
  changed(): void {
    this.dirty = true;
    this.wake();
  }

  /** A shard is being let go: resolves once the generation that covers it has stopped writing. */
  releasing(): Promise<void> {
    this.changed();
    const running = this.current;
    return running ? this.stop(running) : Promise.resolve();
  }

  /** Objects each running informer holds, by informer name (what /debug/shards reports as the share). */
  cached(): Record<string, number> {
    return this.perInformer((objects) => objects.length);
  }

  /**
   * The JSON size in bytes of the objects each running informer holds: what its cache holds, measured as the
   * objects' serialized text. V8 keeps them as objects, larger than this by a rough constant factor; no heap
   * measure separates one informer's objects from the rest of the process.
   */
  cachedBytes(): Record<string, number> {
    return this.perInformer((objects) =>
      objects.reduce<number>((sum, o) => sum + Buffer.byteLength(JSON.stringify(o)), 0),
    );
  }

  private perInformer(measure: (objects: unknown[]) => number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const f of this.current?.factories ?? []) for (const i of f.all()) out[i.name] = measure(i.lister().list());
    return out;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.opts;
    try {
      while (!signal.aborted) {
        if (!this.dirty) {
          const woken = new AbortController();
          this.wake = () => woken.abort();
          await pause(clock, IDLE_MS, AbortSignal.any([signal, woken.signal]));
          continue;
        }
        await pause(clock, SETTLE_MS, signal);
        this.dirty = false;
        const shards = this.opts.held();
        if (this.current && !this.current.stopped && same(this.current.shards, shards)) continue;
        if (this.current) await this.stop(this.current);
        this.current = undefined;
        if (shards.length === 0 || signal.aborted) continue;
        if (!(await this.start(shards, signal))) {
          this.dirty = true;
          await pause(clock, RETRY_MS, signal);
        }
      }
    } finally {
      if (this.current) await this.stop(this.current);
    }
  }

  /** Starts a generation over `shards`; false (and nothing left running) when its caches did not sync. */
  private async start(shards: number[], signal: AbortSignal): Promise<boolean> {
    const o = this.opts;
    const gen: Generation = { shards, factories: [], loops: [], contexts: [] };
    this.current = gen;
    const byGroup = new Map<string, SharedInformerFactory>();
    for (const d of o.controllers) {
      const by = d.shardBy!;
      const base = o.contextFor(by.key);
      gen.contexts.push(base);
      const group = by.key === 'uid' ? `uid:${by.kind}` : by.key;
      let informers = byGroup.get(group);
      if (!informers) {
        const shard: ShardFilter = {
          selector: shardSelector(by.key, shards, o.shards)!,
          applies: (rt: ResourceType) => (by.key === 'uid' ? rt.kind === by.kind : rt.namespaced),
          onUnfiltered: (informer) => this.unfiltered(informer),
        };
        informers = new SharedInformerFactory(base.client, o.clock, {
          watchList: o.watchList,
          shard,
          onError: (informer, err) =>
            o.logger.warn({ informer, err: String(err) }, 'informer recovering from an error'),
        });
        byGroup.set(group, informers);
        gen.factories.push(informers);
      }
      gen.loops.push(new ControllerLoop(d, { ...base, informers }, o.workers[d.name] ?? d.workers));
    }
    for (const loop of gen.loops) loop.setup();
    for (const f of gen.factories) f.start();
    try {
      await Promise.all(gen.factories.map((f) => f.waitForSync(o.syncTimeoutMs, signal)));
    } catch (err) {
      if (!signal.aborted) o.logger.error({ err: String(err), shards }, 'sharded caches did not sync; retrying');
      await this.stop(gen);
      this.current = undefined;
      return false;
    }
    if (signal.aborted || this.current !== gen) return true;
    for (const loop of gen.loops) loop.start();
    o.logger.info({ shards, controllers: gen.loops.map((l) => l.definition.name) }, 'sharded controllers started');
    return true;
  }

  /** Stops a generation once; every caller waits for the same stop. */
  private stop(gen: Generation): Promise<void> {
    gen.stopped ??= (async () => {
      await Promise.all(gen.loops.map((l) => l.stop(this.opts.shutdownTimeoutMs)));
      await Promise.all(gen.factories.map((f) => f.stop()));
      for (const c of gen.contexts) c.recorder.stop?.();
    })();
    return gen.stopped;
  }

  private unfiltered(informer: string): void {
    if (this.toldUnfiltered) return;
    this.toldUnfiltered = true;
    this.opts.logger.warn(
      { informer },
      'the server does not apply shardSelector (gate ShardedListAndWatch off, or not served): filtering on the client',
    );
  }
}

function same(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
