/**
 * The availability metrics, with the reference's names: a gauge per APIService (1 while it is not
 * available, set on every sync, removed with the APIService) and a counter per APIService and
 * reason of the writes that took an available APIService out of service. One set per registry.
 */
import { Counter, Gauge, type Registry } from '../../src/diagnostics/metrics/prom-client.ts';

export interface AvailabilityMetrics {
  unavailable: Gauge<'name'>;
  unavailableTotal: Counter<'name' | 'reason'>;
  /** Drops a deleted APIService's gauge series. */
  forget(name: string): void;
}

const sets = new WeakMap<Registry, AvailabilityMetrics>();

export function availabilityMetrics(registry: Registry): AvailabilityMetrics {
  const existing = sets.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const unavailable = new Gauge({
    name: 'aggregator_unavailable_apiservice',
    help: 'Gauge of APIServices which are marked as unavailable broken down by APIService name.',
    labelNames: ['name'],
    registers,
  });
  const set: AvailabilityMetrics = {
    unavailable,
    unavailableTotal: new Counter({
      name: 'aggregator_unavailable_apiservice_total',
      help: 'Counter of APIServices which are marked as unavailable broken down by APIService name and reason.',
      labelNames: ['name', 'reason'],
      registers,
    }),
    forget: (name) => unavailable.remove({ name }),
  };
  sets.set(registry, set);
  return set;
}
