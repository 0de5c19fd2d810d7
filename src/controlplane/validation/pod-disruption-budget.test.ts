import { describe, expect, it } from 'vitest';
import {
  effectiveUnhealthyPodEvictionPolicy,
  validatePodDisruptionBudgetCreate,
  validatePodDisruptionBudgetStatusUpdate,
  validatePodDisruptionBudgetUpdate,
} from './pod-disruption-budget.ts';
import { ctx, fieldError } from './test-helpers.ts';

const pdb = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
  metadata: { name: 'web', namespace: 'default', resourceVersion: '1' },
  spec,
  ...(status ? { status } : {}),
});
const err = fieldError;
const PERCENT =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

describe('PodDisruptionBudget spec', () => {
  it.each([
    ['minAvailable as an integer', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } }],
    ['maxUnavailable as a percentage', { maxUnavailable: '25%' }],
    ['maxUnavailable 0', { maxUnavailable: 0 }],
    ['minAvailable 100%', { minAvailable: '100%' }],
    ['an empty selector', { minAvailable: 1, selector: {} }],
    ['AlwaysAllow', { minAvailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' }],
    ['IfHealthyBudget', { minAvailable: 1, unhealthyPodEvictionPolicy: 'IfHealthyBudget' }],
  ])('accepts %s', (_n, spec) => {
    expect(validatePodDisruptionBudgetCreate(pdb(spec), ctx)).toEqual([]);
  });

  it.each([
    [
      'both minAvailable and maxUnavailable',
      { minAvailable: 1, maxUnavailable: 1 },
      err(
        'FieldValueInvalid',
        'spec',
        'Invalid value: {"maxUnavailable":1,"minAvailable":1}: minAvailable and maxUnavailable cannot be both set',
      ),
    ],
    [
      'a negative minAvailable',
      { minAvailable: -1 },
      err('FieldValueInvalid', 'spec.minAvailable', 'Invalid value: -1: must be greater than or equal to 0'),
    ],
    [
      'a malformed percentage',
      { maxUnavailable: '25' },
      err('FieldValueInvalid', 'spec.maxUnavailable', `Invalid value: "25": ${PERCENT}`),
    ],
    [
      'a percentage over 100',
      { minAvailable: '101%' },
      err('FieldValueInvalid', 'spec.minAvailable', 'Invalid value: "101%": must not be greater than 100%'),
    ],
    [
      'a boolean',
      { minAvailable: true },
      err('FieldValueInvalid', 'spec.minAvailable', "Invalid value: true: must be an integer or percentage (e.g '5%')"),
    ],
    [
      'an invalid selector',
      { minAvailable: 1, selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } },
      err(
        'FieldValueRequired',
        'spec.selector.matchExpressions[0].values',
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ),
    ],
    [
      'an unknown eviction policy',
      { minAvailable: 1, unhealthyPodEvictionPolicy: 'Never' },
      err(
        'FieldValueNotSupported',
        'spec.unhealthyPodEvictionPolicy',
        'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
      ),
    ],
  ])('rejects %s', (_n, spec, expected) => {
    expect(validatePodDisruptionBudgetCreate(pdb(spec), ctx)).toContainEqual(expected);
  });

  it('reports a wrong-typed int-or-percent once (shape check)', () => {
    expect(validatePodDisruptionBudgetCreate(pdb({ minAvailable: true }), ctx)).toHaveLength(1);
  });

  it('defaults nothing: an unset eviction policy means IfHealthyBudget', () => {
    expect(effectiveUnhealthyPodEvictionPolicy(pdb({ minAvailable: 1 }))).toBe('IfHealthyBudget');
  });
});

describe('PodDisruptionBudget updates', () => {
  it('allows spec changes, tolerating invalid selector values already stored', () => {
    const stored = pdb({
      minAvailable: 1,
      selector: { matchExpressions: [{ key: 'a', operator: 'In', values: ['-bad'] }] },
    });
    expect(validatePodDisruptionBudgetUpdate(pdb({ ...stored.spec, minAvailable: 2 }), stored, ctx)).toEqual([]);
    expect(
      validatePodDisruptionBudgetUpdate(pdb({ maxUnavailable: '10%', minAvailable: 1 }), pdb({ minAvailable: 1 }), ctx),
    ).toHaveLength(1);
  });

  it('checks status counters and conditions', () => {
    const good = { currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1, conditions: [] };
    expect(
      validatePodDisruptionBudgetStatusUpdate(pdb({ minAvailable: 1 }, good), pdb({ minAvailable: 1 }), ctx),
    ).toEqual([]);
    const bad = {
      ...good,
      disruptionsAllowed: -1,
      conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' }],
    };
    expect(
      validatePodDisruptionBudgetStatusUpdate(pdb({ minAvailable: 1 }, bad), pdb({ minAvailable: 1 }), ctx),
    ).toEqual([
      err('FieldValueRequired', 'status.conditions[0].lastTransitionTime', 'Required value: must be set'),
      err('FieldValueInvalid', 'status.disruptionsAllowed', 'Invalid value: -1: must be greater than or equal to 0'),
    ]);
  });
});
