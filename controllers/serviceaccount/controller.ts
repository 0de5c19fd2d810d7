/**
 * The service account controller (`serviceaccount-controller`, alias `serviceaccount`): every Active namespace has
 * a `default` ServiceAccount, created when the namespace appears and again whenever it is deleted, as the
 * reference's. It only ever creates, and "already exists" counts as done, so it runs beside a
 * kube-controller-manager doing the same without either undoing the other.
 */
import { CONTROLLER_ACCOUNTS } from '../../src/api/controller-accounts.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { DEFAULT_SERVICE_ACCOUNT as NAME, needsDefaultServiceAccount } from '../../src/api/namespaces.ts';
import type { Namespace } from '../../src/api/types/core.ts';
import { unwrapTombstone } from '../../src/cache/informer.ts';
import { isAlreadyExists, isNamespaceTerminating } from '../../src/client/errors.ts';
import { type ControllerDefinition, done, requiredResource } from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';

export const SERVICEACCOUNT_CONTROLLER = 'serviceaccount-controller';

export const serviceAccountController: ControllerDefinition = {
  name: SERVICEACCOUNT_CONTROLLER,
  aliases: ['serviceaccount'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.serviceAccount,
  workers: 1,
  permissions: () => [rule([''], ['namespaces'], READ), rule([''], ['serviceaccounts'], [...READ, 'create'])],
  setup: (ctx, enqueue) => {
    const nsType = requiredResource(ctx, 'Namespace', SERVICEACCOUNT_CONTROLLER);
    const saType = requiredResource(ctx, 'ServiceAccount', SERVICEACCOUNT_CONTROLLER);
    const logger = ctx.logger.child({ controller: SERVICEACCOUNT_CONTROLLER });
    const namespaces = ctx.informers.informerFor<Namespace>(nsType);
    // Only `default` is cached: a cluster's other service accounts are none of this controller's business.
    const accounts = ctx.informers.informerFor(saType, { fieldSelector: `metadata.name=${NAME}` });
    const byName = (o: KubeObject) => enqueue.add(o.metadata.name ?? '');
    namespaces.addEventHandler({ add: byName, update: (_old, ns) => byName(ns) });
    accounts.addEventHandler({ delete: (sa) => enqueue.add(unwrapTombstone(sa).metadata.namespace ?? '') });
    const nsLister = namespaces.lister();
    const saLister = accounts.lister();
    const client = ctx.client.resource(saType);

    return {
      async reconcile(namespace, signal) {
        const has = Boolean(saLister.get(namespace, NAME));
        if (!needsDefaultServiceAccount(nsLister.get(undefined, namespace), has)) return done;
        try {
          await client.create(
            { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace } },
            { signal },
          );
          logger.info({ namespace, serviceaccount: NAME }, 'service account created');
        } catch (err) {
          if (!isAlreadyExists(err) && !isNamespaceTerminating(err)) throw err;
        }
        return done;
      },
    };
  },
};
