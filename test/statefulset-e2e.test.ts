/**
 * The StatefulSet controller end to end on the embedded control plane (in memory, temp data dir) with
 * three simulated nodes running the pods: ordered creation, a rolling update from the top, a
 * partition, a `:broken` image that stalls the rollout with a condition naming the pod, the opt-in
 * recovery after `kubectl rollout undo`, `kubectl rollout status/history`, scale-down with claim
 * retention, a pod name held by a foreign pod, and a pod create answered AlreadyExists while the controller's
 * pod cache is behind.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statefulSetControllerDefinition } from '../controllers/statefulset/index.ts';
import type { WatchEvent } from '../src/api/meta.ts';
import type { StatefulSet } from '../src/api/types/apps.ts';
import type { PersistentVolumeClaim, Pod } from '../src/api/types/core.ts';
import { DEFAULT_FEATURE_GATES } from '../src/controlplane/validation/context.ts';
import { startSimulatedNodes } from '../src/simulation/nodes.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type RunningControllers as RunningController, runControllers } from './support/controllers.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

let cluster: TestCluster;
let controller: RunningController;
let kubectl: Kubectl;
let cacheDir: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  cluster.cp.attach(await startSimulatedNodes(cluster.cp, 3));
  controller = await runControllers(cluster.client, cluster.cp.registry, [statefulSetControllerDefinition], {
    features: DEFAULT_FEATURE_GATES,
  });
  cacheDir = await mkdtemp(join(tmpdir(), 'sts-kubectl-'));
  kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

const n = () => cluster.cp.registry.naming;
const pods = () => cluster.client.kind<Pod>('Pod');
const sets = () => cluster.client.kind<StatefulSet>('StatefulSet');

async function namespace(name: string): Promise<string> {
  await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function statefulSet(ns: string, name: string, spec: Partial<StatefulSet['spec']> = {}, image = 'app:1'): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { namespace: ns, name },
    spec: {
      replicas: 5,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: { [n().annotations.readinessDelay]: '150ms' } },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image }] },
      },
      ...spec,
    },
  };
}

/** Every watch event of the namespace's pods, in arrival order. */
function recordPods(ns: string): { events: WatchEvent<Pod>[]; stop(): void } {
  const events: WatchEvent<Pod>[] = [];
  const abort = new AbortController();
  pods()
    .watch(ns, {}, (e) => events.push(e), abort.signal)
    .catch(() => undefined);
  return { events, stop: () => abort.abort() };
}

const isReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const revisionOf = (p: Pod) => p.metadata.labels?.['controller-revision-hash'];
const condition = (s: StatefulSet) => s.status?.conditions?.find((c) => c.type === 'RolloutProgressing');

async function waitForSet(
  ns: string,
  name: string,
  test: (s: StatefulSet) => boolean,
  ms = 30_000,
  what = 'set',
): Promise<StatefulSet> {
  let last: unknown;
  return eventually(
    async () => {
      const s = await sets().get(ns, name);
      last = s.status;
      return test(s) ? s : undefined;
    },
    ms,
    () => `${what}: last status ${JSON.stringify(last)}`,
  );
}

const rolledOut = (replicas: number) => (s: StatefulSet) =>
  s.status?.observedGeneration === s.metadata.generation &&
  s.status?.readyReplicas === replicas &&
  s.status?.updatedReplicas === replicas &&
  s.status?.currentRevision === s.status?.updateRevision;

async function setImage(ns: string, name: string, image: string): Promise<void> {
  await sets().patch(ns, name, { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } }, 'strategic');
}

