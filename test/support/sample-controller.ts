/**
 * A sample controller for the runtime tests, never shipped: for Deployments labelled `sample=true`
 * it writes `status.observedGeneration` and `status.replicas` through the `/status` subresource
 * (merge patch). Annotations steer the other outcomes a reconcile can have, so the tests can see
 * each path of the controller loop: `sample.test/requeue-after-ms` asks for another look after a
 * delay, `sample.test/terminal` fails permanently. Everything it does is logged in `history`.
 */

import { type KubeObject, splitKey } from '../../src/api/meta.ts';
import { isTombstone } from '../../src/cache/informer.ts';
import { keyOf } from '../../src/cache/store.ts';
import { isNotFound } from '../../src/client/errors.ts';
import {
  type ControllerContext,
  type ControllerDefinition,
  done,
  errorText,
  type Result,
  requeueAfter,
  TerminalError,
} from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import type { RateLimiter } from '../../src/workqueue/ratelimit.ts';

export const SAMPLE_SELECTOR = 'sample=true';
export const REQUEUE_ANNOTATION = 'sample.test/requeue-after-ms';
export const TERMINAL_ANNOTATION = 'sample.test/terminal';

export type Outcome = 'written' | 'unchanged' | 'gone' | 'terminal' | 'error';

export interface ReconcileRecord {
  key: string;
  /** performance.now() when the reconcile ended. */
  at: number;
  outcome: Outcome;
  requeueAfterMs?: number;
  error?: string;
  /** The status written, when the outcome is `written`. */
  status?: DeploymentStatus;
}

export interface SampleOptions {
  name?: string;
  workers?: number;
  rateLimiter?: () => RateLimiter<string>;
  /** Awaited first in every reconcile: lets a test hold a reconcile open. */
  beforeReconcile?: (key: string, signal: AbortSignal) => Promise<void>;
}

export interface SampleController {
  definition: ControllerDefinition;
  /** Every finished reconcile, in order. */
  history: ReconcileRecord[];
  /** Every notification the handler got, as `<type> <key>`. */
  notifications: string[];
  /** The context of the latest leadership term (its informers, client, logger). */
  ctx?: ControllerContext;
  reconciles(key: string): ReconcileRecord[];
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
}

export function sampleController(opts: SampleOptions = {}): SampleController {
  const sample: SampleController = {
    history: [],
    notifications: [],
    reconciles: (key) => sample.history.filter((r) => r.key === key),
    definition: {
      name: opts.name ?? 'sample',
      aliases: ['sample-controller'],
      enabledByDefault: true,
      permissions: () => [rule(['apps'], ['deployments'], READ), rule(['apps'], ['deployments/status'], ['patch'])],
      workers: opts.workers ?? 2,
      rateLimiter: opts.rateLimiter,
      setup(ctx, enqueue) {
        sample.ctx = ctx;
        const rt = ctx.registry.byKind('Deployment');
        if (!rt) throw new Error('the registry has no Deployment');
        const deployments = ctx.client.resource(rt);
        const informer = ctx.informers.informerFor(rt, { labelSelector: SAMPLE_SELECTOR });
        const lister = informer.lister();
        const note = (type: string, key: string) => {
          sample.notifications.push(`${type} ${key}`);
          enqueue.add(key);
        };
        informer.addEventHandler({
          add: (obj) => note('add', keyOf(obj)),
          update: (_old, obj) => note('update', keyOf(obj)),
          delete: (obj) => note('delete', isTombstone(obj) ? obj.key : keyOf(obj)),
        });
        const record = (key: string, outcome: Outcome, extra: Partial<ReconcileRecord> = {}) =>
          sample.history.push({ key, at: performance.now(), outcome, ...extra });

        return {
          async reconcile(key: string, signal: AbortSignal): Promise<Result> {
            await opts.beforeReconcile?.(key, signal);
            const { namespace, name } = splitKey(key);
            // Level-triggered: whatever the notification was, read the current state from the cache.
            const deployment = lister.get(namespace, name);
            if (!deployment) {
              record(key, 'gone');
              return done;
            }
            const annotations = deployment.metadata.annotations ?? {};
            if (annotations[TERMINAL_ANNOTATION] === 'true') {
              record(key, 'terminal');
              throw new TerminalError(`${key} is marked terminal`);
            }
            const desired = desiredStatus(deployment);
            const current = (deployment.status ?? {}) as DeploymentStatus;
            let outcome: Outcome = 'unchanged';
            let written: DeploymentStatus | undefined;
            if (current.observedGeneration !== desired.observedGeneration || current.replicas !== desired.replicas) {
              try {
                await deployments.patchStatus(namespace, name, { status: desired }, 'merge', {
                  signal,
                  caller: 'sample',
                });
              } catch (err) {
                if (isNotFound(err)) {
                  record(key, 'gone');
                  return done;
                }
                record(key, 'error', { error: errorText(err) });
                throw err;
              }
              outcome = 'written';
              written = desired;
            }
            const requeueMs = Number(annotations[REQUEUE_ANNOTATION]);
            if (requeueMs > 0) {
              record(key, outcome, { requeueAfterMs: requeueMs, status: written });
              return requeueAfter(requeueMs);
            }
            record(key, outcome, { status: written });
            return done;
          },
        };
      },
    },
  };
  return sample;
}

/** What the sample controller writes for a Deployment. */
export function desiredStatus(deployment: KubeObject): Required<DeploymentStatus> {
  const spec = (deployment.spec ?? {}) as { replicas?: number };
  return { observedGeneration: deployment.metadata.generation ?? 0, replicas: spec.replicas ?? 1 };
}
