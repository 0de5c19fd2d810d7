/** StatefulSets in tests: a manifest, the states a test waits for, and the wait itself. */
import type { StatefulSet } from '../../src/api/types/apps.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { ResourceClient } from '../../src/client/resource.ts';
import { eventually } from './eventually.ts';

/** Set `name` of `replicas` pods labelled `app: <name>`, image `app:1`, no grace period; `spec` overrides. */
export function statefulSet(
  ns: string,
  name: string,
  replicas: number,
  spec: Partial<StatefulSet['spec']> = {},
  annotations?: Record<string, string>,
): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { namespace: ns, name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(annotations && { annotations }) },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: 'app:1' }] },
      },
      ...spec,
    },
  };
}

/** The benches' set: `Parallel` pods rolled 10% at a time, with `image`, and pinned to `nodeName` when given. */
export function parallelSet(
  ns: string,
  name: string,
  replicas: number,
  pod: { image?: string; nodeName?: string; annotations?: Record<string, string> } = {},
): StatefulSet {
  const set = statefulSet(
    ns,
    name,
    replicas,
    {
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
    },
    pod.annotations,
  );
  const podSpec = set.spec.template.spec!;
  podSpec.containers[0]!.image = pod.image ?? 'app:1';
  if (pod.nodeName) podSpec.nodeName = pod.nodeName;
  return set;
}

export const isReady = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export const rolloutCondition = (x: StatefulSet) => x.status?.conditions?.find((c) => c.type === 'RolloutProgressing');

/** Every pod Ready at the update revision, and the status is of the current generation. */
export const rolledOut = (replicas: number) => (x: StatefulSet) =>
  x.status?.observedGeneration === x.metadata.generation &&
  x.status?.readyReplicas === replicas &&
  x.status?.updatedReplicas === replicas &&
  x.status?.currentRevision === x.status?.updateRevision;

/** Polls set `name` until `test` holds; a timeout names `what` and the last status seen. */
export async function waitForSet(
  sets: ResourceClient<StatefulSet>,
  ns: string,
  name: string,
  test: (x: StatefulSet) => boolean,
  what = 'set',
  ms = 30_000,
): Promise<StatefulSet> {
  let last: unknown;
  return eventually(
    async () => {
      const x = await sets.get(ns, name);
      last = x.status;
      return test(x) ? x : undefined;
    },
    ms,
    () => `${name}: ${what}; last status ${JSON.stringify(last)}`,
    100,
  );
}