describe.skipIf(!hasKubectl)('an OrderedReady set of 5 through its life', () => {
  const ns = 'sts-life';
  let revision1 = '';

  it('creates pods in ordinal order, each only after the previous one is Ready', async () => {
    await namespace(ns);
    const watch = recordPods(ns);
    await sets().create(statefulSet(ns, 'web'));
    const s = await waitForSet(ns, 'web', rolledOut(5), 30_000, 'all 5 Ready');
    watch.stop();
    revision1 = s.status!.updateRevision!;
    const added = watch.events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name);
    expect(added).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
    for (let i = 1; i < 5; i++) {
      const addedAt = watch.events.findIndex((e) => e.type === 'ADDED' && e.object.metadata.name === `web-${i}`);
      const previousReadyAt = watch.events.findIndex(
        (e) => e.object.metadata.name === `web-${i - 1}` && isReady(e.object),
      );
      expect(previousReadyAt, `web-${i - 1} Ready before web-${i} exists`).toBeGreaterThan(-1);
      expect(previousReadyAt).toBeLessThan(addedAt);
    }
    const placed = (await pods().list(ns)).items.map((p) => p.spec?.nodeName);
    expect(new Set(placed).size).toBe(3);
    expect(condition(s)).toMatchObject({ status: 'True', reason: 'RolloutComplete' });
  }, 60_000);

  it('a template change rolls from the highest ordinal down; kubectl rollout status follows it', async () => {
    const watch = recordPods(ns);
    await setImage(ns, 'web', 'app:2');
    const status = await kubectl.run(['rollout', 'status', 'sts/web', '-n', ns, '--timeout=60s'], {
      timeoutMs: 70_000,
    });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('roll out complete');
    const s = await waitForSet(ns, 'web', rolledOut(5));
    watch.stop();
    const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name);
    expect(deleted).toEqual(['web-4', 'web-3', 'web-2', 'web-1', 'web-0']);
    expect(s.status!.currentRevision).not.toBe(revision1);
  }, 90_000);

  it('partition 3 updates only ordinals 4 and 3', async () => {
    const before = (await sets().get(ns, 'web')).status!.currentRevision;
    await sets().patch(ns, 'web', { spec: { updateStrategy: { rollingUpdate: { partition: 3 } } } }, 'merge');
    await setImage(ns, 'web', 'app:3');
    const s = await waitForSet(ns, 'web', (x) => x.status?.updatedReplicas === 2 && x.status.readyReplicas === 5);
    const byName = new Map((await pods().list(ns)).items.map((p) => [p.metadata.name, revisionOf(p)]));
    expect([0, 1, 2].map((i) => byName.get(`web-${i}`))).toEqual([before, before, before]);
    expect([3, 4].map((i) => byName.get(`web-${i}`))).toEqual([s.status!.updateRevision, s.status!.updateRevision]);
    expect(s.status!.currentRevision).toBe(before);
    await waitForSet(ns, 'web', (x) => condition(x)?.reason === 'PartitionReached');
    // Lift the partition: the rest follows and revision 3 becomes current.
    await sets().patch(ns, 'web', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } }, 'merge');
    await waitForSet(ns, 'web', rolledOut(5), 30_000, 'partition lifted');
  }, 60_000);

  it('a :broken image stalls the rollout and the condition names the pod', async () => {
    await setImage(ns, 'web', 'app:broken');
    const s = await waitForSet(
      ns,
      'web',
      (x) => condition(x)?.reason === 'PodNotReady' && (condition(x)?.message ?? '').includes('web-4'),
      30_000,
      'stalled on web-4',
    );
    expect(condition(s)!.message).toMatch(
      /^waiting for web-4 \(revision web-\w+\) to become Ready: Running, not Ready since /,
    );
    // kubectl describe shows events, not StatefulSet conditions: the wait is an event too.
    const waits = controller.events.filter((e) => e.name === 'web' && e.reason === 'PodNotReady');
    expect(waits.some((e) => e.note.includes('web-4') && e.type === 'Normal')).toBe(true);
  }, 40_000);

  it('kubectl rollout undo reverts the template; the stuck pod stays until the recovery annotation is set', async () => {
    const current = (await sets().get(ns, 'web')).status!.currentRevision!;
    const undo = await kubectl.run(['rollout', 'undo', 'sts/web', '-n', ns]);
    expect(undo.code, undo.stderr).toBe(0);
    const s = await waitForSet(ns, 'web', (x) => x.status?.updateRevision === current, 20_000, 'reverted');
    // The reference's trap: the broken pod blocks the sync before the update phase.
    await new Promise((r) => setTimeout(r, 1500));
    const stuck = await pods().get(ns, 'web-4');
    expect(stuck.spec?.containers[0]?.image).toBe('app:broken');
    expect(condition(await sets().get(ns, 'web'))?.message).toContain('web-4');
    expect(s.status!.readyReplicas).toBe(4);

    await kubectl.ok(['annotate', 'sts/web', '-n', ns, `${n().annotations.statefulSetRecovery}=true`]);
    await waitForSet(ns, 'web', rolledOut(5), 30_000, 'recovered');
    expect((await pods().get(ns, 'web-4')).spec?.containers[0]?.image).toBe('app:3');
    expect(controller.events.some((e) => e.reason === 'SuccessfulDelete' && e.note.includes('web-4'))).toBe(true);
  }, 60_000);

  it('kubectl rollout history lists the revisions', async () => {
    const history = await kubectl.ok(['rollout', 'history', 'sts/web', '-n', ns]);
    const numbers = history
      .split('\n')
      .map((l) => /^(\d+)\s/.exec(l)?.[1])
      .filter(Boolean);
    expect(numbers.length).toBeGreaterThanOrEqual(3);
    const shown = await kubectl.ok(['rollout', 'history', 'sts/web', '-n', ns, `--revision=${numbers.at(-1)}`]);
    expect(shown).toContain('app:3');
  }, 30_000);

  it('scaling down deletes from the top', async () => {
    const watch = recordPods(ns);
    await cluster.client.kind('StatefulSet').patchScale(ns, 'web', 2);
    await waitForSet(ns, 'web', (x) => x.status?.replicas === 2, 30_000, 'scaled to 2');
    watch.stop();
    expect(watch.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name)).toEqual([
      'web-4',
      'web-3',
      'web-2',
    ]);
  }, 40_000);
});

