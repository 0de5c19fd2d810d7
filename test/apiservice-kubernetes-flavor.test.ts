/**
 * The kubernetes flavor of the embedded control plane: the same local APIServices and default-role
 * aggregation under the real names (`apiregistration.k8s.io`, `kube-aggregator.kubernetes.io/automanaged`,
 * `rbac.authorization.k8s.io/aggregate-to-view`), and a remote APIService found through
 * `kubernetes.io/service-name` slices. The controller keeps its 30 s resync here, so a prompt re-check
 * after a Service or slice change can only come from the Service → APIServices index.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiServiceAvailabilityController } from '../controllers/apiservice/index.ts';
import {
  type Backend,
  discoveryHandler,
  remoteAPIService,
  servingCertificate,
  startBackend,
  testCa,
} from '../controllers/apiservice/testing.ts';
import { clusterRoleAggregationController } from '../controllers/clusterroleaggregation/index.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { APIService } from '../src/api/types/misc.ts';
import type { ClusterRole } from '../src/api/types/rbac.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type RunningControllers, runControllers } from './support/controllers.ts';
import { eventually } from './support/eventually.ts';

let cluster: TestCluster;
let controllers: RunningControllers;
const backends: Backend[] = [];

beforeAll(async () => {
  cluster = await startTestCluster({ flavor: 'kubernetes' });
  controllers = await runControllers(cluster.client, cluster.cp.registry, [
    apiServiceAvailabilityController,
    clusterRoleAggregationController,
  ]);
}, 60_000);

afterAll(async () => {
  await controllers?.stop();
  await Promise.all(backends.map((b) => b.close()));
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

it('re-checks exactly the APIServices behind a Service when it or its slices change', async () => {
  const ca = await testCa();
  const create = (obj: KubeObject) => cluster.client.kind(obj.kind!).create(obj);
  const apiServices = cluster.client.kind<APIService>('APIService');
  const reason = async (name: string) =>
    (await apiServices.get(undefined, name)).status?.conditions?.find((c) => c.type === 'Available')?.reason;
  const backend = async (name: string) => {
    const b = await startBackend(
      await servingCertificate(ca, `${name}.default.svc`),
      discoveryHandler(`${name}.io`, 'v1'),
    );
    backends.push(b);
    return b;
  };
  const service = (name: string) =>
    create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { namespace: 'default', name },
      spec: { ports: [{ port: 443 }] },
    } as KubeObject);
  const slice = (name: string, port: number) =>
    create({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { namespace: 'default', name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ port }],
      endpoints: [{ addresses: ['127.0.0.1'] }],
    } as KubeObject);
  const register = (name: string) =>
    apiServices.create(
      remoteAPIService(
        'apiregistration.k8s.io/v1',
        `${name}.io`,
        'v1',
        { namespace: 'default', name },
        {
          caBundle: Buffer.from(ca.certPem).toString('base64'),
        },
      ),
    );

  // A bystander behind its own service, available.
  const other = await backend('bystander');
  await service('bystander');
  await slice('bystander', other.port);
  await register('bystander');
  await eventually(async () => (await reason('v1.bystander.io')) === 'Passed');
  // Its own status write re-checks it once more; wait until its probes have stopped arriving.
  let seen = -1;
  await eventually(async () => {
    const settled = other.requests.length === seen;
    seen = other.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    return settled;
  });
  const bystanderProbes = other.requests.length;

  await register('late');
  await eventually(async () => (await reason('v1.late.io')) === 'ServiceNotFound');
  await service('late');
  await eventually(async () => (await reason('v1.late.io')) === 'EndpointsNotFound', 10_000);
  const late = await backend('late');
  await slice('late', late.port);
  await eventually(async () => (await reason('v1.late.io')) === 'Passed', 10_000);
  // The bystander was not probed again for the other service's changes.
  expect(other.requests.length).toBe(bystanderProbes);
});
