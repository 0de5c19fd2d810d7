/**
 * The parts of kube-controller-manager that finish what the plane's admission starts, run beside the API server
 * as the garbage collector is: the node lifecycle controller's condition taints (`node-taints.ts`) and the
 * pv-protection and pvc-protection controllers (`storage-protection.ts`). Without them a Node would keep the
 * not-ready taint it is created with, and a deleted volume or claim would wait on its finalizer for ever.
 *
 * Like the garbage collector it reacts to committed changes on a later tick, so its writes never re-enter storage
 * while it notifies; a write that conflicts is dropped, as the newer change is queued and looked at again.
 */
import type { Logger } from 'pino';
import { objectKey } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../api/registry.ts';
import type { Node, Pod } from '../api/types/core.ts';
import { rfc3339 } from '../util/time.ts';
import { releaseFinalizer } from './gc.ts';
import { conditionTaints } from './node-taints.ts';
import { PendingWrites } from './pending-writes.ts';
import type { Commit, Storage } from './storage.ts';
import {
  awaitsRelease,
  claimFinalizer,
  claimNamesOf,
  podUsesClaim,
  volumeFinalizer,
  volumeInUse,
} from './storage-protection.ts';

/** Objects looked at per tick, so that a burst cannot starve request handling. */
const BATCH = 500;

export class NodeStorageControllers {
  private readonly nodes: ResourceType;
  private readonly pods: ResourceType;
  private readonly claims: ResourceType;
  private readonly volumes: ResourceType;
  private readonly n: Naming;
  /** Objects to look at, as `<plural>|<key>`, each once however often it changed. */
  private readonly queue = new Set<string>();
  private scheduled = false;
  private stopped = false;
  private stopCommits: () => void = () => {};
  private readonly writes: PendingWrites;

  constructor(
    private readonly storage: Storage,
    registry: ResourceRegistry,
    private readonly now: () => Date,
    log: Logger,
  ) {
    this.writes = new PendingWrites(() => log, 'node-storage-controllers');
    this.n = registry.naming;
    this.nodes = registry.byKind('Node')!;
    this.pods = registry.byKind('Pod')!;
    this.claims = registry.byKind('PersistentVolumeClaim')!;
    this.volumes = registry.byKind('PersistentVolume')!;
  }

  start(): void {
    this.stopCommits = this.storage.onCommit((c) => this.notice(c));
  }

  stop(): void {
    this.stopped = true;
    this.stopCommits();
  }

  /** Resolves once everything queued so far was processed and written. */
  async settled(): Promise<void> {
    await this.writes.settled(() => this.queue.size > 0 || this.scheduled);
  }

  private notice({ rt, event }: Commit): void {
    const { object, type } = event;
    if (rt === this.nodes) {
      if (type !== 'DELETED') this.enqueue(rt, object.metadata.name ?? '');
    } else if (rt === this.claims || rt === this.volumes) {
      if (type !== 'DELETED' && object.metadata.deletionTimestamp) this.enqueue(rt, objectKey(object.metadata));
    } else if (rt === this.pods && (type === 'DELETED' || object.metadata.deletionTimestamp)) {
      // A pod that goes may release the claims it mounted.
      for (const name of claimNamesOf(object as Pod)) this.enqueue(this.claims, `${object.metadata.namespace}/${name}`);
    }
  }

  private enqueue(rt: ResourceType, key: string): void {
    this.queue.add(`${rt.plural}|${key}`);
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    let budget = BATCH;
    for (const item of this.queue) {
      if (budget-- === 0 || this.stopped) break;
      this.queue.delete(item);
      const [plural, key] = item.split('|') as [string, string];
      this.process(plural, key);
    }
    if (this.queue.size && !this.stopped) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private process(plural: string, key: string): void {
    if (plural === this.nodes.plural) {
      const node = this.storage.get(this.nodes, key) as Node | undefined;
      const taints = node && !node.metadata.deletionTimestamp && conditionTaints(node, this.n, rfc3339(this.now()));
      if (!node || !taints) return;
      const { taints: _, ...untainted } = node.spec ?? {};
      const spec = taints.length ? { ...untainted, taints } : untainted;
      this.writes.add(() => this.storage.backend.update(this.nodes, { ...node, spec }, node.metadata.resourceVersion));
    } else if (plural === this.claims.plural) {
      const claim = this.storage.get(this.claims, key);
      const finalizer = claimFinalizer(this.n);
      if (!claim || !awaitsRelease(claim, finalizer)) return;
      const pods = this.storage.list(this.pods, claim.metadata.namespace) as Pod[];
      if (pods.some((pod) => podUsesClaim(pod, claim))) return;
      this.writes.add(() => releaseFinalizer(this.storage, this.claims, claim, finalizer));
    } else {
      const volume = this.storage.get(this.volumes, key);
      const finalizer = volumeFinalizer(this.n);
      if (!volume || !awaitsRelease(volume, finalizer) || volumeInUse(volume)) return;
      this.writes.add(() => releaseFinalizer(this.storage, this.volumes, volume, finalizer));
    }
  }
}
