/**
 * The `/metrics/slis` registry (spec §2.5): the result of each health check as a gauge and the running totals
 * of results as a counter, both alpha, meant to be scraped often for availability SLOs.
 */

import type { Naming } from '../../api/naming.ts';
import { Counter, Gauge, Registry, type RegistryContentType } from './prom-client.ts';

/** The spec names `healthz` and `readyz`; `livez` is accepted for components that also serve it. */
export type HealthCheckType = 'healthz' | 'readyz' | 'livez';

export interface SliMetrics {
  /** The registry to serve on `/metrics/slis`. */
  readonly registry: Registry<RegistryContentType>;
  /** Records one run of the check `name` of endpoint `type`. */
  recordHealthCheck(type: HealthCheckType, name: string, ok: boolean): void;
}

/** The SLI metrics named with the flavor's prefix, in `registry` (default: a new one of their own). */
export function sliMetrics(
  naming: Pick<Naming, 'metricPrefix'>,
  registry: Registry<RegistryContentType> = new Registry(),
): SliMetrics {
  const prefix = naming.metricPrefix;
  const registers = [registry];
  const result = new Gauge({
    name: `${prefix}_healthcheck`,
    help: '[ALPHA] Result of a single health check: 1 when it passed, 0 when it failed.',
    labelNames: ['name', 'type'] as const,
    registers,
  });
  const total = new Counter({
    name: `${prefix}_healthchecks_total`,
    help: '[ALPHA] Cumulative results of all health checks, by check, status and endpoint.',
    labelNames: ['name', 'status', 'type'] as const,
    registers,
  });
  return {
    registry,
    recordHealthCheck(type, name, ok) {
      result.set({ name, type }, ok ? 1 : 0);
      total.inc({ name, status: ok ? 'success' : 'error', type });
    },
  };
}
