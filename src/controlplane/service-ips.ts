/**
 * Cluster IPs of Services, as the reference's Service REST storage sets them on create: an IP of the service range
 * (IPv4 single stack here), `ipFamilies` and `ipFamilyPolicy`; and an update that leaves them out keeps the
 * allocated ones. Pure functions; the API glue (api.ts) gives them the IPs in use.
 */
import type { FieldProblem } from './errors.ts';

/** The service range: kubeadm's default, which the reference cluster of `npm run conformance:diff` uses too. */
export const SERVICE_CIDR = '10.96.0.0/16';

interface Range {
  base: number;
  size: number;
}

function parseIPv4(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

const formatIPv4 = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

function parseCidr(cidr: string): Range {
  const [ip, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return { base: parseIPv4(ip)! - (parseIPv4(ip)! % size), size };
}

type Spec = Record<string, unknown>;

const isHeadless = (spec: Spec) => spec.clusterIP === 'None';
/** ExternalName services get no IP and no families. */
const needsFamilies = (spec: Spec) => spec.type !== 'ExternalName';

/**
 * Fills a new Service's `clusterIP(s)`, `ipFamilies` and `ipFamilyPolicy` in place; `inUse` holds the allocated IPs,
 * `random` picks in [0, 1). A requested IP outside the range or taken is a problem, as in the reference.
 */
export function allocateServiceIPs(
  spec: Spec,
  inUse: ReadonlySet<string>,
  random: () => number = Math.random,
  cidr = SERVICE_CIDR,
): FieldProblem[] {
  if (!needsFamilies(spec)) return [];
  const requested = typeof spec.clusterIP === 'string' && spec.clusterIP !== '' ? spec.clusterIP : undefined;
  // A headless service without a selector takes every family the cluster has (the reference's RequireDualStack).
  const headlessNoSelector = isHeadless(spec) && spec.selector === undefined;
  spec.ipFamilyPolicy ??= headlessNoSelector ? 'RequireDualStack' : 'SingleStack';
  spec.ipFamilies ??= ['IPv4'];
  if (requested === 'None') {
    spec.clusterIPs ??= ['None'];
    return [];
  }
  const range = parseCidr(cidr);
  if (requested !== undefined) {
    const n = parseIPv4(requested);
    const problem = (detail: string): FieldProblem[] => [
      {
        type: 'FieldValueInvalid',
        field: 'spec.clusterIPs[0]',
        message: `spec.clusterIPs[0]: Invalid value: "${requested}": failed to allocate IP ${requested}: ${detail}`,
      },
    ];
    if (n === undefined || n <= range.base || n >= range.base + range.size - 1) {
      return problem(
        `the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${formatIPv4(range.base)}/${32 - Math.log2(range.size)}`,
      );
    }
    if (inUse.has(requested)) return problem('provided IP is already allocated');
    spec.clusterIPs ??= [requested];
    return [];
  }
  const ip = freeIP(range, inUse, random);
  if (ip === undefined) {
    return [
      { type: 'FieldValueInvalid', field: 'spec.clusterIPs', message: 'failed to allocate a serviceIP: range is full' },
    ];
  }
  spec.clusterIP = ip;
  spec.clusterIPs = [ip];
  return [];
}

/** Random tries in the upper band first (the lower one is kept for chosen IPs, as the reference), then a scan. */
function freeIP(range: Range, inUse: ReadonlySet<string>, random: () => number): string | undefined {
  const first = 1;
  const last = range.size - 2; // the network and broadcast addresses are never given
  const band = Math.min(Math.max(16, Math.floor(range.size / 16)), 256);
  const low = last - first + 1 > band ? first + band : first;
  for (let attempt = 0; attempt < 32; attempt++) {
    const ip = formatIPv4(range.base + low + Math.floor(random() * (last - low + 1)));
    if (!inUse.has(ip)) return ip;
  }
  for (let offset = first; offset <= last; offset++) {
    const ip = formatIPv4(range.base + offset);
    if (!inUse.has(ip)) return ip;
  }
  return undefined;
}

/** An update that leaves the allocated values out keeps them (the reference's `patchAllocatedValues`). */
export function keepAllocatedIPs(next: Spec, old: Spec): void {
  if (!needsFamilies(old) || !needsFamilies(next)) return;
  for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) {
    if ((next[field] === undefined || next[field] === '') && old[field] !== undefined) next[field] = old[field];
  }
}
