import { describe, expect, it } from 'vitest';
import { naming } from '../../src/api/naming.ts';
import type { ConfigMap, Namespace } from '../../src/api/types/core.ts';
import { publishPlan, RESTORE_QUIET_MS, restored, restoreWaitMs } from './core.ts';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const active: Namespace = { metadata: { name: 'team' }, status: { phase: 'Active' } };
const terminating: Namespace = { metadata: { name: 'team' }, status: { phase: 'Terminating' } };

describe.each(['orch', 'kubernetes'] as const)('publishPlan (%s flavor)', (flavor) => {
  const n = naming(flavor);
  const described = { [n.annotations.description]: n.rootCADescription };
  const cm = (data: Record<string, string> | undefined, annotations?: Record<string, string>): ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: n.rootCAConfigMap, namespace: 'team', resourceVersion: '7', annotations },
    ...(data ? { data } : {}),
  });

  it('creates the ConfigMap, with the description, in an Active namespace without one', () => {
    expect(publishPlan(n, active, undefined, CA)).toEqual({
      create: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: n.rootCAConfigMap, namespace: 'team', annotations: described },
        data: { 'ca.crt': CA },
      },
    });
  });

  it.each([
    ['the namespace is terminating', terminating],
    [
      'the namespace is being deleted',
      { ...active, metadata: { name: 'team', deletionTimestamp: '2026-01-01T00:00:00Z' } },
    ],
    ['the namespace is gone', undefined],
  ])('does nothing when %s', (_what, ns) => {
    expect(publishPlan(n, ns, undefined, CA)).toEqual({});
    expect(publishPlan(n, ns, cm({ 'ca.crt': 'other' }), CA)).toEqual({});
  });

  it('leaves a right ConfigMap alone, whatever its description says, as long as it has one', () => {
    expect(publishPlan(n, active, cm({ 'ca.crt': CA }, described), CA)).toEqual({});
    expect(publishPlan(n, active, cm({ 'ca.crt': CA }, { [n.annotations.description]: 'mine' }), CA)).toEqual({});
  });

  it.each([
    ['other bytes', { 'ca.crt': 'other' }, described],
    ['an extra key', { 'ca.crt': CA, extra: 'x' }, described],
    ['no data', undefined, described],
    ['no description', { 'ca.crt': CA }, { unrelated: 'kept' }],
    ['an empty description', { 'ca.crt': CA }, { [n.annotations.description]: '' }],
  ])('restores data and description on %s, keeping the rest', (_what, data, annotations) => {
    const existing = cm(data, annotations);
    const plan = publishPlan(n, active, existing, CA);
    expect(plan.create).toBeUndefined();
    expect(plan.update).toEqual({
      ...existing,
      metadata: { ...existing.metadata, annotations: { ...annotations, ...described } },
      data: { 'ca.crt': CA },
    });
  });
});

describe('the description', () => {
  it("is the reference's words in the kubernetes flavor and the product's in the orch flavor", () => {
    expect(naming('kubernetes').rootCAConfigMap).toBe('kube-root-ca.crt');
    expect(naming('kubernetes').annotations.description).toBe('kubernetes.io/description');
    expect(naming('kubernetes').rootCADescription).toBe(
      'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
    );
    expect(naming('orch').rootCAConfigMap).toBe('orch-root-ca.crt');
    expect(naming('orch').rootCADescription).toContain('verify the orch-apiserver');
  });
});

describe('restoreWaitMs and restored', () => {
  const t = 1_000_000;
  it.each([
    ['the first restore', undefined, t, 0],
    ['a restore long after the last', { count: 5, lastMs: t - RESTORE_QUIET_MS }, t, 0],
    ['the second within the quiet time, at once', { count: 1, lastMs: t }, t, 1_000],
    ['the second, half a second later', { count: 1, lastMs: t }, t + 500, 500],
    ['the second, once its wait is over', { count: 1, lastMs: t }, t + 1_000, 0],
    ['the fourth', { count: 3, lastMs: t }, t, 4_000],
    ['the hundredth: the wait is capped', { count: 99, lastMs: t }, t, 5 * 60_000],
  ])('%s', (_what, prev, now, want) => {
    expect(restoreWaitMs(prev, now)).toBe(want);
  });

  it('counts restores until the ConfigMap is left alone for the quiet time', () => {
    const first = restored(undefined, t);
    expect(first).toEqual({ count: 1, lastMs: t });
    const second = restored(first, t + 1_000);
    expect(second).toEqual({ count: 2, lastMs: t + 1_000 });
    expect(restored(second, t + 1_000 + RESTORE_QUIET_MS)).toEqual({ count: 1, lastMs: t + 1_000 + RESTORE_QUIET_MS });
  });
});
