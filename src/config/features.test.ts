import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import { featureEnabledMetric } from '../diagnostics/metrics/standard.ts';
import { CONTROLLER_MANAGER_FEATURES, FeatureGateError, FeatureGates, stageLabel } from './features.ts';

describe('the daemon gates', () => {
  it('have the stages and defaults the spec and the reference give them', () => {
    const g = new FeatureGates();
    const table = Object.fromEntries(g.known().map((f) => [f.name, [f.stage, f.default, f.lockToDefault]]));
    expect(table).toEqual({
      AllAlpha: ['ALPHA', false, false],
      AllBeta: ['BETA', false, false],
      ClusterTrustBundle: ['GA', true, false],
      ComponentFlagz: ['BETA', true, false],
      ComponentSLIs: ['GA', true, true],
      ComponentStatusz: ['BETA', true, false],
      CoordinatedLeaderElection: ['BETA', false, false],
      MaxUnavailableStatefulSet: ['BETA', true, false],
      NativeHistograms: ['BETA', true, false],
      ShardedListAndWatch: ['ALPHA', false, false],
      StatefulSetRecreateStrategy: ['ALPHA', false, false],
      WatchListClient: ['BETA', true, false],
    });
    for (const f of g.known()) expect(f.enabled, f.name).toBe(f.default);
  });
});

describe('set', () => {
  it('turns gates on and off; enabled reflects it', () => {
    const g = new FeatureGates();
    expect(g.set({ NativeHistograms: false, ShardedListAndWatch: true })).toEqual([]);
    expect(g.enabled('NativeHistograms')).toBe(false);
    expect(g.enabled('ShardedListAndWatch')).toBe(true);
    expect(g.enabled('WatchListClient')).toBe(true);
  });

  it('refuses unknown gates with the reference message', () => {
    expect(() => new FeatureGates().set({ Imaginary: true })).toThrow(
      new FeatureGateError('unrecognized feature gate: Imaginary'),
    );
  });

  it('refuses a locked gate set against its lock, and accepts it set to its lock (with a warning)', () => {
    const g = new FeatureGates();
    expect(() => g.set({ ComponentSLIs: false })).toThrow(
      'cannot set feature gate ComponentSLIs to false, feature is locked to true',
    );
    expect(g.set({ ComponentSLIs: true })).toEqual([
      'Setting GA feature gate ComponentSLIs=true. It will be removed in a future release.',
    ]);
  });

  it('is all or nothing', () => {
    const g = new FeatureGates();
    expect(() => g.set({ NativeHistograms: false, Zzz: true })).toThrow('unrecognized feature gate: Zzz');
    expect(g.enabled('NativeHistograms')).toBe(true);
  });

  it('warns for deprecated gates', () => {
    const g = new FeatureGates({ Old: { stage: 'DEPRECATED', default: false } });
    expect(g.set({ Old: true })).toEqual([
      'Setting deprecated feature gate Old=true. It will be removed in a future release.',
    ]);
    expect(g.enabled('Old')).toBe(true);
  });

  it('later calls add to earlier ones (file gates, then flag gates)', () => {
    const g = new FeatureGates();
    g.set({ ShardedListAndWatch: true, NativeHistograms: false });
    g.set({ NativeHistograms: true });
    expect(g.enabled('ShardedListAndWatch')).toBe(true);
    expect(g.enabled('NativeHistograms')).toBe(true);
  });
});

describe('AllAlpha and AllBeta', () => {
  it('set every gate of their stage that is not set on its own', () => {
    const g = new FeatureGates();
    g.set({ AllAlpha: true, StatefulSetRecreateStrategy: false });
    expect(g.enabled('ShardedListAndWatch')).toBe(true);
    expect(g.enabled('StatefulSetRecreateStrategy')).toBe(false);
    expect(g.enabled('CoordinatedLeaderElection')).toBe(false); // beta: untouched
    g.set({ AllBeta: false });
    expect(g.enabled('NativeHistograms')).toBe(false);
    expect(g.enabled('ComponentSLIs')).toBe(true); // GA, locked
  });

  it('leave locked gates alone', () => {
    const g = new FeatureGates({
      AllBeta: { stage: 'BETA', default: false },
      Pinned: { stage: 'BETA', default: true, lockToDefault: true },
    });
    g.set({ AllBeta: false });
    expect(g.enabled('Pinned')).toBe(true);
  });
});

describe('enabled', () => {
  it('throws for a gate nobody registered (a typo in the consumer)', () => {
    expect(() => new FeatureGates().enabled('NativeHistogram')).toThrow(
      'feature "NativeHistogram" is not registered in the feature gates',
    );
  });
});

describe('help and metrics', () => {
  it('lists settable gates as the reference does, leaving out GA and deprecated ones', () => {
    const g = new FeatureGates({
      ...CONTROLLER_MANAGER_FEATURES,
      Old: { stage: 'DEPRECATED', default: false },
    });
    expect(g.helpLines()).toEqual([
      'AllAlpha=true|false (ALPHA - default=false)',
      'AllBeta=true|false (BETA - default=false)',
      'ComponentFlagz=true|false (BETA - default=true)',
      'ComponentStatusz=true|false (BETA - default=true)',
      'CoordinatedLeaderElection=true|false (BETA - default=false)',
      'MaxUnavailableStatefulSet=true|false (BETA - default=true)',
      'NativeHistograms=true|false (BETA - default=true)',
      'ShardedListAndWatch=true|false (ALPHA - default=false)',
      'StatefulSetRecreateStrategy=true|false (ALPHA - default=false)',
      'WatchListClient=true|false (BETA - default=true)',
    ]);
    expect(g.usage().split('\n')[0]).toBe(
      'A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:',
    );
  });

  it('feed <prefix>_feature_enabled with the stage as the reference labels it (GA empty)', async () => {
    expect(stageLabel('GA')).toBe('');
    const g = new FeatureGates();
    g.set({ NativeHistograms: false });
    const registry = new Registry();
    const n = naming('orch');
    featureEnabledMetric(registry, n, g.metricStates());
    const text = await registry.metrics();
    expect(text).toContain(`${n.metricPrefix}_feature_enabled{name="NativeHistograms",stage="BETA"} 0`);
    expect(text).toContain(`${n.metricPrefix}_feature_enabled{name="ComponentSLIs",stage=""} 1`);
    expect(text).toContain(`${n.metricPrefix}_feature_enabled{name="ShardedListAndWatch",stage="ALPHA"} 0`);
  });

  it('asMap gives the effective state of every gate', () => {
    const g = new FeatureGates();
    g.set({ AllAlpha: true });
    expect(g.asMap()).toMatchObject({ AllAlpha: true, ShardedListAndWatch: true, NativeHistograms: true });
  });
});
