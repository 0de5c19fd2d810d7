/** The Lease fields leader election reads and writes, as a plain record. */
import type { Lease, LeaseSpec } from '../api/types/coordination.ts';

/** The Lease spec fields the elector owns; absent fields read as empty / 0. */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions: number;
  strategy?: string;
  preferredHolder?: string;
}

export function recordFromLease(lease: Lease): LeaderElectionRecord {
  const s: LeaseSpec = lease.spec ?? {};
  return {
    holderIdentity: s.holderIdentity ?? '',
    leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
    acquireTime: s.acquireTime,
    renewTime: s.renewTime,
    leaseTransitions: s.leaseTransitions ?? 0,
    strategy: s.strategy,
    preferredHolder: s.preferredHolder,
  };
}

/** A fresh spec from a record: strategy and preferredHolder only when set. */
export function leaseSpecFromRecord(r: LeaderElectionRecord): LeaseSpec {
  const spec: LeaseSpec = {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime,
    renewTime: r.renewTime,
    leaseTransitions: r.leaseTransitions,
  };
  if (r.strategy) spec.strategy = r.strategy;
  if (r.preferredHolder) spec.preferredHolder = r.preferredHolder;
  return spec;
}
