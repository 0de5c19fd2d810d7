/**
 * APIServices and ClusterRole aggregation end to end on the embedded control plane: the local
 * APIServices it registers, a user's aggregated API served by a real HTTPS server on 127.0.0.1
 * (turning available, unavailable when stopped, rejected with a wrong caBundle, reached through the
 * proxy with kubectl), discovery in priority order, the bad inputs of the decision table, and a
 * role labelled to aggregate into `view` changing what a user bound to `view` may do.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiServiceAvailabilityController } from '../controllers/apiservice/index.ts';
import {
  type Backend,
  discoveryHandler,
  type Handler,
  remoteAPIService,
  servingCertificate,
  startBackend,
  testCa,
} from '../controllers/apiservice/testing.ts';
import { clusterRoleAggregationController } from '../controllers/clusterroleaggregation/index.ts';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import type { APIService } from '../src/api/types/misc.ts';
import type { CertificateWithKey } from '../src/pki/certs.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type RunningControllers, runControllers } from './support/controllers.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl, parseTable } from './support/kubectl.ts';

const NS = 'aggregated';
const GROUP = 'widgets.example.com';

let cluster: TestCluster;
let controllers: RunningControllers;
let kubectl: Kubectl;
let cacheDir: string;
let ca: CertificateWithKey;
const backends: Backend[] = [];

const n = () => cluster.cp.registry.naming;
const apiregistration = () => `${group(n(), 'apiregistration')}/v1`;
const apiServices = () => cluster.client.kind<APIService>('APIService');
const create = (obj: KubeObject) => cluster.client.kind(obj.kind!).create(obj);

beforeAll(async () => {
  cluster = await startTestCluster();
  cacheDir = await mkdtemp(join(tmpdir(), 'kubectl-cache-'));
  kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
  controllers = await runControllers(
    cluster.client,
    cluster.cp.registry,
    [apiServiceAvailabilityController, clusterRoleAggregationController],
    { config: { apiservice: { resyncMs: 1_000, probe: { timeoutMs: 1_000, watchdogMs: 1_500 } } } },
  );
  ca = await testCa();
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
}, 60_000);

afterAll(async () => {
  await controllers?.stop();
  await Promise.all(backends.map((b) => b.close()));
  await cluster?.stop();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

/** A backend for `<service>.<NS>.svc`, its Service (port 443 named https) and an EndpointSlice for it. */
async function backendService(service: string, handler: Handler, slice: Partial<KubeObject> = {}): Promise<Backend> {
  const backend = await startBackend(await servingCertificate(ca, `${service}.${NS}.svc`), handler);
  backends.push(backend);
  await create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: NS, name: service },
    spec: { type: 'ClusterIP', ports: [{ name: 'https', port: 443, targetPort: backend.port }] },
  } as KubeObject);
  await create({
    apiVersion: `${group(n(), 'discovery')}/v1`,
    kind: 'EndpointSlice',
    metadata: { namespace: NS, name: `${service}-1`, labels: { [n().labels.serviceName]: service } },
    addressType: 'IPv4',
    ports: [{ name: 'https', port: backend.port, protocol: 'TCP' }],
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    ...slice,
  } as KubeObject);
  return backend;
}

const caBundle = (pem = ca.certPem) => Buffer.from(pem).toString('base64');

async function register(
  version: string,
  service: string,
  spec: Partial<NonNullable<APIService['spec']>> = {},
  g = GROUP,
): Promise<string> {
  const s = remoteAPIService(
    apiregistration(),
    g,
    version,
    { namespace: NS, name: service },
    { caBundle: caBundle(), ...spec },
  );
  await apiServices().create(s);
  return s.metadata.name!;
}

