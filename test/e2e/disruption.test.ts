/**
 * PodDisruptionBudgets end to end on both substrates, with pods run by the nodes (kwok on the real cluster, the
 * simulated nodes on the embedded plane): our daemon computes the budget's status; an eviction the budget allows
 * goes through and spends it, one that would break it is refused with 429 by the API server; `kubectl drain`
 * evicts as far as the budget allows, retries the refused evictions, and finishes once replacement pods are Ready
 * on the other nodes.
 *
 * The pods are the test's own, and so are their replacements, each under a new name (what a ReplicaSet does; the
 * embedded plane has no ReplicaSet controller). A StatefulSet's replacement keeps the evicted pod's name, and the
 * reference's disruption controller does not count a pod whose name is still in `disruptedPods` (up to its 2 minute
 * timeout) when it sees the replacement before the deletion: whether a drain then waits 2 minutes is a race.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import { eventually } from '../support/eventually.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

const REPLICAS = 5;
const WAIT_MS = 60_000;

describeOnSubstrate('disruption', (s) => {
  let ns: string;
  let drained: string | undefined;
  const pods = () => s().admin.kind<Pod>('Pod');
  const budget = () => s().admin.kind<PodDisruptionBudget>('PodDisruptionBudget').get(ns, 'web');
  const ready = (pod: Pod) =>
    !pod.metadata.deletionTimestamp && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const readyPods = async () => (await pods().list(ns)).items.filter(ready);
  let created = 0;
  /** One more pod of the app, under a new name; the nodes schedule and run it. */
  const runPod = () =>
    pods().create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: ns, name: `web-${++created}`, labels: { app: 'web' } },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: 'registry.example/web:1' }] },
    });
  const readyCount = (count: number) =>
    eventually(async () => (await readyPods()).length === count, WAIT_MS, `${count} pods Ready`, 100);
  const evict = (name: string) =>
    s().api('POST', `/api/v1/namespaces/${ns}/pods/${name}/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: ns },
    });
  /** Waits for the budget's status to say this; its last status in the failure. */
  const budgetSays = (want: Partial<NonNullable<PodDisruptionBudget['status']>>) => {
    let last: PodDisruptionBudget['status'];
    let pods: string[] = [];
    return eventually(
      async () => {
        last = (await budget()).status;
        pods = (await readyPods()).map((p) => `${p.metadata.name}@${p.spec?.nodeName}`);
        return Object.entries(want).every(([k, v]) => last?.[k as keyof typeof last] === v) ? last : undefined;
      },
      WAIT_MS,
      () => `budget status ${JSON.stringify(want)}; last ${JSON.stringify(last)}; Ready pods ${pods.join(' ')}`,
      100,
    );
  };

  beforeAll(async () => {
    await s().startDaemon();
    ns = await s().namespace('pdb');
    for (let i = 0; i < REPLICAS; i++) await runPod();
    await readyCount(REPLICAS);
  });

  afterAll(async () => {
    // The real cluster's nodes serve the next suites.
    if (drained) await s().kubectl.ok(['uncordon', drained]);
  });

  it('computes the status of a budget over the pods', async () => {
    await s()
      .admin.kind<PodDisruptionBudget>('PodDisruptionBudget')
      .create({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { namespace: ns, name: 'web' },
        spec: { minAvailable: REPLICAS - 1, selector: { matchLabels: { app: 'web' } } },
      });
    const status = await budgetSays({ observedGeneration: 1, disruptionsAllowed: 1 });
    expect(status).toMatchObject({
      expectedPods: REPLICAS,
      currentHealthy: REPLICAS,
      desiredHealthy: REPLICAS - 1,
      disruptionsAllowed: 1,
    });
    expect(status?.conditions).toEqual([
      expect.objectContaining({ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' }),
    ]);
  });

  it('lets one eviction through and refuses the next with 429, naming the budget', { timeout: 90_000 }, async () => {
    const first = await evict('web-1');
    expect(first.code, first.body).toBe(201);
    const second = await evict('web-2');
    expect(second.code, second.body).toBe(429);
    expect(second.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
    });
    // The cause depends on whether the daemon has recounted the healthy pods since the first eviction.
    expect(second.json.details.causes).toEqual([
      {
        reason: 'DisruptionBudget',
        message: expect.stringMatching(
          new RegExp(
            `^The disruption budget web (does not allow evicting pods currently|needs ${REPLICAS - 1} healthy pods and has ${REPLICAS - 1} currently)$`,
          ),
        ),
      },
    ]);
    // A replacement comes up, and the budget with it.
    await runPod();
    await budgetSays({ currentHealthy: REPLICAS, disruptionsAllowed: 1 });
  });

  it('kubectl drain evicts within the budget, retries the refused evictions, and finishes', async () => {
    const byNode = new Map<string, string[]>();
    for (const pod of await readyPods()) {
      const node = pod.spec?.nodeName as string;
      byNode.set(node, [...(byNode.get(node) ?? []), pod.metadata.name as string]);
    }
    // Five pods on three nodes: one node holds at least two, more than the budget lets go at once.
    const [node, onNode] = [...byNode].sort((a, b) => b[1].length - a[1].length)[0];
    expect(onNode.length).toBeGreaterThanOrEqual(2);
    drained = node;
    // --force: the pods have no controller.
    const drain = s().kubectl.stream(['drain', node, '--force', '--ignore-daemonsets', '--timeout=120s']);
    try {
      await eventually(
        () => /Cannot evict pod as it would violate the pod's disruption budget/.test(drain.stderr),
        WAIT_MS,
        () => `a refused eviction in drain's output:\n${drain.lines.join('\n')}\n${drain.stderr}`,
        100,
      );
      const cordoned = await s().admin.kind('Node').get(undefined, node);
      expect((cordoned.spec as { unschedulable?: boolean }).unschedulable).toBe(true);
      // Still waiting: after another retry round (5 s) only the one eviction the budget allowed has happened.
      await new Promise((r) => setTimeout(r, 6_000));
      const left = (await pods().list(ns)).items.filter((p) => p.spec?.nodeName === node);
      expect(left).toHaveLength(onNode.length - 1);
      expect((await budget()).status?.disruptionsAllowed).toBe(0);
      // Replacements come up on the other nodes (the drained one is cordoned); the budget grows and drain goes on.
      for (let i = 0; i < onNode.length; i++) await runPod();
      const exit = await Promise.race([
        drain.exited,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`drain did not finish\n${drain.stderr}`)), 120_000),
        ),
      ]);
      expect(exit.code, drain.stderr).toBe(0);
      await drain.waitForLine(new RegExp(`node/${node} drained`));
      for (const name of onNode) expect(drain.lines).toContain(`pod/${name} evicted`);
    } finally {
      await drain.stop();
    }
    const after = await eventually(
      async () => {
        const now = await readyPods();
        return now.length === REPLICAS ? now : undefined;
      },
      WAIT_MS,
      'every pod Ready again',
      100,
    );
    for (const pod of after) expect(pod.spec?.nodeName).not.toBe(node);
    await budgetSays({ currentHealthy: REPLICAS, disruptionsAllowed: 1 });
  }, 180_000);
});
