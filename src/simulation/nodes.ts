/**
 * Simulated nodes for the embedded control plane: they register Nodes and stand in for the scheduler,
 * the node agents and the volume binder, so that workloads run without containers.
 *
 * A pending pod is bound to the schedulable node with the fewest pods, reported Pending, then Running
 * once its claims are bound, and Ready after a readiness delay (default 1 s; per pod the annotation
 * `naming.annotations.readinessDelay`, a duration such as `250ms`). An image ending in `:broken` runs
 * but never becomes Ready (its readiness probe fails, an `Unhealthy` event); one ending in `:crash` exits
 * at once and is restarted with the kubelet's back-off (`CrashLoopBackOff`, `BackOff` events), or fails
 * under restart policy Never. Conditions and events carry the kubelet's reasons, and events are written
 * as the node. A pod being deleted is removed once its containers
 * have exited: after a termination delay (default 1 s; per pod `naming.annotations.terminationDelay`, or
 * `ignore-sigterm` for the whole grace period), never later than its grace period. Claims are bound as they appear. Pods bound to nodes that are not
 * simulated here are left alone.
 *
 * Each node's own work (registering its Node and status, its pods' status, removing its terminated pods) is
 * done as that node (`system:node:<name>`), under the Node authorizer and NodeRestriction like any node agent;
 * the scheduler's and the volume binder's part (binding pods, binding claims) with the control-plane client.
 */

import type { Logger } from 'pino';
import type { KubeObject } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import { NODE_USER_PREFIX, NODES_GROUP } from '../api/node-identity.ts';
import type { ResourceRegistry } from '../api/registry.ts';
import type { Container, Node, PersistentVolumeClaim, Pod } from '../api/types/core.ts';
import type { CoreEvent } from '../api/types/events.ts';
import { SharedInformerFactory } from '../cache/factory.ts';
import { type Lister, unwrapTombstone } from '../cache/informer.ts';
import { parseDuration } from '../cli/flags.ts';
import { KubeClient } from '../client/client.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.ts';
import { KubeConfig } from '../client/kubeconfig.ts';
import type { ResourceClient } from '../client/resource.ts';
import type { ControlPlane } from '../controlplane/control-plane.ts';
import { rfc3339 } from '../util/time.ts';
import { API_LEVEL_SEMVER } from '../version.ts';
import { WorkQueue } from '../workqueue/queue.ts';
import {
  backOffNote,
  condition,
  containerStatus,
  crashBackoffMs,
  crashLoopStatus,
  nextCrashAtMs,
  notReadyConditions,
  PROBE_PERIOD_MS,
  unhealthyNote,
} from './containers.ts';
import { PodLogs } from './logs.ts';
import { NodeEvents } from './node-events.ts';
import { type StorageClassView, volumeForClaim, volumeNameFor } from './volumes.ts';

export const DEFAULT_READINESS_DELAY_MS = 1000;
/** How long a simulated container takes to exit after SIGTERM, as a container that handles it does. */
export const DEFAULT_TERMINATION_DELAY_MS = 1000;
/** The termination-delay annotation's value for containers that ignore SIGTERM and wait to be killed. */
export const IGNORE_SIGTERM = 'ignore-sigterm';
const WORKERS = 8;
/** How soon a pod waiting for its claims is looked at again. */
const CLAIM_RECHECK_MS = 200;
const CLAIM_KEY = 'claim:';
/** A provisioned volume whose claim may be gone (then it is deleted, as its reclaim policy says). */
const VOLUME_KEY = 'volume:';
/** What the simulated nodes report as their system (the Nodes' `status.nodeInfo`). */
const NODE_INFO = {
  osImage: 'Simulated Linux',
  kernelVersion: '6.1.0-simulated',
  containerRuntimeVersion: 'simulated://1.0.0',
  operatingSystem: 'linux',
  architecture: 'amd64',
};
const NODE_INDEX = 'node';

export interface SimulatedNodesOptions {
  /** The scheduler's and volume binder's client; also feeds the caches. */
  client: KubeClient;
  /** A client that acts as the named node itself. */
  nodeClient: (nodeName: string) => Promise<KubeClient>;
  registry: ResourceRegistry;
  count: number;
  /** Node names are `<prefix>-<i>`, from 1. */
  namePrefix?: string;
  defaultReadinessDelayMs?: number;
  defaultTerminationDelayMs?: number;
  logger?: Logger;
}

