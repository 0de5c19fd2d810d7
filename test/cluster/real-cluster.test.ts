/**
 * The daemon against a real kube-apiserver (`npm run cluster`'s control plane, kwok nodes): the cluster serves the
 * real release, and our StatefulSet controller brings a set to Ready on kwok nodes in ordinal order.
 * Skipped, with one line saying so, when `npm run k8s:build` has not made the binaries.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubernetesRelease } from '../../tools/k8s/binaries.ts';
import { type Daemon, killAll, spawnProcess } from '../support/daemons.ts';
import { eventually } from '../support/eventually.ts';
import { KUBECTL } from '../support/kubectl.ts';
import { hasClusterBinaries, type LocalCluster, missingBinaries, startLocalCluster } from './local-cluster.ts';

if (!hasClusterBinaries) {
  console.warn(
    `test/cluster: skipped, the real cluster's binaries are not built (${missingBinaries().join(', ')}); run \`npm run k8s:build\``,
  );
}

describe.skipIf(!hasClusterBinaries)('the daemon against a real kube-apiserver with kwok nodes', () => {
  let dir: string;
  let cluster: LocalCluster;
  let daemon: Daemon | undefined;

  const api = (method: string, path: string, body?: unknown) => cluster.request(method, path, body);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-real-'));
    cluster = await startLocalCluster({ dir: join(dir, 'cluster'), nodes: 3 });
  }, 240_000);

  afterAll(async () => {
    if (daemon) await killAll([daemon]);
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('serves the pinned release, and kubectl lists the kwok nodes Ready', async () => {
    const version = JSON.parse(
      execFileSync(KUBECTL, ['--kubeconfig', cluster.kubeconfig, 'version', '-o', 'json'], { encoding: 'utf8' }),
    );
    expect(version.serverVersion.gitVersion).toBe(kubernetesRelease());
    const nodes = execFileSync(KUBECTL, ['--kubeconfig', cluster.kubeconfig, 'get', 'nodes', '--no-headers'], {
      encoding: 'utf8',
    });
    const rows = nodes.trim().split('\n');
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatch(/^kwok-node-\d\s+Ready\s/);
  });

  it('our StatefulSet controller brings a set to Ready on kwok nodes, in ordinal order', async () => {
    daemon = spawnProcess('daemon', [
      `--kubeconfig=${cluster.kubeconfig}`,
      '--controllers=statefulset',
      '--logging-format=json',
      '--secure-port=0',
    ]);
    expect((await api('POST', '/api/v1/namespaces', { metadata: { name: 'demo' } })).status).toBe(201);
    const created = await api('POST', '/apis/apps/v1/namespaces/demo/statefulsets', {
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        serviceName: 'web',
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'registry.example/web:1' }] },
        },
      },
    });
    expect(created.status).toBe(201);
    const set = await eventually(
      async () => {
        const { json } = await api('GET', '/apis/apps/v1/namespaces/demo/statefulsets/web');
        return json.status?.readyReplicas === 3 ? json : undefined;
      },
      90_000,
      'readyReplicas 3',
      250,
    );
    expect(set.status.currentRevision).toBe(set.status.updateRevision);
    const pods = new Map<string, any>(
      (await api('GET', '/api/v1/namespaces/demo/pods')).json.items.map((pod: any) => [pod.metadata.name, pod]),
    );
    expect([...pods.keys()].sort()).toEqual(['web-0', 'web-1', 'web-2']);
    for (const pod of pods.values()) expect(pod.spec.nodeName).toMatch(/^kwok-node-\d$/);
    // OrderedReady: each pod is created only once the one before is Ready, which kwok makes it a second after
    // it starts; created all at once, web-1 would predate web-0's Ready by that second.
    const readyAt = (pod: any) =>
      Date.parse(pod.status.conditions.find((c: { type: string }) => c.type === 'Ready').lastTransitionTime);
    for (const [before, after] of [
      ['web-0', 'web-1'],
      ['web-1', 'web-2'],
    ]) {
      expect(Date.parse(pods.get(after).metadata.creationTimestamp)).toBeGreaterThanOrEqual(readyAt(pods.get(before)));
    }
  }, 120_000);
});
