import { describe, expect, it } from 'vitest';
import { validateLeaseCreate, validateLeaseUpdate } from './lease.ts';
import { ctx, ctxWithGates, fieldError, n } from './test-helpers.ts';

const lease = (spec: Record<string, unknown>) => ({
  metadata: { name: n.controllerManager, namespace: n.systemNamespace, resourceVersion: '1' },
  spec,
});
const err = fieldError;
const gateOn = ctxWithGates({ CoordinatedLeaderElection: true });

describe('Lease', () => {
  it.each([
    [
      'a classic lease',
      {
        holderIdentity: 'host_1',
        leaseDurationSeconds: 15,
        leaseTransitions: 0,
        renewTime: '2026-01-01T00:00:00.000000Z',
      },
      ctx,
    ],
    ['a coordinated lease with the gate on', { strategy: 'OldestEmulationVersion', preferredHolder: 'b' }, gateOn],
    ['a third-party strategy', { strategy: 'example.com/custom' }, gateOn],
  ])('accepts %s', (_n, spec, c) => {
    expect(validateLeaseCreate(lease(spec), c)).toEqual([]);
  });

  it.each([
    [
      'leaseDurationSeconds 0',
      { leaseDurationSeconds: 0 },
      ctx,
      err('FieldValueInvalid', 'spec.leaseDurationSeconds', 'Invalid value: 0: must be greater than 0'),
    ],
    [
      'negative leaseTransitions',
      { leaseTransitions: -1 },
      ctx,
      err('FieldValueInvalid', 'spec.leaseTransitions', 'Invalid value: -1: must be greater than or equal to 0'),
    ],
    [
      'preferredHolder without strategy',
      { preferredHolder: 'b' },
      gateOn,
      err('FieldValueForbidden', 'spec.preferredHolder', 'Forbidden: may only be specified if `strategy` is defined'),
    ],
    [
      'an unknown strategy',
      { strategy: 'Newest' },
      gateOn,
      err(
        'FieldValueNotSupported',
        'spec.strategy.strategy',
        'Unsupported value: "Newest": supported values: "OldestEmulationVersion"',
      ),
    ],
    [
      'a strategy with the gate off',
      { strategy: 'OldestEmulationVersion' },
      ctx,
      err(
        'FieldValueForbidden',
        'spec.strategy',
        'Forbidden: may only be set when the CoordinatedLeaderElection feature gate is enabled',
      ),
    ],
    [
      'a duration of the wrong type',
      { leaseDurationSeconds: '15' },
      ctx,
      err('FieldValueInvalid', 'spec.leaseDurationSeconds', 'Invalid value: "15": must be of type integer'),
    ],
  ])('rejects %s', (_n, spec, c, expected) => {
    expect(validateLeaseCreate(lease(spec), c)).toEqual([expected]);
  });

  it('keeps a strategy stored before the gate was turned off', () => {
    const old = lease({ strategy: 'OldestEmulationVersion' });
    expect(validateLeaseUpdate(lease({ strategy: 'OldestEmulationVersion', holderIdentity: 'a' }), old, ctx)).toEqual(
      [],
    );
    expect(validateLeaseUpdate(lease({ leaseDurationSeconds: -5 }), lease({}), ctx)).toEqual([
      err('FieldValueInvalid', 'spec.leaseDurationSeconds', 'Invalid value: -5: must be greater than 0'),
    ]);
  });
});
