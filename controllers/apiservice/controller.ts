/**
 * The APIService availability controller (`apiservice-availability-controller`): keeps each
 * APIService's `Available` condition current. Local APIServices are always available; a remote one
 * is checked against its Service and EndpointSlices (core.ts) and then probed (probe.ts). Every
 * APIService is re-checked every 30 s; a failed probe is also retried with the per-item backoff.
 * A Service or EndpointSlice change re-checks exactly the APIServices behind that Service, through
 * an index of the APIService cache by `spec.service`.
 *
 * `ctx.config.apiservice` (see {@link ApiServiceConfig}): `probeVerifyTls` (the
 * `--apiservice-probe-verify-tls` flag, default true) and, for tests, the probe's timings and the
 * resync period.
 */
import { Agent } from 'node:https';
import { backendTls, discoveryPath, isAvailable, sliceServiceName } from '../../src/api/apiservice.ts';
import { group } from '../../src/api/naming.ts';
import type { Service } from '../../src/api/types/core.ts';
import type { EndpointSlice } from '../../src/api/types/discovery.ts';
import type { APIService } from '../../src/api/types/misc.ts';
import { unwrapTombstone } from '../../src/cache/informer.ts';
import { keyOf } from '../../src/cache/store.ts';
import { isNotFound } from '../../src/client/errors.ts';
import { type ControllerDefinition, done } from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import { rfc3339 } from '../../src/util/time.ts';
import { itemExponential } from '../../src/workqueue/ratelimit.ts';
import { check, FAILED_DISCOVERY_CHECK, probeCondition, withAvailable } from './core.ts';
import { availabilityMetrics } from './metrics.ts';
import { PROBE_DEFAULTS, probe } from './probe.ts';

export const APISERVICE_CONTROLLER = 'apiservice-availability-controller';

/** Every APIService is re-evaluated at least this often (the reference's handler resync). */
export const RESYNC_MS = 30_000;
const BY_SERVICE = 'apiservice-by-service';
const SLICES_BY_SERVICE = 'endpointslice-by-service';

export interface ApiServiceConfig {
  /** Verify the backend's certificate in the probe (caBundle, else system roots); false is the reference's way. */
  probeVerifyTls?: boolean;
  probe?: Partial<typeof PROBE_DEFAULTS>;
  /** Re-check period; {@link RESYNC_MS} unless a test shortens it. */
  resyncMs?: number;
}

/** The failed probe, thrown after its condition is written so the queue retries with backoff. */
class DiscoveryCheckFailed extends Error {}

