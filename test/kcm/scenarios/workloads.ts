/**
 * Writes and waits a user makes with StatefulSets and pods: the objects, patches, evictions, and readiness
 * flips of pods whose image kwok never makes Ready (`:broken`), written to their status as a kubelet would.
 */
import { expectStatus } from '../client.ts';
import type { ScenarioContext } from '../scenario.ts';

export const IMAGE = 'registry.example/web:1';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';

export interface SetOptions {
  replicas: number;
  image?: string;
  parallel?: boolean;
  updateStrategy?: unknown;
  minReadySeconds?: number;
  /** A volumeClaimTemplate `data` and this retention policy. */
  retention?: { whenScaled: string; whenDeleted: string };
}

const stsPath = (ctx: ScenarioContext, name = '') =>
  `/apis/apps/v1/namespaces/${ctx.ns}/statefulsets${name ? `/${name}` : ''}`;
const podPath = (ctx: ScenarioContext, name = '') => `/api/v1/namespaces/${ctx.ns}/pods${name ? `/${name}` : ''}`;

export async function createSet(ctx: ScenarioContext, name: string, options: SetOptions): Promise<void> {
  const { replicas, image = IMAGE, parallel, updateStrategy, minReadySeconds, retention } = options;
  const spec = {
    replicas,
    minReadySeconds,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    podManagementPolicy: parallel ? 'Parallel' : 'OrderedReady',
    ...(updateStrategy !== undefined && { updateStrategy }),
    template: {
      metadata: { labels: { app: name } },
      // Claims are never bound here (no provisioner): naming the node skips the scheduler, which would wait for them.
      spec: { containers: [{ name: 'c', image }], ...(retention && { nodeName: 'kwok-node-1' }) },
    },
    ...(retention && {
      persistentVolumeClaimRetentionPolicy: retention,
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    }),
  };
  const reply = await ctx.admin('POST', stsPath(ctx), { metadata: { name }, spec });
  expectStatus(reply, `creating StatefulSet ${name}`, 201);
}

export async function patchSet(ctx: ScenarioContext, name: string, patch: unknown): Promise<void> {
  expectStatus(await ctx.admin('PATCH', stsPath(ctx, name), patch, MERGE), `patching StatefulSet ${name}`, 200);
}

export const setImage = (ctx: ScenarioContext, name: string, image: string) =>
  patchSet(ctx, name, { spec: { template: { spec: { containers: [{ name: 'c', image }] } } } });

/** Waits until the set's status says `replicas` pods, all Ready and all at the update revision. */
export const settledSet = (ctx: ScenarioContext, name: string, replicas: number, ms?: number) =>
  ctx.waitFor(
    `${name} settled at ${replicas}`,
    async () => {
      const { json } = await ctx.admin('GET', stsPath(ctx, name));
      const s = json?.status ?? {};
      const done =
        s.observedGeneration === json?.metadata?.generation &&
        s.replicas === replicas &&
        (s.readyReplicas ?? 0) === replicas &&
        (s.availableReplicas ?? 0) === replicas &&
        (s.updatedReplicas ?? 0) === replicas &&
        s.currentRevision === s.updateRevision;
      return done ? true : undefined;
    },
    ms,
  );

export async function deleteSet(ctx: ScenarioContext, name: string): Promise<void> {
  const reply = await ctx.admin('DELETE', `${stsPath(ctx, name)}?propagationPolicy=Background`);
  expectStatus(reply, `deleting StatefulSet ${name}`, 200, 202);
}

/** A pod on kwok-node-1; with the default image kwok runs it but never makes it Ready (setReady does). */
export async function createPod(
  ctx: ScenarioContext,
  name: string,
  labels: Record<string, string>,
  image = 'registry.example/bare:broken',
): Promise<void> {
  const pod = { metadata: { name, labels }, spec: { nodeName: 'kwok-node-1', containers: [{ name: 'c', image }] } };
  expectStatus(await ctx.admin('POST', podPath(ctx), pod), `creating pod ${name}`, 201);
  await ctx.waitFor(`${name} running`, async () => {
    const { json } = await ctx.admin('GET', podPath(ctx, name));
    return json?.status?.phase === 'Running' ? true : undefined;
  });
}

/** Writes the pod's Ready condition as its kubelet would. */
export async function setReady(ctx: ScenarioContext, name: string, ready: boolean): Promise<void> {
  const status = ready ? 'True' : 'False';
  const patch = { status: { conditions: [{ type: 'Ready', status, lastTransitionTime: new Date().toISOString() }] } };
  const reply = await ctx.admin('PATCH', `${podPath(ctx, name)}/status`, patch, STRATEGIC);
  expectStatus(reply, `readiness of ${name}`, 200);
}

export async function deletePod(ctx: ScenarioContext, name: string): Promise<void> {
  expectStatus(await ctx.admin('DELETE', podPath(ctx, name)), `deleting pod ${name}`, 200);
}

/** Asks for the pod's eviction; the answer's status and reason are recorded under `what`. */
export async function evict(ctx: ScenarioContext, what: string, pod: string): Promise<number> {
  const reply = await ctx.admin('POST', `${podPath(ctx, pod)}/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod, namespace: ctx.ns },
  });
  ctx.record(what, `${reply.status} ${reply.json?.reason ?? ''}`.trim());
  return reply.status;
}

export async function createPdb(ctx: ScenarioContext, name: string, selector: string, spec: object): Promise<void> {
  const reply = await ctx.admin('POST', `/apis/policy/v1/namespaces/${ctx.ns}/poddisruptionbudgets`, {
    metadata: { name },
    spec: { selector: { matchLabels: { app: selector } }, ...spec },
  });
  expectStatus(reply, `creating PDB ${name}`, 201);
}

/** Waits until the PDB's status is of its current generation and `test` holds for it. */
export const pdbStatus = (ctx: ScenarioContext, name: string, what: string, test: (status: any) => boolean) =>
  ctx.waitFor(`${name} ${what}`, async () => {
    const { json } = await ctx.admin('GET', `/apis/policy/v1/namespaces/${ctx.ns}/poddisruptionbudgets/${name}`);
    const current = json?.status?.observedGeneration === json?.metadata?.generation;
    return current && test(json.status) ? true : undefined;
  });

/** Waits until the namespace has exactly these pods (by name), whatever their state. */
export const podsAre = (ctx: ScenarioContext, names: string[]) =>
  ctx.waitFor(`pods ${names.join(',') || 'none'}`, async () => {
    const { json } = await ctx.admin('GET', podPath(ctx));
    const have = (json?.items ?? []).map((pod: any) => pod.metadata.name).sort();
    return JSON.stringify(have) === JSON.stringify([...names].sort()) ? true : undefined;
  });
