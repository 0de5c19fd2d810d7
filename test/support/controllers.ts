/**
 * Runs controllers against a control plane for end-to-end tests and benchmarks: a Manager with
 * leader election off, a quiet logger, its own metrics registry, and (unless another is given) an
 * event recorder that keeps what it is given. Resolves once every informer has synced.
 */
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { ResourceRegistry } from '../../src/api/registry.ts';
import type { KubeClient } from '../../src/client/client.ts';
import type { ControllerDefinition } from '../../src/controller/controller.ts';
import type { EventRecorder, EventType } from '../../src/controller/events.ts';
import { Manager } from '../../src/controller/manager.ts';
import { createLogger } from '../../src/log/logger.ts';
import { realClock } from '../../src/util/clock.ts';

export interface RecordedEvent {
  kind: string;
  name: string;
  type: EventType;
  reason: string;
  note: string;
}

export interface RunningControllers {
  manager: Manager;
  events: RecordedEvent[];
  metrics: Registry;
  stop(): Promise<void>;
}

export interface RunOptions {
  /** `ControllerContext.config`. */
  config?: Record<string, unknown>;
  features?: Record<string, boolean>;
  logger?: Logger;
  /** Replaces the recording recorder (`events` then stays empty). */
  recorder?: EventRecorder;
}

export async function runControllers(
  client: KubeClient,
  registry: ResourceRegistry,
  controllers: ControllerDefinition[],
  options: RunOptions = {},
): Promise<RunningControllers> {
  const events: RecordedEvent[] = [];
  const recorder: EventRecorder = options.recorder ?? {
    event(regarding, type, reason, _action, note) {
      events.push({ kind: regarding.kind ?? '', name: regarding.metadata.name ?? '', type, reason, note });
    },
  };
  const quiet = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const metrics = new Registry();
  const manager = new Manager(
    {
      client,
      registry,
      naming: registry.naming,
      recorder,
      logger: options.logger ?? createLogger({ verbosity: 0, format: 'json', destination: quiet }),
      clock: realClock,
      metrics,
      features: (g) => options.features?.[g] ?? false,
      config: options.config ?? {},
    },
    {
      controllers,
      workers: {},
      leaderElection: {
        enabled: false,
        namespace: '',
        name: '',
        identity: 'controllers-test',
        leaseDurationMs: 0,
        renewDeadlineMs: 0,
        retryPeriodMs: 0,
        releaseOnCancel: true,
      },
      syncTimeoutMs: 60_000,
      shutdownTimeoutMs: 5_000,
    },
  );
  const abort = new AbortController();
  const running = manager.run(abort.signal);
  let failed: unknown;
  running.catch((err) => {
    failed = err;
  });
  const deadline = performance.now() + 60_000;
  while (!manager.hasSynced()) {
    if (failed) throw failed;
    if (performance.now() > deadline) {
      throw new Error(`${controllers.map((c) => c.name).join(', ')} did not sync within 60 s`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    manager,
    events,
    metrics,
    async stop() {
      abort.abort();
      await running.catch(() => undefined);
    },
  };
}
