/**
 * Runs the disruption controller against a control plane for the end-to-end tests and the benchmark:
 * a Manager with leader election off, an event recorder that keeps what it is given, and object
 * builders for namespaces, workloads, pods and budgets. Not shipped with the daemon's controllers.
 */
import type { KubeObject, OwnerReference } from '../../src/api/meta.ts';
import type { ResourceRegistry } from '../../src/api/registry.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import type { KubeClient } from '../../src/client/client.ts';
import type { ControllerDefinition } from '../../src/controller/controller.ts';
import { type RunningControllers, runControllers } from '../../test/support/controllers.ts';
import { disruptionControllerDefinition } from './controller.ts';

export type { RecordedEvent } from '../../test/support/controllers.ts';
export { eventually } from '../../test/support/eventually.ts';

export type RunningController = RunningControllers;

export interface RunOptions {
  /** Replaces the controller's wall clock (epoch ms). */
  nowMs?: () => number;
  definition?: ControllerDefinition;
}

/** Starts the disruption controller and resolves once its caches have synced. */
export function runDisruptionController(
  client: KubeClient,
  registry: ResourceRegistry,
  options: RunOptions = {},
): Promise<RunningController> {
  return runControllers(client, registry, [options.definition ?? disruptionControllerDefinition], {
    config: options.nowMs ? { nowMs: options.nowMs } : {},
  });
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
