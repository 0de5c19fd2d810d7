/**
 * The LeaseCandidate garbage collector (`leasecandidate-gc`): a pass at start and then every interval (30 min;
 * `ctx.config.leaseCandidateGc.periodMs` shortens it), deleting candidates not renewed for 30 minutes. Each one
 * the cache calls expired is read again and deleted only if still expired (preconditions guard a renewal in
 * between); NotFound and conflicts are ignored, other errors logged, and the next pass tries again.
 */
import { group } from '../../src/api/naming.ts';
import type { LeaseCandidate } from '../../src/api/types/coordination.ts';
import { keyOf } from '../../src/cache/store.ts';
import { isConflict, isNotFound } from '../../src/client/errors.ts';
import { type ControllerDefinition, errorText, requeueAfter } from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import { COORDINATION_CONTROLLER } from './controller.ts';
import { candidateExpired, GC_INTERVAL_MS } from './core.ts';

export const GC_CONTROLLER = 'leasecandidate-gc';

/** The one key of the collector's queue: a pass over every candidate. */
const PASS = 'pass';

export interface LeaseCandidateGcConfig {
  periodMs?: number;
}

export const leaseCandidateGcController: ControllerDefinition = {
  ...COORDINATION_CONTROLLER,
  name: GC_CONTROLLER,
  permissions: (n) => [rule([group(n, 'coordination')], ['leasecandidates'], [...READ, 'delete'])],
  setup(ctx, enqueue) {
    const rt = ctx.registry.byKind('LeaseCandidate');
    if (!rt) throw new Error(`${GC_CONTROLLER}: the API has no LeaseCandidate`);
    const lister = ctx.informers.informerFor<LeaseCandidate>(rt).lister();
    const client = ctx.client.resource<LeaseCandidate>(rt);
    const periodMs = (ctx.config.leaseCandidateGc as LeaseCandidateGcConfig | undefined)?.periodMs ?? GC_INTERVAL_MS;
    const log = ctx.logger.child({ controller: GC_CONTROLLER });
    enqueue.add(PASS);
    return {
      async reconcile(_key, signal) {
        for (const cached of lister.list()) {
          if (!candidateExpired(cached, new Date())) continue;
          const { namespace, name } = cached.metadata;
          try {
            const live = await client.get(namespace, name!, { signal });
            if (!candidateExpired(live, new Date())) continue;
            const { uid, resourceVersion } = live.metadata;
            await client.delete(namespace, name!, { preconditions: { uid, resourceVersion }, signal });
            log.info({ candidate: keyOf(live), renewTime: live.spec?.renewTime }, 'expired LeaseCandidate deleted');
          } catch (err) {
            if (!isNotFound(err) && !isConflict(err)) {
              log.error({ candidate: keyOf(cached), err: errorText(err) }, 'deleting an expired LeaseCandidate failed');
            }
          }
        }
        return requeueAfter(periodMs);
      },
    };
  },
};
