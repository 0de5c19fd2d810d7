/**
 * Simulated nodes on the embedded control plane (in memory, temp data dir): registration, binding,
 * Pending → Running → Ready after the readiness delay, `:broken` and `:crash` images, graceful
 * deletion, claim binding, cordoned nodes, `kubectl drain` evicting their pods, and each node writing as
 * itself (`system:node:<name>`), which the audit log shows.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WatchEvent } from '../src/api/meta.ts';
import type { Node, PersistentVolumeClaim, Pod } from '../src/api/types/core.ts';
import type { CoreEvent } from '../src/api/types/events.ts';
import type { AuditEvent } from '../src/controlplane/audit.ts';
import { type SimulatedNodes, startSimulatedNodes } from '../src/simulation/nodes.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

let cluster: TestCluster;
let nodes: SimulatedNodes;
const NS = 'default';

beforeAll(async () => {
  cluster = await startTestCluster({
    auditLogPath: join(tmpdir(), `sim-nodes-audit-${process.pid}-${Date.now()}.jsonl`),
  });
  nodes = await startSimulatedNodes(cluster.cp, 3);
  cluster.cp.attach(nodes);
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  if (cluster?.cp.audit) await rm(cluster.cp.audit.path, { force: true });
});

const pods = () => cluster.client.kind<Pod>('Pod');
const n = () => cluster.cp.registry.naming;

function bare(
  name: string,
  image: string,
  o: { delay?: string; grace?: number; claim?: string; termination?: string } = {},
): Pod {
  const annotations = {
    ...(o.delay ? { [n().annotations.readinessDelay]: o.delay } : {}),
    ...(o.termination ? { [n().annotations.terminationDelay]: o.termination } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: NS, name, ...(Object.keys(annotations).length ? { annotations } : {}) },
    spec: {
      terminationGracePeriodSeconds: o.grace ?? 0,
      containers: [{ name: 'c', image }],
      ...(o.claim ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claim } }] } : {}),
    },
  };
}

const ready = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

function record(): { events: { at: number; e: WatchEvent<Pod> }[]; stop(): void } {
  const events: { at: number; e: WatchEvent<Pod> }[] = [];
  const abort = new AbortController();
  pods()
    .watch(NS, {}, (e) => events.push({ at: performance.now(), e }), abort.signal)
    .catch(() => undefined);
  return { events, stop: () => abort.abort() };
}

describe('simulated nodes', () => {
  it('register as Ready Nodes', async () => {
    const list = (await cluster.client.kind<Node>('Node').list()).items;
    expect(list.map((x) => x.metadata.name).sort()).toEqual(nodes.nodeNames);
    for (const node of list) expect(node.status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True' });
    // Created with the not-ready taint, which goes once they report Ready.
    await eventually(
      async () => {
        const items = (await cluster.client.kind<Node>('Node').list()).items;
        return items.every((node) => node.spec?.taints === undefined);
      },
      5_000,
      'the not-ready taints removed',
    );
  });

  it('bind a pod and run it Pending → Running → Ready after its readiness delay', async () => {
    const watch = record();
    await pods().create(bare('runs', 'app:1', { delay: '400ms' }));
    const p = await eventually(async () => {
      const x = await pods().get(NS, 'runs');
      return ready(x) ? x : undefined;
    }, 10_000);
    watch.stop();
    expect(nodes.nodeNames).toContain(p.spec?.nodeName);
    const mine = watch.events.filter((x) => x.e.object.metadata.name === 'runs');
    const phases = mine.map((x) => x.e.object.status?.phase).filter((ph, i, all) => ph && ph !== all[i - 1]);
    expect(phases).toEqual(['Pending', 'Running']);
    const running = mine.find((x) => x.e.object.status?.phase === 'Running')!;
    const readyAt = mine.find((x) => ready(x.e.object))!;
    // Measured between watch events (each arrives with its own delay): not at once, roughly the delay.
    expect(readyAt.at - running.at).toBeGreaterThanOrEqual(200);
    expect(p.status?.podIP).toMatch(/^10\.244\./);
  });

  it('write their Node, its status and their pods as themselves, never as an administrator', async () => {
    await pods().create(bare('audited', 'app:1', { delay: '0s' }));
    const p = await eventually(async () => {
      const x = await pods().get(NS, 'audited');
      return ready(x) ? x : undefined;
    }, 10_000);
    await cluster.cp.audit!.flush();
    const events = (await readFile(cluster.cp.audit!.path, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as AuditEvent);
    const podStatus = events.filter(
      (e) => e.objectRef.resource === 'pods' && e.objectRef.name === 'audited' && e.objectRef.subresource === 'status',
    );
    expect(podStatus.length).toBeGreaterThanOrEqual(2);
    for (const e of podStatus) {
      expect(e.user.username).toBe(`system:node:${p.spec?.nodeName}`);
      expect(e.user.groups).toContain('system:nodes');
    }
    for (const name of nodes.nodeNames) {
      const own = events.filter((e) => e.objectRef.resource === 'nodes' && e.objectRef.name === name);
      expect(own.map((e) => [e.verb, e.objectRef.subresource, e.user.username].filter(Boolean).join(' '))).toEqual([
        `create system:node:${name}`,
        `update status system:node:${name}`,
      ]);
    }
  });

  const events = async (pod: string) =>
    (await cluster.client.kind<CoreEvent>('Event').list(NS)).items.filter((e) => e.involvedObject.name === pod);
  const readyCondition = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready');

  it('never make a :broken pod Ready, and say why as the kubelet does, as the node', async () => {
    await pods().create(bare('broken', 'app:broken', { delay: '50ms' }));
    const p = await eventually(async () => {
      const x = await pods().get(NS, 'broken');
      return x.status?.phase === 'Running' ? x : undefined;
    }, 10_000);
    for (const type of ['Ready', 'ContainersReady'])
      expect(p.status?.conditions?.find((c) => c.type === type)).toMatchObject({
        status: 'False',
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [c]',
      });
    const [unhealthy] = await eventually(async () => {
      const found = (await events('broken')).filter((e) => e.reason === 'Unhealthy');
      return found.length ? found : undefined;
    }, 10_000);
    expect(unhealthy).toMatchObject({
      type: 'Warning',
      message: 'Readiness probe failed: the simulated image app:broken never becomes ready',
      source: { component: 'kubelet', host: p.spec?.nodeName },
      involvedObject: { kind: 'Pod', name: 'broken', uid: p.metadata.uid, fieldPath: 'spec.containers{c}' },
    });
    expect(ready(await pods().get(NS, 'broken'))).toBe(false);
    await cluster.cp.audit!.flush();
    const writers = (await readFile(cluster.cp.audit!.path, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as AuditEvent)
      .filter((e) => e.objectRef.resource === 'events' && e.objectRef.name === unhealthy!.metadata.name)
      .map((e) => e.user.username);
    expect(writers).toEqual([`system:node:${p.spec?.nodeName}`]);
    if (hasKubectl) {
      const cacheDir = await mkdtemp(join(tmpdir(), 'sim-describe-'));
      try {
        const described = await new Kubectl(cluster.kubeconfig, cacheDir).ok(['describe', 'pod', 'broken', '-n', NS]);
        expect(described).toMatch(/Warning\s+Unhealthy\s+.*kubelet\s+Readiness probe failed: the simulated image/);
      } finally {
        await rm(cacheDir, { recursive: true, force: true });
      }
    }
  });

  it('fail a :crash pod whose restart policy is Never', async () => {
    const pod = bare('crash-once', 'app:crash');
    pod.spec!.restartPolicy = 'Never';
    await pods().create(pod);
    const p = await eventually(async () => {
      const x = await pods().get(NS, 'crash-once');
      return x.status?.phase === 'Failed' ? x : undefined;
    }, 10_000);
    expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });

  it('restart a :crash pod with the kubelet back-off: CrashLoopBackOff, rising restart count, BackOff events', async () => {
    await pods().create(bare('crash', 'app:crash'));
    const first = await eventually(async () => {
      const x = await pods().get(NS, 'crash');
      return x.status?.phase === 'Running' ? x : undefined;
    }, 10_000);
    const status = first.status?.containerStatuses?.[0];
    expect(status?.state?.waiting).toEqual({
      reason: 'CrashLoopBackOff',
      message: `back-off 10s restarting failed container=c pod=crash_${NS}(${first.metadata.uid})`,
    });
    expect(status?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(status?.restartCount).toBe(0);
    expect(readyCondition(first)).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
    const backOff = `Back-off restarting failed container c in pod crash_${NS}(${first.metadata.uid})`;
    // After the first 10 s back-off it runs and crashes again: one restart, the next back-off 20 s.
    const again = await eventually(async () => {
      const x = await pods().get(NS, 'crash');
      return x.status?.containerStatuses?.[0]?.restartCount === 1 ? x : undefined;
    }, 15_000);
    expect(again.status?.phase).toBe('Running');
    expect(again.status?.containerStatuses?.[0]?.state?.waiting?.message).toMatch(/^back-off 20s restarting/);
    const backOffs = await eventually(async () => {
      const found = (await events('crash')).filter((e) => e.reason === 'BackOff' && (e.count ?? 0) >= 2);
      return found.length ? found : undefined;
    }, 5_000);
    expect(backOffs[0]).toMatchObject({ type: 'Warning', message: backOff, source: { component: 'kubelet' } });
  }, 30_000);

  /** Deletes a Ready pod and returns how long, in ms, it stayed before it was gone. */
  async function timeToGo(name: string): Promise<number> {
    await eventually(async () => ready(await pods().get(NS, name)), 10_000);
    const started = performance.now();
    await pods().delete(NS, name);
    const gone = () =>
      pods()
        .get(NS, name)
        .then(
          () => false,
          () => true,
        );
    await eventually(gone, 40_000, `${name} gone`);
    return performance.now() - started;
  }

  it('remove a deleted pod about a second after SIGTERM, well inside its default grace period', async () => {
    const pod = bare('handles-sigterm', 'app:1', { delay: '0s' });
    delete pod.spec!.terminationGracePeriodSeconds; // the default, 30 s
    await pods().create(pod);
    const took = await timeToGo('handles-sigterm');
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(5_000);
  }, 20_000);

  it('take a short termination delay from the pod annotation', async () => {
    await pods().create(bare('quick-exit', 'app:1', { delay: '0s', grace: 30, termination: '100ms' }));
    expect(await timeToGo('quick-exit')).toBeLessThan(900);
  }, 20_000);

  it('keep a pod whose containers ignore SIGTERM for its whole grace period', async () => {
    await pods().create(bare('ignores-sigterm', 'app:1', { delay: '0s', grace: 3, termination: 'ignore-sigterm' }));
    expect(await timeToGo('ignores-sigterm')).toBeGreaterThanOrEqual(2_900);
  }, 20_000);

  it('bind claims, and start a pod only once its claim is bound', async () => {
    const claims = cluster.client.kind<PersistentVolumeClaim>('PersistentVolumeClaim');
    await pods().create(bare('needs-claim', 'app:1', { claim: 'late' }));
    await new Promise((r) => setTimeout(r, 500));
    expect((await pods().get(NS, 'needs-claim')).status?.phase).toBe('Pending');
    await claims.create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { namespace: NS, name: 'late' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await eventually(async () => (await claims.get(NS, 'late')).status?.phase === 'Bound', 10_000);
    await eventually(async () => (await pods().get(NS, 'needs-claim')).status?.phase === 'Running', 10_000);
    expect((await claims.get(NS, 'late')).status?.capacity).toEqual({ storage: '1Gi' });
  });

  it('release a deleted claim once its pod is gone, then its volume: Released, deleted', async () => {
    const claims = cluster.client.kind<PersistentVolumeClaim>('PersistentVolumeClaim');
    const volumes = cluster.client.kind('PersistentVolume');
    const claim = await claims.get(NS, 'late');
    const volumeName = claim.spec?.volumeName ?? '';
    expect(claim.metadata.finalizers).toEqual([`${n().domain}/pvc-protection`]);
    expect((await volumes.get(undefined, volumeName)).metadata.finalizers).toEqual([`${n().domain}/pv-protection`]);
    await claims.delete(NS, 'late');
    await new Promise((r) => setTimeout(r, 300));
    // Its pod still mounts it.
    expect((await claims.get(NS, 'late')).metadata.deletionTimestamp).toBeDefined();
    await pods().delete(NS, 'needs-claim');
    const gone = (read: () => Promise<unknown>) =>
      read().then(
        () => false,
        (err) => err.code === 404,
      );
    await eventually(() => gone(() => claims.get(NS, 'late')), 10_000, 'the claim gone');
    await eventually(() => gone(() => volumes.get(undefined, volumeName)), 10_000, 'its volume gone');
  });

  it('bind nothing to cordoned nodes', async () => {
    const nodeClient = cluster.client.kind<Node>('Node');
    for (const name of nodes.nodeNames)
      await nodeClient.patch(undefined, name, { spec: { unschedulable: true } }, 'merge');
    await pods().create(bare('waits', 'app:1'));
    await new Promise((r) => setTimeout(r, 500));
    expect((await pods().get(NS, 'waits')).spec?.nodeName).toBeUndefined();
    await nodeClient.patch(undefined, nodes.nodeNames[0]!, { spec: { unschedulable: false } }, 'merge');
    const bound = await eventually(async () => (await pods().get(NS, 'waits')).spec?.nodeName, 10_000);
    expect(bound).toBe(nodes.nodeNames[0]);
    for (const name of nodes.nodeNames)
      await nodeClient.patch(undefined, name, { spec: { unschedulable: false } }, 'merge');
  });

  it.skipIf(!hasKubectl)(
    'let kubectl drain evict their pods',
    async () => {
      const cacheDir = await mkdtemp(join(tmpdir(), 'sim-drain-'));
      try {
        const kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
        const target = nodes.nodeNames[2]!;
        const onTarget = async () => (await pods().list(NS)).items.filter((p) => p.spec?.nodeName === target);
        await eventually(async () => (await onTarget()).length > 0 || undefined, 10_000, 'a pod on the target node');
        const drained = await kubectl.run(['drain', target, '--force', '--grace-period=0', '--timeout=30s'], {
          timeoutMs: 40_000,
        });
        expect(drained.code, drained.stderr).toBe(0);
        expect(drained.stdout).toContain('drained');
        expect(await onTarget()).toEqual([]);
      } finally {
        await rm(cacheDir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
