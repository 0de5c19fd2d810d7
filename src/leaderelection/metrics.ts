/** Leader-election metrics (component-base's adapter): leadership gauge and slow-path renew counter. */
import { Counter, Gauge, register as globalRegister, type Registry } from '../diagnostics/metrics/prom-client.ts';

/** The elector's hooks; `name` is bound when the metrics are made. */
export interface LeaderMetrics {
  leaderOn(): void;
  leaderOff(): void;
  /** A renew that needed the GET (slow) path. */
  slowpathExercised(): void;
}

const STATUS = 'leader_election_master_status';
const SLOWPATH = 'leader_election_slowpath_total';

/** The registry's metric of that name, or a new one made by `make` (so creating twice does not clash). */
function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** Metrics for the lease `name`; the gauge starts at 0. */
export function leaderElectionMetrics(name: string, registry: Registry = globalRegister): LeaderMetrics {
  const registers = [registry];
  const labelNames = ['name'] as const;
  const status = reuse(
    registry,
    STATUS,
    () =>
      new Gauge({
        name: STATUS,
        help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
        labelNames,
        registers,
      }),
  );
  const slowpath = reuse(
    registry,
    SLOWPATH,
    () =>
      new Counter({
        name: SLOWPATH,
        help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
        labelNames,
        registers,
      }),
  );
  status.set({ name }, 0);
  return {
    leaderOn: () => status.set({ name }, 1),
    leaderOff: () => status.set({ name }, 0),
    slowpathExercised: () => slowpath.inc({ name }),
  };
}