/** The image's tag decides how a simulated container behaves. */
export function imageBehaviour(pod: Pod): 'run' | 'broken' | 'crash' {
  const images = (pod.spec?.containers ?? []).map((c) => c.image ?? '');
  if (images.some((i) => i.endsWith(':crash'))) return 'crash';
  if (images.some((i) => i.endsWith(':broken'))) return 'broken';
  return 'run';
}

/** The pod's readiness delay in ms: its annotation when valid, else the default. */
export function readinessDelayMs(n: Naming, pod: Pod, fallbackMs = DEFAULT_READINESS_DELAY_MS): number {
  const text = pod.metadata.annotations?.[n.annotations.readinessDelay];
  const parsed = text === undefined ? undefined : parseDuration(text);
  return parsed !== undefined && parsed >= 0 ? parsed : fallbackMs;
}

/**
 * How long after its deletion was seen a pod's containers are gone: its termination delay (annotation when
 * valid, else the default), never more than its grace period; the whole grace period when they ignore SIGTERM.
 */
export function terminationDelayMs(n: Naming, pod: Pod, fallbackMs = DEFAULT_TERMINATION_DELAY_MS): number {
  const graceMs = Math.max(0, (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000);
  const text = pod.metadata.annotations?.[n.annotations.terminationDelay];
  if (text === IGNORE_SIGTERM) return graceMs;
  const parsed = text === undefined ? undefined : parseDuration(text);
  return Math.min(graceMs, parsed !== undefined && parsed >= 0 ? parsed : fallbackMs);
}

const claimNamesOf = (pod: Pod) =>
  (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));

export class SimulatedNodes {
  readonly nodeNames: string[];
  /** The simulated containers' logs, which the control plane serves as `pods/log`. */
  readonly logs: PodLogs;
  private readonly n: Naming;
  private readonly informers: SharedInformerFactory;
  private readonly pods: Lister<Pod>;
  private readonly nodes: Lister<Node>;
  private readonly claims: Lister<PersistentVolumeClaim>;
  private readonly podClient: ResourceClient<Pod>;
  private readonly claimClient: ResourceClient<PersistentVolumeClaim>;
  private readonly classes: Lister<StorageClassView>;
  private readonly volumes: Lister<KubeObject>;
  private readonly volumeClient: ResourceClient<KubeObject>;
  /** Each node's own clients, as that node; filled by `start`. */
  private readonly agents = new Map<
    string,
    { pods: ResourceClient<Pod>; nodes: ResourceClient<Node>; events: NodeEvents }
  >();
  private readonly queue = new WorkQueue<string>();
  private workers: Promise<void>[] = [];
  private nextPodIp = 1;
  /** When each running pod (by UID) started, to the millisecond (status times have whole seconds). */
  private readonly startedAt = new Map<string, number>();
  /** When this node agent saw each pod (by UID) being deleted: its grace period runs from then. */
  private readonly terminatingSince = new Map<string, number>();

