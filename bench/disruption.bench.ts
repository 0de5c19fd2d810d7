/**
 * `npm run bench -- disruption`: the disruption controller over 20k pods under 2k PodDisruptionBudgets
 * in one namespace (seeded straight into storage: 2k ReplicaSets of 10 pods, budgets in the four
 * modes), against the embedded control plane over HTTPS in the same process.
 *
 * Figures: the time from a pod readiness flip (committed in storage) to the write of the PDB status
 * it changes (median, p99), and the CPU time of a full resync — cold (informer LIST of everything and
 * the first status of all 2k budgets) and warm (every budget re-synced with nothing to write). The
 * floor is one PDB status write on the same server: its latency for the flip, and 2k times its CPU
 * for the resyncs. CPU is the whole process's (client and server share it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { disruptionControllerDefinition } from '../controllers/disruption/controller.ts';
import { type RunningController, runDisruptionController } from '../controllers/disruption/harness.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import { KubeClient } from '../src/client/client.ts';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { counted, print } from './run.ts';

const NS = 'bench';
const GROUPS = 2000;
const PER_GROUP = 10;
const FLIPS = 300;
const FLOOR_WRITES = 300;

const MODES: Record<string, unknown>[] = [
  { minAvailable: 8 },
  { minAvailable: '80%' },
  { maxUnavailable: 2 },
  { maxUnavailable: '20%' },
];

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function seed(cp: ControlPlane): Promise<void> {
  await cp.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS }, status: { phase: 'Active' } });
  for (let g = 0; g < GROUPS; g++) {
    const labels = { app: `g-${g}` };
    const rs = await cp.seed({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { namespace: NS, name: `rs-${g}` },
      spec: { replicas: PER_GROUP, selector: { matchLabels: labels }, template: { metadata: { labels } } },
    });
    const owner = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: `rs-${g}`,
      uid: rs.metadata.uid!,
      controller: true,
    };
    for (let i = 0; i < PER_GROUP; i++) {
      await cp.seed({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          namespace: NS,
          name: `pod-${g}-${i}`,
          labels: { ...labels, tier: 'web' },
          ownerReferences: [owner],
        },
        spec: { nodeName: `node-${g % 50}`, containers: [{ name: 'app', image: 'registry.example/app:1' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
    await cp.seed({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { namespace: NS, name: `pdb-${g}` },
      spec: { ...MODES[g % MODES.length], selector: { matchLabels: labels } },
    });
  }
}

/** Latency and CPU of one PDB status write through the API, on a budget outside the benchmark's namespace. */
async function statusWriteFloor(client: KubeClient): Promise<{ medianMs: number; cpuMs: number }> {
  const pdbs = client.kind<PodDisruptionBudget>('PodDisruptionBudget');
  let pdb = await pdbs.create({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { namespace: 'default', name: 'floor' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'nothing-matches' } } },
  });
  const times: number[] = [];
  for (let i = 0; i < 50; i++)
    pdb = await pdbs.replaceStatus({ ...pdb, status: { currentHealthy: i, observedGeneration: 1 } });
  const cpu0 = cpuMs();
  for (let i = 0; i < FLOOR_WRITES; i++) {
    const t = performance.now();
    pdb = await pdbs.replaceStatus({ ...pdb, status: { currentHealthy: 100 + i, observedGeneration: 1 } });
    times.push(performance.now() - t);
  }
  const cpu = (cpuMs() - cpu0) / FLOOR_WRITES;
  await pdbs.delete('default', 'floor');
  times.sort((a, b) => a - b);
  return { medianMs: percentile(times, 50), cpuMs: cpu };
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-disruption-'));
  const cp = new ControlPlane({ port: 0, dataDir: dir, storage: 'memory', historySize: 50_000 });
  await cp.start();
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const client = new KubeClient(kc, cp.registry, { qps: 0 });
  const pdbRt = cp.registry.resource('policy', 'v1', 'poddisruptionbudgets')!;
  const podRt = cp.registry.resource('', 'v1', 'pods')!;
  let controller: RunningController | undefined;
  try {
    await seed(cp);
    await cp.settled();
    const floor = await statusWriteFloor(client);

    // Status writes of the benchmark's budgets, as they commit.
    let written = 0;
    const firstWrites = new Set<string>();
    const waiters = new Map<string, () => void>();
    const stopCommits = cp.storage.onCommit((c) => {
      if (c.rt !== pdbRt || c.event.type !== 'MODIFIED' || c.event.object.metadata.namespace !== NS) return;
      written++;
      const name = c.event.object.metadata.name!;
      firstWrites.add(name);
      waiters.get(name)?.();
      waiters.delete(name);
    });

    // Count reconciles, and keep the queue handle for the warm resync.
    const { definition, reconciled, enqueue } = counted(disruptionControllerDefinition);

    // Cold: LIST and index everything, then compute and write all 2k statuses.
    const coldCpu0 = cpuMs();
    const coldWall0 = performance.now();
    controller = await runDisruptionController(client, cp.registry, { definition });
    const syncedWall = performance.now() - coldWall0;
    const syncedCpu = cpuMs() - coldCpu0;
    while (firstWrites.size < GROUPS) await new Promise((r) => setTimeout(r, 5));
    const coldCpu = cpuMs() - coldCpu0;
    const coldWall = performance.now() - coldWall0;
    // Let the echo syncs of our own writes settle.
    let last = -1;
    while (last !== reconciled()) {
      last = reconciled();
      await new Promise((r) => setTimeout(r, 200));
    }
    for (let g = 0; g < GROUPS; g++) {
      const status = (cp.storage.get(pdbRt, `${NS}/pdb-${g}`)?.status ?? {}) as Record<string, number>;
      if (status.disruptionsAllowed !== 2) throw new Error(`pdb-${g}: unexpected status ${JSON.stringify(status)}`);
    }

    // Warm: every budget again, nothing to write.
    const before = reconciled();
    const writesBefore = written;
    const warmCpu0 = cpuMs();
    const warmWall0 = performance.now();
    for (let g = 0; g < GROUPS; g++) enqueue().add(`${NS}/pdb-${g}`);
    while (reconciled() < before + GROUPS) await new Promise((r) => setImmediate(r));
    const warmCpu = cpuMs() - warmCpu0;
    const warmWall = performance.now() - warmWall0;
    if (written !== writesBefore) throw new Error(`the warm resync wrote ${written - writesBefore} statuses`);

    // Readiness flips: one pod at a time, committed in storage, until its budget's status is written.
    const latencies: number[] = [];
    for (let i = 0; i < FLIPS; i++) {
      const g = (i * 7919) % GROUPS;
      const key = `${NS}/pod-${g}-${i % PER_GROUP}`;
      for (const ready of [false, true]) {
        const pod = cp.storage.get(podRt, key) as KubeObject;
        const statusWritten = new Promise<void>((resolve) => waiters.set(`pdb-${g}`, resolve));
        const t = performance.now();
        cp.storage.update(podRt, {
          ...pod,
          status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
        });
        await statusWritten;
        latencies.push(performance.now() - t);
      }
    }
    stopCommits();
    latencies.sort((a, b) => a - b);

    const writes = { name: `${GROUPS} status writes`, value: GROUPS * floor.cpuMs };
    print(`disruption controller: ${GROUPS * PER_GROUP} pods, ${GROUPS} budgets, one namespace`, [
      {
        name: 'readiness flip → PDB status write, median',
        value: percentile(latencies, 50),
        unit: 'ms',
        against: { name: 'one status write', value: floor.medianMs },
      },
      {
        name: 'readiness flip → PDB status write, p99',
        value: percentile(latencies, 99),
        unit: 'ms',
        against: { name: 'one status write', value: floor.medianMs },
      },
      { name: 'cold full resync (LIST + 2k writes), CPU', value: coldCpu, unit: 'ms', against: writes },
      { name: 'cold full resync, wall', value: coldWall, unit: 'ms' },
      { name: '  of which informers LIST and sync, wall', value: syncedWall, unit: 'ms' },
      { name: '  of which informers LIST and sync, CPU', value: syncedCpu, unit: 'ms' },
      { name: 'warm full resync (nothing to write), CPU', value: warmCpu, unit: 'ms', against: writes },
      { name: 'warm full resync, wall', value: warmWall, unit: 'ms' },
      { name: 'one status write, CPU', value: floor.cpuMs, unit: 'ms' },
    ]);
  } finally {
    await controller?.stop();
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
