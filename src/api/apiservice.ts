/**
 * What every user of APIServices shares: the discovery order (groups by `groupPriorityMinimum`,
 * versions by `versionPriority` and the version-string order), the backend a remote APIService
 * reaches through its Service and EndpointSlices, and the TLS trust it is reached with. Pure: the
 * availability controller, the embedded control plane's discovery and its proxy all call these.
 */
import type { ConditionStatus } from './meta.ts';
import type { Naming } from './naming.ts';
import type { Service } from './types/core.ts';
import type { EndpointSlice } from './types/discovery.ts';
import type { APIService, APIServiceCondition } from './types/misc.ts';

export const AVAILABLE = 'Available';
export const DEFAULT_SERVICE_PORT = 443;

// ---------------------------------------------------------------------------------------------
// ordering

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const INT64_MAX = 2n ** 63n - 1n;
const STABILITY: Record<string, number> = { alpha: 0, beta: 1, '': 2 };

interface KubeVersion {
  major: bigint;
  stability: number;
  minor: bigint;
}

function parseKubeVersion(v: string): KubeVersion | undefined {
  const m = KUBE_VERSION.exec(v);
  if (!m) return undefined;
  const major = BigInt(m[1]);
  const minor = BigInt(m[3] ?? 0);
  // The reference parses into a 64-bit int: a number that overflows makes the string non-kube-like.
  if (major > INT64_MAX || minor > INT64_MAX) return undefined;
  return { major, stability: STABILITY[m[2] ?? ''], minor };
}

const sign = (n: bigint | number): number => (n > 0 ? 1 : n < 0 ? -1 : 0);

/**
 * The version-string order as a sort comparator (negative: `a` comes first). Kube-like versions
 * (`v<major>[alpha|beta<minor>]`) come before all others, GA before beta before alpha, then the
 * larger major, then the larger minor; other strings sort in ascending byte order.
 */
export function compareVersions(a: string, b: string): number {
  if (a === b) return 0;
  const ka = parseKubeVersion(a);
  const kb = parseKubeVersion(b);
  if (!ka && !kb) return a < b ? -1 : 1;
  if (!ka) return 1;
  if (!kb) return -1;
  return sign(kb.stability - ka.stability) || sign(kb.major - ka.major) || sign(kb.minor - ka.minor);
}