describe.skipIf(!hasKubectl)('pods with the default 30 s grace period, containers that handle SIGTERM', () => {
  it('a rolling update of 5 completes within 30 s: kubectl rollout status --timeout=30s', async () => {
    const ns = await namespace('sts-default-grace');
    const set = statefulSet(ns, 'web');
    delete set.spec.template.spec!.terminationGracePeriodSeconds;
    delete set.spec.template.metadata!.annotations; // the default readiness delay too
    await sets().create(set);
    await waitForSet(ns, 'web', rolledOut(5), 30_000, 'all 5 Ready');
    expect((await pods().get(ns, 'web-0')).spec?.terminationGracePeriodSeconds ?? 30).toBe(30);
    const started = performance.now();
    await setImage(ns, 'web', 'app:2');
    const status = await kubectl.run(['rollout', 'status', 'sts/web', '-n', ns, '--timeout=30s'], {
      timeoutMs: 40_000,
    });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('roll out complete');
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 80_000);
});

describe('claims and their retention', () => {
  it('each ordinal gets its claim, bound before the pod runs; scaled-down claims go with whenScaled: Delete', async () => {
    const ns = await namespace('sts-claims');
    const set = statefulSet(ns, 'db', {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    });
    set.spec.template.spec!.containers[0]!.volumeMounts = [{ name: 'data', mountPath: '/data' }];
    await sets().create(set);
    await waitForSet(ns, 'db', rolledOut(3));
    const claims = cluster.client.kind<PersistentVolumeClaim>('PersistentVolumeClaim');
    const names = async () => (await claims.list(ns)).items.map((c) => c.metadata.name).sort();
    expect(await names()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);
    expect((await claims.get(ns, 'data-db-0')).status?.phase).toBe('Bound');
    const p = await pods().get(ns, 'db-1');
    expect(p.spec?.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'data-db-1' } });

    await cluster.client.kind('StatefulSet').patchScale(ns, 'db', 1);
    await eventually(
      async () => JSON.stringify(await names()) === '["data-db-0"]',
      20_000,
      'claims of db-1, db-2 deleted',
    );
    expect((await claims.get(ns, 'data-db-0')).metadata.ownerReferences ?? []).toEqual([]);
  }, 60_000);
});

describe('a pod name taken by a foreign pod', () => {
  it('FailedCreate and a False condition, no loop; the set proceeds once the name is free', async () => {
    const ns = await namespace('sts-foreign');
    const squatter: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: ns, name: 'solo-0', labels: { app: 'other' } },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: 'other:1' }] },
    };
    await pods().create(squatter);
    // Once the foreign pod is Ready nothing changes any more, so any further sync would be a loop.
    await eventually(async () => isReady(await pods().get(ns, 'solo-0')), 20_000, 'the foreign pod Ready');
    await sets().create(statefulSet(ns, 'solo', { replicas: 1 }));
    const s = await waitForSet(ns, 'solo', (x) => condition(x)?.reason === 'FailedCreate');
    expect(condition(s)).toMatchObject({ status: 'False' });
    expect(condition(s)!.message).toContain('solo-0');
    const failed = () => controller.events.filter((e) => e.name === 'solo' && e.reason === 'FailedCreate');
    expect(failed()[0]?.note).toContain('create Pod solo-0 in StatefulSet solo failed error');
    // No retry loop: nothing changes, so the set is not synced again and again.
    const count = failed().length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(failed().length).toBeLessThanOrEqual(count + 1);

    await pods().delete(ns, 'solo-0', { gracePeriodSeconds: 0 });
    const ready = await waitForSet(ns, 'solo', rolledOut(1));
    expect(condition(ready)?.reason).toBe('RolloutComplete');
    expect((await pods().get(ns, 'solo-0')).metadata.labels?.app).toBe('solo');
  }, 40_000);
});

