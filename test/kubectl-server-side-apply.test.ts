/**
 * `kubectl apply --server-side` with two field managers against the embedded control plane: conflicts,
 * forced ownership transfer, removal of fields a manager stops applying, Update entries of other writes and
 * apply through the status subresource, read back from `metadata.managedFields`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

interface Entry {
  manager: string;
  operation: string;
  subresource?: string;
  fieldsV1: Record<string, unknown>;
}

const deployment = (spec: object, labels: Record<string, string> = {}) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1' }] } },
      ...spec,
    },
  });

describe.skipIf(!hasKubectl)('kubectl apply --server-side with two field managers', () => {
  let cluster: TestCluster;
  let kubectl: Kubectl;
  let cacheDir: string;

  const apply = (manager: string, input: string, ...flags: string[]) =>
    kubectl.run(['apply', '--server-side', '--field-manager', manager, ...flags, '-f', '-'], { input });
  const live = async () => kubectl.json(['get', 'deployment', 'web', '-n', 'default', '--show-managed-fields']);
  const entries = async (): Promise<Entry[]> => (await live()).metadata.managedFields;
  const entry = async (manager: string, operation = 'Apply') =>
    (await entries()).find((e) => e.manager === manager && e.operation === operation);

  beforeAll(async () => {
    cluster = await startTestCluster();
    cacheDir = await mkdtemp(join(tmpdir(), 'kubectl-ssa-cache-'));
    kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
  });

  afterAll(async () => {
    await cluster?.stop();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('records what the first manager applied', async () => {
    const r = await apply('a', deployment({ replicas: 2 }, { team: 'x', tier: 'web' }));
    expect(r.code, r.stderr).toBe(0);
    const a = await entry('a');
    expect(a?.fieldsV1).toMatchObject({
      'f:metadata': { 'f:labels': { 'f:team': {}, 'f:tier': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:template': {
          'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    });
  });

  it('refuses a second manager changing a field the first owns, naming both', async () => {
    const r = await apply('b', deployment({ replicas: 3 }));
    expect(r.code).not.toBe(0);
    // "a" applied: the reference names an applier without a version (`using` is for Update managers).
    expect(r.stderr).toContain('Apply failed with 1 conflict: conflict with "a": .spec.replicas');
    expect((await live()).spec.replicas).toBe(2);
  });

  it('moves the field to the second manager with --force-conflicts', async () => {
    const r = await apply('b', deployment({ replicas: 3 }), '--force-conflicts');
    expect(r.code, r.stderr).toBe(0);
    expect((await live()).spec.replicas).toBe(3);
    expect((await entry('b'))?.fieldsV1).toMatchObject({ 'f:spec': { 'f:replicas': {} } });
    const a = await entry('a');
    expect(a?.fieldsV1['f:spec']).toBeDefined();
    expect(a?.fieldsV1['f:spec']).not.toHaveProperty('f:replicas');
  });

  it('removes what the first manager stops applying, and keeps what the second owns', async () => {
    const r = await apply('a', deployment({}, { team: 'x' }));
    expect(r.code, r.stderr).toBe(0);
    const object = await live();
    expect(object.metadata.labels).toEqual({ team: 'x' });
    expect(object.spec.replicas).toBe(3);
  });

  it('records Update operations of other writes', async () => {
    await kubectl.ok(['label', 'deployment', 'web', '-n', 'default', 'owner=ops']);
    const update = (await entries()).find((e) => e.operation === 'Update');
    expect(update).toMatchObject({
      manager: 'kubectl-label',
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:owner': {} } } },
    });
  });

  it('applies to the status subresource', async () => {
    const status = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      status: { observedGeneration: 1, replicas: 3 },
    });
    const r = await apply('status-writer', status, '--subresource=status');
    expect(r.code, r.stderr).toBe(0);
    expect((await live()).status).toMatchObject({ replicas: 3 });
    expect((await entries()).find((e) => e.manager === 'status-writer')).toMatchObject({
      operation: 'Apply',
      subresource: 'status',
      fieldsV1: { 'f:status': { 'f:observedGeneration': {}, 'f:replicas': {} } },
    });
  });
});
