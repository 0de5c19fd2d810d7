/**
 * Cell formats of the reference's server-side tables (its `pkg/printers/internalversion` printers) for the
 * built-in kinds. Pure functions of the object (and the request time for relative times), table-tested in
 * printers.test.ts.
 */
import { humanDuration } from '../util/time.ts';
import { selectorFromLabelSelector } from './labels.ts';
import type { KubeObject, LabelSelector } from './meta.ts';

const get = (obj: unknown, path: string): any =>
  path.split('.').reduce<any>((o, k) => (o == null ? undefined : o[k]), obj);

interface ContainerState {
  running?: { startedAt?: string };
  waiting?: { reason?: string };
  terminated?: { reason?: string; exitCode?: number; signal?: number; finishedAt?: string };
}
interface ContainerStatus {
  name?: string;
  ready?: boolean;
  restartCount?: number;
  state?: ContainerState;
  lastState?: ContainerState;
}

/** What a terminated container shows: its reason, else its signal, else its exit code. */
function terminatedText(t: NonNullable<ContainerState['terminated']>): string {
  if (t.reason) return t.reason;
  return t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode ?? 0}`;
}

/** The Ready, Status and Restarts cells of a pod (the reference's `printPod`). */
export function podCells(pod: KubeObject, now: Date): { ready: string; status: string; restarts: string } {
  const containers: unknown[] = get(pod, 'spec.containers') ?? [];
  const statuses: ContainerStatus[] = get(pod, 'status.containerStatuses') ?? [];
  const initStatuses: ContainerStatus[] = get(pod, 'status.initContainerStatuses') ?? [];
  let reason: string = get(pod, 'status.reason') || get(pod, 'status.phase') || '';
  let restarts = 0;
  let lastRestart = 0;
  const countRestarts = (s: ContainerStatus) => {
    restarts += s.restartCount ?? 0;
    const finished = Date.parse(s.lastState?.terminated?.finishedAt ?? '');
    if (finished > lastRestart) lastRestart = finished;
  };
  // Init containers run in order; the first one not done names the status.
  let initializing = false;
  for (const [i, s] of initStatuses.entries()) {
    countRestarts(s);
    const t = s.state?.terminated;
    if (t && t.exitCode === 0) continue;
    if (t) reason = `Init:${terminatedText(t)}`;
    else if (s.state?.waiting?.reason && s.state.waiting.reason !== 'PodInitializing')
      reason = `Init:${s.state.waiting.reason}`;
    else reason = `Init:${i}/${initStatuses.length}`;
    initializing = true;
    break;
  }
  let ready = 0;
  let hasRunning = false;
  // The last container with something to say names the status, as the reference walks them backwards.
  for (const s of [...statuses].reverse()) {
    countRestarts(s);
    if (initializing) continue;
    if (s.state?.waiting?.reason) reason = s.state.waiting.reason;
    else if (s.state?.terminated) reason = terminatedText(s.state.terminated);
    else if (s.state?.running && s.ready) {
      hasRunning = true;
      ready++;
    }
  }
  if (!initializing && reason === 'Completed' && hasRunning) {
    const podReady = ((get(pod, 'status.conditions') ?? []) as { type: string; status: string }[]).some(
      (c) => c.type === 'Ready' && c.status === 'True',
    );
    reason = podReady ? 'Running' : 'NotReady';
  }
  if (get(pod, 'metadata.deletionTimestamp'))
    reason = get(pod, 'status.reason') === 'NodeLost' ? 'Unknown' : 'Terminating';
  return {
    ready: `${ready}/${containers.length}`,
    status: reason,
    restarts: lastRestart ? `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)` : String(restarts),
  };
}

/** The pod's first IP (`status.podIPs[0]`, else `status.podIP`). */
export function podIP(pod: KubeObject): string {
  return get(pod, 'status.podIPs.0.ip') || get(pod, 'status.podIP') || '<none>';
}

/** `true/total` of the pod's readiness gates, or `<none>` without gates. */
export function readinessGates(pod: KubeObject): string {
  const gates: { conditionType: string }[] = get(pod, 'spec.readinessGates') ?? [];
  if (gates.length === 0) return '<none>';
  const conditions: { type: string; status: string }[] = get(pod, 'status.conditions') ?? [];
  const met = gates.filter((g) => conditions.some((c) => c.type === g.conditionType && c.status === 'True'));
  return `${met.length}/${gates.length}`;
}

/** Ready / NotReady / Unknown, with SchedulingDisabled when cordoned. */
export function nodeStatus(node: KubeObject): string {
  const ready = ((get(node, 'status.conditions') ?? []) as { type: string; status: string }[]).find(
    (c) => c.type === 'Ready',
  );
  const shown = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (get(node, 'spec.unschedulable')) shown.push('SchedulingDisabled');
  return shown.join(',');
}

/** The roles from `node-role.<domain>/<role>` labels and the legacy `<domain>/role` label, sorted, or `<none>`. */
export function nodeRoles(node: KubeObject, domain: string): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith(`node-role.${domain}/`)) {
      const role = k.slice(`node-role.${domain}/`.length);
      if (role) roles.add(role);
    } else if (k === `${domain}/role` && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

/** The node's first address of a type, or `<none>`. */
export function nodeAddress(node: KubeObject, type: string): string {
  const addresses: { type: string; address: string }[] = get(node, 'status.addresses') ?? [];
  return addresses.find((a) => a.type === type)?.address ?? '<none>';
}

/** A `status.nodeInfo` field, or `<unknown>`. */
export const nodeInfo = (node: KubeObject, field: string): string =>
  get(node, `status.nodeInfo.${field}`) || '<unknown>';

/** The pod template's container names or images, comma-joined. */
export function templateContainers(obj: KubeObject, field: 'name' | 'image'): string {
  const containers: { name: string; image?: string }[] = get(obj, 'spec.template.spec.containers') ?? [];
  return containers.map((c) => c[field] ?? '').join(',');
}

const ACCESS_MODES: [string, string][] = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

/** Access modes abbreviated in the reference's fixed order (RWO,ROX,RWX,RWOP), each once. */
export function accessModes(modes: unknown): string {
  const given = Array.isArray(modes) ? modes : [];
  return ACCESS_MODES.filter(([mode]) => given.includes(mode))
    .map(([, short]) => short)
    .join(',');
}

/** A claim's or volume's class: `spec.storageClassName`, else the beta annotation, else empty. */
export function storageClassOf(obj: KubeObject, betaAnnotation: string): string {
  return get(obj, 'spec.storageClassName') ?? obj.metadata.annotations?.[betaAnnotation] ?? '';
}

/** The claim's cells: Terminating while deleted, capacity and modes only once bound to a volume. */
export function claimCells(pvc: KubeObject): { status: string; capacity: string; modes: string } {
  const bound = Boolean(get(pvc, 'spec.volumeName'));
  return {
    status: get(pvc, 'metadata.deletionTimestamp') ? 'Terminating' : (get(pvc, 'status.phase') ?? ''),
    capacity: bound ? (get(pvc, 'status.capacity.storage') ?? '') : '',
    modes: bound ? accessModes(get(pvc, 'status.accessModes')) : '',
  };
}

/** The volume's Claim cell: `namespace/name` of its claim reference, or empty. */
export function volumeClaim(pv: KubeObject): string {
  const ref = get(pv, 'spec.claimRef');
  return ref ? `${ref.namespace}/${ref.name}` : '';
}

/** The StorageClass name, marked `(default)` when its default-class annotation (or the beta one) is `true`. */
export function storageClassName(sc: KubeObject, defaultAnnotations: readonly string[]): string {
  const annotations = sc.metadata.annotations ?? {};
  const name = sc.metadata.name ?? '';
  return defaultAnnotations.some((a) => annotations[a] === 'true') ? `${name} (default)` : name;
}

/** The reference's `FormatLabelSelector`: a selector's query text, `<none>` when it selects all or nothing. */
export function formatLabelSelector(sel: unknown): string {
  if (sel == null || typeof sel !== 'object') return '<none>';
  try {
    return selectorFromLabelSelector(sel as LabelSelector).toString() || '<none>';
  } catch {
    return '<error>';
  }
}

/** A label map as `k=v,...` in key order, `<none>` when empty (the reference's `labels.FormatLabels`). */
export const formatLabels = (labels: unknown): string =>
  formatLabelSelector({ matchLabels: (labels as Record<string, string> | undefined) ?? {} });

/** At most three items joined by `sep`, then ` + N more...` for the rest (the reference's list cells). */
function firstThree(items: string[], sep = ','): string {
  const shown = items.slice(0, 3).join(sep);
  return items.length > 3 ? `${shown} + ${items.length - 3} more...` : shown;
}

const hostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** An Endpoints' addresses as `ip:port` for every port of every subset (just `ip` without ports), first three. */
export function endpointsCell(ep: KubeObject): string {
  const subsets: { addresses?: { ip: string }[]; ports?: { port: number }[] }[] = get(ep, 'subsets') ?? [];
  if (subsets.length === 0) return '<none>';
  const shown: string[] = [];
  for (const s of subsets) {
    const ips = (s.addresses ?? []).map((a) => a.ip);
    if (!s.ports?.length) shown.push(...ips);
    for (const p of s.ports ?? []) shown.push(...ips.map((ip) => hostPort(ip, p.port)));
  }
  return firstThree(shown);
}

/** An EndpointSlice's ports (number, else name, else `*`) or endpoint addresses, first three, `<unset>` for none. */
export function endpointSliceCell(slice: KubeObject, field: 'ports' | 'endpoints'): string {
  const shown =
    field === 'ports'
      ? ((get(slice, 'ports') ?? []) as { port?: number; name?: string }[]).map((p) =>
          p.port != null ? String(p.port) : (p.name ?? '*'),
        )
      : ((get(slice, 'endpoints') ?? []) as { addresses?: string[] }[]).flatMap((e) => e.addresses ?? []);
  return firstThree(shown) || '<unset>';
}

/** A Service's ports as `port[:nodePort]/protocol`, comma-joined, `<none>` without ports. */
export function servicePorts(svc: KubeObject): string {
  const ports: { port: number; nodePort?: number; protocol?: string }[] = get(svc, 'spec.ports') ?? [];
  const shown = ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? ''}`);
  return shown.join(',') || '<none>';
}

