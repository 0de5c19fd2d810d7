/** ClusterRoles aggregated by label, un-labelled, changed and deleted under an aggregating role. */
import { expectStatus } from '../client.ts';
import type { Scenario, ScenarioContext } from '../scenario.ts';

const ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';

async function createRole(ctx: ScenarioContext, name: string, body: object): Promise<void> {
  expectStatus(await ctx.admin('POST', ROLES, { metadata: { name: `${ctx.prefix}-${name}` }, ...body }), name, 201);
}

const ruleCount = (ctx: ScenarioContext, count: number) =>
  ctx.waitFor(`aggregate has ${count} rules`, async () => {
    const { json } = await ctx.admin('GET', `${ROLES}/${ctx.prefix}-aggregate`);
    return (json?.rules ?? []).length === count ? true : undefined;
  });

export const clusterRoleScenarios: Scenario[] = [
  {
    name: 'clusterrole-aggregation',
    quick: true,
    async run(ctx) {
      const label = { 'diff-kcm/aggregate-to': ctx.prefix };
      await createRole(ctx, 'aggregate', { aggregationRule: { clusterRoleSelectors: [{ matchLabels: label }] } });
      // Two selectors, one by expression: a role matching either is aggregated, once.
      await createRole(ctx, 'either', {
        aggregationRule: {
          clusterRoleSelectors: [
            { matchLabels: label },
            { matchExpressions: [{ key: 'diff-kcm/extra', operator: 'Exists' }] },
          ],
        },
      });
      await createRole(ctx, 'extra', {
        metadata: { name: `${ctx.prefix}-extra`, labels: { 'diff-kcm/extra': 'yes', ...label } },
        rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
      });
      await createRole(ctx, 'matches-nothing', {
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'diff-kcm/aggregate-to': 'nobody' } }] },
      });
      await createRole(ctx, 'one', {
        metadata: { name: `${ctx.prefix}-one`, labels: label },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
      });
      await createRole(ctx, 'two', {
        metadata: { name: `${ctx.prefix}-two`, labels: label },
        rules: [
          { apiGroups: [''], resources: ['services'], verbs: ['list'] },
          // The same rule as one's: the aggregate keeps it once.
          { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        ],
      });
      await ruleCount(ctx, 3);
      await ctx.checkpoint('aggregated');
      const unlabel = { metadata: { labels: { 'diff-kcm/aggregate-to': null } } };
      const patched = await ctx.admin('PATCH', `${ROLES}/${ctx.prefix}-one`, unlabel, 'application/merge-patch+json');
      expectStatus(patched, 'un-labelling one', 200);
      await ctx.checkpoint('unlabelled');
      const rule = { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['watch'] };
      const two = expectStatus(await ctx.admin('GET', `${ROLES}/${ctx.prefix}-two`), 'reading two', 200);
      two.rules.push(rule);
      expectStatus(await ctx.admin('PUT', `${ROLES}/${ctx.prefix}-two`, two), 'adding a rule to two', 200);
      await ruleCount(ctx, 4);
      await ctx.checkpoint('rule-added');
      expectStatus(await ctx.admin('DELETE', `${ROLES}/${ctx.prefix}-two`), 'deleting two', 200);
      await ruleCount(ctx, 1);
    },
  },
];
