/**
 * The daemon against a real kube-apiserver (`npm run cluster`'s control plane, kwok nodes): the cluster serves the
 * real release, and our StatefulSet controller brings a set to Ready on kwok nodes in ordinal order. It runs on the
 * real substrate only (the `real` vitest project's shared cluster), skipped with the rest when the binaries are not
 * built.
 */
import { expect, it } from 'vitest';
import { kubernetesRelease } from '../../tools/k8s/binaries.ts';
import { eventually } from '../support/eventually.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

describeOnSubstrate('smoke', (s) => {
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await s().api(method, path, body);
    return { status: r.code, json: r.json };
  };

  it('serves the pinned release, and kubectl lists the kwok nodes Ready', async () => {
    const version = await s().kubectl.json(['version']);
    expect(version.serverVersion.gitVersion).toBe(kubernetesRelease());
    const rows = (await s().kubectl.ok(['get', 'nodes', '--no-headers'])).trim().split('\n');
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatch(/^kwok-node-\d\s+Ready\s/);
  });

  it('our StatefulSet controller brings a set to Ready on kwok nodes, in ordinal order', async () => {
    await s().startDaemon({ controllers: 'statefulset' });
    const ns = await s().namespace('demo');
    const created = await api('POST', `/apis/apps/v1/namespaces/${ns}/statefulsets`, {
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
        const { json } = await api('GET', `/apis/apps/v1/namespaces/${ns}/statefulsets/web`);
        return json.status?.readyReplicas === 3 ? json : undefined;
      },
      90_000,
      'readyReplicas 3',
      250,
    );
    expect(set.status.currentRevision).toBe(set.status.updateRevision);
    const pods = new Map<string, any>(
      (await api('GET', `/api/v1/namespaces/${ns}/pods`)).json.items.map((pod: any) => [pod.metadata.name, pod]),
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
