/**
 * The ClusterRole aggregation controller (`clusterrole-aggregation-controller`, alias
 * `clusterrole-aggregation`): writes the rules of every ClusterRole that has an `aggregationRule`
 * from the roles its selectors match (core.ts). A ClusterRole change queues the aggregated roles
 * whose selectors match it before or after the change, and the changed role itself when it
 * aggregates. The write is a forced server-side apply of the rules under the controller's field
 * manager, falling back to an update where the server has no apply (415), as the reference does.
 *
 * A malformed selector is reported (a Warning event on the role and a log line) and not retried:
 * only a change to the role can fix it, and that queues the role again.
 */

import { selects } from '../../src/api/aggregation.ts';
import { CONTROLLER_ACCOUNTS } from '../../src/api/controller-accounts.ts';
import { group } from '../../src/api/naming.ts';
import type { ClusterRole } from '../../src/api/types/rbac.ts';
import { unwrapTombstone } from '../../src/cache/informer.ts';
import { isNotFound, StatusError } from '../../src/client/errors.ts';
import { type ControllerDefinition, done, TerminalError } from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import { aggregateRules, sameRules } from './core.ts';

export const CLUSTERROLE_AGGREGATION_CONTROLLER = 'clusterrole-aggregation-controller';
const AGGREGATING = 'aggregating';

export const clusterRoleAggregationController: ControllerDefinition = {
  name: CLUSTERROLE_AGGREGATION_CONTROLLER,
  aliases: ['clusterrole-aggregation'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.clusterRoleAggregation,
  eventsWithDaemonCredentials: true,
  workers: 5,
  // Writing a role's rules needs `escalate` where the rules exceed the controller's own.
  permissions: (n) => [
    rule([group(n, 'rbac.authorization')], ['clusterroles'], [...READ, 'update', 'patch', 'escalate']),
  ],
  setup: (ctx, enqueue) => {
    const rt = ctx.registry.resource(group(ctx.naming, 'rbac.authorization'), 'v1', 'clusterroles');
    if (!rt) throw new Error(`${CLUSTERROLE_AGGREGATION_CONTROLLER}: the API has no clusterroles`);
    const client = ctx.client.resource<ClusterRole>(rt);
    const logger = ctx.logger.child({ controller: CLUSTERROLE_AGGREGATION_CONTROLLER });
    const informer = ctx.informers.informerFor<ClusterRole>(rt);
    informer.addIndexer(AGGREGATING, (r) => (r.aggregationRule ? ['true'] : []));
    const roles = informer.lister();

    const enqueueAggregators = (...changed: ClusterRole[]) => {
      for (const c of changed) if (c.aggregationRule) enqueue.add(c.metadata.name ?? '');
      for (const aggregator of roles.byIndex(AGGREGATING, 'true')) {
        if (changed.some((c) => selects(aggregator, c))) enqueue.add(aggregator.metadata.name ?? '');
      }
    };
    informer.addEventHandler({
      add: (r) => enqueueAggregators(r),
      update: (old, r) => enqueueAggregators(old, r),
      delete: (r) => enqueueAggregators(unwrapTombstone(r)),
    });

    return {
      async reconcile(name, signal) {
        const role = roles.get(undefined, name);
        if (!role?.aggregationRule) return done;
        let rules: ReturnType<typeof aggregateRules>;
        try {
          rules = aggregateRules(role, roles.list());
        } catch (err) {
          const message = `invalid aggregationRule: ${(err as Error).message}`;
          ctx.recorder.event(
            { apiVersion: client.apiVersion, kind: 'ClusterRole', ...role },
            'Warning',
            'InvalidAggregationRule',
            'Aggregate',
            message,
          );
          throw new TerminalError(`clusterrole ${name}: ${message}`);
        }
        if (sameRules(role.rules, rules)) return done;
        try {
          await client.apply({ metadata: { name }, rules } as ClusterRole, CLUSTERROLE_AGGREGATION_CONTROLLER, {
            signal,
          });
        } catch (err) {
          if (isNotFound(err)) return done;
          if (!(err instanceof StatusError && err.code === 415)) throw err;
          await client.replace({ apiVersion: client.apiVersion, kind: 'ClusterRole', ...role, rules }, { signal });
        }
        logger.info({ clusterrole: name, rules: rules.length }, 'aggregated rules written');
        return done;
      },
    };
  },
};
