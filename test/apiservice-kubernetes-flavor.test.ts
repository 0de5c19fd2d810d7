/**
 * The kubernetes flavor of the embedded control plane: the same local APIServices and default-role
 * aggregation under the real names (`apiregistration.k8s.io`, `kube-aggregator.kubernetes.io/automanaged`,
 * `rbac.authorization.k8s.io/aggregate-to-view`).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiServiceAvailabilityController } from '../controllers/apiservice/index.ts';
import { clusterRoleAggregationController } from '../controllers/clusterroleaggregation/index.ts';
import type { APIService } from '../src/api/types/misc.ts';
import type { ClusterRole } from '../src/api/types/rbac.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type RunningControllers, runControllers } from './support/controllers.ts';
import { eventually } from './support/eventually.ts';

let cluster: TestCluster;
let controllers: RunningControllers;

beforeAll(async () => {
  cluster = await startTestCluster({ flavor: 'kubernetes' });
  controllers = await runControllers(cluster.client, cluster.cp.registry, [
    apiServiceAvailabilityController,
    clusterRoleAggregationController,
  ]);
}, 60_000);

afterAll(async () => {
  await controllers?.stop();
  await cluster?.stop();
});

it('registers the local APIServices under the real names and marks them available', async () => {
  const apiServices = cluster.client.kind<APIService>('APIService');
  expect(apiServices.rt.group).toBe('apiregistration.k8s.io');
  const rbac = await eventually(async () => {
    const s = await apiServices.get(undefined, 'v1.rbac.authorization.k8s.io');
    return s.status?.conditions?.some((c) => c.type === 'Available' && c.reason === 'Local') && s;
  });
  expect(rbac.metadata.labels).toEqual({ 'kube-aggregator.kubernetes.io/automanaged': 'true' });
  expect(rbac.spec).toMatchObject({ groupPriorityMinimum: 17000, versionPriority: 15 });
});

it('aggregates view from rbac.authorization.k8s.io/aggregate-to-view', async () => {
  const roles = cluster.client.kind<ClusterRole>('ClusterRole');
  const view = await roles.get(undefined, 'view');
  expect(view.aggregationRule?.clusterRoleSelectors).toEqual([
    { matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
  ]);
  expect(view.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit']).toBe('true');
  await eventually(async () =>
    (await roles.get(undefined, 'view')).rules?.some((r) => r.resources?.includes('endpointslices')),
  );
});
