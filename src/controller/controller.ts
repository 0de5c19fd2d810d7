/**
 * A controller: declared once (name, informers and handlers, workers, rate limiter, reconcile), run
 * by a loop that takes keys from its work queue. Level-triggered: handlers only enqueue keys; the
 * reconcile re-reads the caches and computes everything from them.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { FlavorName, Naming } from '../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../api/registry.ts';
import type { PolicyRule } from '../api/types/rbac.ts';
import type { SharedInformerFactory } from '../cache/factory.ts';
import type { KubeClient } from '../client/client.ts';
import { isConflict } from '../client/errors.ts';
import type { Registry } from '../diagnostics/metrics/prom-client.ts';
import { V } from '../log/logger.ts';
import type { ShardBy } from '../sharding/ranges.ts';
import type { Clock } from '../util/clock.ts';
import { WorkQueue } from '../workqueue/queue.ts';
import { defaultControllerRateLimiter, type RateLimiter } from '../workqueue/ratelimit.ts';
import type { EventRecorder } from './events.ts';

/** What a reconcile asks for: nothing more, or another look after a delay. */
export type Result = undefined | { requeueAfterMs: number };

export const done: Result = undefined;
export const requeueAfter = (ms: number): Result => ({ requeueAfterMs: ms });

/** A failure that retrying cannot fix: logged, and the key forgotten instead of retried. */
export class TerminalError extends Error {}

export interface ControllerContext {
  client: KubeClient;
  informers: SharedInformerFactory;
  registry: ResourceRegistry;
  naming: Naming;
  recorder: EventRecorder;
  logger: Logger;
  clock: Clock;
  metrics: Registry;
  /** Feature gates in force. */
  features: (gate: string) => boolean;
  /** The controller-specific part of the component configuration. */
  config: Record<string, unknown>;
  /**
   * The client each controller's own requests go through, given the one it would use otherwise
   * (`--use-service-account-credentials`: its service account's); `client` itself when unset.
   */
  controllerClient?: (d: ControllerDefinition, client: KubeClient) => KubeClient;
  /** A recorder writing through `client`: each controller gets one of its own. */
  recorderFor?: (client: KubeClient) => EventRecorder;
}

export interface Reconciler {
  reconcile(key: string, signal: AbortSignal): Promise<Result>;
  /** Health of the controller beyond its loop (e.g. a CA that failed to load). */
  healthy?(): { ok: boolean; message?: string };
  /** Called once when the controller stops (timers, watches). */
  stop?(): void;
}

export interface ControllerDefinition {
  /** The reference's `--controllers` name, e.g. `csrapproving`. */
  name: string;
  /** Other names that select it, e.g. `certificatesigningrequest-approving-controller`. */
  aliases: string[];
  /**
   * Its name in each flavor, where the name carries the product word (the reference's
   * `kube-apiserver-serving-clustertrustbundle-publisher-controller`); `name` is the default flavor's.
   */
  flavorNames?: Readonly<Record<FlavorName, string>>;
  enabledByDefault: boolean;
  /**
   * The reference runs this controller inside the API server: against a real cluster of the
   * `kubernetes` flavor it is off by default, so two writers never fight over one status.
   */
  servedByApiServer?: boolean;
  /**
   * Runs under its own classic leader Lease of this name instead of the daemon's: the coordinated election
   * controllers assign the daemon's Lease, so they cannot wait for it.
   */
  lease?: string;
  /** Runs only while this feature gate is on. */
  featureGate?: string;
  /**
   * With `--sharding`, runs on every replica over the objects of the shards it holds, keyed so: by namespace
   * (every namespaced cache confined), or by the uid of one kind. Others stay on the leader Lease.
   */
  shardBy?: ShardBy;
  /**
   * The reference's service account of this controller in the system namespace (`certificate-controller`), whose
   * token its requests carry under `--use-service-account-credentials`; none for those the reference runs in the
   * API server, which keep the daemon's credentials.
   */
  serviceAccount?: (n: Naming) => string;
  /**
   * Its events keep the daemon's credentials under `--use-service-account-credentials`: the reference's role for
   * its account may not write events (the reference's controller records none; ours does).
   */
  eventsWithDaemonCredentials?: boolean;
  /** Worker count (the reference's `--concurrent-<name>-syncs` where it has one). */
  workers: number;
  /** Per-controller retry strategy; the client-go default otherwise. */
  rateLimiter?: () => RateLimiter<string>;
  /**
   * The RBAC rules it needs (informers' reads included), given the flavor and the controller-specific
   * configuration (`ControllerContext.config`); the deploy manifests grant exactly their union.
   */
  permissions(n: Naming, config: Record<string, unknown>): PolicyRule[];
  /** Registers informers and handlers (which call `enqueue`), and returns the reconciler. */
  setup(ctx: ControllerContext, enqueue: Enqueuer): Reconciler;
}

