/**
 * Runs the disruption controller against a control plane for the end-to-end tests and the benchmark:
 * a Manager with leader election off, an event recorder that keeps what it is given, and object
 * builders for namespaces, workloads, pods and budgets. Not shipped with the daemon's controllers.
 */
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import type { KubeObject, OwnerReference } from '../../src/api/meta.ts';
import type { ResourceRegistry } from '../../src/api/registry.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import type { KubeClient } from '../../src/client/client.ts';
import type { ControllerDefinition } from '../../src/controller/controller.ts';
import type { EventRecorder, EventType } from '../../src/controller/events.ts';
import { Manager } from '../../src/controller/manager.ts';
import { createLogger } from '../../src/log/logger.ts';
import { realClock } from '../../src/util/clock.ts';
import { disruptionControllerDefinition } from './controller.ts';

export { eventually } from '../../test/support/eventually.ts';

export interface RecordedEvent {
  kind: string;
  name: string;
  type: EventType;
  reason: string;
  note: string;
}

export interface RunningController {
  manager: Manager;
  events: RecordedEvent[];
  stop(): Promise<void>;
}

export interface RunOptions {
  /** Replaces the controller's wall clock (epoch ms). */
  nowMs?: () => number;
  definition?: ControllerDefinition;
  /** Feature gates in force; all off when unset. */
  features?: (gate: string) => boolean;
}

/** Starts the disruption controller and resolves once its caches have synced. */
export async function runDisruptionController(
  client: KubeClient,
  registry: ResourceRegistry,
  options: RunOptions = {},
): Promise<RunningController> {
  const events: RecordedEvent[] = [];
  const recorder: EventRecorder = {
    event(regarding, type, reason, _action, note) {
      events.push({ kind: regarding.kind ?? '', name: regarding.metadata.name ?? '', type, reason, note });
    },
  };
  const quiet = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const manager = new Manager(
    {
      client,
      registry,
      naming: registry.naming,
      recorder,
      logger: createLogger({ verbosity: 0, format: 'json', destination: quiet }),
      clock: realClock,
      metrics: new Registry(),
      features: options.features ?? (() => false),
      config: options.nowMs ? { nowMs: options.nowMs } : {},
    },
    {
      controllers: [options.definition ?? disruptionControllerDefinition],
      workers: {},
      leaderElection: {
        enabled: false,
        namespace: '',
        name: '',
        identity: 'disruption-test',
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
    if (performance.now() > deadline) throw new Error('the disruption controller did not sync within 60 s');
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    manager,
    events,
    async stop() {
      abort.abort();
      await running.catch(() => undefined);
    },
  };
}

// ---- object builders ----

export function ownerRef(obj: KubeObject): OwnerReference {
  return {
    apiVersion: obj.apiVersion ?? 'v1',
    kind: obj.kind ?? '',
    name: obj.metadata.name ?? '',
    uid: obj.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

const template = (labels: Record<string, string>) => ({
  metadata: { labels },
  spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
});

export function workloadObject(
  kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet' | 'ReplicationController',
  namespace: string,
  name: string,
  replicas: number,
  labels: Record<string, string>,
  owner?: KubeObject,
): KubeObject {
  const core = kind === 'ReplicationController';
  return {
    apiVersion: core ? 'v1' : 'apps/v1',
    kind,
    metadata: { namespace, name, ...(owner ? { ownerReferences: [ownerRef(owner)] } : {}) },
    spec: {
      replicas,
      selector: core ? labels : { matchLabels: labels },
      template: template(labels),
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
    },
  };
}

export interface PodOptions {
  owner?: KubeObject;
  nodeName?: string;
  /** Seconds; 0 makes a delete of a pod bound to a node immediate. */
  grace?: number;
}

export function podObject(namespace: string, name: string, labels: Record<string, string>, o: PodOptions = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels, ...(o.owner ? { ownerReferences: [ownerRef(o.owner)] } : {}) },
    spec: {
      containers: [{ name: 'app', image: 'registry.example/app:1' }],
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.grace !== undefined ? { terminationGracePeriodSeconds: o.grace } : {}),
    },
  };
}

export function pdbObject(namespace: string, name: string, spec: Record<string, unknown>): PodDisruptionBudget {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { namespace, name }, spec };
}

/** The status a running, Ready (or not Ready) pod reports. */
export function runningStatus(ready: boolean): Record<string, unknown> {
  return { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] };
}
