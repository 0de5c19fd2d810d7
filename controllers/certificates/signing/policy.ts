/**
 * The signer's pure policy (reference §3.2–§3.5): which CSRs a signing loop acts on, each well-known signer's
 * validation, the certificate lifetime, and the key usage / extended key usage mapping.
 */
import type { Naming } from '../../../src/api/naming.ts';
import type { CertificateSigningRequest } from '../../../src/api/types/certificates.ts';
import {
  apiServerClientProblem,
  goTime,
  hasTrueCondition,
  isApproved,
  isIssued,
  nodeAgentClientProblem,
  nodeAgentServingProblem,
  type ParsedRequest,
  usageSet,
} from '../csr.ts';

// ---------------------------------------------------------------------------------------------
// which CSRs to sign

export type SigningDecision =
  | { action: 'skip'; why: 'issued' | 'not approved' | 'failed' | 'other signer' }
  /** Approved for a signer of our domain that no running loop handles: worth telling the user. */
  | { action: 'unhandled'; signer: string }
  | { action: 'sign'; signer: string };

/**
 * What the signing controller does with a CSR, given the signers it runs loops for. Custom signers outside
 * the naming domain belong to someone else and are skipped silently.
 */
export function signingDecision(
  csr: CertificateSigningRequest,
  running: ReadonlySet<string>,
  n: Naming,
): SigningDecision {
  if (isIssued(csr)) return { action: 'skip', why: 'issued' };
  if (!isApproved(csr)) return { action: 'skip', why: 'not approved' };
  if (hasTrueCondition(csr, 'Failed')) return { action: 'skip', why: 'failed' };
  const signer = csr.spec?.signerName ?? '';
  if (running.has(signer)) return { action: 'sign', signer };
  if (signer.startsWith(`${n.domain}/`)) return { action: 'unhandled', signer };
  return { action: 'skip', why: 'other signer' };
}

// ---------------------------------------------------------------------------------------------
// validation per signer

export type SignerValidator = (parsed: ParsedRequest, csr: CertificateSigningRequest) => string | undefined;

/** Each well-known signer's validation; legacy-unknown accepts everything. */
export function signerValidators(n: Naming): Map<string, SignerValidator> {
  return new Map<string, SignerValidator>([
    [n.signers.nodeAgentServing, (p, csr) => nodeAgentServingProblem(p, usageSet(csr))],
    [n.signers.apiServerClientNodeAgent, (p, csr) => nodeAgentClientProblem(p, usageSet(csr))],
    [n.signers.apiServerClient, (p, csr) => apiServerClientProblem(p, csr.spec?.usages ?? [])],
    [n.signers.legacyUnknown, () => undefined],
  ]);
}

export const FAILED_REASON = 'SignerValidationFailure';

// ---------------------------------------------------------------------------------------------
// lifetime

export const BACKDATE_MS = 5 * 60_000;
export const SHORT_TTL_MS = 8 * 3600_000;
export const MIN_TTL_MS = 10 * 60_000;
export const DEFAULT_CERT_TTL_MS = 8760 * 3600_000;

/** The TTL to issue: the cluster signing duration, or the requested one when shorter, floored at 10 minutes. */
export function certificateTtlMs(expirationSeconds: number | undefined, certTtlMs: number): number {
  if (expirationSeconds === undefined || expirationSeconds === null) return certTtlMs;
  const requested = expirationSeconds * 1000;
  if (requested > certTtlMs) return certTtlMs;
  if (requested < MIN_TTL_MS) return MIN_TTL_MS;
  return requested;
}

export type Validity = { notBefore: Date; notAfter: Date } | { error: string };

/**
 * The validity window at `now`: start backdated 5 min; end backdated too for TTLs of 8 h or more; end clamped
 * to the CA's. Certificates carry whole seconds, so both ends are truncated to seconds.
 */
export function validityWindow(now: Date, ttlMs: number, caNotAfter: Date): Validity {
  const t = now.getTime();
  const notBefore = new Date(Math.floor((t - BACKDATE_MS) / 1000) * 1000);
  const caEnd = caNotAfter.getTime();
  if (notBefore.getTime() >= caEnd) return { error: `the signer has expired: NotAfter=${goTime(caNotAfter)}` };
  if (t >= caEnd) {
    return { error: `refusing to sign a certificate that expired in the past: NotAfter=${goTime(caNotAfter)}` };
  }
  let end = ttlMs < SHORT_TTL_MS ? t + ttlMs : t + ttlMs - BACKDATE_MS;
  end = Math.floor(end / 1000) * 1000;
  if (end >= caEnd) end = caEnd;
  return { notBefore, notAfter: new Date(end) };
}

// ---------------------------------------------------------------------------------------------
// usages

/** RFC 5280 keyUsage bits as @peculiar/x509's KeyUsageFlags numbers them. */
export const KEY_USAGE_BITS: Readonly<Record<string, number>> = {
  signing: 1,
  'digital signature': 1,
  'content commitment': 2,
  'key encipherment': 4,
  'data encipherment': 8,
  'key agreement': 16,
  'cert sign': 32,
  'crl sign': 64,
  'encipher only': 128,
  'decipher only': 256,
};

/** Extended key usages in the reference's enum order (what the EKU list is sorted by), with their OIDs. */
export const EXT_KEY_USAGES: readonly { usages: string[]; oid: string }[] = [
  { usages: ['any'], oid: '2.5.29.37.0' },
  { usages: ['server auth'], oid: '1.3.6.1.5.5.7.3.1' },
  { usages: ['client auth'], oid: '1.3.6.1.5.5.7.3.2' },
  { usages: ['code signing'], oid: '1.3.6.1.5.5.7.3.3' },
  { usages: ['email protection', 's/mime'], oid: '1.3.6.1.5.5.7.3.4' },
  { usages: ['ipsec end system'], oid: '1.3.6.1.5.5.7.3.5' },
  { usages: ['ipsec tunnel'], oid: '1.3.6.1.5.5.7.3.6' },
  { usages: ['ipsec user'], oid: '1.3.6.1.5.5.7.3.7' },
  { usages: ['timestamping'], oid: '1.3.6.1.5.5.7.3.8' },
  { usages: ['ocsp signing'], oid: '1.3.6.1.5.5.7.3.9' },
  { usages: ['microsoft sgc'], oid: '1.3.6.1.4.1.311.10.3.3' },
  { usages: ['netscape sgc'], oid: '2.16.840.1.113730.4.1' },
];

export type UsageMapping = { keyUsage: number; extKeyUsages: string[] } | { error: string };

/** keyUsage bits and the sorted, de-duplicated extKeyUsage OIDs for a usage list; unknown usages are an error. */
export function mapUsages(usages: readonly string[]): UsageMapping {
  let keyUsage = 0;
  const ext = new Set<number>();
  const unknown: string[] = [];
  for (const u of usages) {
    if (Object.hasOwn(KEY_USAGE_BITS, u)) {
      keyUsage |= KEY_USAGE_BITS[u];
      continue;
    }
    const i = EXT_KEY_USAGES.findIndex((e) => e.usages.includes(u));
    if (i >= 0) ext.add(i);
    else unknown.push(u);
  }
  if (unknown.length) {
    return { error: `unrecognized usage values: [${unknown.map((u) => JSON.stringify(u)).join(' ')}]` };
  }
  return { keyUsage, extKeyUsages: [...ext].sort((a, b) => a - b).map((i) => EXT_KEY_USAGES[i].oid) };
}