export interface Enqueuer {
  add(key: string): void;
  addAfter(key: string, ms: number): void;
}

/** Runs one controller: its queue and workers, from start until stop. */
export class ControllerLoop {
  readonly queue: WorkQueue<string>;
  private reconciler?: Reconciler;
  private readonly abort = new AbortController();
  /** The recorder through this controller's own client, stopped with it. */
  private readonly ownRecorder?: EventRecorder;
  private workers: Promise<void>[] = [];
  private readonly workerCount: number;

  constructor(
    readonly definition: ControllerDefinition,
    private ctx: ControllerContext,
    workers = definition.workers,
  ) {
    const client = ctx.controllerClient?.(definition, ctx.client) ?? ctx.client;
    // A recorder of its own, as each reference controller has: its own queue of writes, through its own client
    // (with its account's credentials), but with a rate limiter apart from the controller's, so that its events
    // never hold back its writes (the reference's share one).
    const eventsClient = definition.eventsWithDaemonCredentials ? ctx.client : client;
    this.ownRecorder = ctx.recorderFor?.(eventsClient.derive({}));
    this.ctx = { ...ctx, client, recorder: this.ownRecorder ?? ctx.recorder };
    this.workerCount = workers;
    this.queue = new WorkQueue<string>({
      name: definition.name,
      rateLimiter: (definition.rateLimiter ?? (() => defaultControllerRateLimiter<string>(ctx.clock)))(),
      clock: ctx.clock,
      registry: ctx.metrics,
    });
  }

  /** Registers informers and handlers; call before the informers start. */
  setup(): void {
    this.reconciler = this.definition.setup(this.ctx, {
      add: (key) => this.queue.add(key),
      addAfter: (key, ms) => this.queue.addAfter(key, ms),
    });
  }

  start(): void {
    for (let i = 0; i < this.workerCount; i++) this.workers.push(this.work());
  }

  healthy(): { ok: boolean; message?: string } {
    return this.reconciler?.healthy?.() ?? { ok: true };
  }

  /** Stops taking keys, lets running reconciles finish within `timeoutMs`, then aborts them. */
  async stop(timeoutMs: number): Promise<void> {
    this.reconciler?.stop?.();
    const drained = this.queue.shutDownWithDrain(timeoutMs).catch(() => undefined);
    await drained;
    this.abort.abort();
    await Promise.allSettled(this.workers);
    this.ownRecorder?.stop?.();
  }

