/**
 * `kubectl drain` (the real binary) against the embedded control plane with the disruption controller
 * running: drain evicts as far as the budget allows, then keeps retrying the refused evictions; once
 * replacement pods are Ready elsewhere the budget grows and drain finishes.
 *
 * Pods are created with `terminationGracePeriodSeconds: 0`. There is no node agent here, and a pod
 * bound to a node is otherwise only marked for deletion; with a zero grace period the eviction's
 * delete removes it at once, so drain's wait-for-deletion sees it gone. This keeps the test on the
 * real code path (the eviction deletes through the normal pod delete, honouring the pod's grace
 * period) without a fake kubelet loop. Graceful evictions are covered in disruption-e2e.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

if (!hasKubectl) console.warn('test/disruption-drain.test.ts: no kubectl binary (PATH or $KUBECTL); skipped');

const NS = 'drain';

describe.skipIf(!hasKubectl)('kubectl drain honours PodDisruptionBudgets', () => {
  let cluster: TestCluster;
  let controller: RunningController;
  let kubectl: Kubectl;
  let cacheDir: string;

  beforeAll(async () => {
    cluster = await startTestCluster();
    controller = await runDisruptionController(cluster.client, cluster.cp.registry);
    cacheDir = await mkdtemp(join(tmpdir(), 'kubectl-drain-cache-'));
    kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
  });

  afterAll(async () => {
    await controller?.stop();
    await cluster?.stop();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  const pods = () => cluster.client.kind<Pod>('Pod');
  const podsOn = async (node: string) =>
    (await pods().list(NS)).items.filter((p) => p.spec?.nodeName === node).map((p) => p.metadata.name!);
  const allowed = async () =>
    (await cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, 'web')).status?.disruptionsAllowed;

  async function runPod(name: string, node: string, owner: KubeObject) {
    await pods().create(podObject(NS, name, { app: 'web' }, { owner, nodeName: node, grace: 0 }));
    await pods().patchStatus(NS, name, { status: runningStatus(true) }, 'merge');
  }

  it('evicts up to the budget, waits, and finishes once replacements are Ready', async () => {
    for (const name of ['node-1', 'node-2']) {
      await cluster.client.kind('Node').create({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
    }
    await cluster.client.kind('Namespace').create(namespaceObject(NS));
    const rs = await cluster.client
      .kind('ReplicaSet')
      .create(workloadObject('ReplicaSet', NS, 'web', 4, { app: 'web' }));
    for (let i = 0; i < 4; i++) await runPod(`web-${i}`, 'node-1', rs);
    await cluster.client
      .kind('PodDisruptionBudget')
      .create(pdbObject(NS, 'web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } }));
    await eventually(async () => (await allowed()) === 2, 10_000, 'allowance 2');

    const drain = kubectl.stream(['drain', 'node-1', '--ignore-daemonsets', '--timeout=120s']);
    try {
      // Two evictions go through; the other two are refused and retried every 5 s.
      await eventually(async () => (await podsOn('node-1')).length === 2, 20_000, 'two pods evicted');
      await eventually(
        () => /Cannot evict pod as it would violate the pod's disruption budget/.test(drain.stderr),
        20_000,
        'a refused eviction',
      );
      const node = await cluster.client.kind('Node').get(undefined, 'node-1');
      expect((node.spec as { unschedulable?: boolean }).unschedulable).toBe(true);
      // Still waiting: after another retry round nothing more has gone.
      await new Promise((r) => setTimeout(r, 6_000));
      expect(await podsOn('node-1')).toHaveLength(2);
      expect(await allowed()).toBe(0);

      // Replacements come up on node-2 (what a ReplicaSet controller and a scheduler would do).
      await runPod('web-4', 'node-2', rs);
      await runPod('web-5', 'node-2', rs);
      const exit = await Promise.race([
        drain.exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`drain did not finish\n${drain.stderr}`)), 30_000),
        ),
      ]);
      expect(exit.code).toBe(0);
      await drain.waitForLine(/node\/node-1 drained/);
      expect(await podsOn('node-1')).toEqual([]);
      expect((await podsOn('node-2')).sort()).toEqual(['web-4', 'web-5']);
      const evicted = drain.lines.filter((l) => /evicted$/.test(l));
      expect(evicted).toHaveLength(4);
    } finally {
      await drain.stop();
    }
  }, 90_000);
});
