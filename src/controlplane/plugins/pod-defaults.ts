/**
 * The reference's admission plugins that complete a new pod (kube-apiserver's defaults, in its order):
 * - ServiceAccount: the pod runs as `spec.serviceAccountName` (`default` when unset), which must exist; unless the
 *   pod or the account opts out, every container mounts the account's API token volume (`<short>-api-access-<5>`).
 * - Priority: no PriorityClass is served here, so a pod without a class gets priority 0 and PreemptLowerPriority,
 *   one naming a system class gets that class's value, and any other class is not found.
 * - DefaultTolerationSeconds: a pod that does not tolerate the not-ready and unreachable NoExecute taints tolerates
 *   them for 300 s, so that it is evicted from a lost node only after that (on every write of a pod).
 * Each acts on the pod itself only (not a subresource), as the reference's; an update keeps the priority.
 */
import { type KubeObject, objectKey, randomNameSuffix } from '../../api/meta.ts';
import { DEFAULT_SERVICE_ACCOUNT } from '../../api/namespaces.ts';
import type { Naming } from '../../api/naming.ts';
import { isPodResource, type ResourceRegistry } from '../../api/registry.ts';
import type { Container, LocalObjectReference, PodSpec, Toleration, Volume } from '../../api/types/core.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.ts';
import { forbidden } from '../errors.ts';
import type { Storage } from '../storage.ts';

/** What a pod's admission reads of its service account. */
interface ServiceAccount extends KubeObject {
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: LocalObjectReference[];
}

/** The token's lifetime the reference projects (an hour and 7 s: a token older than an hour only warns). */
const TOKEN_EXPIRATION_SECONDS = 3607;
/** The projected volume's file mode (0644), set explicitly as the reference does. */
const TOKEN_VOLUME_MODE = 0o644;
/** How long a new pod tolerates a not-ready or unreachable node. */
const DEFAULT_TOLERATION_SECONDS = 300;
/** The reference's built-in PriorityClasses and their values. */
const SYSTEM_PRIORITIES: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};
/**
 * How often, and how far apart, a missing `default` service account is looked up again before the pod is refused:
 * the reference waits so for its controller to create the account of a namespace just made.
 */
const DEFAULT_ACCOUNT_LOOKUPS = 10;
const LOOKUP_INTERVAL_MS = 150;

const isPod = (a: AdmissionAttributes) => isPodResource(a.rt) && !a.subresource;
const isPodUpdate = (a: AdmissionAttributes) => isPod(a) && a.operation === 'UPDATE' && a.object !== undefined;

/** The pod a request creates, if it is the create of a pod (the request these plugins complete). */
function podCreate(a: AdmissionAttributes): KubeObject | undefined {
  return isPod(a) && a.operation === 'CREATE' ? a.object : undefined;
}

const specOf = (pod: KubeObject) => {
  pod.spec ??= {};
  return pod.spec as unknown as PodSpec;
};

/** Where, and under which name, the API token volume of a pod is mounted. */
export function tokenVolumeNames(n: Naming): { prefix: string; mountPath: string } {
  return { prefix: `${n.shortWord}-api-access-`, mountPath: `/var/run/secrets/${n.domain}/serviceaccount` };
}

