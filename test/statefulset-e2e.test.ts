/**
 * The StatefulSet controller on the embedded control plane (in memory, temp data dir) with three simulated nodes
 * running the pods, in what only the simulation has: containers that handle SIGTERM within the default grace
 * period, claims bound by the simulated volume binder and their retention, a pod name held by a foreign pod, a pod
 * create answered AlreadyExists while the controller's pod cache is behind (a fault only the embedded plane
 * injects), a pod deleted by name right after its create (as kwok's pod-delete stage can, at a name just reused),
 * a Parallel rolling update of 50, and validation. Ordered creation, rolling updates, partitions, maxUnavailable and the broken-rollout
 * condition run on both substrates in test/e2e/statefulset.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statefulSetControllerDefinition } from '../controllers/statefulset/index.ts';
import type { StatefulSet } from '../src/api/types/apps.ts';
import type { PersistentVolumeClaim, Pod } from '../src/api/types/core.ts';
import { DEFAULT_FEATURE_GATES } from '../src/controlplane/validation/context.ts';
import { startSimulatedNodes } from '../src/simulation/nodes.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type RunningControllers as RunningController, runControllers } from './support/controllers.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';
import { isReady, rolledOut, rolloutCondition, statefulSet, waitForSet } from './support/statefulsets.ts';

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

/** A set of 5 (or `spec.replicas`) whose pods are Ready 150 ms after they run. */
const set150 = (ns: string, name: string, spec: Partial<StatefulSet['spec']> = {}) =>
  statefulSet(ns, name, 5, spec, { [n().annotations.readinessDelay]: '150ms' });
const waitFor = (ns: string, name: string, test: (x: StatefulSet) => boolean, what?: string) =>
  waitForSet(sets(), ns, name, test, what);

async function setImage(ns: string, name: string, image: string): Promise<void> {
  await sets().patch(ns, name, { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } }, 'strategic');
}

describe.skipIf(!hasKubectl)('pods with the default 30 s grace period, containers that handle SIGTERM', () => {
  it('a rolling update of 5 completes within 30 s: kubectl rollout status --timeout=30s', async () => {
    const ns = await namespace('sts-default-grace');
    const set = set150(ns, 'web');
    delete set.spec.template.spec!.terminationGracePeriodSeconds;
    delete set.spec.template.metadata!.annotations; // the default readiness delay too
    await sets().create(set);
    await waitFor(ns, 'web', rolledOut(5), 'all 5 Ready');
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

describe('a Parallel rolling update of 50 with maxUnavailable 10%', () => {
  it('completes within 30 s, well inside the pod expectation lifetime', async () => {
    const ns = await namespace('sts-parallel-50');
    const spec = {
      replicas: 50,
      podManagementPolicy: 'Parallel' as const,
      updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: { maxUnavailable: '10%' } },
    };
    await sets().create(set150(ns, 'wide', spec));
    await waitFor(ns, 'wide', rolledOut(50), 'all 50 Ready');
    const started = performance.now();
    await setImage(ns, 'wide', 'app:2');
    await waitFor(ns, 'wide', (x) => x.status?.updateRevision !== x.status?.currentRevision, 'update started');
    await waitFor(ns, 'wide', rolledOut(50), 'all 50 Ready at app:2');
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 120_000);
});

describe('a pod the controller created, deleted by someone else before its next sync', () => {
  it('is created again at once, not after the pod expectation expires', async () => {
    const ns = await namespace('sts-deleted-early');
    // As a node agent that deletes by name (kwok): wide-0, created in the first slow-start batch, goes while
    // the controller is still creating the other 49, so its cache never holds wide-0 when it next looks.
    const abort = new AbortController();
    let deleted = false;
    const onEvent = (e: { type: string; object: Pod }) => {
      if (deleted || e.type !== 'ADDED' || e.object.metadata.name !== 'wide-0') return;
      deleted = true;
      pods()
        .delete(ns, 'wide-0')
        .catch(() => undefined);
    };
    const watching = pods()
      .watch(ns, {}, onEvent as never, abort.signal)
      .catch(() => undefined);
    try {
      await sets().create(set150(ns, 'wide', { replicas: 50, podManagementPolicy: 'Parallel' }));
      await waitFor(ns, 'wide', rolledOut(50), 'all 50 Ready, wide-0 created again');
      expect(deleted).toBe(true);
    } finally {
      abort.abort();
      await watching;
    }
  }, 60_000);
});

describe('claims and their retention', () => {
  it('each ordinal gets its claim, bound before the pod runs; scaled-down claims go with whenScaled: Delete', async () => {
    const ns = await namespace('sts-claims');
    const set = set150(ns, 'db', {
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
    await waitFor(ns, 'db', rolledOut(3));
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
    await sets().create(set150(ns, 'solo', { replicas: 1 }));
    const s = await waitFor(ns, 'solo', (x) => rolloutCondition(x)?.reason === 'FailedCreate');
    expect(rolloutCondition(s)).toMatchObject({ status: 'False' });
    expect(rolloutCondition(s)!.message).toContain('solo-0');
    const failed = () => controller.events.filter((e) => e.name === 'solo' && e.reason === 'FailedCreate');
    expect(failed()[0]?.note).toContain('create Pod solo-0 in StatefulSet solo failed error');
    // No retry loop: nothing changes, so the set is not synced again and again.
    const count = failed().length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(failed().length).toBeLessThanOrEqual(count + 1);

    await pods().delete(ns, 'solo-0', { gracePeriodSeconds: 0 });
    const ready = await waitFor(ns, 'solo', rolledOut(1));
    expect(rolloutCondition(ready)?.reason).toBe('RolloutComplete');
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
    const orphan = statefulSet(ns, 'behind', 1).spec.template;
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
      await sets().create(statefulSet(ns, 'behind', 1));
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

    await waitFor(ns, 'behind', rolledOut(1));
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
    const set = set150('default', 'bad');
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