  constructor(private readonly opts: SimulatedNodesOptions) {
    this.n = opts.registry.naming;
    const prefix = opts.namePrefix ?? 'sim-node';
    this.nodeNames = Array.from({ length: opts.count }, (_, i) => `${prefix}-${i + 1}`);
    this.logs = new PodLogs(this.nodeNames);
    const rt = (kind: string) => opts.registry.byKind(kind)!;
    this.informers = new SharedInformerFactory(opts.client);
    const podInformer = this.informers.informerFor<Pod>(rt('Pod'));
    podInformer.addIndexer(NODE_INDEX, (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
    const claimInformer = this.informers.informerFor<PersistentVolumeClaim>(rt('PersistentVolumeClaim'));
    this.pods = podInformer.lister();
    this.claims = claimInformer.lister();
    const nodeInformer = this.informers.informerFor<Node>(rt('Node'));
    this.nodes = nodeInformer.lister();
    this.podClient = opts.client.resource<Pod>(rt('Pod'));
    this.claimClient = opts.client.resource<PersistentVolumeClaim>(rt('PersistentVolumeClaim'));
    this.classes = this.informers.informerFor<StorageClassView>(rt('StorageClass')).lister();
    const volumeInformer = this.informers.informerFor<KubeObject>(rt('PersistentVolume'));
    this.volumes = volumeInformer.lister();
    this.volumeClient = opts.client.resource<KubeObject>(rt('PersistentVolume'));
    const podKey = (p: Pod) => `${p.metadata.namespace}/${p.metadata.name}`;
    podInformer.addEventHandler({
      add: (p) => this.queue.add(podKey(p)),
      update: (_o, p) => this.queue.add(podKey(p)),
      delete: (p) => {
        const uid = unwrapTombstone(p).metadata.uid ?? '';
        for (const agent of this.agents.values()) agent.events.forget(uid);
        this.logs.drop(uid);
      },
    });
    // A node that becomes schedulable may take the pods that are waiting for one.
    nodeInformer.addEventHandler({
      update: () => {
        for (const p of this.pods.list()) if (!p.spec?.nodeName) this.queue.add(podKey(p));
      },
    });
    const claimKey = (c: PersistentVolumeClaim) => `${CLAIM_KEY}${c.metadata.namespace}/${c.metadata.name}`;
    claimInformer.addEventHandler({
      add: (c) => this.queue.add(claimKey(c)),
      update: (_o, c) => this.queue.add(claimKey(c)),
      delete: (c) => this.queue.add(`${VOLUME_KEY}${volumeNameFor(unwrapTombstone(c))}`),
    });
  }

  /** Registers the nodes, all at once, while the caches of pods, nodes and claims fill; then starts the workers. */
  async start(timeoutMs = 30_000): Promise<void> {
    for (const name of this.nodeNames) {
      const client = await this.opts.nodeClient(name);
      this.agents.set(name, {
        pods: client.kind<Pod>('Pod'),
        nodes: client.kind<Node>('Node'),
        events: new NodeEvents(client.kind<CoreEvent>('Event'), name),
      });
    }
    this.informers.start();
    try {
      await Promise.all(this.nodeNames.map((name, i) => this.register(name, i + 1)));
      await this.informers.waitForSync(timeoutMs);
    } catch (err) {
      await this.informers.stop();
      throw err;
    }
    for (let i = 0; i < WORKERS; i++) this.workers.push(this.work());
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.informers.stop();
    await Promise.allSettled(this.workers);
  }

  private async register(name: string, index: number): Promise<void> {
    const now = rfc3339(new Date());
    const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'simulated-node': 'true' } } };
    const nodes = this.agent(name).nodes;
    const created = await nodes.create(node).catch(async (err) => {
      if (!isAlreadyExists(err)) throw err;
      return nodes.get(undefined, name);
    });
    await nodes.replaceStatus({
      ...created,
      status: {
        ...created.status,
        capacity: { pods: '110', cpu: '4', memory: '8Gi' },
        allocatable: { pods: '110', cpu: '4', memory: '8Gi' },
        addresses: [
          { type: 'InternalIP', address: `10.0.0.${index}` },
          { type: 'Hostname', address: name },
        ],
        nodeInfo: { ...NODE_INFO, kubeletVersion: `v${API_LEVEL_SEMVER}` },
        conditions: [{ type: 'Ready', status: 'True', reason: 'SimulatedNodeReady', lastTransitionTime: now }],
      },
    });
  }

  private async work(): Promise<void> {
    for (;;) {
      const item = await this.queue.get();
      if (item.shutdown) return;
      try {
        if (item.key.startsWith(CLAIM_KEY)) await this.bindClaim(item.key.slice(CLAIM_KEY.length));
        else if (item.key.startsWith(VOLUME_KEY)) await this.reclaim(item.key.slice(VOLUME_KEY.length));
        else await this.syncPod(item.key);
        this.queue.forget(item.key);
      } catch (err) {
        if (!isConflict(err) && !isNotFound(err)) {
          this.opts.logger?.warn({ key: item.key, err: (err as Error).message }, 'simulated node: will retry');
        }
        this.queue.addRateLimited(item.key);
      } finally {
        this.queue.done(item.key);
      }
    }
  }

  /**
   * The provisioner's and the volume binder's part, as the admin: a volume for the claim, the claim's
   * `spec.volumeName`, then both Bound. Each step is skipped once done, so a retry picks up where one failed.
   */
  private async bindClaim(key: string): Promise<void> {
    const [ns = '', name = ''] = key.split('/');
    const claim = this.claims.get(ns, name);
    if (!claim || claim.status?.phase === 'Bound' || claim.metadata.deletionTimestamp) return;
    const planned = volumeForClaim(claim, this.classes.list(), this.n);
    if ('skip' in planned) {
      this.opts.logger?.debug({ claim: key, reason: planned.skip }, 'simulated provisioner: claim left pending');
      return;
    }
    const volumeName = planned.volume.metadata.name ?? '';
    const stored = this.volumes.get(undefined, volumeName);
    const volume =
      stored ??
      (await this.volumeClient.create(planned.volume).catch((err) => {
        if (!isAlreadyExists(err)) throw err;
        return this.volumeClient.get(undefined, volumeName);
      }));
    if (claim.spec?.volumeName !== volumeName)
      await this.claimClient.patch(ns, name, { spec: { volumeName } }, 'merge');
    if ((volume.status as { phase?: string } | undefined)?.phase !== 'Bound')
      await this.volumeClient.patchStatus(undefined, volumeName, { status: { phase: 'Bound' } }, 'merge');
    const spec = volume.spec as { capacity?: Record<string, string>; accessModes?: string[] };
    await this.claimClient.patchStatus(
      ns,
      name,
      { status: { phase: 'Bound', accessModes: spec.accessModes, capacity: spec.capacity } },
      'merge',
    );
  }

  /** Releases and deletes a provisioned volume whose claim is gone, when its reclaim policy says Delete. */
  private async reclaim(volumeName: string): Promise<void> {
    const volume = this.volumes.get(undefined, volumeName);
    const spec = volume?.spec as { claimRef?: { namespace: string; name: string; uid?: string } } | undefined;
    const ref = spec?.claimRef;
    if (
      !volume ||
      !ref ||
      (spec as { persistentVolumeReclaimPolicy?: string }).persistentVolumeReclaimPolicy !== 'Delete'
    )
      return;
    if (this.claims.get(ref.namespace, ref.name)?.metadata.uid === ref.uid) return;
    // Released first, as the reference's volume controller does: a Bound volume is in use, and its protection
    // finalizer would hold its deletion for ever.
    if ((volume.status as { phase?: string } | undefined)?.phase === 'Bound')
      await this.volumeClient.patchStatus(undefined, volumeName, { status: { phase: 'Released' } }, 'merge');
    await this.volumeClient.delete(undefined, volumeName).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
  }

  private async syncPod(key: string): Promise<void> {
    const [ns = '', name = ''] = key.split('/');
    const pod = this.pods.get(ns, name);
    if (!pod) return;
    if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Failed') this.startedAt.delete(pod.metadata.uid ?? '');
    const node = pod.spec?.nodeName;
    if (node && !this.nodeNames.includes(node)) return;
    if (pod.metadata.deletionTimestamp) return this.terminate(pod);
    if (!node) return this.bind(pod);
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return;
    if (!phase)
      return this.writeStatus(pod, { phase: 'Pending', conditions: [condition('PodScheduled', true, now())] });
    if (phase === 'Pending') return this.startContainers(pod);
    return this.probe(pod);
  }

  /** Removes a terminating pod once its containers have exited, counted from when the deletion was seen. */
  private async terminate(pod: Pod): Promise<void> {
    if (!pod.spec?.nodeName) return;
    const uid = pod.metadata.uid ?? '';
    const ignores = pod.metadata.annotations?.[this.n.annotations.terminationDelay] === IGNORE_SIGTERM;
    const grace = pod.metadata.deletionGracePeriodSeconds ?? 0;
    // Only a running container hears SIGTERM and exits (a crash-looping one is already down).
    const first = pod.spec.containers?.[0]?.name ?? '';
    const running = () => pod.status?.phase === 'Running' && this.logs.read(uid, first)?.ended === false;
    if (!this.terminatingSince.has(uid) && running())
      this.log(pod, ignores ? 'Received SIGTERM: ignored, running until killed' : 'Received SIGTERM: shutting down');
    const since = this.terminatingSince.get(uid) ?? Date.now();
    this.terminatingSince.set(uid, since);
    const left = since + terminationDelayMs(this.n, pod, this.opts.defaultTerminationDelayMs) - Date.now();
    if (left > 0) {
      this.queue.addAfter(keyOf(pod), left);
      return;
    }
    // The log's last lines before the pod goes: its removal drops the log.
    if (running()) {
      this.log(pod, ignores && grace > 0 ? `Killed after the ${grace}s grace period` : 'Exited with code 0');
      for (const c of pod.spec.containers ?? []) this.logs.end(uid, c.name);
    }
    await this.agent(pod.spec.nodeName)
      .pods.delete(pod.metadata.namespace, pod.metadata.name!, {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
      })
      .catch((err) => {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      });
    this.terminatingSince.delete(uid);
  }

  /** The scheduler's part: the schedulable, Ready node with the fewest pods. */
  private async bind(pod: Pod): Promise<void> {
    const load = new Map(this.nodeNames.map((name) => [name, this.pods.byIndex(NODE_INDEX, name).length]));
    const candidates = this.nodeNames.filter((name) => {
      const node = this.nodes.get(undefined, name);
      return node && !node.spec?.unschedulable;
    });
    if (!candidates.length) return; // every node cordoned: the pod waits, as with a real scheduler
    const target = candidates.reduce((best, name) => (load.get(name)! < load.get(best)! ? name : best));
    const { namespace, name, uid } = pod.metadata;
    const body = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace, uid },
      target: { kind: 'Node', name: target },
    };
    await this.podClient.client.request('POST', this.podClient.path(namespace, name, 'binding'), { body });
  }

  /** Pending → Running (or Failed for `:crash`) once every claim the pod mounts is bound. */
  private async startContainers(pod: Pod): Promise<void> {
    const unbound = claimNamesOf(pod).filter(
      (c) => this.claims.get(pod.metadata.namespace, c)?.status?.phase !== 'Bound',
    );
    if (unbound.length) {
      this.queue.addAfter(keyOf(pod), CLAIM_RECHECK_MS);
      return;
    }
    const at = now();
    const containers = pod.spec?.containers ?? [];
    const unready = notReadyConditions(
      containers.map((c) => c.name),
      at,
    );
    if (imageBehaviour(pod) === 'crash' && pod.spec?.restartPolicy === 'Never') {
      await this.writeStatus(pod, {
        phase: 'Failed',
        startTime: at,
        conditions: [condition('PodScheduled', true, at), ...unready],
        containerStatuses: containers.map((c) =>
          containerStatus(c, { terminated: { exitCode: 1, reason: 'Error', startedAt: at, finishedAt: at } }),
        ),
      });
      return this.crashLog(pod);
    }
    const nodeIndex = this.nodeNames.indexOf(pod.spec!.nodeName!) + 1;
    const ip = this.nextPodIp++;
    this.startedAt.set(pod.metadata.uid ?? '', Date.now());
    await this.writeStatus(pod, {
      phase: 'Running',
      startTime: at,
      hostIP: `10.0.0.${nodeIndex}`,
      podIP: `10.244.${nodeIndex}.${(ip % 250) + 2}`,
      conditions: [condition('PodScheduled', true, at), ...unready],
      containerStatuses: containers.map((c) =>
        imageBehaviour(pod) === 'crash'
          ? crashLoopStatus(pod, c, 0, at)
          : { ...containerStatus(c, { running: { startedAt: at } }), started: true },
      ),
    });
    if (imageBehaviour(pod) === 'crash') {
      this.crashLog(pod);
      await this.backOff(pod, crashBackoffMs(0));
    } else
      this.log(
        pod,
        (c) => `Started container ${c.name} (image ${c.image ?? ''}) on simulated node ${pod.spec?.nodeName}`,
      );
  }

  /**
   * A crash-looping pod (restart policy Always or OnFailure): once its back-off is over its containers run and
   * crash again at once, so the restart count rises and the next back-off doubles.
   */
  private async crashLoop(pod: Pod): Promise<void> {
    const due = nextCrashAtMs(pod);
    if (due === undefined) return;
    if (due > Date.now()) {
      this.queue.addAfter(keyOf(pod), due - Date.now());
      return;
    }
    const at = now();
    const restarts = (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) + 1;
    await this.writeStatus(pod, {
      ...pod.status,
      containerStatuses: (pod.spec?.containers ?? []).map((c) => crashLoopStatus(pod, c, restarts, at)),
    });
    this.crashLog(pod);
    await this.backOff(pod, crashBackoffMs(restarts));
  }

  /** The kubelet's BackOff event for each container, and a look again when the back-off is over. */
  private async backOff(pod: Pod, ms: number): Promise<void> {
    const events = this.agent(pod.spec?.nodeName ?? '').events;
    for (const c of pod.spec?.containers ?? [])
      await events.record(pod, 'Warning', 'BackOff', backOffNote(pod, c.name), c.name);
    this.queue.addAfter(keyOf(pod), ms);
  }

  /**
   * Ready once the readiness delay since the start has passed; a `:broken` pod's probe fails from then on,
   * reported every probe period as an `Unhealthy` event.
   */
  private async probe(pod: Pod): Promise<void> {
    const behaviour = imageBehaviour(pod);
    if (behaviour === 'crash') return this.crashLoop(pod);
    if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    const started =
      this.startedAt.get(pod.metadata.uid ?? '') ?? (Date.parse(pod.status?.startTime ?? '') || Date.now());
    const wait = started + readinessDelayMs(this.n, pod, this.opts.defaultReadinessDelayMs) - Date.now();
    if (wait > 0) {
      this.queue.addAfter(keyOf(pod), wait);
      return;
    }
    if (behaviour === 'broken') {
      const events = this.agent(pod.spec?.nodeName ?? '').events;
      for (const c of pod.spec?.containers ?? [])
        await events.record(pod, 'Warning', 'Unhealthy', unhealthyNote(c), c.name);
      this.log(pod, unhealthyNote);
      this.queue.addAfter(keyOf(pod), PROBE_PERIOD_MS);
      return;
    }
    this.startedAt.delete(pod.metadata.uid ?? '');
    const at = now();
    const keep = (pod.status?.conditions ?? []).filter((c) => c.type !== 'Ready' && c.type !== 'ContainersReady');
    await this.writeStatus(pod, {
      ...pod.status,
      conditions: [...keep, condition('ContainersReady', true, at), condition('Ready', true, at)],
      containerStatuses: (pod.status?.containerStatuses ?? []).map((s) => ({ ...s, ready: true })),
    });
    this.log(pod, 'Readiness probe passed: ready');
  }

  /** A line in the log of each of the pod's containers (text per container, or the same for all). */
  private log(pod: Pod, text: string | ((c: Container) => string)): void {
    for (const c of pod.spec?.containers ?? [])
      this.logs.append(pod.metadata.uid ?? '', c.name, typeof text === 'string' ? text : text(c));
  }

  /** A `:crash` container's run: it starts and exits at once. */
  private crashLog(pod: Pod): void {
    this.log(
      pod,
      (c) => `Started container ${c.name} (image ${c.image ?? ''}) on simulated node ${pod.spec?.nodeName}`,
    );
    this.log(pod, (c) => `Exited with code 1: the simulated image ${c.image ?? ''} crashes at start`);
    for (const c of pod.spec?.containers ?? []) this.logs.end(pod.metadata.uid ?? '', c.name);
  }

  /** The pod's node reports its status. */
  private async writeStatus(pod: Pod, status: Pod['status']): Promise<void> {
    await this.agent(pod.spec?.nodeName ?? '').pods.replaceStatus({ ...pod, status });
  }

  private agent(nodeName: string) {
    const agent = this.agents.get(nodeName);
    if (!agent) throw new Error(`node ${nodeName} is not simulated here`);
    return agent;
  }
}

const now = () => rfc3339(new Date());

const keyOf = (pod: Pod) => `${pod.metadata.namespace}/${pod.metadata.name}`;

/**
 * Simulated nodes for an embedded control plane, started before this returns: each node acts with a client
 * certificate of its own (`system:node:<name>`, group `system:nodes`) from the plane's CA, the scheduler and
 * volume binder as the plane's admin.
 */
export async function startSimulatedNodes(cp: ControlPlane, count: number, logger?: Logger): Promise<SimulatedNodes> {
  const kubeClient = (kc: KubeConfig, userAgent: string) => new KubeClient(kc, cp.registry, { qps: 0, userAgent });
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const nodeClient = async (name: string) => {
    const own = new KubeConfig();
    own.loadFromString(await cp.identityKubeconfig({ username: `${NODE_USER_PREFIX}${name}`, groups: [NODES_GROUP] }));
    return kubeClient(own, `node-agent/${name}`);
  };
  const nodes = new SimulatedNodes({
    client: kubeClient(kc, 'simulated-nodes'),
    nodeClient,
    registry: cp.registry,
    count,
    logger,
  });
  await nodes.start();
  cp.api.podLogs = nodes.logs;
  return nodes;
}
