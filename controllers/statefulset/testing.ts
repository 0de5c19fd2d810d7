/** Fixtures for the StatefulSet table tests: defaulted sets, pods in each state, revisions and claims. */
import { naming } from '../../src/api/naming.ts';
import type { ControllerRevision, StatefulSet, StatefulSetSpec } from '../../src/api/types/apps.ts';
import type { PersistentVolumeClaim, Pod, PodPhase } from '../../src/api/types/core.ts';
import { rfc3339 } from '../../src/util/time.ts';
import type { Action, Gates, SyncInput } from './core.ts';
import { newPod } from './pods.ts';
import { newRevision, templateOf } from './revision.ts';

export const n = naming('kubernetes');
/** 2024-01-01T00:10:00Z: the "now" of the table tests. */
export const NOW = Date.parse('2024-01-01T00:10:00Z');
export const at = (offsetMs: number) => rfc3339(new Date(NOW + offsetMs));

export type SetOptions = Partial<StatefulSetSpec> & {
  image?: string;
  status?: StatefulSet['status'];
  annotations?: Record<string, string>;
  deleting?: boolean;
};

/** A set as the API stores it (defaults applied), `web` in `ns`, 3 replicas of app=web. */
export function sts(o: SetOptions = {}): StatefulSet {
  const { image = 'app:1', status, annotations, deleting, ...spec } = o;
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: 'web-uid',
      generation: 1,
      ...(annotations ? { annotations } : {}),
      ...(deleting ? { deletionTimestamp: at(0) } : {}),
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      serviceName: 'web',
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 1 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { restartPolicy: 'Always', containers: [{ name: 'app', image }] },
      },
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

/** The revision a set's template makes. */
export const revision = (set: StatefulSet, number = 1, collisions = 0): ControllerRevision => ({
  ...newRevision(n, set, number, collisions),
  metadata: {
    ...newRevision(n, set, number, collisions).metadata,
    uid: `rev-${number}`,
    creationTimestamp: at(-600_000 + number),
  },
});

export type PodState = 'ready' | 'running' | 'pending' | 'failed' | 'succeeded' | 'terminating' | 'unscheduled';

/** A pod of the set at a revision, in a state; Ready pods became Ready `readyForMs` ago. */
export function pod(
  set: StatefulSet,
  ordinal: number,
  rev: ControllerRevision,
  state: PodState = 'ready',
  readyForMs = 60_000,
): Pod {
  const p = newPod(n, set, templateOf(rev), rev.metadata.name!, ordinal);
  const phase: PodPhase | '' = {
    ready: 'Running',
    running: 'Running',
    terminating: 'Running',
    pending: 'Pending',
    failed: 'Failed',
    succeeded: 'Succeeded',
    unscheduled: '',
  }[state] as PodPhase | '';
  const ready = state === 'ready' || state === 'terminating';
  const startTime = at(-120_000);
  return {
    ...p,
    metadata: {
      ...p.metadata,
      uid: `${p.metadata.name}-uid`,
      creationTimestamp: startTime,
      ...(state === 'terminating' ? { deletionTimestamp: at(30_000) } : {}),
    },
    status: phase
      ? {
          phase,
          startTime,
          conditions: [
            {
              type: 'Ready',
              status: ready ? 'True' : 'False',
              lastTransitionTime: ready ? at(-readyForMs) : startTime,
            },
          ],
        }
      : {},
  };
}

export function claim(
  name: string,
  owners: PersistentVolumeClaim['metadata']['ownerReferences'] = [],
  deleting = false,
): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: 'ns',
      uid: `${name}-uid`,
      ownerReferences: owners,
      ...(deleting ? { deletionTimestamp: at(0) } : {}),
    },
    spec: {},
  };
}

export const ALL_GATES: Gates = { maxUnavailable: true, recreate: true };

export function input(set: StatefulSet, pods: Pod[], o: Partial<SyncInput> = {}): SyncInput {
  return {
    naming: n,
    set,
    pods,
    claims: new Map(),
    revisions: [revision(set)],
    nowMs: NOW,
    gates: ALL_GATES,
    ...o,
  };
}

const SUMMARIES: { [K in Action['kind']]: (a: Extract<Action, { kind: K }>) => string } = {
  createRevision: (a) => `createRevision ${a.revision.metadata.name}`,
  bumpRevision: (a) => `bumpRevision ${a.name} ${a.revision}`,
  createClaim: (a) => `claim ${a.claim.metadata.name}`,
  setClaimOwners: (a) =>
    `owners ${a.claim.metadata.name} ${(a.claim.metadata.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}`).join(',') || 'none'}`,
  createPod: (a) => `create ${a.pod.metadata.name}@${a.pod.metadata.labels?.['controller-revision-hash']}`,
  updatePod: (a) => `update ${a.pod.metadata.name}`,
  deletePod: (a) => `delete ${a.name}`,
  deleteRevision: (a) => `deleteRevision ${a.name}`,
};

/** Actions as short strings: `create web-0@<revision>`, `delete web-2`, `claim data-web-0`, ... */
export function summary(actions: Action[]): string[] {
  return actions.map((a) => (SUMMARIES[a.kind] as (x: Action) => string)(a));
}
