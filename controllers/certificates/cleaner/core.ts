/**
 * The CSR cleaner's rules (reference §4), checked in order, plus our decision for approved requests that are
 * never issued: deleted 24 h after creation (upstream kept them forever until 2025).
 */
import { X509Certificate } from 'node:crypto';
import type { CertificateSigningRequest } from '../../../src/api/types/certificates.ts';
import { goCertificateNotAfter } from '../../../src/pki/certificate.ts';
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
 * The NotAfter of the first PEM block of an issued certificate; undefined when it does not parse, as Go reads it
 * (by hand for the usual shapes, by OpenSSL for the others).
 */
export function certificateNotAfter(certificate: string): Date | undefined {
  try {
    const pem = Buffer.from(certificate, 'base64').toString('latin1');
    const first = splitPemBlocks(pem)[0];
    if (first?.type !== 'CERTIFICATE') return undefined;
    const notAfter = goCertificateNotAfter(first.der);
    if (notAfter !== undefined) return notAfter ?? undefined;
    return new Date(new X509Certificate(first.der).validTo);
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
  if (certificate && approved.length) {
    const notAfter = certificateNotAfter(certificate);
    if (notAfter && now.getTime() > notAfter.getTime()) {
      return del('expired', `its certificate expired at ${notAfter.toISOString()}`);
    }
  }
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
