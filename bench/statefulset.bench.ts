/**
 * `npm run bench -- statefulset`: the StatefulSet controller with three simulated nodes on the embedded
 * control plane over HTTPS, in one process (client, controller, nodes and server share the CPU).
 *
 * Workloads, each timed from the API write to the last status it waits for (seen on a watch):
 *   - one `Parallel` set of 1,000 replicas from creation to all Ready;
 *   - 100 `Parallel` sets of 10 replicas from creation to all Ready;
 *   - a full rolling update of the 1,000-replica set (maxUnavailable 10%) to all Ready at the new revision;
 *   - the CPU time of one full resync of all 101 sets (nothing to do).
 * The floor, measured interleaved in the same rounds on the same server (first in even rounds, second in odd): the same number of bare pod
 * creates plus one status write each (Running and Ready), and for the update a delete, a create and a
 * status write per pod, all with 64 requests in flight. Pods get a readiness delay of 0. Every client
 * (controller, nodes, floor) runs with QPS unlimited (`qps: 0`). Median of 3 paired rounds, with range.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statefulSetControllerDefinition } from '../controllers/statefulset/index.ts';
import type { StatefulSet } from '../src/api/types/apps.ts';
import type { Pod } from '../src/api/types/core.ts';
import type { KubeClient } from '../src/client/client.ts';
import type { Enqueuer } from '../src/controller/controller.ts';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { DEFAULT_FEATURE_GATES } from '../src/controlplane/validation/context.ts';
import { type RunningControllers as RunningController, runControllers } from '../test/support/controllers.ts';
import { parallelSet, rolledOut } from '../test/support/statefulsets.ts';
import { counted, inParallel, median, pairedFigure, pairedRound, print, type Round, watchUntil } from './run.ts';
import { startWithNodes } from './support/nodes.ts';

const ROUNDS = 3;
const BIG = 1000;
const SMALL_SETS = 100;
const SMALL = 10;
const TIMEOUT_MS = 300_000;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Bench {
  cp: ControlPlane;
  client: KubeClient;
  enqueue: () => Enqueuer;
  reconciled: () => number;
}

function statefulSet(cp: ControlPlane, ns: string, name: string, replicas: number, image = 'app:1'): StatefulSet {
  return parallelSet(ns, name, replicas, {
    image,
    annotations: { [cp.registry.naming.annotations.readinessDelay]: '0s' },
  });
}

/** Resolves when every named set reports all replicas Ready at its update revision, as a watch shows them. */
function allReady(client: KubeClient, ns: string, names: string[], replicas: number, image: string): Promise<void> {
  const ready = (set: StatefulSet | undefined) =>
    set?.spec.template.spec?.containers[0]?.image === image && rolledOut(replicas)(set);
  const sets = client.kind<StatefulSet>('StatefulSet');
  return watchUntil(sets, ns, (objects) => names.every((name) => ready(objects.get(`${ns}/${name}`))), TIMEOUT_MS);
}

async function namespace(client: KubeClient, name: string): Promise<void> {
  await client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** Removes a round's objects so later rounds see the same amount of state. */
async function clean(client: KubeClient, ns: string): Promise<void> {
  await client.kind('StatefulSet').deleteCollection(ns, {});
  await client.kind('Pod').deleteCollection(ns, { gracePeriodSeconds: 0 });
  await client.kind('ControllerRevision').deleteCollection(ns, {});
}

/** The floor: bare pods (bound to a node nobody simulates) created, then given one status write each. */
async function floor(client: KubeClient, ns: string, count: number, withDelete: boolean): Promise<number> {
  const pods = client.kind<Pod>('Pod');
  const pod = (i: number): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: ns, name: `floor-${i}` },
    spec: { nodeName: 'floor-node', terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: 'app:1' }] },
  });
  const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  if (withDelete) await inParallel(count, (i) => pods.create(pod(i)));
  return inParallel(count, async (i) => {
    if (withDelete) await pods.delete(ns, `floor-${i}`, { gracePeriodSeconds: 0 });
    const created = await pods.create(pod(i));
    await pods.replaceStatus({ ...created, status } as Pod);
  });
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

