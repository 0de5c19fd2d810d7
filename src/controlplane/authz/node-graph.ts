/**
 * What the Node authorizer asks: is an object used by a pod bound to this node? The reference keeps a graph of
 * pods, secrets, config maps, claims and volumes; here an index of pod keys by `spec.nodeName`, kept by the
 * storage's commits, answers it by reading only the pods of that node (a node runs at most a few hundred).
 */
import type { ResourceType } from '../../api/registry.ts';
import type { Container, EnvFromSource, EnvVar, PersistentVolumeClaim, Pod, Volume } from '../../api/types/core.ts';
import type { Storage } from '../storage.ts';

/** The kinds of object a node may reach through its pods. */
export type RelatedKind = 'secret' | 'configmap' | 'persistentvolumeclaim' | 'persistentvolume' | 'serviceaccount';

export interface NodeGraph {
  /** Whether a pod bound to `node` uses the object (`namespace` is empty for persistent volumes). */
  related(node: string, kind: RelatedKind, namespace: string, name: string): boolean;
}

export type GraphStorage = Pick<Storage, 'get' | 'list' | 'onCommit' | 'loads'>;

type Named = { name?: string } | undefined;
type VolumeSources = Record<string, { secretRef?: Named; secretName?: string; nodePublishSecretRef?: Named }>;
type Projection = { secret?: Named; configMap?: Named };

const nameOf = (ref: Named): string[] => (typeof ref?.name === 'string' && ref.name ? [ref.name] : []);
/** The entries of a list field; nothing for a missing or malformed one (admission sees objects before validation). */
const entries = <T>(list: T[] | undefined): T[] =>
  Array.isArray(list) ? list.filter((x) => x !== null && typeof x === 'object') : [];

function containersOf(pod: Pod): Container[] {
  const spec = pod.spec;
  return [spec?.initContainers, spec?.containers, spec?.ephemeralContainers as unknown as Container[]].flatMap(entries);
}

function envRefs(pod: Pod, from: (e: EnvFromSource) => Named, key: (e: EnvVar) => Named): string[] {
  return containersOf(pod).flatMap((c) => [
    ...entries(c.envFrom).flatMap((e) => nameOf(from(e))),
    ...entries(c.env).flatMap((e) => nameOf(key(e))),
  ]);
}

const projections = (v: Volume) => entries(v.projected?.sources as Projection[] | undefined);

/** Secrets a volume names: secret and projected volumes, and the credentials of plugin volumes (CSI, RBD, ...). */
function volumeSecrets(v: Volume): string[] {
  const plugins = Object.values(v as unknown as VolumeSources).filter((s) => s && typeof s === 'object');
  return [
    ...(v.secret?.secretName ? [v.secret.secretName] : []),
    ...projections(v).flatMap((p) => nameOf(p.secret)),
    ...plugins.flatMap((s) => [
      ...nameOf(s.secretRef),
      ...nameOf(s.nodePublishSecretRef),
      ...(typeof s.secretName === 'string' && s !== v.secret ? [s.secretName] : []),
    ]),
  ];
}

/** The names of the objects of one kind that a pod uses, as the reference's graph records its edges. */
export function podReferences(pod: Pod, kind: Exclude<RelatedKind, 'persistentvolume'>): string[] {
  const volumes = entries(pod.spec?.volumes);
  switch (kind) {
    case 'serviceaccount':
      // The reference's ServiceAccount admission gives every pod one; `default` when the pod names none.
      return [pod.spec?.serviceAccountName || pod.spec?.serviceAccount || 'default'];
    case 'persistentvolumeclaim':
      // A generic ephemeral volume's claim is named `<pod>-<volume>`.
      return volumes.flatMap((v) => {
        if (v.persistentVolumeClaim?.claimName) return [v.persistentVolumeClaim.claimName];
        return v.ephemeral ? [`${pod.metadata.name}-${v.name}`] : [];
      });
    case 'configmap':
      return [
        ...volumes.flatMap((v) => [...nameOf(v.configMap), ...projections(v).flatMap((p) => nameOf(p.configMap))]),
        ...envRefs(
          pod,
          (e) => e.configMapRef,
          (e) => e.valueFrom?.configMapKeyRef,
        ),
      ];
    case 'secret':
      return [
        ...entries(pod.spec?.imagePullSecrets).flatMap((r) => nameOf(r)),
        ...volumes.flatMap(volumeSecrets),
        ...envRefs(
          pod,
          (e) => e.secretRef,
          (e) => e.valueFrom?.secretKeyRef,
        ),
      ];
  }
}