/** The load balancer's ingress points (IP, else hostname), comma-joined. */
const loadBalancerIngress = (obj: KubeObject): string[] =>
  ((get(obj, 'status.loadBalancer.ingress') ?? []) as { ip?: string; hostname?: string }[])
    .map((i) => i.ip || i.hostname || '')
    .filter(Boolean);

/** A Service's External-IP cell by its type (the reference's `getServiceExternalIP`, wide). */
export function serviceExternalIP(svc: KubeObject): string {
  const external: string[] = get(svc, 'spec.externalIPs') ?? [];
  switch (get(svc, 'spec.type') ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return external.join(',') || '<none>';
    case 'LoadBalancer':
      return [...loadBalancerIngress(svc), ...external].join(',') || '<pending>';
    case 'ExternalName':
      return get(svc, 'spec.externalName') ?? '';
    default:
      return '<unknown>';
  }
}

/** An Ingress's Hosts cell: its rules' hosts, first three, `*` when none names one. */
export function ingressHosts(ing: KubeObject): string {
  const rules: { host?: string }[] = get(ing, 'spec.rules') ?? [];
  const hosts = rules.slice(0, 3).flatMap((r) => (r.host ? [r.host] : []));
  if (hosts.length === 0) return '*';
  return rules.length > 3 ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
}

