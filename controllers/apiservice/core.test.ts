import { describe, expect, it } from 'vitest';
import type { Service } from '../../src/api/types/core.ts';
import type { EndpointSlice } from '../../src/api/types/discovery.ts';
import type { APIService, APIServiceCondition } from '../../src/api/types/misc.ts';
import { check, LOCAL, PASSED, probeCondition, withAvailable } from './core.ts';

const local: APIService = {
  metadata: { name: 'v1.apps' },
  spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 },
};
const remote: APIService = {
  metadata: { name: 'v1.x.io' },
  spec: {
    group: 'x.io',
    version: 'v1',
    groupPriorityMinimum: 100,
    versionPriority: 1,
    service: { namespace: 'ns', name: 'api', port: 443 },
  },
};
const service: Service = { metadata: { namespace: 'ns', name: 'api' }, spec: { ports: [{ port: 443 }] } };
const slice: EndpointSlice = {
  metadata: { namespace: 'ns', name: 's' },
  addressType: 'IPv4',
  ports: [{ port: 8443 }],
  endpoints: [{ addresses: ['127.0.0.1'] }],
};

describe('check: the decision table', () => {
  it('local APIServices are available without looking further (even with no service)', () => {
    expect(check(local, undefined, undefined)).toEqual({ condition: LOCAL });
    expect(LOCAL).toEqual({ status: 'True', reason: 'Local', message: 'Local APIServices are always available' });
  });

  it('rows 1 to 6 come from the service and its slices', () => {
    expect(check(remote, undefined, [])).toMatchObject({ condition: { reason: 'ServiceNotFound' } });
    expect(check(remote, new Error('x'), [])).toMatchObject({ condition: { reason: 'ServiceAccessError' } });
    expect(check(remote, { ...service, spec: { ports: [{ port: 1 }] } }, [])).toMatchObject({
      condition: { reason: 'ServicePortError' },
    });
    expect(check(remote, service, new Error('x'))).toMatchObject({ condition: { reason: 'EndpointsAccessError' } });
    expect(check(remote, service, [])).toMatchObject({ condition: { reason: 'EndpointsNotFound' } });
    expect(
      check(remote, service, [{ ...slice, endpoints: [{ addresses: ['1.2.3.4'], conditions: { ready: false } }] }]),
    ).toMatchObject({
      condition: { reason: 'MissingEndpoints' },
    });
  });

  it('then the probe: row 7 on failure, row 8 on success', () => {
    expect(check(remote, service, [slice])).toEqual({ probe: [{ host: '127.0.0.1', port: 8443 }] });
    expect(probeCondition({ ok: false, message: 'timed out waiting for https://127.0.0.1:8443/apis/x.io/v1' })).toEqual(
      {
        status: 'False',
        reason: 'FailedDiscoveryCheck',
        message: 'timed out waiting for https://127.0.0.1:8443/apis/x.io/v1',
      },
    );
    expect(probeCondition({ ok: true })).toEqual(PASSED);
    expect(PASSED).toEqual({ status: 'True', reason: 'Passed', message: 'all checks passed' });
  });
});

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:00:30Z';
const withConditions = (...conditions: APIServiceCondition[]): APIService => ({ ...remote, status: { conditions } });
const available = (reason = 'Passed', message = 'all checks passed'): APIServiceCondition => ({
  type: 'Available',
  status: 'True',
  lastTransitionTime: T0,
  reason,
  message,
});

describe('withAvailable: the write rules', () => {
  it('appends the condition when there is none, stamping the transition time', () => {
    const u = withAvailable(remote, PASSED, T1);
    expect(u).toEqual({
      status: { conditions: [{ type: 'Available', lastTransitionTime: T1, ...PASSED }] },
      changed: true,
      becameUnavailable: false,
    });
  });

  it('makes no write when nothing changed (steady state)', () => {
    const u = withAvailable(withConditions(available()), PASSED, T1);
    expect(u.changed).toBe(false);
    expect(u.status.conditions?.[0].lastTransitionTime).toBe(T0);
  });

  it('keeps lastTransitionTime when only reason or message change', () => {
    const u = withAvailable(withConditions(available('Local', 'Local APIServices are always available')), PASSED, T1);
    expect(u.changed).toBe(true);
    expect(u.status.conditions?.[0]).toEqual({ type: 'Available', lastTransitionTime: T0, ...PASSED });
    const failing = { status: 'False' as const, reason: 'FailedDiscoveryCheck', message: 'a' };
    const before = withConditions({ type: 'Available', lastTransitionTime: T0, ...failing });
    const other = withAvailable(before, { ...failing, message: 'b' }, T1);
    expect(other.changed).toBe(true);
    expect(other.status.conditions?.[0]).toMatchObject({ message: 'b', lastTransitionTime: T0 });
  });

  it('moves lastTransitionTime on a status change and counts True → not True only', () => {
    const down = withAvailable(
      withConditions(available()),
      { status: 'False', reason: 'ServiceNotFound', message: 'm' },
      T1,
    );
    expect(down.status.conditions?.[0]).toMatchObject({ status: 'False', lastTransitionTime: T1 });
    expect(down.becameUnavailable).toBe(true);
    const unknown = withAvailable(
      withConditions(available()),
      { status: 'Unknown', reason: 'ServiceAccessError', message: 'm' },
      T1,
    );
    expect(unknown.becameUnavailable).toBe(true);
    // never available before: not counted
    expect(
      withAvailable(remote, { status: 'False', reason: 'ServiceNotFound', message: 'm' }, T1).becameUnavailable,
    ).toBe(false);
    const up = withAvailable(withConditions({ ...available(), status: 'False' }), PASSED, T1);
    expect(up).toMatchObject({ changed: true, becameUnavailable: false });
    expect(up.status.conditions?.[0].lastTransitionTime).toBe(T1);
  });

  it('keeps other condition types and their order', () => {
    const other: APIServiceCondition = { type: 'Custom', status: 'True' };
    const u = withAvailable(withConditions(other, available()), { status: 'False', reason: 'R', message: 'm' }, T1);
    expect(u.status.conditions?.map((c) => c.type)).toEqual(['Custom', 'Available']);
    expect(u.status.conditions?.[0]).toBe(other);
  });
});
