/** Fixtures for the disruption tests: pods, budgets and workloads as raw objects, and a Workloads view of them. */
import type { KubeObject, OwnerReference } from '../../src/api/meta.ts';
import type { Pod, PodCondition } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import type { ScaleLookup, WorkloadKind, Workloads } from './finders.ts';

export const NS = 'ns';
/** 2024-01-01T00:10:00Z: the "now" of the table tests. */
export const NOW = Date.parse('2024-01-01T00:10:00Z');
export const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function ref(kind: string, name: string, uid = `${name}-uid`, apiVersion?: string): OwnerReference {
  const group = kind === 'ReplicationController' ? 'v1' : 'apps/v1';
  return { apiVersion: apiVersion ?? group, kind, name, uid, controller: true };
}

export interface PodOptions {
  labels?: Record<string, string>;
  ready?: boolean;
  owner?: OwnerReference;
  terminating?: boolean;
  phase?: string;
  namespace?: string;
  conditions?: PodCondition[];
}

export function pod(name: string, o: PodOptions = {}): Pod {
  const conditions: PodCondition[] = [...(o.conditions ?? [])];
  if (o.ready !== undefined) conditions.push({ type: 'Ready', status: o.ready ? 'True' : 'False' });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? NS,
      uid: `${name}-uid`,
      labels: o.labels ?? { app: 'web' },
      ...(o.owner ? { ownerReferences: [o.owner] } : {}),
      ...(o.terminating ? { deletionTimestamp: at(0) } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'i' }] },
    status: { phase: (o.phase ?? 'Running') as never, conditions },
  };
}

export function pdb(
  spec: Record<string, unknown>,
  status: Record<string, unknown> = {},
  generation = 1,
): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'budget', namespace: NS, uid: 'budget-uid', generation, resourceVersion: '10' },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    status,
  };
}

export function workload(
  kind: WorkloadKind,
  name: string,
  replicas: number | undefined,
  owner?: OwnerReference,
  uid = `${name}-uid`,
): KubeObject {
  return {
    apiVersion: kind === 'ReplicationController' ? 'v1' : 'apps/v1',
    kind,
    metadata: { name, namespace: NS, uid, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: replicas === undefined ? {} : { replicas },
  };
}

/** A Workloads view over fixed objects; generic `/scale` answers by owner-reference UID. */
export function workloads(objects: KubeObject[] = [], scales: Record<string, ScaleLookup> = {}): Workloads {
  return {
    get: (kind, namespace, name) =>
      objects.find((o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name),
    scale: (r) => scales[r.uid] ?? { notFound: true },
  };
}
