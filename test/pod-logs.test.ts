/**
 * The pod subresources a node agent serves, on simulated nodes, through the real HTTPS server and kubectl:
 * `kubectl logs` (and `-f`, `--tail`, `--timestamps`) shows a simulated container's start, readiness and
 * termination; exec, attach and port-forward say the node is simulated instead of a bare 404; reading a
 * log needs `get pods/log`; bad options are 4xx naming the field; a pod's log goes with the pod.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { group } from '../src/api/naming.ts';
import type { Pod } from '../src/api/types/core.ts';
import { type SimulatedNodes, startSimulatedNodes } from '../src/simulation/nodes.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';
import { RawClient } from './support/raw-https.ts';

let cluster: TestCluster;
let nodes: SimulatedNodes;
let kubectl: Kubectl;
let raw: RawClient;
let dir: string;
const NS = 'default';

beforeAll(async () => {
  cluster = await startTestCluster();
  nodes = await startSimulatedNodes(cluster.cp, 2);
  cluster.cp.attach(nodes);
  dir = await mkdtemp(join(tmpdir(), 'pod-logs-'));
  kubectl = new Kubectl(cluster.kubeconfig, dir);
  raw = await RawClient.fromKubeconfig(cluster.kubeconfig);
}, 60_000);

afterAll(async () => {
  raw?.close();
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const pods = () => cluster.client.kind<Pod>('Pod');
const ready = (p: Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function readyPod(name: string, image = 'app:1', annotations: Record<string, string> = {}): Promise<Pod> {
  const n = cluster.cp.registry.naming;
  await pods().create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: NS, name, annotations: { [n.annotations.readinessDelay]: '0s', ...annotations } },
    spec: { containers: [{ name: 'c', image }] },
  });
  return eventually(async () => {
    const p = await pods().get(NS, name);
    return ready(p) ? p : undefined;
  }, 10_000);
}

const logPath = (name: string, query = '') => `/api/v1/namespaces/${NS}/pods/${name}/log${query}`;

describe.skipIf(!hasKubectl)('kubectl and the pod subresources of simulated nodes', () => {
  it('kubectl logs shows the container start and readiness; --tail and --timestamps as the reference', async () => {
    const p = await readyPod('logged');
    const out = await kubectl.ok(['logs', 'logged', '-n', NS]);
    expect(out).toBe(
      `Started container c (image app:1) on simulated node ${p.spec?.nodeName}\nReadiness probe passed: ready\n`,
    );
    expect(await kubectl.ok(['logs', 'logged', '-n', NS, '--tail=1'])).toBe('Readiness probe passed: ready\n');
    const stamped = await kubectl.ok(['logs', 'logged', '-n', NS, '--timestamps', '--tail=1']);
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z Readiness probe passed: ready\n$/);
    expect(await kubectl.ok(['logs', 'logged', '-n', NS, '--since=1h'])).toBe(out);
  });

  it('kubectl logs -f follows until the container ends, then returns; the log goes with the pod', async () => {
    const p = await readyPod('followed');
    const follow = kubectl.run(['logs', '-f', 'followed', '-n', NS], { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 500)); // kubectl is following by now
    await pods().delete(NS, 'followed');
    const r = await follow;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').slice(-3)).toEqual(['Received SIGTERM: shutting down', 'Exited with code 0', '']);
    await eventually(async () => nodes.logs.read(p.metadata.uid!, 'c') === undefined || undefined, 10_000);
    const gone = await kubectl.run(['logs', 'followed', '-n', NS]);
    expect(gone.stderr).toContain('pods "followed" not found');
  }, 30_000);

  it('a :crash container logs each run', async () => {
    await pods().create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: NS, name: 'crashing' },
      spec: { containers: [{ name: 'c', image: 'app:crash' }] },
    });
    const out = await eventually(async () => {
      const r = await kubectl.run(['logs', 'crashing', '-n', NS]);
      return r.code === 0 && r.stdout.includes('Exited') ? r.stdout : undefined;
    }, 10_000);
    expect(out).toContain('Exited with code 1: the simulated image app:crash crashes at start');
  });

  it('kubectl exec, attach and port-forward say the node is simulated', async () => {
    const p = await readyPod('no-shell');
    const node = p.spec?.nodeName;
    const exec = await kubectl.run(['exec', 'no-shell', '-n', NS, '--', 'ls']);
    expect(exec.code).not.toBe(0);
    expect(exec.stderr).toContain(`pod no-shell runs on simulated node ${node}: exec is not available`);
    for (const sub of ['exec', 'attach', 'portforward']) {
      const r = await raw.send({ method: 'POST', path: `/api/v1/namespaces/${NS}/pods/no-shell/${sub}` });
      expect(r.code).toBe(400);
      expect(r.json.message).toBe(`pod no-shell runs on simulated node ${node}: ${sub} is not available`);
    }
    const missing = await raw.send({ method: 'POST', path: `/api/v1/namespaces/${NS}/pods/absent/exec` });
    expect(missing.code).toBe(404);
    expect(missing.json.message).toBe('pods "absent" not found');
  });

  it('reading a log needs get pods/log', async () => {
    await readyPod('private');
    // `get pods` (kubectl reads the pod first) but not `get pods/log`.
    const rbacGroup = group(cluster.cp.registry.naming, 'rbac.authorization');
    const rbac = `${rbacGroup}/v1`;
    const meta = { namespace: NS, name: 'pod-reader' };
    await cluster.client.kind('Role').create({
      apiVersion: rbac,
      kind: 'Role',
      metadata: meta,
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    } as never);
    await cluster.client.kind('RoleBinding').create({
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: rbacGroup, kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'User', apiGroup: rbacGroup, name: 'nobody' }],
    } as never);
    const other = join(dir, 'nobody.kubeconfig');
    await cluster.cp.writeIdentityKubeconfig(other, { username: 'nobody', groups: ['system:authenticated'] });
    const r = await new Kubectl(other, dir).run(['logs', 'private', '-n', NS]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('User "nobody" cannot get resource "pods/log"');
  });

  it('bad options and containers are 4xx naming the field or the container', async () => {
    await readyPod('options');
    const cases: [string, number, string][] = [
      ['tailLines=-1', 422, 'tailLines: Invalid value: -1: must be greater than or equal to 0'],
      ['sinceSeconds=0', 422, 'sinceSeconds: Invalid value: 0: must be greater than 0'],
      ['tailLines=many', 400, 'tailLines: invalid value "many": must be an integer'],
      ['container=nope', 400, 'container nope is not valid for pod options'],
    ];
    for (const [query, code, message] of cases) {
      const r = await raw.send({ path: logPath('options', `?${query}`) });
      expect([r.code, r.json?.message], query).toEqual([code, expect.stringContaining(message)]);
    }
    const limited = await raw.send({ path: logPath('options', '?limitBytes=7') });
    expect(limited).toMatchObject({ code: 200, body: 'Started' });
  });
});
