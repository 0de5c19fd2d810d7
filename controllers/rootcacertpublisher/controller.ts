/**
 * The root CA publisher (`root-ca-certificate-publisher-controller`, alias `root-ca-cert-publisher`): every Active
 * namespace has the root CA ConfigMap (`kube-root-ca.crt` in the kubernetes flavor) holding the cluster's root CA
 * as `ca.crt`, described by an annotation; it is created, restored when its data changes and re-created when
 * deleted, as the reference's. The CA is `--root-ca-file`, else the CA the daemon's API client trusts, the
 * reference's default (controllers/certificates/root-ca.ts); a CA file is watched and a change republishes.
 *
 * Beside a kube-controller-manager publishing the same bundle both find nothing to change. Should it publish
 * another bundle, each would undo the other: a namespace restored again soon after a restore waits, twice as long
 * each time (core.ts), and the tussle is logged, so the two never rewrite it as fast as the server allows.
 */
import { CONTROLLER_ACCOUNTS } from '../../src/api/controller-accounts.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import type { ConfigMap, Namespace } from '../../src/api/types/core.ts';
import { unwrapTombstone } from '../../src/cache/informer.ts';
import { isAlreadyExists, isNamespaceTerminating, isNotFound } from '../../src/client/errors.ts';
import {
  type ControllerDefinition,
  configuredNowMs,
  done,
  type Reconciler,
  requeueAfter,
  requiredResource,
} from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import { certificatesConfig } from '../certificates/config.ts';
import { caSource, readRootCa, watchCaFile } from '../certificates/root-ca.ts';
import { publishPlan, RESTORE_QUIET_MS, type Restores, restored, restoreWaitMs } from './core.ts';

export const ROOT_CA_PUBLISHER_CONTROLLER = 'root-ca-certificate-publisher-controller';

export const rootCaPublisherController: ControllerDefinition = {
  name: ROOT_CA_PUBLISHER_CONTROLLER,
  aliases: ['root-ca-cert-publisher'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.rootCaPublisher,
  workers: 1,
  permissions: () => [rule([''], ['namespaces'], READ), rule([''], ['configmaps'], [...READ, 'create', 'update'])],
  setup(ctx, enqueue): Reconciler {
    const n = ctx.naming;
    const logger = ctx.logger.child({ controller: ROOT_CA_PUBLISHER_CONTROLLER });
    const source = caSource(ctx, certificatesConfig(ctx.config).rootCaFile);
    const ca = readRootCa(source);
    if ('problem' in ca) {
      logger.error({ err: ca.problem }, 'no root CA: not publishing');
      return { reconcile: async () => done };
    }
    let bytes = ca.bytes;
    const nsType = requiredResource(ctx, 'Namespace', ROOT_CA_PUBLISHER_CONTROLLER);
    const cmType = requiredResource(ctx, 'ConfigMap', ROOT_CA_PUBLISHER_CONTROLLER);
    const namespaces = ctx.informers.informerFor<Namespace>(nsType);
    // Only the published ConfigMaps are cached, not every ConfigMap of the cluster.
    const configMaps = ctx.informers.informerFor<ConfigMap>(cmType, {
      fieldSelector: `metadata.name=${n.rootCAConfigMap}`,
    });
    const byName = (o: KubeObject) => enqueue.add(o.metadata.name ?? '');
    const byNamespace = (o: KubeObject) => enqueue.add(o.metadata.namespace ?? '');
    // A deleted namespace is looked at once more, to forget its restores.
    namespaces.addEventHandler({
      add: byName,
      update: (_old, ns) => byName(ns),
      delete: (ns) => byName(unwrapTombstone(ns)),
    });
    configMaps.addEventHandler({
      update: (_old, cm) => byNamespace(cm),
      delete: (cm) => byNamespace(unwrapTombstone(cm)),
    });
    const nsLister = namespaces.lister();
    const cmLister = configMaps.lister();
    const stopWatch = source?.file
      ? watchCaFile(ctx, source.file, bytes, (next) => {
          bytes = next;
          logger.info({ file: source.file }, 'the root CA changed: republishing');
          for (const ns of nsLister.list()) byName(ns);
        })
      : undefined;
    const client = ctx.client.resource<ConfigMap>(cmType);
    const now = configuredNowMs(ctx);
    // Per namespace that exists: bounded by the namespaces, dropped when one goes or is left alone long enough.
    const restores = new Map<string, Restores>();

    return {
      async reconcile(namespace, signal) {
        const ns = nsLister.get(undefined, namespace);
        if (!ns) restores.delete(namespace);
        const existing = cmLister.get(namespace, n.rootCAConfigMap);
        const plan = publishPlan(n, ns, existing, bytes);
        try {
          if (plan.create) {
            await client.create(plan.create, { signal });
            logger.info({ namespace, configmap: n.rootCAConfigMap }, 'root CA published');
          } else if (plan.update) {
            const previous = restores.get(namespace);
            const waitMs = restoreWaitMs(previous, now());
            if (waitMs > 0) return requeueAfter(waitMs);
            await client.replace(plan.update, { signal });
            const record = restored(previous, now());
            restores.set(namespace, record);
            const log = { namespace, configmap: n.rootCAConfigMap, restores: record.count };
            if (record.count > 1) {
              logger.warn(
                log,
                'root CA restored again soon after the last restore: does another writer publish another CA?',
              );
            } else logger.info(log, 'root CA restored');
          } else {
            const previous = restores.get(namespace);
            if (previous && now() - previous.lastMs >= RESTORE_QUIET_MS) restores.delete(namespace);
          }
        } catch (err) {
          // Created meanwhile (by another publisher), deleted meanwhile (its delete event queues the namespace
          // again), or the namespace going away: nothing to retry.
          if (isAlreadyExists(err) || isNotFound(err) || isNamespaceTerminating(err)) return done;
          throw err;
        }
        return done;
      },
      stop: () => stopWatch?.(),
    };
  },
};
