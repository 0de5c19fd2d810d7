/**
 * PodDisruptionBudgets of every mode over a StatefulSet and over bare pods while pods turn Ready, unready and are
 * deleted, and the evictions the API server answers from the status the controller wrote.
 */

import { expectStatus } from '../client.ts';
import type { Scenario } from '../scenario.ts';
import {
  createPdb,
  createPod,
  createSet,
  deletePod,
  evict,
  IMAGE,
  patchSet,
  pdbStatus,
  setReady,
  settledSet,
} from './workloads.ts';

export const pdbScenarios: Scenario[] = [
  {
    name: 'pdb-statefulset',
    quick: true,
    async run(ctx) {
      // One budget per set: KCM re-syncs only one of the budgets a changed pod matches (chosen at random).
      const budgets: [string, object][] = [
        ['min-int', { minAvailable: 2 }],
        ['min-pct', { minAvailable: '50%' }],
        ['max-int', { maxUnavailable: 1 }],
        ['max-pct', { maxUnavailable: '34%' }],
      ];
      for (const [name] of budgets) await createSet(ctx, name, { replicas: 3, parallel: true });
      // Budgets made once the pods exist, so whether one first saw no pods is not a race; one that matches none.
      for (const [name] of budgets) await settledSet(ctx, name, 3);
      for (const [name, spec] of budgets) await createPdb(ctx, name, name, spec);
      await createPdb(ctx, 'matches-nothing', 'nothing', { minAvailable: 1 });
      for (const [name] of budgets) await pdbStatus(ctx, name, 'sees 3 healthy', (s) => s.currentHealthy === 3);
      await ctx.checkpoint('ready');
      // Each budget allows the first eviction; the second finds the first in its disruptedPods.
      for (const [name] of budgets) {
        await evict(ctx, `evict ${name}-0`, `${name}-0`);
        await evict(ctx, `evict ${name}-1 right after`, `${name}-1`);
      }
      await ctx.checkpoint('evicted');
      for (const [name] of budgets) {
        await settledSet(ctx, name, 3);
        await pdbStatus(ctx, name, 'sees 3 healthy again', (s) => s.currentHealthy === 3);
      }
      // A percentage follows the set's scale.
      await patchSet(ctx, 'min-pct', { spec: { replicas: 4 } });
      await settledSet(ctx, 'min-pct', 4);
      await pdbStatus(ctx, 'min-pct', 'expects 4', (s) => s.expectedPods === 4 && s.currentHealthy === 4);
    },
  },
  {
    name: 'pdb-bare-pods',
    async run(ctx) {
      // One budget per group of pods: KCM re-syncs only one of the budgets a changed pod matches.
      const groups: [string, number][] = [
        ['a', 3],
        ['b', 2],
        ['c', 2],
        ['d', 2],
        ['e', 2],
      ];
      for (const [group, count] of groups) {
        for (let i = 0; i < count; i++) await createPod(ctx, `${group}-${i}`, { app: group });
      }
      await createPdb(ctx, 'a-min', 'a', { minAvailable: 2 });
      // Without a controller there is no scale to take a percentage or maxUnavailable of.
      await createPdb(ctx, 'b-max', 'b', { maxUnavailable: 1 });
      await createPdb(ctx, 'e-pct', 'e', { minAvailable: '50%' });
      await createPdb(ctx, 'c-always', 'c', { minAvailable: 2, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
      await createPdb(ctx, 'd-if-healthy', 'd', { minAvailable: 2, unhealthyPodEvictionPolicy: 'IfHealthyBudget' });
      await ctx.checkpoint('unready');
      for (const [group, count] of groups) {
        for (let i = 0; i < count; i++) await setReady(ctx, `${group}-${i}`, true);
      }
      await pdbStatus(ctx, 'a-min', 'allows one', (s) => s.disruptionsAllowed === 1);
      await ctx.checkpoint('ready');
      await setReady(ctx, 'a-2', false);
      await setReady(ctx, 'c-1', false);
      await setReady(ctx, 'd-1', false);
      await pdbStatus(ctx, 'a-min', 'allows none', (s) => s.currentHealthy === 2);
      await pdbStatus(ctx, 'd-if-healthy', 'sees d-1 unready', (s) => s.currentHealthy === 1);
      await ctx.checkpoint('some-unready');
      await evict(ctx, 'evict a-0 at the budget', 'a-0');
      await evict(ctx, 'evict unready c-1 (AlwaysAllow)', 'c-1');
      await evict(ctx, 'evict unready d-1 (IfHealthyBudget)', 'd-1');
      await setReady(ctx, 'a-2', true);
      await pdbStatus(ctx, 'a-min', 'allows one again', (s) => s.disruptionsAllowed === 1);
      await evict(ctx, 'evict a-0 within the budget', 'a-0');
      await ctx.checkpoint('evicted');
      await deletePod(ctx, 'a-1');
      await deletePod(ctx, 'b-0');
      await pdbStatus(ctx, 'a-min', 'counts two fewer', (s) => s.expectedPods === 1);
    },
  },
  {
    name: 'pdb-deployment',
    async run(ctx) {
      // Pods of a ReplicaSet of a Deployment: the budget's expected count is the Deployment's scale.
      const deployment = {
        metadata: { name: 'api' },
        spec: {
          replicas: 4,
          selector: { matchLabels: { app: 'api' } },
          template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: IMAGE }] } },
        },
      };
      const path = `/apis/apps/v1/namespaces/${ctx.ns}/deployments`;
      expectStatus(await ctx.admin('POST', path, deployment), 'creating Deployment api', 201);
      await ctx.waitFor('api available', async () => {
        const { json } = await ctx.admin('GET', `${path}/api`);
        return json?.status?.availableReplicas === 4 ? true : undefined;
      });
      await createPdb(ctx, 'api-max-pct', 'api', { maxUnavailable: '25%' });
      await pdbStatus(ctx, 'api-max-pct', 'allows one', (s) => s.disruptionsAllowed === 1);
      await ctx.checkpoint('ready');
      const scaled = await ctx.admin('PATCH', `${path}/api`, { spec: { replicas: 8 } }, 'application/merge-patch+json');
      expectStatus(scaled, 'scaling api', 200);
      await pdbStatus(ctx, 'api-max-pct', 'expects 8', (s) => s.expectedPods === 8 && s.currentHealthy === 8);
    },
  },
];