export const apiServiceAvailabilityController: ControllerDefinition = {
  name: APISERVICE_CONTROLLER,
  aliases: ['apiservice-availability'],
  enabledByDefault: true,
  servedByApiServer: true,
  workers: 5,
  rateLimiter: () => itemExponential(5, 30_000),
  permissions: (n) => [
    rule([group(n, 'apiregistration')], ['apiservices'], READ),
    rule([group(n, 'apiregistration')], ['apiservices/status'], ['update']),
    rule([''], ['services'], READ),
    rule([group(n, 'discovery')], ['endpointslices'], READ),
  ],
  setup: (ctx, enqueue) => {
    const n = ctx.naming;
    const rt = (g: string, plural: string) => {
      const found = ctx.registry.resource(g, 'v1', plural);
      if (!found) throw new Error(`${APISERVICE_CONTROLLER}: the API has no ${plural}`);
      return found;
    };
    const apiServiceRt = rt(group(n, 'apiregistration'), 'apiservices');
    const config = (ctx.config.apiservice ?? {}) as ApiServiceConfig;
    const timings = { ...PROBE_DEFAULTS, ...config.probe };
    const verifyTls = config.probeVerifyTls ?? true;
    const client = ctx.client.resource<APIService>(apiServiceRt);
    const metrics = availabilityMetrics(ctx.metrics);
    // Connections to a backend are kept and reused by the next checks (pools are per endpoint and trust).
    const agent = new Agent({ keepAlive: true });
    const logger = ctx.logger.child({ controller: APISERVICE_CONTROLLER });

    const apiServiceInformer = ctx.informers.informerFor<APIService>(apiServiceRt);
    apiServiceInformer.addIndexer(BY_SERVICE, (s) => {
      const ref = s.spec?.service;
      return ref ? [`${ref.namespace ?? ''}/${ref.name ?? ''}`] : [];
    });
    const apiServices = apiServiceInformer.lister();
    const serviceInformer = ctx.informers.informerFor<Service>(rt('', 'services'));
    const services = serviceInformer.lister();
    const sliceInformer = ctx.informers.informerFor<EndpointSlice>(rt(group(n, 'discovery'), 'endpointslices'));
    const sliceService = (slice: EndpointSlice) => {
      const name = sliceServiceName(slice, n);
      return name ? `${slice.metadata.namespace ?? ''}/${name}` : undefined;
    };
    sliceInformer.addIndexer(SLICES_BY_SERVICE, (slice) => {
      const key = sliceService(slice);
      return key ? [key] : [];
    });
    const slices = sliceInformer.lister();

    const enqueueBehind = (serviceKey: string | undefined) => {
      if (!serviceKey) return;
      for (const s of apiServices.byIndex(BY_SERVICE, serviceKey)) enqueue.add(s.metadata.name ?? '');
    };
    apiServiceInformer.addEventHandler(
      {
        add: (s) => enqueue.add(s.metadata.name ?? ''),
        update: (_old, s) => enqueue.add(s.metadata.name ?? ''),
        delete: (s) => enqueue.add(unwrapTombstone(s).metadata.name ?? ''),
      },
      config.resyncMs ?? RESYNC_MS,
    );
    serviceInformer.addEventHandler({
      add: (svc) => enqueueBehind(keyOf(svc)),
      update: (_old, svc) => enqueueBehind(keyOf(svc)),
      delete: (svc) => enqueueBehind(keyOf(unwrapTombstone(svc))),
    });
    sliceInformer.addEventHandler({
      add: (slice) => enqueueBehind(sliceService(slice)),
      update: (old, slice) => {
        enqueueBehind(sliceService(slice));
        if (sliceService(old) !== sliceService(slice)) enqueueBehind(sliceService(old));
      },
      delete: (slice) => enqueueBehind(sliceService(unwrapTombstone(slice))),
    });

    return {
      stop: () => agent.destroy(),
      async reconcile(name, signal) {
        const apiService = apiServices.get(undefined, name);
        if (!apiService) {
          metrics.forget(name);
          return done;
        }
        const ref = apiService.spec?.service;
        const next = check(
          apiService,
          ref ? services.get(ref.namespace ?? '', ref.name ?? '') : undefined,
          ref ? slices.byIndex(SLICES_BY_SERVICE, `${ref.namespace ?? ''}/${ref.name ?? ''}`) : undefined,
        );
        const condition =
          'condition' in next
            ? next.condition
            : probeCondition(
                await probe(next.probe, discoveryPath(apiService), {
                  ...timings,
                  tls: backendTls(apiService, verifyTls),
                  agent,
                }),
              );
        const update = withAvailable(apiService, condition, rfc3339(new Date()));
        metrics.unavailable.set({ name }, condition.status === 'True' ? 0 : 1);
        if (update.changed) {
          if (isAvailable(apiService) !== (condition.status === 'True')) {
            logger.info(
              { apiservice: name, status: condition.status, reason: condition.reason, message: condition.message },
              'changing APIService availability',
            );
          }
          try {
            await client.replaceStatus({ ...apiService, status: update.status }, { signal });
          } catch (err) {
            if (isNotFound(err)) return done;
            throw err;
          }
          if (update.becameUnavailable)
            metrics.unavailableTotal.inc({ name, reason: condition.reason || 'UnknownReason' });
        }
        if (condition.reason === FAILED_DISCOVERY_CHECK) throw new DiscoveryCheckFailed(condition.message);
        return done;
      },
    };
  },
};
