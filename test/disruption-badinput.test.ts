/**
 * Bad input the API would refuse, written straight into storage (`cp.seed` / `cp.storage`), and owners
 * the finders cannot use: every such budget ends with `DisruptionAllowed=False/SyncFailed` and a clear
 * message, disruptionsAllowed 0, a warning event, and the controller keeps serving the other budgets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  namespaceObject,
  ownerRef,
  pdbObject,
  podObject,
  type RunningController,
  runDisruptionController,
  runningStatus,
  workloadObject,
} from '../controllers/disruption/harness.ts';
import type { KubeObject, OwnerReference } from '../src/api/meta.ts';
import type { Pod } from '../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const NS = 'bad-input';
let cluster: TestCluster;
let controller: RunningController;
let rs: KubeObject;
let configMap: KubeObject;

beforeAll(async () => {
  cluster = await startTestCluster();
  controller = await runDisruptionController(cluster.client, cluster.cp.registry);
  await cluster.client.kind('Namespace').create(namespaceObject(NS));
  rs = await cluster.client.kind('ReplicaSet').create(workloadObject('ReplicaSet', NS, 'web', 2, { app: 'web' }));
  // A live object whose UID dangling owner references borrow, so the garbage collector leaves their pods alone.
  configMap = await cluster.client
    .kind('ConfigMap')
    .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: NS, name: 'not-a-workload' } });
  for (const name of ['web-0', 'web-1']) await addPod(name, { app: 'web' }, ownerRef(rs));
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

async function addPod(name: string, labels: Record<string, string>, owner?: OwnerReference): Promise<void> {
  const pod = podObject(NS, name, labels);
  if (owner) pod.metadata.ownerReferences = [owner];
  await cluster.client.kind<Pod>('Pod').create(pod);
  await cluster.client.kind<Pod>('Pod').patchStatus(NS, name, { status: runningStatus(true) }, 'merge');
}

async function seedPdb(name: string, spec: Record<string, unknown>, status?: Record<string, unknown>): Promise<void> {
  await cluster.cp.seed({ ...pdbObject(NS, name, spec), ...(status ? { status } : {}) });
}

async function syncFailed(name: string, message: string): Promise<PodDisruptionBudget> {
  return eventually(
    async () => {
      const pdb = await cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, name);
      const c = pdb.status?.conditions?.find((x) => x.type === 'DisruptionAllowed');
      return c?.reason === 'SyncFailed' && c.message === message && pdb;
    },
    10_000,
    `${name} SyncFailed "${message}"`,
  );
}

describe('malformed int-or-percent values (refused by validation, seeded into storage)', () => {
  it.each([
    [
      'min-abc',
      { minAvailable: 'abc%' },
      'spec.minAvailable: invalid value for IntOrString: invalid value "abc%": strconv.Atoi: parsing "abc": invalid syntax',
    ],
    [
      'max-neg-string',
      { maxUnavailable: '-5' },
      'spec.maxUnavailable: invalid value for IntOrString: invalid type: string is not a percentage',
    ],
    [
      'max-150',
      { maxUnavailable: '150%' },
      'spec.maxUnavailable: invalid value for IntOrString: "150%": must not be greater than 100%',
    ],
    [
      'min-150',
      { minAvailable: '150%' },
      'spec.minAvailable: invalid value for IntOrString: "150%": must not be greater than 100%',
    ],
    [
      'min-neg-int',
      { minAvailable: -5 },
      'spec.minAvailable: invalid value for IntOrString: -5: must be greater than or equal to 0',
    ],
  ])('%s → SyncFailed', async (name, spec, message) => {
    await seedPdb(name, { ...spec, selector: { matchLabels: { app: 'web' } } }, { disruptionsAllowed: 3 });
    const pdb = await syncFailed(name, message);
    expect(pdb.status?.disruptionsAllowed).toBe(0);
    expect(pdb.status?.conditions?.[0]).toMatchObject({ status: 'False', observedGeneration: 0 });
    await eventually(() =>
      controller.events.some(
        (e) =>
          e.name === name &&
          e.reason === 'CalculateExpectedPodCountFailed' &&
          e.note === `Failed to calculate the number of expected pods: ${message}`,
      ),
    );
  });
});

describe('invalid selectors', () => {
  it.each([
    [
      'bad-operator',
      { matchExpressions: [{ key: 'app', operator: 'Near', values: ['web'] }] },
      '"Near" is not a valid label selector operator',
    ],
    [
      'bad-key',
      { matchLabels: { 'no spaces please': 'web' } },
      'key: Invalid value: "no spaces please": name part must consist of alphanumeric characters',
    ],
  ])('%s → SyncFailed, NoPods warning', async (name, selector, fragment) => {
    await seedPdb(name, { minAvailable: 1, selector });
    const pdb = await eventually(async () => {
      const p = await cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, name);
      const c = p.status?.conditions?.find((x) => x.type === 'DisruptionAllowed');
      return c?.reason === 'SyncFailed' && p;
    });
    expect(pdb.status?.conditions?.[0].message).toContain(fragment);
    expect(pdb.status?.disruptionsAllowed).toBe(0);
    await eventually(() =>
      controller.events.some(
        (e) => e.name === name && e.reason === 'NoPods' && e.type === 'Warning' && e.note.includes(fragment),
      ),
    );
  });
});

describe('owners the finders cannot use', () => {
  const borrowed = (apiVersion: string, kind: string, name: string): OwnerReference => ({
    apiVersion,
    kind,
    name,
    uid: configMap.metadata.uid!,
    controller: true,
  });

  it.each([
    ['ghost', 'apps/v1', 'StatefulSet', 'ghost', 'found no controllers for pod "ghost-0"'],
    ['noscale', 'v1', 'ConfigMap', 'not-a-workload', 'configmaps does not implement the scale subresource'],
    [
      'unknown',
      'apps.test.io/v1',
      'TestWorkload',
      'tw',
      'no matches for kind "TestWorkload" in version "apps.test.io/v1"',
    ],
    ['ghost-rs', 'apps/v1', 'ReplicaSet', 'vanished', 'found no controllers for pod "ghost-rs-0"'],
  ])('%s owner → SyncFailed', async (label, apiVersion, kind, name, message) => {
    await addPod(`${label}-0`, { app: label }, borrowed(apiVersion, kind, name));
    await cluster.client
      .kind('PodDisruptionBudget')
      .create(pdbObject(NS, label, { maxUnavailable: '50%', selector: { matchLabels: { app: label } } }));
    const pdb = await syncFailed(label, message);
    expect(pdb.status?.disruptionsAllowed).toBe(0);
    // An integer minAvailable does not need the owner: it counts pods.
    await cluster.client
      .kind('PodDisruptionBudget')
      .create(pdbObject(NS, `${label}-int`, { minAvailable: 0, selector: { matchLabels: { app: label } } }));
    await eventually(async () => {
      const p = await cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, `${label}-int`);
      return p.status?.disruptionsAllowed === 1 && p.status.conditions?.[0].reason === 'SufficientPods';
    });
  });
});

describe('recovery and isolation', () => {
  it('fixing the value in storage clears SyncFailed; healthy budgets kept converging throughout', async () => {
    await seedPdb('fixable', { maxUnavailable: 'x%', selector: { matchLabels: { app: 'web' } } });
    await syncFailed(
      'fixable',
      'spec.maxUnavailable: invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax',
    );
    const rt = cluster.cp.registry.resource('policy', 'v1', 'poddisruptionbudgets')!;
    const stored = cluster.cp.storage.get(rt, `${NS}/fixable`)!;
    cluster.cp.storage.update(rt, {
      ...stored,
      metadata: { ...stored.metadata, generation: 2 },
      spec: { ...(stored.spec as object), maxUnavailable: '50%' },
    });
    const fixed = await eventually(async () => {
      const p = await cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, 'fixable');
      return p.status?.observedGeneration === 2 && p;
    });
    // RS replicas 2, 50% → 1 unavailable allowed, 2 healthy → desired 1, allowed 1.
    expect(fixed.status).toMatchObject({
      expectedPods: 2,
      desiredHealthy: 1,
      currentHealthy: 2,
      disruptionsAllowed: 1,
    });
    expect(fixed.status?.conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'SufficientPods',
      message: '',
      observedGeneration: 2,
    });

    await cluster.client
      .kind('PodDisruptionBudget')
      .create(pdbObject(NS, 'healthy', { minAvailable: 1, selector: { matchLabels: { app: 'web' } } }));
    await eventually(async () => {
      const p = await cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, 'healthy');
      return p.status?.disruptionsAllowed === 1;
    });
    expect(controller.manager.controllerHealth()).toEqual([{ name: 'disruption-controller', ok: true }]);
  });
});
