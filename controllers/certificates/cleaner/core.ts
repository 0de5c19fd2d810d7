/**
 * The CSR cleaner's rules (reference §4), checked in order, plus our decision for approved requests that are
 * never issued: deleted 24 h after creation (upstream kept them forever until 2025).
 */
import { X509Certificate } from 'node:crypto';
import type { CertificateSigningRequest } from '../../../src/api/types/certificates.ts';
import { goCertificateNotAfter, statedNotAfter } from '../../../src/pki/certificate.ts';
import { splitPemBlocks } from '../../../src/pki/pem.ts';

export const CLEANER_INTERVAL_MS = 3600_000;
export const APPROVED_DEADLINE_MS = 3600_000;
export const DENIED_DEADLINE_MS = 3600_000;
export const PENDING_DEADLINE_MS = 24 * 3600_000;
export const UNISSUED_DEADLINE_MS = 24 * 3600_000;

export type CleanReason = 'issued' | 'denied' | 'failed' | 'pending' | 'expired' | 'approved-unissued';

export type CleanDecision = { delete: false } | { delete: true; reason: CleanReason; message: string };

/** Whether a timestamp is set and more than `ms` before `now` (strictly). */
function olderThan(stamp: string | undefined, ms: number, now: Date): boolean {
  if (!stamp) return false;
  const t = Date.parse(stamp);
  return Number.isFinite(t) && t > 0 && now.getTime() - t > ms;
}

/**
 * When the first PEM block of an issued certificate expired, if it has by `now`; undefined when it has not or when
 * it does not parse as Go reads it (by hand for the usual shapes, by OpenSSL for the others). The NotAfter is read
 * first, alone: a certificate still valid is kept whatever the rest holds, so a pass over thousands of CSRs (one at
 * every start) judges in full only the expired ones, each at a few times the cost.
 */
export function expiredAt(certificate: string, now: Date): Date | undefined {
  try {
    const pem = Buffer.from(certificate, 'base64').toString('latin1');
    const first = splitPemBlocks(pem)[0];
    if (first?.type !== 'CERTIFICATE') return undefined;
    const stated = statedNotAfter(first.der);
    if (stated && stated.getTime() >= now.getTime()) return undefined;
    const read = goCertificateNotAfter(first.der);
    if (read === null) return undefined; // Go refuses it
    const notAfter = read ?? new Date(new X509Certificate(first.der).validTo);
    return notAfter.getTime() < now.getTime() ? notAfter : undefined;
  } catch {
    return undefined;
  }
}

export function cleanDecision(csr: CertificateSigningRequest, now: Date): CleanDecision {
  const conditions = csr.status?.conditions ?? [];
  const certificate = csr.status?.certificate ?? '';
  const byType = (type: string) => conditions.filter((c) => c.type === type);
  const approved = byType('Approved');
  const del = (reason: CleanReason, message: string): CleanDecision => ({ delete: true, reason, message });
  if (certificate && approved.some((c) => olderThan(c.lastUpdateTime, APPROVED_DEADLINE_MS, now))) {
    return del('issued', 'issued more than 1h0m0s ago');
  }
  if (byType('Denied').some((c) => olderThan(c.lastUpdateTime, DENIED_DEADLINE_MS, now))) {
    return del('denied', 'denied more than 1h0m0s ago');
  }
  const failed = byType('Failed');
  if (failed.some((c) => olderThan(c.lastUpdateTime, DENIED_DEADLINE_MS, now))) {
    return del('failed', 'failed more than 1h0m0s ago');
  }
  if (conditions.length === 0 && olderThan(csr.metadata.creationTimestamp, PENDING_DEADLINE_MS, now)) {
    return del('pending', 'pending for more than 24h0m0s');
  }
  const expired = certificate && approved.length ? expiredAt(certificate, now) : undefined;
  if (expired) return del('expired', `its certificate expired at ${expired.toISOString()}`);
  if (
    !certificate &&
    approved.length &&
    !failed.length &&
    olderThan(csr.metadata.creationTimestamp, UNISSUED_DEADLINE_MS, now)
  ) {
    return del('approved-unissued', 'approved but not issued within 24h0m0s of its creation');
  }
  return { delete: false };
}
