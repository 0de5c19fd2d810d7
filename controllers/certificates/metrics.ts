/**
 * Metrics of the certificate controllers: CSRs approved, signed and failed by signer, signing time, lifetime of
 * issued certificates, CSRs cleaned, and the trust-bundle publisher's sync metrics (the reference's names).
 * One set per registry, so several controllers (or tests) sharing a registry share the metric objects.
 */
import { Counter, Histogram, type Registry } from '../../src/diagnostics/metrics/prom-client.ts';

export interface CertificateMetrics {
  approved: Counter<'signer'>;
  signed: Counter<'signer'>;
  /** `reason`: `SignerValidationFailure` (a Failed condition was written) or why signing did not happen. */
  failed: Counter<'signer' | 'reason'>;
  signingDuration: Histogram<'signer'>;
  lifetime: Histogram<'signer'>;
  cleaned: Counter<'reason'>;
  publisherSyncs: Counter<'code'>;
  publisherSyncDuration: Histogram<'code'>;
}

const sets = new WeakMap<Registry, CertificateMetrics>();

const HOUR = 3600;

export function certificateMetrics(registry: Registry): CertificateMetrics {
  const existing = sets.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const reuse = <T>(name: string, make: () => T): T => (registry.getSingleMetric(name) as T | undefined) ?? make();
  const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
    reuse(name, () => new Counter<L>({ name, help, labelNames, registers }));
  const histogram = <L extends string>(name: string, help: string, labelNames: L[], buckets: number[]) =>
    reuse(name, () => new Histogram<L>({ name, help, labelNames, buckets, registers }));
  const set: CertificateMetrics = {
    approved: counter('certificatesigningrequest_approved_total', 'CSRs approved automatically, by signer.', [
      'signer',
    ]),
    signed: counter('certificatesigningrequest_signed_total', 'Certificates issued, by signer.', ['signer']),
    failed: counter(
      'certificatesigningrequest_failed_total',
      'CSRs a signer could not issue, by signer and reason (SignerValidationFailure marks the CSR Failed; the others are retried).',
      ['signer', 'reason'],
    ),
    signingDuration: histogram(
      'certificatesigningrequest_signing_duration_seconds',
      'Time to verify a request and build and sign its certificate, by signer.',
      ['signer'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    ),
    lifetime: histogram(
      'certificatesigningrequest_issued_certificate_lifetime_seconds',
      'Lifetime (notAfter - notBefore) of issued certificates, by signer.',
      ['signer'],
      [HOUR, 8 * HOUR, 24 * HOUR, 7 * 24 * HOUR, 30 * 24 * HOUR, 90 * 24 * HOUR, 365 * 24 * HOUR],
    ),
    cleaned: counter('certificatesigningrequest_cleaned_total', 'CSRs deleted by the cleaner, by rule.', ['reason']),
    publisherSyncs: counter(
      'clustertrustbundle_publisher_sync_total',
      'Syncs of the API server serving ClusterTrustBundle publisher, by result code.',
      ['code'],
    ),
    publisherSyncDuration: histogram(
      'clustertrustbundle_publisher_sync_duration_seconds',
      'Duration of the publisher syncs, by result code.',
      ['code'],
      Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
    ),
  };
  sets.set(registry, set);
  return set;
}