type PodUses = Record<Exclude<RelatedKind, 'persistentvolume'>, Set<string>>;

/** The {@link NodeGraph} of a storage: pod keys indexed by node, rebuilt whenever the storage is reloaded whole. */
export class StorageNodeGraph implements NodeGraph {
  private readonly podsByNode = new Map<string, Set<string>>();
  private readonly nodeOfPod = new Map<string, string>();
  /** What each stored pod uses, by the stored object: stored objects never change, so this never goes stale. */
  private readonly uses = new WeakMap<Pod, PodUses>();
  /** The storage's load count the index was built at; -1 before the first use. */
  private builtAt = -1;

  constructor(
    private readonly storage: GraphStorage,
    private readonly pods: ResourceType,
    private readonly claims: ResourceType,
  ) {
    storage.onCommit(({ rt, event }) => {
      if (rt !== pods || this.builtAt < 0) return;
      const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
      this.index(key, event.type === 'DELETED' ? undefined : (event.object as Pod).spec?.nodeName);
    });
  }

  related(node: string, kind: RelatedKind, namespace: string, name: string): boolean {
    for (const key of this.podKeysOn(node)) {
      if (namespace && !key.startsWith(`${namespace}/`)) continue;
      const pod = this.storage.get(this.pods, key) as Pod | undefined;
      if (!pod) continue;
      const uses = this.usesOf(pod);
      if (kind !== 'persistentvolume') {
        if (uses[kind].has(name)) return true;
        continue;
      }
      for (const claim of uses.persistentvolumeclaim) {
        const pvc = this.storage.get(this.claims, `${pod.metadata.namespace}/${claim}`) as PersistentVolumeClaim;
        if (pvc?.spec?.volumeName === name) return true;
      }
    }
    return false;
  }

  private usesOf(pod: Pod): PodUses {
    let uses = this.uses.get(pod);
    if (!uses) {
      const of = (kind: keyof PodUses) => new Set(podReferences(pod, kind));
      uses = {
        secret: of('secret'),
        configmap: of('configmap'),
        persistentvolumeclaim: of('persistentvolumeclaim'),
        serviceaccount: of('serviceaccount'),
      };
      this.uses.set(pod, uses);
    }
    return uses;
  }

  private podKeysOn(node: string): Iterable<string> {
    if (this.builtAt !== this.storage.loads) {
      this.podsByNode.clear();
      this.nodeOfPod.clear();
      for (const pod of this.storage.list(this.pods) as Pod[]) {
        this.index(`${pod.metadata.namespace}/${pod.metadata.name}`, pod.spec?.nodeName);
      }
      this.builtAt = this.storage.loads;
    }
    return this.podsByNode.get(node) ?? [];
  }

  private index(key: string, node: string | undefined): void {
    const before = this.nodeOfPod.get(key);
    if (before === node) return;
    if (before !== undefined) {
      const keys = this.podsByNode.get(before);
      keys?.delete(key);
      if (keys?.size === 0) this.podsByNode.delete(before);
      this.nodeOfPod.delete(key);
    }
    if (!node) return;
    this.nodeOfPod.set(key, node);
    const keys = this.podsByNode.get(node) ?? new Set<string>();
    keys.add(key);
    this.podsByNode.set(node, keys);
  }
}
