/**
 * What the two runs of a scenario are compared on: each object with what must differ between two clusters
 * normalized away (uids, resource versions, times, addresses, random name suffixes, certificate serials and
 * signatures), issued certificates decoded to the fields that matter, and a field-by-field difference.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { splitPemBlocks } from '../../src/pki/pem.ts';

x509.cryptoProvider.set(webcrypto);

/** Fields that hold a time: kept only as whether they are set. */
const TIME_FIELDS = new Set([
  'creationTimestamp',
  'deletionTimestamp',
  'lastTransitionTime',
  'lastUpdateTime',
  'lastProbeTime',
  'lastHeartbeatTime',
  'startTime',
  'startedAt',
  'finishedAt',
  'firstTimestamp',
  'lastTimestamp',
  'eventTime',
]);
/** Fields that differ between any two clusters, or that the API server alone writes: dropped. */
const DROPPED_FIELDS = new Set(['uid', 'resourceVersion', 'managedFields', 'selfLink']);
/**
 * Fields whose value is an address, a scheduling choice, a fresh key's request or the digest of a client
 * certificate: kept only as whether they are set.
 */
const SET_FIELDS = new Set([
  'podIP',
  'podIPs',
  'hostIP',
  'hostIPs',
  'nodeName',
  'request',
  'authentication.kubernetes.io/credential-id',
]);
/** Pods' projected token volume gets a random suffix from the API server. */
const RANDOM_SUFFIX = /^(kube-api-access)-[a-z0-9]{5}$/;

const SET = '<set>';

export interface NormalizeContext {
  /** The signing CA's notAfter: a certificate clamped to it is described so, its length depending on the clock. */
  caNotAfterMs: number;
}

/** A JSON value with what must differ between clusters replaced or removed; `certificate` fields decoded. */
export function normalize(value: unknown, ctx: NormalizeContext, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => normalize(item, ctx, key));
  if (typeof value === 'string') {
    if (key === 'certificate') return describeCertificates(value, ctx);
    return value.replace(RANDOM_SUFFIX, '$1-*');
  }
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value)) {
    if (DROPPED_FIELDS.has(field)) continue;
    if (TIME_FIELDS.has(field) || SET_FIELDS.has(field)) out[field] = inner ? SET : inner;
    // The PDB's disruptedPods map a pod's name to the time of its eviction.
    else if (field === 'disruptedPods' && inner) out[field] = Object.keys(inner).sort();
    else out[field] = normalize(inner, ctx, field);
  }
  return out;
}

interface CertificateSummary {
  subject: string;
  issuer: string;
  dnsNames: string[];
  ipAddresses: string[];
  keyUsages: string[];
  extendedKeyUsages: string[];
  basicConstraints?: { ca: boolean; critical: boolean };
  extensions: string[];
  validity: string;
}

const KEY_USAGES: [number, string][] = Object.entries(x509.KeyUsageFlags)
  .filter(([, bit]) => typeof bit === 'number')
  .map(([name, bit]) => [bit as number, name]);

/** The certificates of a base64 PEM bundle, decoded to the fields a user's TLS stack reads. */
function describeCertificates(base64: string, ctx: NormalizeContext): CertificateSummary[] | string {
  try {
    const blocks = splitPemBlocks(Buffer.from(base64, 'base64').toString('latin1'));
    return blocks.map((block) => describeCertificate(new x509.X509Certificate(block.der), ctx));
  } catch (error) {
    return `undecodable: ${(error as Error).message}`;
  }
}

function describeCertificate(cert: x509.X509Certificate, ctx: NormalizeContext): CertificateSummary {
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.toJSON() ?? [];
  const usage = cert.getExtension(x509.KeyUsagesExtension);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  const lengthSeconds = (cert.notAfter.getTime() - cert.notBefore.getTime()) / 1000;
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    dnsNames: names.filter((name) => name.type === 'dns').map((name) => name.value),
    ipAddresses: names.filter((name) => name.type === 'ip').map((name) => name.value),
    keyUsages: usage ? KEY_USAGES.filter(([bit]) => usage.usages & bit).map(([, name]) => name) : [],
    extendedKeyUsages: (eku?.usages ?? []).map(String),
    ...(basic && { basicConstraints: { ca: basic.ca, critical: basic.critical } }),
    extensions: cert.extensions.map((ext) => `${ext.type}${ext.critical ? ' (critical)' : ''}`),
    validity: cert.notAfter.getTime() === ctx.caNotAfterMs ? "until the CA's notAfter" : `${lengthSeconds} s`,
  };
}

export interface Difference {
  path: string;
  kcm: unknown;
  ours: unknown;
}

/** The key that pairs up an array's items: `type` (conditions), `name` (containers, volumes), else the index. */
function itemKey(item: unknown, index: number): string {
  if (item && typeof item === 'object') {
    const { type, name, kind } = item as Record<string, unknown>;
    if (typeof type === 'string') return type;
    if (typeof name === 'string') return kind ? `${kind}/${name}` : name;
  }
  return String(index);
}

function keyed(items: unknown[]): Map<string, unknown> {
  return new Map(items.map((item, index) => [itemKey(item, index), item]));
}

/** Every leaf where the two values differ, with its path (`a.b[key].c`); arrays are paired by `itemKey`. */
export function differences(kcm: unknown, ours: unknown, path = ''): Difference[] {
  if (Array.isArray(kcm) && Array.isArray(ours)) {
    const [a, b] = [keyed(kcm), keyed(ours)];
    return [...new Set([...a.keys(), ...b.keys()])].flatMap((key) =>
      differences(a.get(key), b.get(key), `${path}[${key}]`),
    );
  }
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObject(kcm) && isObject(ours)) {
    const [a, b] = [kcm as Record<string, unknown>, ours as Record<string, unknown>];
    return [...new Set([...Object.keys(a), ...Object.keys(b)])]
      .sort()
      .flatMap((key) => differences(a[key], b[key], path ? `${path}.${key}` : key));
  }
  return JSON.stringify(kcm) === JSON.stringify(ours) ? [] : [{ path, kcm, ours }];
}
