/**
 * The reference's defaults of pods, pod templates and the workloads that hold one (Deployment, ReplicaSet,
 * ReplicationController), of Services and of Secrets: what its decoding fills in, so that readers and managed
 * fields see it.
 * What admission or allocation adds (service-account volumes, tolerations, priority, cluster IPs) is not here.
 */
import { absent, type Obj, obj } from './raw.ts';
import { defaultHostPath } from './storage.ts';

const setDefault = (o: Obj, field: string, value: unknown) => {
  if (absent(o[field]) || o[field] === '') o[field] = value;
};

/** `Always` for an image without a tag or tagged `latest` (a digest pins it), `IfNotPresent` otherwise. */
export function defaultPullPolicy(image: unknown): 'Always' | 'IfNotPresent' {
  if (typeof image !== 'string' || image.includes('@')) return 'IfNotPresent';
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  const tag = lastPart.includes(':') ? lastPart.slice(lastPart.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Obj): void {
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  setDefault(c, 'imagePullPolicy', defaultPullPolicy(c.image));
  for (const port of Array.isArray(c.ports) ? c.ports : []) {
    const p = obj(port);
    if (p) setDefault(p, 'protocol', 'TCP');
  }
}

/** The defaults of a pod's spec, alike in pods and pod templates. */
export function defaultPodSpec(spec: Obj | undefined): void {
  if (!spec) return;
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'schedulerName', 'default-scheduler');
  if (absent(spec.securityContext)) spec.securityContext = {};
  for (const volume of Array.isArray(spec.volumes) ? spec.volumes : []) defaultHostPath(obj(volume)?.hostPath);
  for (const list of [spec.initContainers, spec.containers]) {
    for (const c of Array.isArray(list) ? list : []) {
      const container = obj(c);
      if (container) defaultContainer(container);
    }
  }
}

export function defaultPod(o: unknown): void {
  const spec = obj(obj(o)?.spec);
  defaultPodSpec(spec);
  if (spec) setDefault(spec, 'enableServiceLinks', true);
}

const templateSpec = (spec: Obj | undefined) => obj(obj(spec?.template)?.spec);

export function defaultDeployment(o: unknown): void {
  const spec = obj(obj(o)?.spec);
  if (!spec) return;
  setDefault(spec, 'replicas', 1);
  if (absent(spec.strategy)) spec.strategy = {};
  const strategy = obj(spec.strategy);
  if (strategy) {
    setDefault(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      if (absent(strategy.rollingUpdate)) strategy.rollingUpdate = {};
      const rolling = obj(strategy.rollingUpdate);
      if (rolling) {
        setDefault(rolling, 'maxUnavailable', '25%');
        setDefault(rolling, 'maxSurge', '25%');
      }
    }
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  setDefault(spec, 'progressDeadlineSeconds', 600);
  defaultPodSpec(templateSpec(spec));
}

/** ReplicaSets and ReplicationControllers: one replica, and the template's pod defaults. */
export function defaultReplicated(o: unknown): void {
  const spec = obj(obj(o)?.spec);
  if (!spec) return;
  setDefault(spec, 'replicas', 1);
  defaultPodSpec(templateSpec(spec));
}

/**
 * A ReplicationController also takes its selector and its own labels from the template's labels when it has none,
 * as the reference's defaulting does.
 */
export function defaultReplicationController(o: unknown): void {
  defaultReplicated(o);
  const rc = obj(o);
  const spec = obj(rc?.spec);
  const labels = obj(obj(obj(spec?.template)?.metadata)?.labels);
  if (!rc || !spec || !labels || !Object.keys(labels).length) return;
  if (!Object.keys(obj(spec.selector) ?? {}).length) spec.selector = { ...labels };
  const meta = obj(rc.metadata);
  if (meta && !Object.keys(obj(meta.labels) ?? {}).length) meta.labels = { ...labels };
}

export function defaultService(o: unknown): void {
  const spec = obj(obj(o)?.spec);
  if (!spec) return;
  setDefault(spec, 'type', 'ClusterIP');
  setDefault(spec, 'sessionAffinity', 'None');
  if (spec.type !== 'ExternalName') setDefault(spec, 'internalTrafficPolicy', 'Cluster');
  for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
    const p = obj(port);
    if (!p) continue;
    setDefault(p, 'protocol', 'TCP');
    if (absent(p.targetPort) || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
}

/** A Secret's `stringData` merged into `data` (base64), as the reference's conversion does; `Opaque` by default. */
export function defaultSecret(o: unknown): void {
  const secret = obj(o);
  if (!secret) return;
  setDefault(secret, 'type', 'Opaque');
  const stringData = obj(secret.stringData);
  if (absent(secret.stringData)) return;
  const data = { ...(obj(secret.data) ?? {}) };
  for (const [key, value] of Object.entries(stringData ?? {})) {
    if (typeof value === 'string') data[key] = Buffer.from(value, 'utf8').toString('base64');
  }
  secret.data = data;
  delete secret.stringData;
}

const defaultPorts = (ports: unknown, name: boolean) => {
  for (const port of Array.isArray(ports) ? ports : []) {
    const p = obj(port);
    if (!p) continue;
    p.protocol ??= 'TCP';
    if (name) p.name ??= '';
  }
};

/** The ports of an Endpoints' subsets speak TCP unless they say otherwise. */
export function defaultEndpoints(o: unknown): void {
  const subsets = obj(o)?.subsets;
  for (const subset of Array.isArray(subsets) ? subsets : []) defaultPorts(obj(subset)?.ports, false);
}

/** An EndpointSlice's ports: TCP and an empty name (a pointer the reference sets) unless given. */
export function defaultEndpointSlice(o: unknown): void {
  defaultPorts(obj(o)?.ports, true);
}
