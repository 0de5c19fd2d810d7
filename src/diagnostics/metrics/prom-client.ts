/**
 * The parts of prom-client this project uses, each from its own module: prom-client's index also loads its push
 * gateway client and cluster aggregator, and with them Node's zlib and cluster modules, at every start.
 */
import type * as Prom from 'prom-client';
import Counter from 'prom-client/lib/counter.js';
import collectDefaultMetrics from 'prom-client/lib/defaultMetrics.js';
import Gauge from 'prom-client/lib/gauge.js';
import Histogram from 'prom-client/lib/histogram.js';
import registryModule from 'prom-client/lib/registry.js';

export type { Metric, RegistryContentType } from 'prom-client';
export { Counter, collectDefaultMetrics, Gauge, Histogram };

export const Registry = registryModule;
export type Registry<T extends Prom.RegistryContentType = Prom.PrometheusContentType> = Prom.Registry<T>;
/** The process's registry, prom-client's default. */
export const register: Prom.Registry = registryModule.globalRegistry;
