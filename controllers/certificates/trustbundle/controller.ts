/**
 * The API server serving ClusterTrustBundle publisher (`<apiserver>-serving-clustertrustbundle-publisher-controller`):
 * keeps exactly one bundle for the serving signer, named after its content, holding the serving CA. The CA
 * comes from `--root-ca-file` or, without it, from the API client's own CA. Unlike the reference (a static
 * provider), a CA file is watched and a change republishes at once.
 */

import { trustBundlePublisherAccount } from '../../../src/api/controller-accounts.ts';
import { type FlavorName, group, naming } from '../../../src/api/naming.ts';
import { apiVersionOf } from '../../../src/api/registry.ts';
import type { ClusterTrustBundle } from '../../../src/api/types/certificates.ts';
import { isNotFound, StatusError } from '../../../src/client/errors.ts';
import { type ControllerDefinition, done, type Reconciler } from '../../../src/controller/controller.ts';
import { READ, rule } from '../../../src/controller/permissions.ts';
import { certificatesConfig } from '../config.ts';
import { certificateMetrics } from '../metrics.ts';
import { caSource, readRootCa, watchCaFile } from '../root-ca.ts';
import { publishPlan } from './core.ts';

/** Named after the API server's component, so each flavor has its own word in it (names.go's `kube-apiserver-...`). */
const publisherName = (flavor: FlavorName) =>
  `${naming(flavor).apiServer}-serving-clustertrustbundle-publisher-controller`;

/** The single key of the publisher's queue. */
const KEY = 'publish';

export const publisherController: ControllerDefinition = {
  name: publisherName('orch'),
  // The other flavor's name selects it too (a configuration is read before discovery picks the flavor).
  aliases: [publisherName('kubernetes')],
  flavorNames: { orch: publisherName('orch'), kubernetes: publisherName('kubernetes') },
  enabledByDefault: true,
  serviceAccount: trustBundlePublisherAccount,
  workers: 1,
  permissions: (n) => [
    rule([group(n, 'certificates')], ['clustertrustbundles'], [...READ, 'create', 'update', 'delete']),
    rule([group(n, 'certificates')], ['signers'], ['attest'], [n.signers.apiServerServing]),
  ],
  setup(ctx, enqueue): Reconciler {
    const n = ctx.naming;
    const logger = ctx.logger.child({ controller: publisherName(n.flavor) });
    const noop: Reconciler = { reconcile: async () => done };
    // Our spec serves ClusterTrustBundle at v1; for the reference's API it is gated (GA and on in 1.37), as there.
    if (n.flavor !== 'orch' && !ctx.features('ClusterTrustBundle')) {
      logger.info('the ClusterTrustBundle feature gate is off: not publishing the serving CA');
      return noop;
    }
    const source = caSource(ctx, certificatesConfig(ctx.config).rootCaFile);
    const ca = readRootCa(source);
    if ('problem' in ca) {
      logger.error({ err: ca.problem }, 'no serving CA: not publishing');
      return noop;
    }
    let bytes = ca.bytes;
    const signer = n.signers.apiServerServing;
    const rt = ctx.registry.byKind('ClusterTrustBundle');
    if (!rt) throw new Error('the registry has no ClusterTrustBundle');
    const informer = ctx.informers.informerFor<ClusterTrustBundle>(rt, { fieldSelector: `spec.signerName=${signer}` });
    const trigger = () => enqueue.add(KEY);
    informer.addEventHandler({ add: trigger, update: trigger, delete: trigger });
    const stopWatch = source?.file
      ? watchCaFile(ctx, source.file, bytes, (next) => {
          bytes = next;
          logger.info({ file: source?.file }, 'the serving CA changed: republishing');
          trigger();
        })
      : undefined;
    trigger();
    const bundles = ctx.client.resource<ClusterTrustBundle>(rt);
    const metrics = certificateMetrics(ctx.metrics);
    const lister = informer.lister();

    return {
      async reconcile(_key, signal) {
        const started = performance.now();
        let code = '200';
        try {
          const plan = publishPlan(signer, bytes, lister.list());
          if (plan.create) {
            await bundles.create({ apiVersion: apiVersionOf(rt), kind: rt.kind, ...plan.create }, { signal });
            logger.info({ name: plan.create.metadata.name }, 'serving CA published');
          } else if (plan.update) {
            await bundles.replace(plan.update, { signal });
            logger.info({ name: plan.update.metadata.name }, 'serving CA published');
          }
          let lastError: unknown;
          for (const name of plan.delete) {
            try {
              await bundles.delete(undefined, name, { signal });
            } catch (err) {
              if (!isNotFound(err)) lastError = err;
            }
          }
          if (lastError) throw lastError;
          return done;
        } catch (err) {
          code = err instanceof StatusError ? String(err.code) : '500';
          throw err;
        } finally {
          metrics.publisherSyncs.inc({ code });
          metrics.publisherSyncDuration.observe({ code }, (performance.now() - started) / 1000);
        }
      },
      stop() {
        stopWatch?.();
      },
    };
  },
};
