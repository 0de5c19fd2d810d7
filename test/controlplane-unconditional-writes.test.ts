/**
 * Writes that carry no resourceVersion never conflict, on etcd too: 12 clients write one object at
 * once (merge patches, PUTs, server-side applies, status patches, scale patches, deletes), against one
 * control plane and against two sharing one etcd prefix. No answer is a 409, and a watch shows every
 * patch committed and none undone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { ControlPlane, type ControlPlaneOptions } from '../src/controlplane/control-plane.ts';
import { testStorage } from './support/cluster.ts';
import { etcdAvailable } from './support/etcd.ts';

const CLIENTS = 12;
const PATCHES_EACH = 50;
/** PUTs, applies, status and scale patches per client: these only show that nothing conflicts. */
const OTHERS_EACH = 3;

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function plane(storage: Partial<ControlPlaneOptions>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'orch-unconditional-'));
  dirs.push(dataDir);
  const cp = new ControlPlane({ port: 0, dataDir, ...storage });
  await cp.start();
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  return { cp, client: new KubeClient(kc, cp.registry, { qps: 0, maxRetries: 0 }) };
}

const deployment = (name: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

/** Runs `write(client, i, j)` for j < `each` in each of the clients at once; returns the failures' codes. */
async function concurrently(
  clients: KubeClient[],
  each: number,
  write: (client: KubeClient, i: number, j: number) => Promise<unknown>,
): Promise<string[]> {
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      const client = clients[i % clients.length];
      for (let j = 0; j < each; j++) {
        await write(client, i, j).catch((err) => failures.push(`client ${i} write ${j}: ${err.code} ${err.message}`));
      }
    }),
  );
  return failures;
}

async function waitUntil(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 30_000; !done(); ) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function noConflicts(clients: KubeClient[]): Promise<void> {
  const [first] = clients;
  const configMaps = (c: KubeClient) => c.kind('ConfigMap');
  const deployments = (c: KubeClient) => c.kind('Deployment');
  const target = await configMaps(first).create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'target', namespace: 'default' },
    data: {},
  });
  await deployments(first).create(deployment('web'));
  // Every plane has the objects in its cache before the writes start (a consistent read waits for it).
  for (const c of clients) await configMaps(c).get('default', 'target');

  // Merge patches: client i's patch j sets its key c<i> to j. A watch sees every version of the object,
  // so a patch that was lost (never committed, or undone by a write made from an older version) shows.
  const versions: KubeObject[] = [];
  const abort = new AbortController();
  const watched = configMaps(first)
    .watch(
      'default',
      { resourceVersion: target.metadata.resourceVersion, fieldSelector: 'metadata.name=target' },
      (e) => {
        if (e.type === 'MODIFIED') versions.push(e.object);
      },
      abort.signal,
    )
    .catch((err) => {
      if (!abort.signal.aborted) throw err;
    });
  const patched = await concurrently(clients, PATCHES_EACH, (c, i, j) =>
    configMaps(c).patch('default', 'target', { data: { [`c${i}`]: String(j) } }, 'merge'),
  );
  expect(patched).toEqual([]);
  const last = await configMaps(first).get('default', 'target');
  await waitUntil(() => versions.at(-1)?.metadata.resourceVersion === last.metadata.resourceVersion);
  abort.abort();
  await watched;
  expect(versions).toHaveLength(CLIENTS * PATCHES_EACH);
  for (let i = 0; i < CLIENTS; i++) {
    const values = versions.map((v) => Number((v.data as Record<string, string>)[`c${i}`] ?? -1));
    // Each of its patches made a version, and no version took one back.
    const set = values.filter((v) => v >= 0);
    expect(new Set(set)).toEqual(new Set(Array.from({ length: PATCHES_EACH }, (_, j) => j)));
    expect(values).toEqual([...values].sort((a, b) => a - b));
  }

  // PUTs without a resourceVersion replace whatever is stored.
  const put = await concurrently(clients, OTHERS_EACH, (c, i, j) =>
    configMaps(c).replace({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'target', namespace: 'default' },
      data: { last: `c${i}-${j}` },
    }),
  );
  expect(put).toEqual([]);

  // Server-side applies, one field manager per client, each owning a key of its own: the last of each stays.
  const applied = await concurrently(clients, OTHERS_EACH, (c, i, j) =>
    configMaps(c).apply(
      { metadata: { name: 'target', namespace: 'default' }, data: { [`m${i}`]: String(j) } },
      `m${i}`,
    ),
  );
  expect(applied).toEqual([]);
  const afterApply = (await configMaps(first).get('default', 'target')).data as Record<string, string>;
  for (let i = 0; i < CLIENTS; i++) expect(afterApply[`m${i}`]).toBe(String(OTHERS_EACH - 1));

  // Applies that find no object create it: the ones that lose that race apply onto the winner's.
  const created = await concurrently(clients, 1, (c, i) =>
    configMaps(c).apply({ metadata: { name: 'applied', namespace: 'default' }, data: { [`m${i}`]: 'x' } }, `m${i}`),
  );
  expect(created).toEqual([]);
  const appliedData = (await configMaps(first).get('default', 'applied')).data as Record<string, string>;
  expect(Object.keys(appliedData).sort()).toEqual(Array.from({ length: CLIENTS }, (_, i) => `m${i}`).sort());

  // Deletes without preconditions, each while the other clients patch the same object.
  for (let round = 0; round < 3; round++) {
    const name = `victim-${round}`;
    await configMaps(first).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
    for (const c of clients) await configMaps(c).get('default', name);
    let patchedCount = 0;
    const gone = (err: { code?: number }) => {
      if (err.code !== 404) throw err;
    };
    const racing = concurrently(clients, 20, async (c, i, j) => {
      if (i === 0) return;
      await configMaps(c)
        .patch('default', name, { data: { [`p${i}-${j}`]: 'x' } }, 'merge')
        .catch(gone);
      patchedCount++;
    });
    await waitUntil(() => patchedCount >= 2 * CLIENTS);
    await configMaps(clients[round % clients.length]).delete('default', name);
    expect(await racing).toEqual([]);
  }

  const status = await concurrently(clients, OTHERS_EACH, (c, i, j) =>
    deployments(c).patchStatus('default', 'web', { status: { replicas: i, observedGeneration: j } }, 'merge'),
  );
  expect(status).toEqual([]);
  const scaled = await concurrently(clients, OTHERS_EACH, (c, i) => deployments(c).patchScale('default', 'web', i));
  expect(scaled).toEqual([]);
}

describe.skipIf(!etcdAvailable)('writes without a resourceVersion on etcd', () => {
  it('12 clients on one control plane: no 409, nothing lost', { timeout: 120_000 }, async () => {
    const { cp, client } = await plane(await testStorage('etcd'));
    try {
      await noConflicts([client]);
    } finally {
      await cp.stop();
    }
  });

  it('12 clients on two control planes sharing one prefix: no 409, nothing lost', { timeout: 120_000 }, async () => {
    const storage = await testStorage('etcd');
    const a = await plane(storage);
    const b = await plane(storage);
    try {
      await noConflicts([a.client, b.client]);
    } finally {
      await a.cp.stop();
      await b.cp.stop();
    }
  });
});