/** A discovery document fetched with a bearer token as an admin, with the given Accept header. */
async function discovery(path: string, accept: string): Promise<unknown> {
  cluster.cp.tokens.add('discovery-test-token', { username: 'admin', groups: ['system:masters'] });
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpsRequest(
      `${cluster.cp.url}${path}`,
      { ca: cluster.cp.caPem, headers: { Authorization: 'Bearer discovery-test-token', Accept: accept } },
      (r) => {
        let body = '';
        r.on('data', (c) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
  expect(res.status).toBe(200);
  return JSON.parse(res.body);
}

/** Waits for the Available condition to have this status and reason; returns it. */
function availability(name: string, status: string, reason: string, ms = 15_000) {
  let last: unknown;
  return eventually(
    async () => {
      const c = (await apiServices().get(undefined, name)).status?.conditions?.find((x) => x.type === 'Available');
      last = c;
      return c?.status === status && c.reason === reason ? c : undefined;
    },
    ms,
    () => `${name} Available=${status}/${reason} (last: ${JSON.stringify(last)})`,
  );
}

describe('local APIServices', () => {
  it('registers one per served group version with the reference priorities, marked Local', async () => {
    const apps = await apiServices().get(undefined, 'v1.apps');
    expect(apps.spec).toMatchObject({ group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
    expect(apps.metadata.labels?.[n().labels.autoManaged]).toBe('true');
    const core = await apiServices().get(undefined, 'v1.');
    expect(core.spec).toMatchObject({ group: '', groupPriorityMinimum: 18000, versionPriority: 1 });
    await availability('v1.apps', 'True', 'Local');
  });

  it('restores a local APIService that is changed or deleted', async () => {
    const name = `v1.${group(n(), 'node')}`;
    const s = await apiServices().get(undefined, name);
    await apiServices().replace({ ...s, spec: { ...s.spec!, groupPriorityMinimum: 1 } });
    await eventually(async () => (await apiServices().get(undefined, name)).spec?.groupPriorityMinimum === 16300);
    await apiServices().delete(undefined, name);
    await eventually(() => apiServices().get(undefined, name));
  });
});

describe('an aggregated API on a real HTTPS server', () => {
  let backend: Backend;
  let name: string;

  beforeAll(async () => {
    backend = await backendService('widgets', discoveryHandler(GROUP, 'v1'));
    name = await register('v1', 'widgets', { groupPriorityMinimum: 20000, versionPriority: 20 });
  });

  it('turns Available=True after the probe passes', async () => {
    const c = await availability(name, 'True', 'Passed');
    expect(c.message).toBe('all checks passed');
    expect(backend.requests).toContain(`/apis/${GROUP}/v1`);
  });

  it.skipIf(!hasKubectl)('is reached through the proxy with kubectl get --raw, as the calling user', async () => {
    const doc = JSON.parse(await kubectl.ok(['get', '--raw', `/apis/${GROUP}/v1`]));
    expect(doc).toMatchObject({ kind: 'APIResourceList', groupVersion: `${GROUP}/v1` });
    const echo = JSON.parse(await kubectl.ok(['get', '--raw', `/apis/${GROUP}/v1/namespaces/x/widgets?limit=1`]));
    expect(echo).toEqual({ kind: 'Echo', path: `/apis/${GROUP}/v1/namespaces/x/widgets?limit=1`, user: 'admin' });
  });

  it.skipIf(!hasKubectl)('kubectl get apiservices shows the service and the condition', async () => {
    const table = parseTable(await kubectl.ok(['get', 'apiservices']));
    expect(table.columns).toEqual(['NAME', 'SERVICE', 'AVAILABLE', 'AGE']);
    expect(table.rows.find((r) => r.NAME === name)).toMatchObject({ SERVICE: `${NS}/widgets`, AVAILABLE: 'True' });
    expect(table.rows.find((r) => r.NAME === 'v1.apps')).toMatchObject({ SERVICE: 'Local', AVAILABLE: 'True' });
  });

  it('orders discovery by groupPriorityMinimum, then versionPriority and version string', async () => {
    await register('v1beta1', 'widgets', { groupPriorityMinimum: 100, versionPriority: 20 });
    await register('v2alpha1', 'widgets', { groupPriorityMinimum: 100, versionPriority: 20 });
    const list = (await cluster.client.request<any>('GET', '/apis')).body;
    const groups: string[] = list.groups.map((g: { name: string }) => g.name);
    expect(groups[0]).toBe(GROUP);
    expect(groups.slice(1, 3)).toEqual([group(n(), 'apiregistration'), 'apps']);
    expect(list.groups[0].versions.map((v: { version: string }) => v.version)).toEqual(['v1', 'v1beta1', 'v2alpha1']);
    expect(list.groups[0].preferredVersion.version).toBe('v1');
  });

  it.skipIf(!hasKubectl)('kubectl sees the same order in both discovery forms', async () => {
    // `kubectl api-versions` and `api-resources` sort by name on the client: the order is the server's documents'.
    const versions = (await kubectl.ok(['api-versions'])).trim().split('\n');
    expect(versions).toEqual(expect.arrayContaining([`${GROUP}/v1`, `${GROUP}/v1beta1`, 'apps/v1', 'v1']));
    const legacy = JSON.parse(await kubectl.ok(['get', '--raw', '/apis'])) as { groups: { name: string }[] };
    const aggregated = (await discovery(
      '/apis',
      `application/json;g=${n().protocol.discoveryGroup};v=v2;as=APIGroupDiscoveryList`,
    )) as {
      items: { metadata: { name: string }; versions: { version: string }[] }[];
    };
    expect(aggregated.items.map((g) => g.metadata.name)).toEqual(legacy.groups.map((g) => g.name));
    expect(aggregated.items[0].versions.map((v) => v.version)).toEqual(['v1', 'v1beta1', 'v2alpha1']);
    const position = (name: string) => legacy.groups.findIndex((g) => g.name === name);
    // 18000 (by name), 17800, 17750, ... 16200: the reference's priorities, not alphabetical.
    const expected = ['apiregistration', 'apps', 'events', 'authentication', 'authorization', 'certificates']
      .map((p) => (p === 'apps' ? p : group(n(), p)))
      .concat(
        [
          'networking',
          'policy',
          'rbac.authorization',
          'admissionregistration',
          'coordination',
          'node',
          'discovery',
        ].map((p) => (p === 'policy' ? p : group(n(), p))),
      );
    expect(expected.map(position)).toEqual([...expected.map(position)].sort((a, b) => a - b));
  });

  it('turns False/FailedDiscoveryCheck when the server stops; the proxy answers 503 with the message', async () => {
    await backend.close();
    const c = await availability(name, 'False', 'FailedDiscoveryCheck');
    expect(c.message).toMatch(
      new RegExp(
        `^failing or missing response from https://127\\.0\\.0\\.1:${backend.port}/apis/${GROUP}/v1: .*ECONNREFUSED`,
      ),
    );
    const answer = await cluster.client.request('GET', `/apis/${GROUP}/v1`).catch((e) => e);
    expect(answer).toMatchObject({ code: 503, reason: 'ServiceUnavailable', message: c.message });
    const metrics = await controllers.metrics.getSingleMetricAsString('aggregator_unavailable_apiservice');
    expect(metrics).toContain(`aggregator_unavailable_apiservice{name="${name}"} 1`);
    const total = await controllers.metrics.getSingleMetricAsString('aggregator_unavailable_apiservice_total');
    expect(total).toContain(`aggregator_unavailable_apiservice_total{name="${name}",reason="FailedDiscoveryCheck"} 1`);
  });
});

describe('bad input: each gives its reason and message, and the controller keeps working', () => {
  it('a wrong caBundle gives a clear x509 message', async () => {
    await backendService('wrongca', discoveryHandler('wrongca.example.com', 'v1'));
    const other = await testCa();
    const name = await register('v1', 'wrongca', { caBundle: caBundle(other.certPem) }, 'wrongca.example.com');
    const c = await availability(name, 'False', 'FailedDiscoveryCheck');
    expect(c.message).toContain('x509: certificate signed by unknown authority (verified against spec.caBundle)');
  });

  it('a Service without the APIService port', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { namespace: NS, name: 'noport' },
      spec: { ports: [{ port: 80 }] },
    } as KubeObject);
    const name = await register('v1', 'noport', {}, 'noport.example.com');
    const c = await availability(name, 'False', 'ServicePortError');
    expect(c.message).toBe(`service/noport in "${NS}" is not listening on port 443`);
  });

  it('a missing Service, then slices with no ready endpoint', async () => {
    const name = await register('v1', 'unready', {}, 'unready.example.com');
    expect((await availability(name, 'False', 'ServiceNotFound')).message).toBe(
      `service/unready in "${NS}" is not present`,
    );
    await backendService('unready', discoveryHandler('unready.example.com', 'v1'), {
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: false } }],
    } as Partial<KubeObject>);
    const c = await availability(name, 'False', 'MissingEndpoints');
    expect(c.message).toBe(`endpointslices for service/unready in "${NS}" have no addresses with port name "https"`);
  });

  it.each<[string, Handler, RegExp]>([
    [
      'redirects',
      (_q, r) => r.writeHead(302, { Location: 'https://example.invalid/' }).end(),
      /bad status from .*: 302$/,
    ],
    ['hangs', () => {}, /^timed out waiting for|Client\.Timeout exceeded/],
    [
      'answers garbage',
      (_q, r) => r.socket?.end('HTTP/9 what\r\n\r\n'),
      /^failing or missing response from .*(Parse Error|socket hang up)/,
    ],
  ])('a backend that %s', async (label, handler, message) => {
    const service = label.split(' ')[0];
    await backendService(service, handler);
    const name = await register('v1', service, {}, `${service}.example.com`);
    const c = await availability(name, 'False', 'FailedDiscoveryCheck');
    expect(c.message).toMatch(message);
  });

  it('still checks new APIServices after all that', async () => {
    await backendService('healthy', discoveryHandler('healthy.example.com', 'v1'));
    const name = await register('v1', 'healthy', {}, 'healthy.example.com');
    await availability(name, 'True', 'Passed');
    expect(controllers.manager.hasSynced()).toBe(true);
  });
});

