/**
 * The parts of kube-controller-manager that finish what the plane's admission starts, run beside the API server
 * as the garbage collector is: the node lifecycle controller's condition taints (`node-taints.ts`) and the
 * pv-protection and pvc-protection controllers (`storage-protection.ts`). Without them a Node would keep the
 * not-ready taint it is created with, and a deleted volume or claim would wait on its finalizer for ever.
 *
 * Like the garbage collector it reacts to committed changes in a `WorkLoop`, on a later tick; a write that
 * conflicts is dropped, as the newer change is queued and looked at again.
 */
import type { Logger } from 'pino';
import { objectKey } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../api/registry.ts';
import type { Node, Pod } from '../api/types/core.ts';
import { rfc3339 } from '../util/time.ts';
import { conditionTaints } from './node-taints.ts';
import type { Commit, Storage } from './storage.ts';
import {
  awaitsRelease,
  claimFinalizer,
  claimNamesOf,
  podUsesClaim,
  volumeFinalizer,
  volumeInUse,
} from './storage-protection.ts';
import { type ObjectRef, releaseFinalizer, WorkLoop } from './work-loop.ts';

export class NodeStorageControllers {
  private readonly nodes: ResourceType;
  private readonly pods: ResourceType;
  private readonly claims: ResourceType;
  private readonly volumes: ResourceType;
  private readonly n: Naming;
  private stopCommits: () => void = () => {};
  /** Each object once however often it changed: what it is now is what counts. */
  readonly work: WorkLoop<ObjectRef>;

  constructor(
    private readonly storage: Storage,
    registry: ResourceRegistry,
    private readonly now: () => Date,
    log: Logger,
  ) {
    this.work = new WorkLoop(
      () => log,
      'node-storage-controllers',
      (item) => this.process(item),
    );
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
    this.work.stop();
    this.stopCommits();
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
    this.work.enqueue({ rt, key }, `${rt.plural}/${key}`);
  }

  private process({ rt, key }: ObjectRef): void {
    if (rt === this.nodes) {
      const node = this.storage.get(this.nodes, key) as Node | undefined;
      const taints = node && !node.metadata.deletionTimestamp && conditionTaints(node, this.n, rfc3339(this.now()));
      if (!node || !taints) return;
      const { taints: _, ...untainted } = node.spec ?? {};
      const spec = taints.length ? { ...untainted, taints } : untainted;
      this.work.add(() => this.storage.backend.update(this.nodes, { ...node, spec }, node.metadata.resourceVersion));
    } else if (rt === this.claims) {
      const claim = this.storage.get(this.claims, key);
      const finalizer = claimFinalizer(this.n);
      if (!claim || !awaitsRelease(claim, finalizer)) return;
      const pods = this.storage.list(this.pods, claim.metadata.namespace) as Pod[];
      if (pods.some((pod) => podUsesClaim(pod, claim))) return;
      this.work.add(() => releaseFinalizer(this.storage, this.claims, claim, finalizer));
    } else {
      const volume = this.storage.get(this.volumes, key);
      const finalizer = volumeFinalizer(this.n);
      if (!volume || !awaitsRelease(volume, finalizer) || volumeInUse(volume)) return;
      this.work.add(() => releaseFinalizer(this.storage, this.volumes, volume, finalizer));
    }
  }
}
