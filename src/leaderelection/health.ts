/** The `leaderElection` health check (client-go's HealthzAdaptor): catches a leader that stopped renewing. */
import type { LeaderElector } from './elector.ts';

export interface HealthResult {
  ok: boolean;
  message?: string;
}

/** KCM's tolerance beyond leaseDuration. */
export const DEFAULT_HEALTH_TOLERANCE_MS = 20_000;

export class LeaderElectionHealth {
  readonly name = 'leaderElection';
  private elector: LeaderElector | undefined;

  constructor(private readonly toleranceMs = DEFAULT_HEALTH_TOLERANCE_MS) {}

  /** Starts judging `elector`; before this the check passes. */
  attach(elector: LeaderElector): void {
    this.elector = elector;
  }

  /**
   * Fails when this process is the observed leader and more than leaseDuration + tolerance have passed since
   * its record last changed; passes when not leading or not attached.
   */
  readonly check = (): HealthResult => {
    const message = this.elector?.check(this.toleranceMs);
    return message === undefined ? { ok: true } : { ok: false, message };
  };
}
