/**
 * Feature gates as the reference keeps them: each gate has a stage, a default and maybe a lock; `--feature-gates`
 * and the configuration's `featureGates` map set them; `AllAlpha` and `AllBeta` set every gate of that stage that
 * was not named on its own. Unknown gates and locked gates set against their lock are refused with the
 * reference's messages, and nothing is changed by a refused `set`.
 */

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** The gate cannot be set against its default (GA features whose old code path is gone). */
  lockToDefault?: boolean;
}

export interface KnownFeature extends Required<FeatureSpec> {
  name: string;
  enabled: boolean;
}

export class FeatureGateError extends Error {}

export const ALL_ALPHA = 'AllAlpha';
export const ALL_BETA = 'AllBeta';

/**
 * The gates this daemon (and its embedded control plane) consults. A gate belongs here only when some code asks
 * `enabled(name)` for it, so that switching it off switches something off.
 */
export const CONTROLLER_MANAGER_FEATURES: Readonly<Record<string, FeatureSpec>> = {
  [ALL_ALPHA]: { stage: 'ALPHA', default: false },
  [ALL_BETA]: { stage: 'BETA', default: false },
  // z-pages (spec §4.3, §9): structured forms beta and on.
  ComponentStatusz: { stage: 'BETA', default: true },
  ComponentFlagz: { stage: 'BETA', default: true },
  // spec §6: beta and on by default from v1.37.
  NativeHistograms: { stage: 'BETA', default: true },
  // spec §9: component SLI metrics stable since 1.32; the reference locks the GA gate on.
  ComponentSLIs: { stage: 'GA', default: true, lockToDefault: true },
  // LeaseCandidate-based election: beta, still off by default.
  CoordinatedLeaderElection: { stage: 'BETA', default: false },
  // StatefulSet `updateStrategy.type: Recreate` (alpha in 1.37).
  StatefulSetRecreateStrategy: { stage: 'ALPHA', default: false },
  // `rollingUpdate.maxUnavailable` honoured (beta, on again from 1.37).
  MaxUnavailableStatefulSet: { stage: 'BETA', default: true },
  // ClusterTrustBundle objects in the reference's API (the publisher checks it outside the orch flavor): GA and on
  // in 1.37, where kube-apiserver serves them at v1 by default (locked on from 1.38).
  ClusterTrustBundle: { stage: 'GA', default: true },
  // Sharded list and watch in the embedded control plane.
  ShardedListAndWatch: { stage: 'ALPHA', default: false },
  // Informers start with a streaming watch-list instead of a paged list (client gate, beta and on).
  WatchListClient: { stage: 'BETA', default: true },
};

/** The stage as the reference prints it in `--help` and in `<prefix>_feature_enabled{stage}`: GA is empty. */
export function stageLabel(stage: FeatureStage): string {
  return stage === 'GA' ? '' : stage;
}

export class FeatureGates {
  private readonly specs: ReadonlyMap<string, FeatureSpec>;
  private readonly explicit = new Map<string, boolean>();

  constructor(specs: Readonly<Record<string, FeatureSpec>> = CONTROLLER_MANAGER_FEATURES) {
    this.specs = new Map(Object.entries(specs));
  }

  /** Why `name=value` cannot be set, in the reference's words, or undefined when it can. */
  problem(name: string, value: boolean): string | undefined {
    const spec = this.specs.get(name);
    if (!spec) return `unrecognized feature gate: ${name}`;
    if (spec.lockToDefault && spec.default !== value)
      return `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`;
    return undefined;
  }

  /**
   * Sets gates from a map, all or nothing: the first unknown or locked gate (in name order) throws and leaves
   * the gates as they were. Returns the reference's warnings for GA and deprecated gates that were set.
   */
  set(values: Readonly<Record<string, boolean>>): string[] {
    const names = Object.keys(values).sort();
    for (const name of names) {
      const why = this.problem(name, values[name]);
      if (why) throw new FeatureGateError(why);
    }
    const warnings: string[] = [];
    for (const name of names) {
      const value = values[name];
      this.explicit.set(name, value);
      const stage = this.specs.get(name)!.stage;
      if (stage === 'DEPRECATED')
        warnings.push(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
      else if (stage === 'GA')
        warnings.push(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
    }
    return warnings;
  }

  /** Whether the gate is on. Asking for a gate that is not registered is a programming error, as in the reference. */
  enabled(name: string): boolean {
    const spec = this.specs.get(name);
    if (!spec) throw new FeatureGateError(`feature "${name}" is not registered in the feature gates`);
    const set = this.explicit.get(name);
    if (set !== undefined) return set;
    if (!spec.lockToDefault && name !== ALL_ALPHA && name !== ALL_BETA) {
      if (spec.stage === 'ALPHA' && this.explicit.has(ALL_ALPHA)) return this.explicit.get(ALL_ALPHA)!;
      if (spec.stage === 'BETA' && this.explicit.has(ALL_BETA)) return this.explicit.get(ALL_BETA)!;
    }
    return spec.default;
  }

  /** Every registered gate with its state, sorted by name. */
  known(): KnownFeature[] {
    return [...this.specs.keys()].sort().map((name) => {
      const spec = this.specs.get(name)!;
      return {
        name,
        stage: spec.stage,
        default: spec.default,
        lockToDefault: spec.lockToDefault ?? false,
        enabled: this.enabled(name),
      };
    });
  }

  /** What `<prefix>_feature_enabled{name,stage}` reports (the shape `featureEnabledMetric` takes). */
  metricStates(): { name: string; stage: string; enabled: boolean }[] {
    return this.known().map((f) => ({ name: f.name, stage: stageLabel(f.stage), enabled: f.enabled }));
  }

  /** The effective state of every gate, e.g. for `/configz`. */
  asMap(): Record<string, boolean> {
    return Object.fromEntries(this.known().map((f) => [f.name, f.enabled]));
  }

  /** The reference's list of settable gates for `--help`: GA and deprecated gates are left out. */
  helpLines(): string[] {
    return this.known()
      .filter((f) => f.stage !== 'GA' && f.stage !== 'DEPRECATED')
      .map((f) => `${f.name}=true|false (${f.stage} - default=${f.default})`);
  }

  /** The `--feature-gates` usage text, as the reference writes it. */
  usage(): string {
    return [
      'A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:',
      ...this.helpLines(),
    ].join('\n');
  }
}