describe('ClusterRole aggregation into the default roles', () => {
  const rbac = () => group(n(), 'rbac.authorization');
  const canGetWidgets = async () => {
    const review = await cluster.client.kind('SubjectAccessReview').create({
      apiVersion: `${group(n(), 'authorization')}/v1`,
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: 'alice',
        groups: ['system:authenticated'],
        resourceAttributes: { verb: 'get', group: GROUP, resource: 'widgets', namespace: 'default' },
      },
    } as KubeObject);
    return (review as { status?: { allowed?: boolean } }).status?.allowed === true;
  };

  beforeAll(async () => {
    await create({
      apiVersion: `${rbac()}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-view' },
      roleRef: { apiGroup: rbac(), kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'User', apiGroup: rbac(), name: 'alice' }],
    } as KubeObject);
  });

  it('view, edit and admin are filled from the system:aggregate-to-* roles', async () => {
    const roles = cluster.client.kind('ClusterRole');
    const rulesOf = async (name: string) =>
      ((await roles.get(undefined, name)) as { rules?: { resources?: string[] }[] }).rules ?? [];
    await eventually(async () => (await rulesOf('view')).some((r) => r.resources?.includes('pods')));
    await eventually(async () => (await rulesOf('edit')).some((r) => r.resources?.includes('secrets')));
    const admin = await eventually(async () => {
      const rules = await rulesOf('admin');
      return (
        rules.some((r) => r.resources?.includes('rolebindings')) &&
        rules.some((r) => r.resources?.includes('pods')) &&
        rules
      );
    });
    expect(admin.length).toBeGreaterThan(3);
  });

  it('a role labelled aggregate-to-view grants a user bound to view, and removing the label takes it back', async () => {
    expect(await canGetWidgets()).toBe(false);
    const widgetViewer = await create({
      apiVersion: `${rbac()}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'widget-viewer', labels: { [n().labels.aggregateToView]: 'true' } },
      rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [GROUP], resources: ['widgets'] }],
    } as KubeObject);
    await eventually(canGetWidgets, 15_000, 'alice may get widgets');
    // edit and admin pick it up too, through view and edit
    await eventually(async () => {
      const admin = (await cluster.client.kind('ClusterRole').get(undefined, 'admin')) as {
        rules?: { apiGroups?: string[] }[];
      };
      return admin.rules?.some((r) => r.apiGroups?.includes(GROUP));
    });
    const labels = { ...widgetViewer.metadata.labels };
    delete labels[n().labels.aggregateToView];
    await cluster.client
      .kind('ClusterRole')
      .replace({ ...widgetViewer, metadata: { ...widgetViewer.metadata, labels } });
    await eventually(async () => !(await canGetWidgets()), 15_000, 'alice may no longer get widgets');
  });
});
