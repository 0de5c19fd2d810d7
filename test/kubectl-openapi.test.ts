/**
 * kubectl 1.32 as a client of the OpenAPI documents: `explain` reads /openapi/v3, client-side validation
 * (used for `kind: List` files, whose items the server-side field validation cannot vouch for) downloads
 * /openapi/v2 as protobuf.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

describe.skipIf(!hasKubectl)('kubectl and the OpenAPI documents', () => {
  let cluster: TestCluster;
  let kubectl: Kubectl;
  let cacheDir: string;

  beforeAll(async () => {
    cluster = await startTestCluster();
    cacheDir = await mkdtemp(join(tmpdir(), 'kubectl-openapi-cache-'));
    kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
  });

  afterAll(async () => {
    await cluster?.stop();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('kubectl explain pdb.spec.minAvailable', async () => {
    const out = await kubectl.ok(['explain', 'pdb.spec.minAvailable']);
    expect(out).toContain('KIND:       PodDisruptionBudget');
    expect(out).toContain('FIELD: minAvailable');
    expect(out).toMatch(/An eviction is allowed if at least this many of the selected pods/);
  });

  it('kubectl explain statefulset.spec.updateStrategy --recursive', async () => {
    const out = await kubectl.ok(['explain', 'statefulset.spec.updateStrategy', '--recursive']);
    expect(out).toContain('FIELD: updateStrategy <StatefulSetUpdateStrategy>');
    expect(out).toMatch(
      /rollingUpdate\s+<RollingUpdateStatefulSetStrategy>\s+maxUnavailable\s+<IntOrString>\s+partition\s+<integer>\s+type\s+<string>/,
    );
  });

  it('kubectl apply -f of a List, and of what kubectl get -o yaml writes', async () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'default' }, data: { a: '1' } },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: 'default' },
          spec: {
            selector: { matchLabels: { app: 'web' } },
            template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
          },
        },
      ],
    };
    const out = await kubectl.ok(['apply', '-f', '-'], { input: JSON.stringify(list) });
    expect(out).toContain('configmap/one created');
    expect(out).toContain('deployment.apps/web created');

    const yaml = await kubectl.ok(['get', 'configmap/one', 'deployment/web', '-n', 'default', '-o', 'yaml']);
    expect(yaml).toContain('kind: List');
    expect(await kubectl.ok(['apply', '-f', '-'], { input: yaml })).toMatch(/configmap\/one (unchanged|configured)/);
  });

  it('validates the items of a List against the published schemas, naming an unknown field', async () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' }, data: { a: '1' }, dta: { b: '2' } }],
    };
    const r = await kubectl.run(['apply', '-f', '-'], { input: JSON.stringify(list) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('unknown field "dta" in io.k8s.api.core.v1.ConfigMap');
    expect(r.stderr).not.toContain('the server could not find the requested resource');
  });

  it('publishes the v3 index with hashed URLs', async () => {
    const root = JSON.parse(await kubectl.ok(['get', '--raw', '/openapi/v3']));
    expect(root.paths['apis/apps/v1'].serverRelativeURL).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
  });
});
