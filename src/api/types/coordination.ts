/** `coordination.<group suffix>` shapes as raw JSON: Lease (v1) and LeaseCandidate (v1beta1). Times are MicroTime strings. */
import type { KubeObject } from '../meta.ts';
import type { Open } from './core.ts';

/** Strategy of coordinated leader election. */
export type CoordinatedLeaseStrategy = Open<'OldestEmulationVersion'>;

export interface LeaseSpec {
  /** Holder of the lease; with coordinated leader election, the elected LeaseCandidate's `metadata.name`. */
  holderIdentity?: string;
  /** How long candidates wait to force-acquire, measured from the last observed `renewTime`. */
  leaseDurationSeconds?: number;
  acquireTime?: string;
  /** Last update by the holder. */
  renewTime?: string;
  /** Number of holder changes. */
  leaseTransitions?: number;
  /** Unset means no coordination. Alpha, gate `CoordinatedLeaderElection`. */
  strategy?: CoordinatedLeaseStrategy;
  /** Signals the holder to give up; settable only if `strategy` is set. */
  preferredHolder?: string;
}

/** A leader-election lock (spec §2.10). */
export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaseCandidateSpec {
  /** Required; the lease contended for; immutable; several candidates may name the same lease. */
  leaseName: string;
  /** Last server request to renew, used during election to detect ineligible candidates. */
  pingTime?: string;
  /** Last update; the candidate renews it when `pingTime` changes; candidates idle for hours are garbage collected. */
  renewTime?: string;
  /** Required semver without a leading `v`. */
  binaryVersion: string;
  /** Semver without a leading `v`, at most binaryVersion; required when strategy is `OldestEmulationVersion`. */
  emulationVersion?: string;
  /** Required; on conflict the candidate with the latest binaryVersion wins. */
  strategy: CoordinatedLeaseStrategy;
}

/** A component's candidacy for a coordinated lease (spec §2.11). */
export interface LeaseCandidate extends KubeObject {
  spec?: LeaseCandidateSpec;
}
