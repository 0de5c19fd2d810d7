/**
 * The daemon's operator surface, assembled from its parts: the secure diagnostics server with
 * delegated authentication and authorization, health checks, metrics and SLIs, z-pages, and the
 * service-manager watchdog.
 */
import type { Logger } from 'pino';
import type { Naming } from '../api/naming.ts';
import { versionInfo } from '../build-info.ts';
import type { KubeClient } from '../client/client.ts';
import type { FeatureGates } from '../config/features.ts';
import { encodeConfiguration } from '../config/load.ts';
import { type ConfigSchema, type ControllerManagerConfiguration, configzSectionName } from '../config/schema.ts';
import type { ControllerDefinition } from '../controller/controller.ts';
import type { Manager } from '../controller/manager.ts';
import { apiSources, type WhyAnswerer } from '../controller/why.ts';
import { delegatedReviewers } from '../diagnostics/auth.ts';
import { HealthChecks } from '../diagnostics/health.ts';
import type { Registry } from '../diagnostics/metrics/prom-client.ts';
import { sliMetrics } from '../diagnostics/metrics/slis.ts';
import { flagzValues, reviewCacheTtls } from '../diagnostics/options.ts';
import { installMetricsRoutes } from '../diagnostics/routes.ts';
import { DiagnosticsServer } from '../diagnostics/server.ts';
import { installShards, shardsStatuszLine } from '../diagnostics/shards.ts';
import { installWhy } from '../diagnostics/why.ts';
import { installZPages } from '../diagnostics/zpages.ts';
import type { LeaderElectionHealth } from '../leaderelection/health.ts';
import type { ShardReport } from '../sharding/replica.ts';
import { Notifier } from '../systemd/notify.ts';
import { API_LEVEL } from '../version.ts';
import type { FlagSpec, Flags } from './flags.ts';

export interface DiagnosticsInputs {
  cfg: ControllerManagerConfiguration;
  schema: ConfigSchema;
  gates: FeatureGates;
  naming: Naming;
  specs: FlagSpec[];
  flags: Flags;
  client: KubeClient;
  registry: Registry;
  logger: Logger;
  manager: Manager;
  leaderHealth: LeaderElectionHealth;
  controllers: ControllerDefinition[];
  version: string;
  startTime: Date;
  /** The controllers' `why` answerers, served under `/debug/why/`. */
  why: readonly WhyAnswerer[];
  /** The controller part of the configuration the daemon runs with (what `why` answers reason from). */
  controllerConfig: Record<string, unknown>;
  /** With `--sharding`: what `/debug/shards` and statusz show. */
  shards?: { report(opts?: { bytes?: boolean }): ShardReport };
}

export interface Diagnostics {
  /** The port served, or undefined when `--secure-port=0` disables serving. */
  port?: number;
  notifier: Notifier;
  stop(): Promise<void>;
}

export async function startDiagnostics(d: DiagnosticsInputs): Promise<Diagnostics> {
  const { cfg, gates, naming: n, logger, manager, shards } = d;
  const serving = cfg.serving;
  const server = new DiagnosticsServer({
    bindAddress: serving.bindAddress,
    securePort: serving.securePort,
    tlsCertFile: serving.certFile || undefined,
    tlsPrivateKeyFile: serving.keyFile || undefined,
    clientCaFile: serving.clientCAFile || undefined,
    alwaysAllowPaths: serving.alwaysAllowPaths,
    ...delegatedReviewers(d.client, n, reviewCacheTtls(d.flags)),
    logger,
  });
  const notifier = new Notifier({ logger });
  const slis = sliMetrics(n);
  const checks = new HealthChecks({ recordHealthCheck: slis.recordHealthCheck, logger });
  checks.add('leaderElection', d.leaderHealth.check);
  checks.add('watchdog', notifier.check);
  checks.add(
    'informer-sync',
    () =>
      manager.isLeader() && !manager.hasSynced()
        ? { ok: false, message: 'informers have not synced yet' }
        : { ok: true },
    ['readyz'],
  );
  checks.add(
    'leaseCandidate',
    () => (manager.candidateSynced() ? { ok: true } : { ok: false, message: 'lease candidate not synced yet' }),
    ['readyz'],
  );
  for (const c of d.controllers) {
    checks.add(c.name, () => manager.controllerHealth().find((h) => h.name === c.name) ?? { ok: true }, ['readyz']);
  }
  checks.install(server);
  installMetricsRoutes(server, {
    metrics: d.registry,
    slis: slis.registry,
    nativeHistograms: gates.enabled('NativeHistograms'),
  });
  installZPages(server, {
    componentName: n.controllerManager,
    configGroup: n.configGroup,
    startTime: d.startTime,
    binaryVersion: d.version,
    emulationVersion: `${API_LEVEL.major}.${API_LEVEL.minor}`,
    flags: () => flagzValues(d.specs, d.flags),
    features: (g) => gates.enabled(g),
    configz: () => ({ [configzSectionName(n)]: encodeConfiguration(d.schema, cfg, n) }),
    version: () => versionInfo(d.version),
    extraLines: shards && (() => [shardsStatuszLine(shards.report())]),
  });
  if (shards) installShards(server, (opts) => shards.report(opts));
  installWhy(server, d.why, () =>
    apiSources(d.client, { config: d.controllerConfig, features: (g) => gates.enabled(g) }),
  );
  const port = await server.start();
  // The watchdog check itself is left out: one failed send must not stop every later keep-alive.
  notifier.startWatchdog(() => checks.passing('livez', ['watchdog']));
  // Start-up is finished once diagnostics are served: a standby waiting for the lease runs too.
  await notifier.ready();
  await notifier.status(
    port === undefined ? 'running; diagnostics serving disabled' : `running; diagnostics on port ${port}`,
  );
  return {
    port,
    notifier,
    async stop() {
      await notifier.stop();
      await server.stop();
    },
  };
}
