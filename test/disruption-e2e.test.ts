/**
 * The disruption controller and the eviction subresource end to end on the embedded control plane:
 * Deployments (through ReplicaSets), ReplicaSets, StatefulSets and ReplicationControllers with their
 * pods, budgets in every mode; status converging after readiness flips (written by the test through
 * `/status`), scale changes and pod deletions; evictions spending the budget, parallel evictions
 * against one budget, graceful evictions, disruptedPods expiry and recheck, stale DisruptionTarget
 * cleanup, pods under several budgets, and the HTTP surface of the eviction subresource.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  namespaceObject,
  pdbObject,
  podObject,
  type RunningController,
  runDisruptionController,
  runningStatus,
  workloadObject,
} from '../controllers/disruption/harness.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { Pod } from '../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import { StatusError } from '../src/client/errors.ts';
import { concat, envelope, pb } from '../src/controlplane/protobuf/test-encoder.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let cluster: TestCluster;
let controller: RunningController;

beforeAll(async () => {
  cluster = await startTestCluster();
  controller = await runDisruptionController(cluster.client, cluster.cp.registry);
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

const pods = () => cluster.client.kind<Pod>('Pod');
const pdbs = () => cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget');

async function namespace(name: string): Promise<string> {
  await cluster.client.kind('Namespace').create(namespaceObject(name));
  return name;
}

async function create<T extends KubeObject>(obj: T): Promise<T> {
  return (await cluster.client.kind<T>(obj.kind!).create(obj)) as T;
}

async function setReady(ns: string, name: string, ready: boolean): Promise<void> {
  await pods().patchStatus(ns, name, { status: runningStatus(ready) }, 'merge');
}

async function makePods(
  ns: string,
  prefix: string,
  count: number,
  labels: Record<string, string>,
  o: { owner?: KubeObject; ready?: boolean; nodeName?: string; grace?: number } = {},
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const name of names) {
    await pods().create(podObject(ns, name, labels, o));
    await setReady(ns, name, o.ready ?? true);
  }
  return names;
}

/** Waits for the budget's status to contain `want` (and to be current). */
async function statusOf(ns: string, name: string, want: Record<string, unknown>, ms = 10_000) {
  let last: unknown;
  try {
    return await eventually(
      async () => {
        const pdb = await pdbs().get(ns, name);
        last = pdb.status;
        const s = (pdb.status ?? {}) as Record<string, unknown>;
        const current = s.observedGeneration === pdb.metadata.generation;
        return current && Object.entries(want).every(([k, v]) => JSON.stringify(s[k]) === JSON.stringify(v)) && pdb;
      },
      ms,
      `status of ${ns}/${name} ${JSON.stringify(want)}`,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last)}`);
  }
}

function condition(pdb: PodDisruptionBudget) {
  return pdb.status?.conditions?.find((c) => c.type === 'DisruptionAllowed');
}

async function evict(ns: string, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  try {
    await cluster.client.request('POST', `/api/v1/namespaces/${ns}/pods/${name}/eviction`, {
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns }, ...extra },
    });
    return 201;
  } catch (err) {
    if (err instanceof StatusError) return err.code;
    throw err;
  }
}

/** A raw HTTPS POST (our client retries 429s that carry Retry-After; this one shows them as they are). */
async function rawPost(
  path: string,
  body: unknown,
  contentType = 'application/json',
): Promise<{ code: number; retryAfter?: string; body: Record<string, any> }> {
  const opts: RequestOptions = {};
  Object.assign(opts, (await cluster.kc.credentials()).tls);
  const url = new URL(path, cluster.cp.url);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { ...opts, method: 'POST', headers: { ...(opts.headers ?? {}), 'content-type': contentType } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () =>
          resolve({
            code: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
            body: JSON.parse(text),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body instanceof Uint8Array ? body : JSON.stringify(body));
  });
}

const eviction = (ns: string, name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  metadata: { name, namespace: ns },
  ...extra,
});

describe('status converges', () => {
  it('Deployment (two ReplicaSets) under maxUnavailable 25%: readiness flips, scale changes, pod deletions', async () => {
    const ns = await namespace('conv-deploy');
    const labels = { app: 'web' };
    const dep = await create(workloadObject('Deployment', ns, 'web', 4, labels));
    const rsA = await create(workloadObject('ReplicaSet', ns, 'web-a', 3, labels, dep));
    const rsB = await create(workloadObject('ReplicaSet', ns, 'web-b', 1, labels, dep));
    await create(pdbObject(ns, 'web', { maxUnavailable: '25%', selector: { matchLabels: labels } }));
    await statusOf(ns, 'web', { expectedPods: 0, desiredHealthy: 0, currentHealthy: 0, disruptionsAllowed: 0 });
    expect(controller.events).toContainEqual(
      expect.objectContaining({ name: 'web', reason: 'NoPods', type: 'Normal' }),
    );

    await makePods(ns, 'web-a', 3, labels, { owner: rsA, ready: false });
    await makePods(ns, 'web-b', 1, labels, { owner: rsB, ready: false });
    // expected = Deployment replicas 4 (once, via both ReplicaSets); desired = 4 - ceil(25% of 4) = 3.
    const notReady = await statusOf(ns, 'web', {
      expectedPods: 4,
      desiredHealthy: 3,
      currentHealthy: 0,
      disruptionsAllowed: 0,
    });
    expect(condition(notReady)).toMatchObject({ status: 'False', reason: 'InsufficientPods' });

    for (const name of ['web-a-0', 'web-a-1', 'web-a-2', 'web-b-0']) await setReady(ns, name, true);
    const ready = await statusOf(ns, 'web', { currentHealthy: 4, disruptionsAllowed: 1 });
    expect(condition(ready)).toMatchObject({ status: 'True', reason: 'SufficientPods', observedGeneration: 1 });

    await setReady(ns, 'web-a-1', false);
    await statusOf(ns, 'web', { currentHealthy: 3, disruptionsAllowed: 0 });
    await setReady(ns, 'web-a-1', true);
    await statusOf(ns, 'web', { currentHealthy: 4, disruptionsAllowed: 1 });

    // A scale change alone (no pod event) re-syncs the budget: expected 8, desired 6.
    await cluster.client.kind('Deployment').patchScale(ns, 'web', 8);
    await statusOf(ns, 'web', { expectedPods: 8, desiredHealthy: 6, currentHealthy: 4, disruptionsAllowed: 0 });
    await cluster.client.kind('Deployment').patchScale(ns, 'web', 2);
    await statusOf(ns, 'web', { expectedPods: 2, desiredHealthy: 1, currentHealthy: 4, disruptionsAllowed: 3 });

    await pods().delete(ns, 'web-a-0');
    await statusOf(ns, 'web', { currentHealthy: 3, disruptionsAllowed: 2 });
  });

  it('ReplicaSet, StatefulSet and ReplicationController in every mode', async () => {
    const ns = await namespace('conv-modes');
    const rs = await create(workloadObject('ReplicaSet', ns, 'solo', 3, { app: 'solo' }));
    const sts = await create(workloadObject('StatefulSet', ns, 'db', 3, { app: 'db' }));
    const rc = await create(workloadObject('ReplicationController', ns, 'legacy', 5, { app: 'legacy' }));
    await makePods(ns, 'solo', 3, { app: 'solo' }, { owner: rs });
    await makePods(ns, 'db', 3, { app: 'db' }, { owner: sts });
    await makePods(ns, 'legacy', 4, { app: 'legacy' }, { owner: rc });

    await create(pdbObject(ns, 'solo-min-pct', { minAvailable: '50%', selector: { matchLabels: { app: 'solo' } } }));
    await create(pdbObject(ns, 'db-min-int', { minAvailable: 2, selector: { matchLabels: { app: 'db' } } }));
    await create(pdbObject(ns, 'db-max-int', { maxUnavailable: 1, selector: { matchLabels: { app: 'db' } } }));
    await create(
      pdbObject(ns, 'legacy-max-pct', { maxUnavailable: '30%', selector: { matchLabels: { app: 'legacy' } } }),
    );

    // 50% of 3 rounds up to 2.
    await statusOf(ns, 'solo-min-pct', {
      expectedPods: 3,
      desiredHealthy: 2,
      currentHealthy: 3,
      disruptionsAllowed: 1,
    });
    // Integer minAvailable counts matched pods.
    await statusOf(ns, 'db-min-int', { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    await statusOf(ns, 'db-max-int', { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    // RC replicas 5 although 4 pods exist; 30% of 5 rounds up to 2 → desired 3.
    await statusOf(ns, 'legacy-max-pct', {
      expectedPods: 5,
      desiredHealthy: 3,
      currentHealthy: 4,
      disruptionsAllowed: 1,
    });

    // Scale changes of each kind re-sync the budgets that cover its pods.
    await cluster.client.kind('StatefulSet').patchScale(ns, 'db', 5);
    await statusOf(ns, 'db-max-int', { expectedPods: 5, desiredHealthy: 4, disruptionsAllowed: 0 });
    // The integer mode counts pods, so its status is unchanged by the scale.
    await statusOf(ns, 'db-min-int', { expectedPods: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
    await cluster.client.kind('ReplicaSet').patchScale(ns, 'solo', 10);
    await statusOf(ns, 'solo-min-pct', { expectedPods: 10, desiredHealthy: 5, disruptionsAllowed: 0 });
    await cluster.client.kind('ReplicationController').patchScale(ns, 'legacy', 4);
    await statusOf(ns, 'legacy-max-pct', { expectedPods: 4, desiredHealthy: 2, disruptionsAllowed: 2 });

    // A spec change bumps the generation; the controller catches up.
    const pdb = await pdbs().get(ns, 'db-min-int');
    await pdbs().replace({ ...pdb, spec: { ...pdb.spec, minAvailable: 3 } });
    const bumped = await statusOf(ns, 'db-min-int', { desiredHealthy: 3, disruptionsAllowed: 0 });
    expect(bumped.metadata.generation).toBe(2);
    expect(bumped.status?.observedGeneration).toBe(2);
  });

  it('empty selector matches every pod of the namespace, null selector none; naked pods are unmanaged', async () => {
    const ns = await namespace('conv-selectors');
    const rs = await create(workloadObject('ReplicaSet', ns, 'rs', 2, { app: 'a' }));
    await makePods(ns, 'a', 2, { app: 'a' }, { owner: rs });
    await makePods(ns, 'rogue', 1, { app: 'a' });
    await makePods(ns, 'b', 1, { app: 'b' });
    await create(pdbObject(ns, 'everything', { minAvailable: 1, selector: {} }));
    await create(pdbObject(ns, 'nothing', { minAvailable: 1, selector: null }));
    await create(pdbObject(ns, 'pct', { minAvailable: '100%', selector: { matchLabels: { app: 'a' } } }));
    await statusOf(ns, 'everything', { expectedPods: 4, currentHealthy: 4, disruptionsAllowed: 3 });
    await statusOf(ns, 'nothing', { expectedPods: 0, currentHealthy: 0, disruptionsAllowed: 0 });
    // The naked pod is not expected but is healthy: it raises the allowance.
    await statusOf(ns, 'pct', { expectedPods: 2, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    await eventually(() => controller.events.some((e) => e.name === 'pct' && e.reason === 'UnmanagedPods'));
    // A pod that appears later is counted by the wildcard budget.
    await makePods(ns, 'late', 1, { app: 'c' });
    await statusOf(ns, 'everything', { expectedPods: 5, currentHealthy: 5 });
  });

  it('a pod under two budgets: both count it, a warning names them, eviction answers 500', async () => {
    const ns = await namespace('conv-multi');
    await makePods(ns, 'p', 3, { app: 'x', tier: 'front' });
    await create(pdbObject(ns, 'by-app', { minAvailable: 1, selector: { matchLabels: { app: 'x' } } }));
    await create(pdbObject(ns, 'by-tier', { minAvailable: 1, selector: { matchLabels: { tier: 'front' } } }));
    await statusOf(ns, 'by-app', { currentHealthy: 3, disruptionsAllowed: 2 });
    await statusOf(ns, 'by-tier', { currentHealthy: 3, disruptionsAllowed: 2 });
    await setReady(ns, 'p-0', false);
    // Every matching budget is re-synced by one pod event.
    await statusOf(ns, 'by-app', { currentHealthy: 2 });
    await statusOf(ns, 'by-tier', { currentHealthy: 2 });
    await eventually(() =>
      controller.events.some(
        (e) =>
          e.kind === 'Pod' &&
          e.name === 'p-0' &&
          e.reason === 'MultiplePodDisruptionBudgets' &&
          e.note.includes('by-app, by-tier'),
      ),
    );
    const r = await rawPost(`/api/v1/namespaces/${ns}/pods/p-1/eviction`, eviction(ns, 'p-1'));
    expect(r.code).toBe(500);
    expect(r.body).toMatchObject({
      status: 'Failure',
      code: 500,
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    });
    expect(await pods().get(ns, 'p-1')).toBeDefined();
  });

  it('a label change moves the pod from one budget to the other', async () => {
    const ns = await namespace('conv-relabel');
    await makePods(ns, 'p', 2, { app: 'x' });
    await create(pdbObject(ns, 'x', { minAvailable: 1, selector: { matchLabels: { app: 'x' } } }));
    await create(pdbObject(ns, 'y', { minAvailable: 1, selector: { matchLabels: { app: 'y' } } }));
    await statusOf(ns, 'x', { currentHealthy: 2 });
    await pods().patch(ns, 'p-0', { metadata: { labels: { app: 'y' } } }, 'merge');
    await statusOf(ns, 'x', { currentHealthy: 1, expectedPods: 1 });
    await statusOf(ns, 'y', { currentHealthy: 1, expectedPods: 1 });
  });
});

describe('eviction with the controller running', () => {
  it('spends the budget, records the pod, and the controller catches up after the deletion', async () => {
    const ns = await namespace('evict-basic');
    const rs = await create(workloadObject('ReplicaSet', ns, 'web', 3, { app: 'web' }));
    await makePods(ns, 'web', 3, { app: 'web' }, { owner: rs });
    await create(pdbObject(ns, 'web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } }));
    await statusOf(ns, 'web', { currentHealthy: 3, disruptionsAllowed: 1 });

    expect(await evict(ns, 'web-0')).toBe(201);
    await expect(pods().get(ns, 'web-0')).rejects.toMatchObject({ code: 404 });
    // The controller sees the pod gone: the entry is dropped and the counts follow.
    await statusOf(ns, 'web', { currentHealthy: 2, disruptionsAllowed: 0, expectedPods: 2 });
    expect((await pdbs().get(ns, 'web')).status?.disruptedPods).toBeUndefined();

    const refused = await rawPost(`/api/v1/namespaces/${ns}/pods/web-1/eviction`, eviction(ns, 'web-1'));
    expect(refused.code).toBe(429);
    expect(refused.retryAfter).toBeUndefined();
    expect(refused.body).toMatchObject({
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          { reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' },
        ],
      },
    });
  });

  it('parallel evictions against one budget never exceed it', async () => {
    const ns = await namespace('evict-parallel');
    const rs = await create(workloadObject('ReplicaSet', ns, 'web', 20, { app: 'web' }));
    const names = await makePods(ns, 'web', 20, { app: 'web' }, { owner: rs });
    await create(pdbObject(ns, 'web', { minAvailable: 15, selector: { matchLabels: { app: 'web' } } }));
    await statusOf(ns, 'web', { currentHealthy: 20, disruptionsAllowed: 5 });

    const codes = await Promise.all(names.map((n) => evict(ns, n)));
    expect(codes.filter((c) => c === 201)).toHaveLength(5);
    expect(codes.filter((c) => c === 429)).toHaveLength(15);
    const left = (await pods().list(ns)).items;
    expect(left).toHaveLength(15);
    await statusOf(ns, 'web', { currentHealthy: 15, disruptionsAllowed: 0 });
    // A second wave gets nothing either.
    const again = await Promise.all(left.map((p) => evict(ns, p.metadata.name!)));
    expect(again.every((c) => c === 429)).toBe(true);
  });

  it('a graceful eviction leaves the pod terminating with DisruptionTarget; it no longer counts', async () => {
    const ns = await namespace('evict-graceful');
    await cluster.client.kind('Node').create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'graceful-node' } });
    const rs = await create(workloadObject('ReplicaSet', ns, 'web', 3, { app: 'web' }));
    await makePods(ns, 'web', 3, { app: 'web' }, { owner: rs, nodeName: 'graceful-node', grace: 30 });
    await create(pdbObject(ns, 'web', { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } }));
    await statusOf(ns, 'web', { currentHealthy: 3, disruptionsAllowed: 1 });

    expect(await evict(ns, 'web-0')).toBe(201);
    const terminating = await pods().get(ns, 'web-0');
    expect(terminating.metadata.deletionTimestamp).toBeDefined();
    expect(terminating.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'EvictionByEvictionAPI',
        message: 'Eviction API: evicting',
      }),
    );
    // Terminating: not healthy, and its disruptedPods entry is dropped (the deletion was observed).
    await statusOf(ns, 'web', { currentHealthy: 2, disruptionsAllowed: 0, disruptedPods: undefined });
    // Terminating pods are evicted without consulting the budget (allowed 0 here).
    expect(await evict(ns, 'web-0')).toBe(201);
    // The test plays the node agent: it finishes the deletion.
    await pods().delete(ns, 'web-0', { gracePeriodSeconds: 0 });
    await expect(pods().get(ns, 'web-0')).rejects.toMatchObject({ code: 404 });
  });

  it('unready pods: IfHealthyBudget evicts them only while the budget is whole; AlwaysAllow always', async () => {
    const ns = await namespace('evict-unhealthy');
    const rs = await create(workloadObject('ReplicaSet', ns, 'web', 4, { app: 'web' }));
    await makePods(ns, 'web', 4, { app: 'web' }, { owner: rs });
    await create(pdbObject(ns, 'web', { minAvailable: 3, selector: { matchLabels: { app: 'web' } } }));
    await setReady(ns, 'web-0', false);
    await statusOf(ns, 'web', { currentHealthy: 3, desiredHealthy: 3, disruptionsAllowed: 0 });
    // current (3) >= desired (3): the unready pod goes without spending anything.
    expect(await evict(ns, 'web-0')).toBe(201);
    await statusOf(ns, 'web', { currentHealthy: 3, disruptionsAllowed: 0, expectedPods: 3 });
    await setReady(ns, 'web-1', false);
    await statusOf(ns, 'web', { currentHealthy: 2 });
    // Now the application is disrupted: an unready pod needs a disruption like a Ready one.
    expect(await evict(ns, 'web-1')).toBe(429);
    const pdb = await pdbs().get(ns, 'web');
    await pdbs().replace({ ...pdb, spec: { ...pdb.spec, unhealthyPodEvictionPolicy: 'AlwaysAllow' } });
    await statusOf(ns, 'web', { currentHealthy: 2 });
    expect(await evict(ns, 'web-1')).toBe(201);
    // Ready pods are still bound by the budget.
    expect(await evict(ns, 'web-2')).toBe(429);
  });

  it('a stale budget (generation ahead of observedGeneration) answers 429 with Retry-After 10', async () => {
    const ns = await namespace('evict-stale');
    await makePods(ns, 'web', 2, { app: 'web' });
    await create(pdbObject(ns, 'web', { minAvailable: 1, selector: { matchLabels: { app: 'web' } } }));
    await statusOf(ns, 'web', { disruptionsAllowed: 1 });
    // Bump the generation behind the controller's back (storage, no watch-visible delay matters here).
    await controller.stop();
    try {
      const pdb = await pdbs().get(ns, 'web');
      await pdbs().replace({ ...pdb, spec: { ...pdb.spec, minAvailable: 0 } });
      const r = await rawPost(`/api/v1/namespaces/${ns}/pods/web-0/eviction`, eviction(ns, 'web-0'));
      expect(r.code).toBe(429);
      expect(r.retryAfter).toBe('10');
      expect(r.body.details.causes[0]).toEqual({
        reason: 'DisruptionBudget',
        message: 'The disruption budget web is still being processed by the server.',
      });
    } finally {
      controller = await runDisruptionController(cluster.client, cluster.cp.registry);
    }
    await statusOf(ns, 'web', { disruptionsAllowed: 2 });
    expect(await evict(ns, 'web-0')).toBe(201);
  });
});

describe('disruptedPods expiry and stale DisruptionTarget conditions', () => {
  it('an expired entry is dropped with NotDeleted; a young one is kept and rechecked when it expires', async () => {
    const ns = await namespace('expiry');
    await makePods(ns, 'p', 3, { app: 'x' });
    await create(pdbObject(ns, 'x', { minAvailable: 1, selector: { matchLabels: { app: 'x' } } }));
    await statusOf(ns, 'x', { currentHealthy: 3, disruptionsAllowed: 2 });
    const stamp = (ago: number) => new Date(Date.now() - ago).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const pdb = await pdbs().get(ns, 'x');
    // p-0: recorded 3 minutes ago and never deleted; p-1: recorded 1 m 52 s ago (expires in ~8 s, a margin that a
    // loaded machine's slow status write does not use up before the first check).
    await pdbs().replaceStatus({
      ...pdb,
      status: { ...pdb.status, disruptedPods: { 'p-0': stamp(180_000), 'p-1': stamp(112_000) } },
    });
    const kept = await statusOf(ns, 'x', { currentHealthy: 2, disruptionsAllowed: 1 });
    expect(Object.keys(kept.status?.disruptedPods ?? {})).toEqual(['p-1']);
    await eventually(() =>
      controller.events.some(
        (e) =>
          e.kind === 'Pod' &&
          e.name === 'p-0' &&
          e.reason === 'NotDeleted' &&
          e.note === "Pod was expected by PDB expiry/x to be deleted but it wasn't",
      ),
    );
    // No event touches the budget; the recheck timer brings p-1 back.
    const back = await statusOf(ns, 'x', { currentHealthy: 3, disruptionsAllowed: 2 }, 20_000);
    expect(back.status?.disruptedPods).toBeUndefined();
  });

  it('clears a DisruptionTarget condition older than 2 minutes on a pod that was not deleted, not a kubelet one', async () => {
    const ns = await namespace('stale');
    await makePods(ns, 'p', 2, { app: 'x' });
    const old = new Date(Date.now() - 3 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const target = (reason: string) => ({
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'DisruptionTarget', status: 'True', reason, message: 'x', lastTransitionTime: old },
        ],
      },
    });
    await pods().patchStatus(ns, 'p-0', target('EvictionByEvictionAPI'), 'merge');
    await pods().patchStatus(ns, 'p-1', target('TerminationByKubelet'), 'merge');
    const cleared = await eventually(async () => {
      const p = await pods().get(ns, 'p-0');
      const c = p.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
      return c?.status === 'False' && c;
    });
    expect(cleared.reason).toBeUndefined();
    expect(cleared.message).toBeUndefined();
    const kubelet = await pods().get(ns, 'p-1');
    expect(kubelet.status?.conditions?.find((x) => x.type === 'DisruptionTarget')?.status).toBe('True');
  });
});

describe('the eviction subresource over HTTP', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await namespace('evict-http');
    await makePods(ns, 'p', 3, { app: 'x' });
    await create(pdbObject(ns, 'x', { minAvailable: 1, selector: { matchLabels: { app: 'x' } } }));
    await statusOf(ns, 'x', { disruptionsAllowed: 2 });
  });

  it.each([
    [
      'name mismatch',
      'p-0',
      (n: string) => eviction(n, 'other'),
      400,
      'name in URL does not match name in Eviction object',
    ],
    [
      'dryRun mismatch',
      'p-0/eviction?dryRun=All',
      (n: string) => ({ ...eviction(n, 'p-0'), deleteOptions: { dryRun: ['Nope'] } }),
      400,
      "DryRun in CreateOptions ([All]) and Eviction's DeleteOptions ([Nope]) do not match",
    ],
    [
      'bad propagation policy',
      'p-0',
      (n: string) => ({ ...eviction(n, 'p-0'), deleteOptions: { propagationPolicy: 'Sideways' } }),
      422,
      'propagationPolicy',
    ],
    [
      'wrong kind',
      'p-0',
      (n: string) => ({ ...eviction(n, 'p-0'), kind: 'Pod' }),
      400,
      'does not match the expected kind',
    ],
    ['missing pod', 'ghost', (n: string) => eviction(n, 'ghost'), 404, 'pods "ghost" not found'],
  ])('%s', async (_name, target, body, code, message) => {
    const path = target.includes('/') ? target : `${target}/eviction`;
    const r = await rawPost(`/api/v1/namespaces/${ns}/pods/${path}`, body(ns));
    expect(r.code).toBe(code);
    expect(r.body.message).toContain(message);
    // Nothing was spent.
    expect((await pdbs().get(ns, 'x')).status?.disruptionsAllowed).toBe(2);
  });

  it('a dry run (query or body) answers 201 and changes nothing', async () => {
    const before = await pdbs().get(ns, 'x');
    const q = await rawPost(`/api/v1/namespaces/${ns}/pods/p-0/eviction?dryRun=All`, eviction(ns, 'p-0'));
    const b = await rawPost(`/api/v1/namespaces/${ns}/pods/p-1/eviction`, {
      ...eviction(ns, 'p-1'),
      deleteOptions: { dryRun: ['All'] },
    });
    expect([q.code, b.code]).toEqual([201, 201]);
    expect(q.body).toMatchObject({ kind: 'Status', status: 'Success' });
    const after = await pdbs().get(ns, 'x');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const p0 = await pods().get(ns, 'p-0');
    expect(p0.status?.conditions?.some((c) => c.type === 'DisruptionTarget')).toBe(false);
  });

  it('a protobuf Eviction (as client-go typed clients may send it) is decoded', async () => {
    const meta = concat(pb.string(1, 'p-2'), pb.string(3, ns));
    const raw = concat(pb.message(1, meta), pb.message(2, pb.varint(1, 0)));
    const r = await rawPost(
      `/api/v1/namespaces/${ns}/pods/p-2/eviction`,
      envelope('policy/v1', 'Eviction', raw),
      'application/vnd.kubernetes.protobuf',
    );
    expect(r.code).toBe(201);
    await expect(pods().get(ns, 'p-2')).rejects.toMatchObject({ code: 404 });
    await statusOf(ns, 'x', { currentHealthy: 2, disruptionsAllowed: 1 });
  });

  it('other verbs on the subresource are refused', async () => {
    await expect(
      cluster.client.request('PUT', `/api/v1/namespaces/${ns}/pods/p-0/eviction`, { body: eviction(ns, 'p-0') }),
    ).rejects.toMatchObject({ code: 405 });
  });
});
