/** What validators and defaulters need to know about the server: the naming flavor and feature gates. */
import type { Naming } from '../../api/naming.ts';

export interface ValidationContext {
  naming: Naming;
  /** Whether a feature gate is on; when absent, the defaults below apply. */
  featureGates?: (name: string) => boolean;
}

/** Gates the validators consult, with their default state (alpha off, beta on). */
export const DEFAULT_FEATURE_GATES: Readonly<Record<string, boolean>> = {
  CoordinatedLeaderElection: false,
  StatefulSetRecreateStrategy: false,
  MaxUnavailableStatefulSet: true,
  // Watch-list (sendInitialEvents) served: the reference's server gate, beta and on.
  WatchList: true,
};

export function gateEnabled(ctx: Pick<ValidationContext, 'featureGates'> | undefined, name: string): boolean {
  return ctx?.featureGates ? ctx.featureGates(name) : (DEFAULT_FEATURE_GATES[name] ?? false);
}