  private async work(): Promise<void> {
    const log = this.ctx.logger.child({ controller: this.definition.name });
    for (;;) {
      const item = await this.queue.get();
      if (item.shutdown) return;
      const key = item.key;
      const started = performance.now();
      try {
        const result = await this.reconciler!.reconcile(key, this.abort.signal);
        this.queue.forget(key);
        if (result) this.queue.addAfter(key, result.requeueAfterMs);
        V(log, 4).info(
          { key, ms: Math.round(performance.now() - started), requeueAfterMs: result?.requeueAfterMs },
          'synced',
        );
      } catch (err) {
        if (this.abort.signal.aborted) {
          // Cut short by a stop: not a failure, and nothing to retry in this process.
          V(log, 2).info({ key }, 'reconcile cancelled by shutdown');
        } else if (isWriteConflict(err)) {
          // Someone wrote the object first: routine under optimistic concurrency, retried, not an error (as the
          // reference's controllers, which log it at V(2)).
          V(log, 2).info({ key, err: errorText(err) }, 'reconcile lost a write conflict, will retry');
          this.queue.addRateLimited(key);
        } else if (err instanceof TerminalError) {
          log.error({ key, err: String(err) }, 'reconcile failed permanently');
          this.queue.forget(key);
        } else {
          log.error(
            { key, err: errorText(err), requeues: this.queue.numRequeues(key) },
            'reconcile failed, will retry',
          );
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
      }
      // A reconcile that wrote nothing never left the thread: a queue of them (every budget at start) would run
      // back to back and hold every other controller's responses until the last one. Each worker waits its turn.
      await nextTurn();
    }
  }
}

/** The resource type of a kind the controller cannot run without. */
export function requiredResource(ctx: ControllerContext, kind: string, controller: string): ResourceType {
  const found = ctx.registry.byKind(kind);
  if (!found) throw new Error(`${controller}: the API has no ${kind}`);
  return found;
}

/** The controller's clock in epoch ms: `config.nowMs` when a test sets one, the wall clock otherwise. */
export function configuredNowMs(ctx: ControllerContext): () => number {
  const configured = ctx.config.nowMs;
  return typeof configured === 'function' ? (configured as () => number) : Date.now;
}

/** A 409 Conflict (stale resourceVersion), thrown as is or as the cause of a reconciler's own error. */
function isWriteConflict(err: unknown): boolean {
  return isConflict(err) || (err instanceof Error && isConflict(err.cause));
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The controllers as the flavor names them, in `--controllers`, logs and metrics labels; the other flavors' names
 * still select them, as aliases.
 */
export function controllersIn(flavor: FlavorName, all: readonly ControllerDefinition[]): ControllerDefinition[] {
  return all.map((d) => {
    const name = d.flavorNames?.[flavor] ?? d.name;
    if (name === d.name) return d;
    return { ...d, name, aliases: [d.name, ...d.aliases.filter((a) => a !== name)] };
  });
}

/** Worker counts keyed by the names `controllersIn` gave, from counts keyed by any name of each controller. */
export function workersByName(
  all: readonly ControllerDefinition[],
  counts: Readonly<Record<string, number>>,
): Record<string, number> {
  const workers: Record<string, number> = {};
  for (const d of all) {
    const count = [d.name, ...d.aliases].map((n) => counts[n]).find((c) => c !== undefined);
    if (count !== undefined) workers[d.name] = count;
  }
  return workers;
}

/**
 * The reference's `--controllers` syntax: `*` is every controller on by default, `foo` enables
 * foo, `-foo` disables it; names and aliases both work. Unknown names are an error. Where the API
 * server runs its own copies (`apiServerControllers`), `*` leaves those out; naming one still
 * enables it.
 */
export function selectControllers(
  all: ControllerDefinition[],
  spec: string[],
  { apiServerControllers = false } = {},
): ControllerDefinition[] {
  const byName = new Map<string, ControllerDefinition>();
  for (const d of all) for (const n of [d.name, ...d.aliases]) byName.set(n, d);
  const known = (name: string) => {
    const d = byName.get(name);
    if (!d)
      throw new Error(
        `--controllers: "${name}" is not a known controller (known: ${all.map((x) => x.name).join(', ')})`,
      );
    return d;
  };
  const enabled = new Set<ControllerDefinition>();
  const disabled = new Set<ControllerDefinition>();
  let star = false;
  for (const raw of spec
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (raw === '*') star = true;
    else if (raw.startsWith('-')) disabled.add(known(raw.slice(1)));
    else enabled.add(known(raw));
  }
  const onByDefault = (d: ControllerDefinition) => d.enabledByDefault && !(apiServerControllers && d.servedByApiServer);
  return all.filter((d) => !disabled.has(d) && (enabled.has(d) || (star && onByDefault(d))));
}
