/**
 * The elector's side of coordinated leader election (reference §3.2), pure. The elector never creates or takes a
 * Lease: the election controller writes this process's identity as holder, and the elector then keeps it by
 * renewing, until the controller names a `preferredHolder` ("end of term") and the renewals stop.
 */
import type { LeaderElectionRecord } from './record.ts';

export type CoordinatedVerdict = { renew: true } | { renew: false; why: string };

/** Whether a coordinated elector may renew the record it just read; `valid` is the observed-time expiry verdict. */
export function coordinatedVerdict(record: LeaderElectionRecord, identity: string, valid: boolean): CoordinatedVerdict {
  if (!valid) return { renew: false, why: 'the lease has expired; waiting for the election controller to assign it' };
  if (record.holderIdentity !== identity) {
    return { renew: false, why: `the lease is assigned to ${record.holderIdentity || 'nobody'}` };
  }
  if (record.preferredHolder) {
    return { renew: false, why: `the election controller asks to hand the lease over to ${record.preferredHolder}` };
  }
  return { renew: true };
}

/**
 * The renewed record: this process's lease duration (replacing the controller's 5 s), acquireTime, transitions and
 * strategy kept, preferredHolder dropped. The first renewal after an assignment stamps the missing acquireTime.
 */
export function coordinatedRenewal(
  old: LeaderElectionRecord,
  identity: string,
  leaseDurationSeconds: number,
  stamp: string,
): LeaderElectionRecord {
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: old.acquireTime ?? stamp,
    renewTime: stamp,
    leaseTransitions: old.leaseTransitions,
    strategy: old.strategy,
  };
}