describe("a pod create answered AlreadyExists (the controller's pod cache behind)", () => {
  it('fails the sync without an event and retries with backoff; once the cache catches up the pod is adopted', async () => {
    const ns = await namespace('sts-behind');
    const faults = cluster.cp.faults;
    // The controller's pod cache stops: its cluster-wide pod list and watch fail until the fault is cleared.
    faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (method, path) => method === 'GET' && path.endsWith('/pods') && !path.includes('/namespaces/'),
    });
    faults.dropWatches(cluster.cp.registry.byKind('Pod'));
    // An orphan the set would adopt, unseen by the controller: its create of behind-0 is answered AlreadyExists.
    const orphan = statefulSet(ns, 'behind').spec.template;
    await pods().create({
      apiVersion: 'v1',
      kind: 'Pod',
      ...orphan,
      metadata: { ...orphan.metadata, namespace: ns, name: 'behind-0' },
    });
    const creates = () =>
      faults.requests.filter((r) => r.method === 'POST' && r.path === `/api/v1/namespaces/${ns}/pods`);
    faults.recordRequests = true;
    try {
      await sets().create(statefulSet(ns, 'behind', { replicas: 1 }));
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      faults.recordRequests = false;
      faults.clear();
    }
    // Retried with backoff, as the reference's failed sync is: the first retries within milliseconds, then
    // slower (before, a create answered AlreadyExists counted as done: one create per set event, 2 here).
    const at = creates().map((r) => r.at);
    expect(at.length).toBeGreaterThanOrEqual(4);
    expect(at.at(-1)! - at.at(-2)!).toBeGreaterThan(at[2]! - at[1]!);
    expect(controller.events.filter((e) => e.name === 'behind')).toEqual([]);

    await waitForSet(ns, 'behind', rolledOut(1));
    const adopted = await pods().get(ns, 'behind-0');
    expect(adopted.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'StatefulSet',
      name: 'behind',
      controller: true,
    });
  }, 60_000);
});

describe('validation refuses bad sets with the field and the rule', () => {
  it.each<[string, (s: StatefulSet) => void, string]>([
    [
      'a selector that does not match the template',
      (s) => {
        s.spec.selector = { matchLabels: { app: 'other' } };
      },
      'spec.template.metadata.labels: Invalid value: {"app":"bad"}: `selector` does not match template `labels`',
    ],
    [
      'a claim template without a mount',
      (s) => {
        s.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: {} }];
      },
      'spec.volumeClaimTemplates[0].metadata.name: Invalid value: "data": must match the name of a volumeMount in a container of the pod template',
    ],
    [
      'maxUnavailable 0',
      (s) => {
        s.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } };
      },
      'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0',
    ],
  ])('%s', async (_what, spoil, message) => {
    const set = statefulSet('default', 'bad');
    spoil(set);
    const err = await sets()
      .create(set)
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(err?.message).toContain(message);
  });
});

describe('the kubernetes flavor', () => {
  it("uses the reference's label keys on pods and revisions", async () => {
    const k8s = await startTestCluster({ flavor: 'kubernetes' });
    try {
      k8s.cp.attach(await startSimulatedNodes(k8s.cp, 1));
      const run = await runControllers(k8s.client, k8s.cp.registry, [statefulSetControllerDefinition], {
        features: DEFAULT_FEATURE_GATES,
      });
      try {
        const set = statefulSet('default', 'kube', { replicas: 2 });
        set.spec.template.metadata!.annotations = { 'simulation.kubernetes.io/readiness-delay': '0s' };
        await k8s.client.kind<StatefulSet>('StatefulSet').create(set);
        const done = await eventually(async () => {
          const s = await k8s.client.kind<StatefulSet>('StatefulSet').get('default', 'kube');
          return s.status?.readyReplicas === 2 ? s : undefined;
        }, 20_000);
        const p = await k8s.client.kind<Pod>('Pod').get('default', 'kube-1');
        expect(p.metadata.labels).toMatchObject({
          'statefulset.kubernetes.io/pod-name': 'kube-1',
          'apps.kubernetes.io/pod-index': '1',
          'controller-revision-hash': done.status!.updateRevision,
        });
        const rev = await k8s.client.kind('ControllerRevision').get('default', done.status!.updateRevision!);
        expect(done.status!.updateRevision).toBe(`kube-${rev.metadata.labels?.['controller.kubernetes.io/hash']}`);
      } finally {
        await run.stop();
      }
    } finally {
      await k8s.stop();
    }
  }, 60_000);
});