/** An Ingress's Address cell: its load balancer's ingress points. */
export const ingressAddress = (ing: KubeObject): string => loadBalancerIngress(ing).join(',');

/** An Ingress's Ports cell: `80, 443` with TLS, else `80`. */
export const ingressPorts = (ing: KubeObject): string => (get(ing, 'spec.tls')?.length ? '80, 443' : '80');

/** A binding's subjects of one kind, `, `-joined (service accounts as `namespace/name`). */
export function bindingSubjects(binding: KubeObject, kind: 'User' | 'Group' | 'ServiceAccount'): string {
  const subjects: { kind: string; name: string; namespace?: string }[] = get(binding, 'subjects') ?? [];
  return subjects
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name))
    .join(', ');
}

/** The object's controller owner as `kind[.group]/name` in lower case, or `<none>`. */
export function controllerOf(obj: KubeObject): string {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
  if (!ref) return '<none>';
  const groupName = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
  return `${(groupName ? `${ref.kind}.${groupName}` : ref.kind).toLowerCase()}/${ref.name}`;
}

/** An IngressClass's parameters as `Kind[.group]/name`, or `<none>`. */
export function ingressClassParameters(ic: KubeObject): string {
  const p = get(ic, 'spec.parameters') as { kind: string; apiGroup?: string; name: string } | undefined;
  if (!p) return '<none>';
  return `${p.apiGroup ? `${p.kind}.${p.apiGroup}` : p.kind}/${p.name}`;
}

/** A policy binding's parameter: `namespace/name` (`*` for no namespace), else its selector, else `<unset>`. */
export function policyParamRef(binding: KubeObject): string {
  const ref = get(binding, 'spec.paramRef') as { name?: string; namespace?: string; selector?: unknown } | undefined;
  if (!ref) return '<unset>';
  if (ref.name) return `${ref.namespace || '*'}/${ref.name}`;
  return ref.selector ? formatLabelSelector(ref.selector) : '<unset>';
}

/** An int-or-string budget field as text, `N/A` when unset. */
export function budgetField(pdb: KubeObject, field: 'minAvailable' | 'maxUnavailable'): string {
  const v = get(pdb, `spec.${field}`);
  return v == null ? 'N/A' : String(v);
}

/** The number of keys of an object's maps (a ConfigMap's data and binaryData, a Secret's data). */
export const keyCount = (obj: KubeObject, ...fields: string[]): number =>
  fields.reduce((n, f) => n + Object.keys(get(obj, f) ?? {}).length, 0);
