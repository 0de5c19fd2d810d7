import { describe, expect, it } from 'vitest';
import { selectControllers } from '../../src/controller/controller.ts';
import { clusterRoleAggregationController } from '../clusterroleaggregation/index.ts';
import { controllerDefinitions } from '../index.ts';
import { APISERVICE_CONTROLLER, apiServiceAvailabilityController } from './index.ts';

describe('the APIService availability controller definition', () => {
  it('retries a failed probe with the per-item backoff 5 ms → 30 s and no global bucket', () => {
    const limiter = apiServiceAvailabilityController.rateLimiter!();
    const waits = Array.from({ length: 15 }, () => limiter.when('v1.x.io'));
    expect(waits.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(waits.at(-1)).toBe(30_000);
    // Other keys are not slowed by one key's failures.
    expect(limiter.when('v1.y.io')).toBe(5);
  });

  it('is left to the API server against a real cluster of the kubernetes flavor, unless named', () => {
    expect(apiServiceAvailabilityController).toMatchObject({
      name: APISERVICE_CONTROLLER,
      servedByApiServer: true,
      workers: 5,
    });
    const names = (spec: string[], apiServerControllers: boolean) =>
      selectControllers(controllerDefinitions, spec, { apiServerControllers }).map((d) => d.name);
    expect(names(['*'], true)).not.toContain(APISERVICE_CONTROLLER);
    expect(names(['*'], true)).toContain(clusterRoleAggregationController.name);
    expect(names(['*'], false)).toContain(APISERVICE_CONTROLLER);
    expect(names(['*', 'apiservice-availability'], true)).toContain(APISERVICE_CONTROLLER);
    expect(names(['clusterrole-aggregation'], true)).toEqual(['clusterrole-aggregation-controller']);
  });
});