async function round(b: Bench, r: number): Promise<Record<string, [number, number]>> {
  const sets = b.client.kind<StatefulSet>('StatefulSet');
  const ns = `bench-${r}`;
  const floorNs = `floor-${r}`;
  await namespace(b.client, ns);
  await namespace(b.client, floorNs);
  const out: Record<string, [number, number]> = {};

  // Each workload and its floor, in the order of the round (floor first in even rounds).
  const measure = async (
    ours: () => Promise<void>,
    floorCount: number,
    withDelete: boolean,
  ): Promise<[number, number]> => {
    const { ours: o, floor: f } = await pairedRound(
      r,
      () => timed(ours),
      async () => {
        const seconds = await floor(b.client, floorNs, floorCount, withDelete);
        await clean(b.client, floorNs);
        return seconds;
      },
    );
    return [o, f];
  };
  out.big = await measure(
    async () => {
      await sets.create(statefulSet(b.cp, ns, 'big', BIG));
      await allReady(b.client, ns, ['big'], BIG, 'app:1');
    },
    BIG,
    false,
  );

  const names = Array.from({ length: SMALL_SETS }, (_, i) => `small-${i}`);
  out.small = await measure(
    async () => {
      await inParallel(names.length, (i) => sets.create(statefulSet(b.cp, ns, names[i]!, SMALL)));
      await allReady(b.client, ns, names, SMALL, 'app:1');
    },
    SMALL_SETS * SMALL,
    false,
  );

  out.update = await measure(
    async () => {
      await sets.patch(
        ns,
        'big',
        { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } },
        'strategic',
      );
      await allReady(b.client, ns, ['big'], BIG, 'app:2');
    },
    BIG,
    true,
  );

  // One full resync: every set queued once, nothing to write.
  await new Promise((res) => setTimeout(res, 500));
  const before = b.reconciled();
  const cpu0 = cpuMs();
  for (const name of ['big', ...names]) b.enqueue().add(`${ns}/${name}`);
  // Polled on a timer, not setImmediate, so that the wait adds no CPU of its own to the figure.
  while (b.reconciled() < before + names.length + 1) await new Promise((res) => setTimeout(res, 2));
  out.resync = [(cpuMs() - cpu0) / 1000, 0];

  await clean(b.client, ns);
  return out;
}

const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-statefulset-'));
  const cp = new ControlPlane({ port: 0, dataDir: dir, historySize: 200_000 });
  let controller: RunningController | undefined;
  try {
    const { client } = await startWithNodes(cp);
    const { definition, reconciled, enqueue } = counted(statefulSetControllerDefinition);
    controller = await runControllers(client, cp.registry, [definition], {
      features: DEFAULT_FEATURE_GATES,
    });
    const b: Bench = { cp, client, enqueue, reconciled };
    const rounds: Record<string, [number, number]>[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await round(b, r));

    const pick = (k: string, i: 0 | 1) => rounds.map((x) => x[k]![i]);
    const paired = (k: string): Round[] => rounds.map((x) => ({ ours: x[k]![0], floor: x[k]![1] }));
    print(`statefulset controller: 3 simulated nodes, ${ROUNDS} paired rounds, client QPS unlimited`, [
      pairedFigure(
        `1 set × ${BIG} Parallel, create → all Ready`,
        's',
        `${BIG} pod creates + status writes`,
        paired('big'),
      ),
      pairedFigure(
        `${SMALL_SETS} sets × ${SMALL}, create → all Ready`,
        's',
        `${SMALL_SETS * SMALL} creates + status writes`,
        paired('small'),
      ),
      pairedFigure(
        `rolling update of ${BIG} (maxUnavailable 10%)`,
        's',
        `${BIG} deletes + creates + status writes`,
        paired('update'),
      ),
      {
        name: `full resync of ${SMALL_SETS + 1} sets, CPU (range ${range(pick('resync', 0).map((x) => x * 1000))} ms)`,
        value: median(pick('resync', 0)) * 1000,
        unit: 'ms',
      },
    ]);
  } finally {
    await controller?.stop();
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
