/**
 * The CSR cleaner (`certificatesigningrequest-cleaner-controller`, `csrcleaner`): one pass over the cached CSRs
 * at start and then an hour after each pass ends, deleting those the rules in core.ts select. Delete errors are
 * only logged: the next pass tries again.
 */
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { CONTROLLER_ACCOUNTS } from '../../../src/api/controller-accounts.ts';
import { group } from '../../../src/api/naming.ts';
import type { CertificateSigningRequest } from '../../../src/api/types/certificates.ts';
import { isNotFound } from '../../../src/client/errors.ts';
import { type ControllerDefinition, requeueAfter } from '../../../src/controller/controller.ts';
import { READ, rule } from '../../../src/controller/permissions.ts';
import { certificateMetrics } from '../metrics.ts';
import { csrResource } from '../shared.ts';
import { CLEANER_INTERVAL_MS, cleanDecision } from './core.ts';

export const CLEANER_CONTROLLER = 'certificatesigningrequest-cleaner-controller';

/** The one key of the cleaner's queue: a pass over every CSR. */
const PASS = 'pass';

/** CSRs judged between two turns of the event loop: a pass over thousands at once would hold up every controller. */
const PASS_SLICE = 200;

export const cleanerController: ControllerDefinition = {
  name: CLEANER_CONTROLLER,
  aliases: ['csrcleaner'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.certificates,
  workers: 1,
  permissions: (n) => [rule([group(n, 'certificates')], ['certificatesigningrequests'], [...READ, 'delete'])],
  setup(ctx, enqueue) {
    const rt = csrResource(ctx);
    const lister = ctx.informers.informerFor<CertificateSigningRequest>(rt).lister();
    const csrs = ctx.client.resource<CertificateSigningRequest>(rt);
    const metrics = certificateMetrics(ctx.metrics);
    const logger = ctx.logger.child({ controller: CLEANER_CONTROLLER });
    enqueue.add(PASS);
    return {
      async reconcile(_key, signal) {
        const now = new Date();
        let judged = 0;
        for (const csr of lister.list()) {
          if (++judged % PASS_SLICE === 0) await yieldToOthers(undefined, { signal });
          const decision = cleanDecision(csr, now);
          if (!decision.delete) continue;
          const name = csr.metadata.name!;
          try {
            await csrs.delete(undefined, name, { preconditions: { uid: csr.metadata.uid }, signal });
            metrics.cleaned.inc({ reason: decision.reason });
            logger.info({ csr: name, reason: decision.reason }, `cleaned up CSR: ${decision.message}`);
          } catch (err) {
            if (!isNotFound(err)) logger.error({ csr: name, err: (err as Error).message }, 'deleting CSR failed');
          }
        }
        return requeueAfter(CLEANER_INTERVAL_MS);
      },
    };
  },
};
