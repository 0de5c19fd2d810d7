/** `/metrics` and `/metrics/slis` on the diagnostics server, rendered by the metrics exposition code. */
import type { Registry, RegistryContentType } from './metrics/prom-client.ts';

type AnyRegistry = Registry<RegistryContentType>;

import { renderMetrics } from './metrics/exposition.ts';
import type { DiagnosticsRequest, Reply, RouteRegistry } from './server.ts';

export interface MetricsRoutesOptions {
  /** The component's metrics, served on `/metrics` in the format `Accept` asks for. */
  metrics: AnyRegistry;
  /** The health SLIs, served on `/metrics/slis`. */
  slis?: AnyRegistry;
  /** The `NativeHistograms` gate. */
  nativeHistograms: boolean;
}

export function metricsHandler(
  registry: AnyRegistry,
  nativeHistograms: boolean,
): (req: Pick<DiagnosticsRequest, 'headers'>) => Promise<Reply> {
  return async (req) => {
    const { contentType, body } = await renderMetrics(registry, req.headers.accept, { nativeHistograms });
    return { status: 200, headers: { 'Content-Type': contentType }, body };
  };
}

export function installMetricsRoutes(routes: RouteRegistry, options: MetricsRoutesOptions): void {
  routes.route('/metrics', metricsHandler(options.metrics, options.nativeHistograms));
  if (options.slis) routes.route('/metrics/slis', metricsHandler(options.slis, options.nativeHistograms));
}
