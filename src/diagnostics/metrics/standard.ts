/**
 * Metrics every component exposes on `/metrics`: feature gate states, build information, process and Node.js
 * runtime metrics, and REST client request metrics under client-go's names.
 */
import {
  type Registry as AnyRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  type RegistryContentType,
} from './prom-client.ts';

type Registry = AnyRegistry<RegistryContentType>;

import type { Naming } from '../../api/naming.ts';
import { NativeHistogram, nativeHistogram } from './native-histogram.ts';

export interface FeatureGateState {
  name: string;
  /** As the gate table spells it, e.g. `ALPHA`, `BETA`, `` for GA, `DEPRECATED`. */
  stage: string;
  enabled: boolean;
}

export interface BuildInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit?: string;
  gitTreeState?: string;
  buildDate?: string;
}

/** What `ClientOptions.observe` of src/client/client.ts reports; code 0 means no response. */
export interface ClientRequestObservation {
  method: string;
  code: number;
  host: string;
  seconds: number;
}

/** client-go's `rest_client_request_duration_seconds` buckets. */
export const REST_CLIENT_DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

type Prefix = Pick<Naming, 'metricPrefix'>;

/** The registry's metric of that name, or a new one made by `make`, so calling twice does not clash. */
function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** `<prefix>_feature_enabled{name,stage}`: 1 for each enabled gate, 0 for each disabled one. */
export function featureEnabledMetric(registry: Registry, naming: Prefix, gates: readonly FeatureGateState[]): void {
  const name = `${naming.metricPrefix}_feature_enabled`;
  const gauge = reuse(
    registry,
    name,
    () =>
      new Gauge({
        name,
        help: '[BETA] Stage and enablement of each feature gate: 1 when enabled, 0 when disabled.',
        labelNames: ['name', 'stage'] as const,
        registers: [registry],
      }),
  );
  for (const g of gates) gauge.set({ name: g.name, stage: g.stage }, g.enabled ? 1 : 0);
}

const BUILD_INFO_LABELS = [
  'major',
  'minor',
  'git_version',
  'git_commit',
  'git_tree_state',
  'build_date',
  'node_version',
  'platform',
] as const;

/**
 * `<prefix>_build_info`: constant 1, labelled by version, commit, build date, Node.js version and platform. A
 * function `info` is read at the first scrape rather than at start-up (the commit is read by running git).
 */
export function buildInfoMetric(registry: Registry, naming: Prefix, info: BuildInfo | (() => BuildInfo)): void {
  const name = `${naming.metricPrefix}_build_info`;
  const read = typeof info === 'function' ? info : () => info;
  // Made anew on a second call, so that it reads the latest `info`.
  registry.removeSingleMetric(name);
  new Gauge({
    name,
    help: '[ALPHA] A constant 1 labelled by the version, commit, build date and runtime the component runs.',
    labelNames: BUILD_INFO_LABELS,
    registers: [registry],
    collect() {
      const i = read();
      this.set(
        {
          major: i.major,
          minor: i.minor,
          git_version: i.gitVersion,
          git_commit: i.gitCommit ?? '',
          git_tree_state: i.gitTreeState ?? '',
          build_date: i.buildDate ?? '',
          node_version: process.version,
          platform: `${process.platform}/${process.arch}`,
        },
        1,
      );
    },
  });
}

/**
 * prom-client's gauges named like counters, which promtool's linter refuses; `nodejs_active_handles`,
 * `nodejs_active_requests` and `nodejs_active_resources` carry the same counts by type.
 */
const COUNTER_NAMED_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Process (`process_*`) and Node.js runtime (`nodejs_*`) metrics from prom-client, once per registry. */
export function runtimeMetrics(registry: Registry): void {
  if (registry.getSingleMetric('process_start_time_seconds')) return;
  collectDefaultMetrics({ register: registry });
  for (const name of COUNTER_NAMED_GAUGES) registry.removeSingleMetric(name);
}

/**
 * client-go's `rest_client_requests_total{code,method,host}` and `rest_client_request_duration_seconds{verb,host}`
 * (a native histogram with client-go's classic buckets). Returns a function fit for `ClientOptions.observe`.
 */
export function restClientMetrics(registry: Registry): (o: ClientRequestObservation) => void {
  const requests = reuse(
    registry,
    'rest_client_requests_total',
    () =>
      new Counter({
        name: 'rest_client_requests_total',
        help: '[ALPHA] Number of HTTP requests, by status code, method and host.',
        labelNames: ['code', 'method', 'host'] as const,
        registers: [registry],
      }),
  );
  const duration = reuse(registry, 'rest_client_request_duration_seconds', () =>
    nativeHistogram({
      name: 'rest_client_request_duration_seconds',
      help: '[ALPHA] Request latency in seconds, by verb and host.',
      labelNames: ['verb', 'host'],
      classicBuckets: REST_CLIENT_DURATION_BUCKETS,
      registers: [registry],
    }),
  );
  if (!(duration instanceof NativeHistogram))
    throw new Error('rest_client_request_duration_seconds is registered with another type');
  return ({ method, code, host, seconds }) => {
    // client-go labels a request that got no response `<error>`.
    requests.inc({ code: code > 0 ? String(code) : '<error>', method, host });
    duration.observe({ verb: method, host }, seconds);
  };
}

export interface StandardMetricsOptions {
  naming: Prefix;
  gates: readonly FeatureGateState[];
  /** Build facts, or a function reading them at the first scrape (see buildInfoMetric). */
  build: BuildInfo | (() => BuildInfo);
  /** Process and Node.js runtime metrics; default true. */
  runtime?: boolean;
}

/** All of the above in `registry`; returns the REST client observer. */
export function standardMetrics(
  registry: Registry,
  options: StandardMetricsOptions,
): { observeClientRequest: (o: ClientRequestObservation) => void } {
  featureEnabledMetric(registry, options.naming, options.gates);
  buildInfoMetric(registry, options.naming, options.build);
  if (options.runtime ?? true) runtimeMetrics(registry);
  return { observeClientRequest: restClientMetrics(registry) };
}
