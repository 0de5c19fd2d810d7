/**
 * The strategies of coordinated leader election: a Lease's and a LeaseCandidate's `strategy`, and the controller
 * manager's `--leader-elect-strategy`. The embedded plane's validation and the flag check them with one rule.
 */
import { child, type FieldError, invalid, notSupported } from './field-errors.ts';
import { qualifiedNameErrors } from './labels.ts';

/** The one strategy the election controller implements: the candidate with the oldest emulationVersion leads. */
export const OLDEST_EMULATION_VERSION = 'OldestEmulationVersion';

const LEASE_STRATEGIES = [OLDEST_EMULATION_VERSION];

/**
 * A coordinated-lease strategy: a known one, or a domain-qualified name another controller implements. The
 * reference reports problems one level below the given path (`spec.strategy.strategy`); that path is kept.
 */
export function validateCoordinatedLeaseStrategy(strategy: string, path: string): FieldError[] {
  const p = child(path, 'strategy');
  if (!strategy.includes('/')) {
    return LEASE_STRATEGIES.includes(strategy) ? [] : [notSupported(p, strategy, LEASE_STRATEGIES)];
  }
  return qualifiedNameErrors(strategy).map((msg) => invalid(p, strategy, msg));
}
