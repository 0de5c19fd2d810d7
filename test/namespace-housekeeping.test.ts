/**
 * Namespace housekeeping, end to end in both flavors, by the real daemon with its default controllers against an
 * embedded control plane: a new namespace gets its `default` ServiceAccount (so `kubectl create token default`
 * works there) and the root CA ConfigMap holding the CA of the daemon's kubeconfig; deleting either brings it
 * back, and an edit of the ConfigMap's data is undone. Without `--root-ca-file` the CA is the kubeconfig's, the
 * CA that the API server's serving certificate chains to.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { FLAVORS, type FlavorName, group } from '../src/api/naming.ts';
import type { ConfigMap } from '../src/api/types/core.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type Daemon, killAll, spawnProcess } from './support/daemons.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

/** How soon the daemon must act on a change. */
const SOON_MS = 10_000;

describe.skipIf(!hasKubectl).each(FLAVORS)('namespace housekeeping (%s flavor)', (flavor: FlavorName) => {
  let c: TestCluster;
  let kubectl: Kubectl;
  let daemon: Daemon;
  const n = () => c.cp.registry.naming;
  const log = () =>
    daemon.lines
      .slice(-40)
      .map((l) => JSON.stringify(l))
      .join('\n');

  beforeAll(async () => {
    c = await startTestCluster({ flavor });
    kubectl = new Kubectl(c.kubeconfig, join(c.dir, 'kubectl-cache'));
    daemon = spawnProcess(`housekeeping-${flavor}`, [
      `--kubeconfig=${c.kubeconfig}`,
      `--api-flavor=${flavor}`,
      '--leader-elect=false',
      '--logging-format=json',
      '--secure-port=0',
    ]);
  }, 60_000);

  afterAll(async () => {
    if (daemon) await killAll([daemon]);
    await c?.stop();
  });

  const find = async <T extends KubeObject>(kind: string, namespace: string, name: string) =>
    (await c.client
      .kind<T>(kind)
      .get(namespace, name)
      .catch(() => undefined)) as T | undefined;
  const soon = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
    eventually(probe, SOON_MS, () => `${what}; daemon log:\n${log()}`, 50);
  /** The CA the daemon's kubeconfig trusts, as text. */
  const kubeconfigCa = () => Buffer.from(c.kc.getCurrentCluster()?.caData ?? '', 'base64').toString('utf8');

  it('gives a new namespace its default ServiceAccount and the root CA ConfigMap, soon', async () => {
    // The daemon's controllers are running once the namespaces the cluster started with have theirs.
    await eventually(
      () => find('ConfigMap', 'default', n().rootCAConfigMap),
      60_000,
      () => `start; log:\n${log()}`,
    );
    const started = performance.now();
    await kubectl.ok(['create', 'namespace', 'hk-new']);
    const sa = await soon('the default ServiceAccount', () => find('ServiceAccount', 'hk-new', 'default'));
    const cm = await soon('the root CA ConfigMap', () => find<ConfigMap>('ConfigMap', 'hk-new', n().rootCAConfigMap));
    const ms = performance.now() - started;
    console.log(`${flavor}: default ServiceAccount and root CA ConfigMap within ${Math.round(ms)} ms`);
    expect(sa.metadata.name).toBe('default');
    expect(cm.data).toEqual({ 'ca.crt': kubeconfigCa() });
    expect(cm.data?.['ca.crt']).toBe(c.cp.caPem);
    expect(cm.metadata.annotations).toEqual({ [n().annotations.description]: n().rootCADescription });
    for (const ns of n().initialNamespaces) {
      expect(await find('ServiceAccount', ns, 'default'), ns).toBeDefined();
      expect((await find<ConfigMap>('ConfigMap', ns, n().rootCAConfigMap))?.data, ns).toEqual({ 'ca.crt': c.cp.caPem });
    }
  }, 90_000);

  it('kubectl create token default works in a new namespace', async () => {
    await kubectl.ok(['create', 'namespace', 'hk-token']);
    const token = await soon('a token of the default ServiceAccount', async () => {
      const r = await kubectl.run(['create', 'token', 'default', '-n', 'hk-token']);
      return r.code === 0 ? r.stdout.trim() : undefined;
    });
    const authentication = group(n(), 'authentication');
    const review = await c.client.kind('TokenReview').create({
      apiVersion: `${authentication}/v1`,
      kind: 'TokenReview',
      metadata: {},
      spec: { token },
    });
    expect(review.status).toMatchObject({
      authenticated: true,
      user: { username: 'system:serviceaccount:hk-token:default' },
    });
  });

  it('re-creates the default ServiceAccount when it is deleted', async () => {
    await kubectl.ok(['create', 'namespace', 'hk-sa']);
    const before = await soon('the default ServiceAccount', () => find('ServiceAccount', 'hk-sa', 'default'));
    await kubectl.ok(['delete', 'serviceaccount', 'default', '-n', 'hk-sa']);
    const after = await soon('a new default ServiceAccount', async () => {
      const sa = await find('ServiceAccount', 'hk-sa', 'default');
      return sa && sa.metadata.uid !== before.metadata.uid ? sa : undefined;
    });
    expect(after.metadata.name).toBe('default');
  });

  it('re-creates the root CA ConfigMap when it is deleted, and undoes an edit of its data', async () => {
    const name = n().rootCAConfigMap;
    await kubectl.ok(['create', 'namespace', 'hk-cm']);
    const before = await soon('the root CA ConfigMap', () => find<ConfigMap>('ConfigMap', 'hk-cm', name));
    await kubectl.ok(['delete', 'configmap', name, '-n', 'hk-cm']);
    const recreated = await soon('a new root CA ConfigMap', async () => {
      const cm = await find<ConfigMap>('ConfigMap', 'hk-cm', name);
      return cm && cm.metadata.uid !== before.metadata.uid ? cm : undefined;
    });
    expect(recreated.data).toEqual({ 'ca.crt': c.cp.caPem });

    const patch = JSON.stringify({ data: { 'ca.crt': 'tampered', extra: 'x' }, metadata: { labels: { mine: 'yes' } } });
    await kubectl.ok(['patch', 'configmap', name, '-n', 'hk-cm', '--type=merge', '-p', patch]);
    const restored = await soon('the restored data', async () => {
      const cm = await find<ConfigMap>('ConfigMap', 'hk-cm', name);
      return cm?.data?.['ca.crt'] === c.cp.caPem ? cm : undefined;
    });
    // Exactly the CA again; what else the user set on it stays.
    expect(restored.data).toEqual({ 'ca.crt': c.cp.caPem });
    expect(restored.metadata.labels).toEqual({ mine: 'yes' });
    expect(restored.metadata.uid).toBe(recreated.metadata.uid);
  });

  it('never met a forbidden request or a failed reconcile', () => {
    const bad = daemon.lines.filter(
      (l) =>
        /forbidden/i.test(JSON.stringify(l)) ||
        (l.msg?.startsWith('reconcile failed') && /serviceaccount|root-ca/.test(String(l.controller))),
    );
    expect(bad).toEqual([]);
  });
});