/** The projected volume with the account's token, the cluster's CA bundle and the pod's namespace. */
function tokenVolumeSource(n: Naming): NonNullable<Volume['projected']> {
  return {
    defaultMode: TOKEN_VOLUME_MODE,
    sources: [
      { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: n.rootCAConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ],
  };
}

/**
 * Mounts the token volume in every container that has nothing at its path yet, and adds the volume when one does
 * and the pod has no token volume already. `volumeName` names a new volume.
 */
export function mountServiceAccountToken(spec: PodSpec, n: Naming, volumeName: string): void {
  const { prefix, mountPath } = tokenVolumeNames(n);
  const existing = (spec.volumes ?? []).find((v) => v.name.startsWith(prefix));
  const name = existing?.name ?? volumeName;
  let needed = false;
  const mount = (c: Container) => {
    if ((c.volumeMounts ?? []).some((m) => m.mountPath === mountPath)) return;
    c.volumeMounts = [...(c.volumeMounts ?? []), { name, readOnly: true, mountPath }];
    needed = true;
  };
  for (const c of spec.initContainers ?? []) mount(c);
  for (const c of spec.containers ?? []) mount(c);
  if (needed && !existing) spec.volumes = [...(spec.volumes ?? []), { name, projected: tokenVolumeSource(n) }];
}

/** Whether the token is mounted: the pod's choice, else the account's, else yes. */
export function automountsToken(spec: PodSpec, account: ServiceAccount): boolean {
  return spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true;
}

export function serviceAccountAdmission(registry: ResourceRegistry, storage: Storage, n: Naming): AdmissionPlugin {
  const accounts = registry.resource('', 'v1', 'serviceaccounts')!;
  const lookUp = async (namespace: string, name: string): Promise<ServiceAccount | undefined> => {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? DEFAULT_ACCOUNT_LOOKUPS : 1;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, LOOKUP_INTERVAL_MS));
      const found = storage.get(accounts, objectKey({ namespace, name }));
      if (found) return found as ServiceAccount;
    }
    return undefined;
  };
  return {
    name: 'ServiceAccount',
    async admit(a) {
      const pod = podCreate(a);
      if (!pod || pod.metadata.annotations?.[n.nodes.mirrorPodAnnotation] !== undefined) return;
      const spec = specOf(pod);
      // The deprecated field names the account when the current one does not (the reference's conversion).
      spec.serviceAccountName ||= spec.serviceAccount || DEFAULT_SERVICE_ACCOUNT;
      spec.serviceAccount = spec.serviceAccountName;
      const namespace = a.namespace ?? '';
      const account = await lookUp(namespace, spec.serviceAccountName);
      if (!account) {
        const name = spec.serviceAccountName;
        const why = `error looking up service account ${namespace}/${name}: serviceaccount "${name}" not found`;
        throw forbidden(a.rt, a.name, why);
      }
      if (automountsToken(spec, account)) {
        mountServiceAccountToken(spec, n, tokenVolumeNames(n).prefix + randomNameSuffix());
      }
      if (!spec.imagePullSecrets?.length && account.imagePullSecrets?.length) {
        spec.imagePullSecrets = account.imagePullSecrets.map((s) => ({ name: s.name }));
      }
    },
  };
}

export function priorityAdmission(): AdmissionPlugin {
  return {
    name: 'Priority',
    admit(a) {
      if (isPodUpdate(a)) {
        // An update that leaves them out keeps what the create set (validation refuses any other change of them).
        const spec = specOf(a.object!);
        const old = (a.oldObject?.spec ?? {}) as unknown as PodSpec;
        spec.priority ??= old.priority;
        spec.preemptionPolicy ??= old.preemptionPolicy;
        return;
      }
      const pod = podCreate(a);
      if (!pod) return;
      const spec = specOf(pod);
      const className = spec.priorityClassName;
      const priority = className ? SYSTEM_PRIORITIES[className] : 0;
      if (priority === undefined) throw forbidden(a.rt, a.name, `no PriorityClass with name ${className} was found`);
      if (spec.priority != null && spec.priority !== priority) {
        const why = `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`;
        throw forbidden(a.rt, a.name, why);
      }
      const policy = 'PreemptLowerPriority';
      if (spec.preemptionPolicy != null && spec.preemptionPolicy !== policy) {
        const why = `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`;
        throw forbidden(a.rt, a.name, why);
      }
      spec.priority = priority;
      spec.preemptionPolicy = policy;
    },
  };
}

/** The taints a pod tolerates for {@link DEFAULT_TOLERATION_SECONDS} unless it already tolerates them. */
function nodeLossTaints(n: Naming): string[] {
  return [`node.${n.domain}/not-ready`, `node.${n.domain}/unreachable`];
}

/** `tolerations` with the node-loss tolerations it lacks added. */
export function withDefaultTolerations(tolerations: readonly Toleration[], n: Naming): Toleration[] {
  const tolerates = (key: string) =>
    tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === 'NoExecute'));
  const added = nodeLossTaints(n)
    .filter((key) => !tolerates(key))
    .map(
      (key): Toleration => ({
        key,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: DEFAULT_TOLERATION_SECONDS,
      }),
    );
  return [...tolerations, ...added];
}

export function defaultTolerationSeconds(n: Naming): AdmissionPlugin {
  return {
    name: 'DefaultTolerationSeconds',
    // On updates too, as the reference's: a pod written back without them keeps them.
    admit(a) {
      if (!isPod(a) || !a.object || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      const spec = specOf(a.object);
      spec.tolerations = withDefaultTolerations(spec.tolerations ?? [], n);
    },
  };
}