export interface OrderedGroup {
  group: string;
  /** Highest versionPriority first, ties by {@link compareVersions}. */
  versions: APIService[];
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Groups in discovery order: a group takes the place of its highest `groupPriorityMinimum`
 * (ties by object name), and lists its versions by `versionPriority`, then version string.
 */
export function orderAPIServices(apiServices: readonly APIService[]): OrderedGroup[] {
  const sorted = [...apiServices].sort(
    (a, b) =>
      (b.spec?.groupPriorityMinimum ?? 0) - (a.spec?.groupPriorityMinimum ?? 0) ||
      byteOrder(a.metadata.name ?? '', b.metadata.name ?? ''),
  );
  const groups = new Map<string, APIService[]>();
  for (const s of sorted) {
    const name = s.spec?.group ?? '';
    const versions = groups.get(name) ?? [];
    versions.push(s);
    groups.set(name, versions);
  }
  return [...groups].map(([group, versions]) => ({
    group,
    versions: versions.sort(
      (a, b) =>
        (b.spec?.versionPriority ?? 0) - (a.spec?.versionPriority ?? 0) ||
        compareVersions(a.spec?.version ?? '', b.spec?.version ?? ''),
    ),
  }));
}

// ---------------------------------------------------------------------------------------------
// conditions

export function availableCondition(s: APIService): APIServiceCondition | undefined {
  return s.status?.conditions?.find((c) => c.type === AVAILABLE);
}

export function isAvailable(s: APIService): boolean {
  return availableCondition(s)?.status === 'True';
}

export function isLocal(s: APIService): boolean {
  return !s.spec?.service;
}

/** The discovery path of the group version: `/apis/<group>/<version>`, `/api/<version>` for the core group. */
export function discoveryPath(s: APIService): string {
  const group = s.spec?.group ?? '';
  return group ? `/apis/${group}/${s.spec?.version ?? ''}` : `/api/${s.spec?.version ?? ''}`;
}

// ---------------------------------------------------------------------------------------------
// the backend behind a remote APIService

export interface Target {
  host: string;
  port: number;
}

/** A condition a failed resolution writes; its reason and message are the reference's. */
export interface Unresolved {
  status: ConditionStatus;
  reason: string;
  message: string;
}

export type Resolution = { targets: Target[] } | { failure: Unresolved };

/** A cache read that may fail (the reference's lister errors); `undefined` is "not found". */
export type Lookup<T> = T | undefined | Error;

/**
 * Where a remote APIService's discovery probe and proxied requests go: the ready endpoints of the
 * Service's EndpointSlices on the port the APIService names (ClusterIP services), the external name
 * (ExternalName), or the cluster IP (other types). Failures are the decision table's rows 1 to 6.
 */
export function resolveBackend(
  apiService: APIService,
  service: Lookup<Service>,
  slices: Lookup<EndpointSlice[]>,
): Resolution {
  const ref = apiService.spec?.service ?? {};
  const where = `service/${ref.name ?? ''} in ${JSON.stringify(ref.namespace ?? '')}`;
  const port = ref.port ?? DEFAULT_SERVICE_PORT;
  const fail = (status: ConditionStatus, reason: string, message: string): Resolution => ({
    failure: { status, reason, message },
  });
  if (service instanceof Error) {
    return fail('Unknown', 'ServiceAccessError', `${where} cannot be checked due to: ${service.message}`);
  }
  if (!service) return fail('False', 'ServiceNotFound', `${where} is not present`);
  const type = service.spec?.type ?? 'ClusterIP';
  if (type === 'ExternalName') return { targets: [{ host: service.spec?.externalName ?? '', port }] };
  if (type !== 'ClusterIP') return { targets: [{ host: service.spec?.clusterIP ?? '', port }] };

  const servicePort = (service.spec?.ports ?? []).find((p) => p.port === port);
  if (!servicePort) return fail('False', 'ServicePortError', `${where} is not listening on port ${port}`);
  if (slices instanceof Error) {
    return fail('Unknown', 'EndpointsAccessError', `${where} cannot be checked due to: ${slices.message}`);
  }
  if (!slices?.length) return fail('False', 'EndpointsNotFound', `cannot find endpointslices for ${where}`);
  const portName = servicePort.name ?? '';
  const targets: Target[] = [];
  for (const slice of slices) {
    const slicePort = (slice.ports ?? []).find((p) => (p.name ?? '') === portName && p.port != null);
    if (!slicePort) continue;
    for (const ep of slice.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      for (const host of ep.addresses ?? []) targets.push({ host, port: slicePort.port as number });
    }
  }
  if (targets.length === 0) {
    return fail(
      'False',
      'MissingEndpoints',
      `endpointslices for ${where} have no addresses with port name ${JSON.stringify(portName)}`,
    );
  }
  return { targets };
}

/** The EndpointSlices of a service are those labelled with its name (the naming table's label). */
export function sliceServiceName(slice: EndpointSlice, n: Naming): string | undefined {
  return slice.metadata.labels?.[n.labels.serviceName];
}

export function targetUrl(target: Target, path: string): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `https://${host}:${target.port}${path}`;
}

// ---------------------------------------------------------------------------------------------
// TLS trust

export interface BackendTls {
  /** False only when verification is off (insecureSkipTLSVerify, or the probe's flag). */
  rejectUnauthorized: boolean;
  /** PEM from `spec.caBundle`; the system roots when undefined. */
  ca?: string;
  /** The name the certificate must carry: the service's DNS name, as the reference's proxy checks. */
  servername: string;
  /** What the certificate was checked against, for messages. */
  trust: 'spec.caBundle' | 'the system roots' | 'nothing';
}

/** The TLS settings for reaching a remote APIService's backend. */
export function backendTls(apiService: APIService, verify = true): BackendTls {
  const ref = apiService.spec?.service ?? {};
  const servername = `${ref.name ?? ''}.${ref.namespace ?? ''}.svc`;
  if (!verify || apiService.spec?.insecureSkipTLSVerify) {
    return { rejectUnauthorized: false, servername, trust: 'nothing' };
  }
  const bundle = apiService.spec?.caBundle;
  if (!bundle) return { rejectUnauthorized: true, servername, trust: 'the system roots' };
  return {
    rejectUnauthorized: true,
    ca: Buffer.from(bundle, 'base64').toString('utf8'),
    servername,
    trust: 'spec.caBundle',
  };
}

const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
]);

/**
 * A transport error as text; certificate failures read as the reference's `x509: ...` errors and
 * say what the certificate was checked against.
 */
export function transportErrorText(err: unknown, tls: BackendTls): string {
  const e = err as NodeJS.ErrnoException & { reason?: string };
  const code = e?.code ?? '';
  const against = `(verified against ${tls.trust})`;
  if (UNKNOWN_AUTHORITY.has(code)) return `x509: certificate signed by unknown authority ${against}`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return `x509: certificate has expired or is not yet valid ${against}`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `x509: certificate is not valid for ${tls.servername}: ${e.reason ?? e.message} ${against}`;
  }
  return e?.message ?? String(err);
}
