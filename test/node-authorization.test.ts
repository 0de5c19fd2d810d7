/**
 * Node identities through the real HTTPS server (Node authorizer chained before RBAC, NodeRestriction
 * admission): `system:node:n1` may write its own Node, status, Lease and the pods bound to it, and read
 * the secrets those pods reference; it may not touch another node's objects, set restricted labels or
 * taints on itself, or read secrets no pod of its own references. Both flavors.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { FLAVORS, type FlavorName } from '../src/api/naming.ts';
import type { Node, Pod } from '../src/api/types/core.ts';
import { KubeClient } from '../src/client/client.ts';
import { StatusError } from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const NS = 'default';

describe.each(FLAVORS)('node identities (%s flavor)', (flavor: FlavorName) => {
  let c: TestCluster;
  let n1: KubeClient;
  let leaseNs: string;

  async function nodeClient(name: string): Promise<KubeClient> {
    const path = await c.cp.writeIdentityKubeconfig(join(c.dir, `${name}.kubeconfig`), {
      username: `system:node:${name}`,
      groups: ['system:nodes', 'system:authenticated'],
    });
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    return new KubeClient(kc, c.cp.registry, { qps: 0, maxRetries: 0 });
  }

  /** The HTTP code and message of a call: 2xx as they come, failures from their Status. */
  async function outcome(p: Promise<unknown>): Promise<{ code: number; message?: string }> {
    try {
      await p;
      return { code: 200 };
    } catch (err) {
      if (!(err instanceof StatusError)) throw err;
      return { code: err.code, message: err.message };
    }
  }

  const pod = (name: string, nodeName: string, secret?: string): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: NS, name, labels: { app: name } },
    spec: {
      nodeName,
      containers: [
        {
          name: 'c',
          image: 'app:1',
          ...(secret ? { env: [{ name: 'S', valueFrom: { secretKeyRef: { name: secret, key: 'k' } } }] } : {}),
        },
      ],
    },
  });
  const secret = (name: string): KubeObject =>
    ({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: NS, name }, data: { k: 'dg==' } }) as KubeObject;
  const lease = (name: string): KubeObject =>
    ({ metadata: { namespace: leaseNs, name }, spec: { holderIdentity: name } }) as KubeObject;

  beforeAll(async () => {
    c = await startTestCluster({ flavor });
    leaseNs = c.cp.registry.naming.initialNamespaces.find((ns) => ns.endsWith('-node-lease'))!;
    n1 = await nodeClient('n1');
    await c.client.kind<Node>('Node').create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'sim-node-2' } });
    await c.client.kind('Lease').create(lease('sim-node-2'));
    await c.client.kind<Pod>('Pod').create(pod('theirs', 'sim-node-2', 'their-secret'));
    for (const s of ['their-secret', 'my-secret', 'unrelated']) await c.client.kind('Secret').create(secret(s));
  }, 60_000);

  afterAll(async () => {
    await c?.stop();
  });

  it("refuses n1's writes to another node: node, status, a new node, its pod's status, its lease", async () => {
    const nodes = n1.kind<Node>('Node');
    const patchNode = await outcome(
      nodes.patch(
        undefined,
        'sim-node-2',
        { metadata: { labels: { x: 'y' } }, spec: { unschedulable: true } },
        'merge',
      ),
    );
    expect(patchNode).toEqual({
      code: 403,
      message: 'nodes "sim-node-2" is forbidden: node "n1" is not allowed to modify node "sim-node-2"',
    });
    const notReady = { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Spoofed' }] } };
    const patchStatus = await outcome(nodes.patchStatus(undefined, 'sim-node-2', notReady, 'merge'));
    expect(patchStatus.code).toBe(403);
    expect(patchStatus.message).toContain('node "n1" is not allowed to modify node "sim-node-2"');
    const create = await outcome(nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'sim-node-9' } }));
    expect(create).toEqual({
      code: 403,
      message: 'nodes "sim-node-9" is forbidden: node "n1" is not allowed to modify node "sim-node-9"',
    });
    const podStatus = await outcome(
      n1.kind<Pod>('Pod').patchStatus(NS, 'theirs', { status: { phase: 'Failed' } }, 'merge'),
    );
    expect(podStatus).toEqual({
      code: 403,
      message:
        'pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
    });
    const deleteLease = await outcome(n1.kind('Lease').delete(leaseNs, 'sim-node-2'));
    expect(deleteLease.code).toBe(403);
    expect(deleteLease.message).toContain('can only access node lease with the same name as the requesting node');
    const evict = await outcome(
      n1.request('POST', `/api/v1/namespaces/${NS}/pods/theirs/eviction`, {
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'theirs', namespace: NS } },
      }),
    );
    expect(evict).toEqual({
      code: 403,
      message: 'pods "theirs" is forbidden: node n1 can only evict pods with spec.nodeName set to itself',
    });
    // Nothing changed on the other node's objects.
    const other = await c.client.kind<Node>('Node').get(undefined, 'sim-node-2');
    expect(other.spec?.unschedulable).toBeUndefined();
    expect(other.metadata.labels?.x).toBeUndefined();
    expect((await c.client.kind<Pod>('Pod').get(NS, 'theirs')).status?.phase).toBe('Pending');
    expect((await c.client.kind('Lease').get(leaseNs, 'sim-node-2')).metadata.name).toBe('sim-node-2');
    await expect(c.client.kind('Node').get(undefined, 'sim-node-9')).rejects.toMatchObject({ code: 404 });
  });

  it('lets n1 register and update its own node, status, lease and pods', async () => {
    const nodes = n1.kind<Node>('Node');
    const created = await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    expect(created.metadata.name).toBe('n1');
    const zone = `topology.${c.cp.registry.naming.domain}/zone`;
    const patched = await nodes.patch(
      undefined,
      'n1',
      { metadata: { labels: { [zone]: 'z1', 'example.com/rack': 'r7' } }, spec: { unschedulable: true } },
      'merge',
    );
    expect(patched.metadata.labels).toMatchObject({ [zone]: 'z1', 'example.com/rack': 'r7' });
    const ready = { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'NodeReady' }] } };
    const status = await nodes.patchStatus(undefined, 'n1', ready, 'merge');
    expect(status.status?.conditions?.[0]?.status).toBe('True');

    const leases = n1.kind('Lease');
    await leases.create(lease('n1'));
    const renewed = await leases.patch(leaseNs, 'n1', { spec: { leaseDurationSeconds: 40 } }, 'merge');
    expect((renewed.spec as { leaseDurationSeconds?: number }).leaseDurationSeconds).toBe(40);
    const elsewhere = await outcome(leases.create({ ...lease('n1'), metadata: { namespace: NS, name: 'n1' } }));
    expect(elsewhere.code).toBe(403);

    await c.client.kind<Pod>('Pod').create(pod('mine', 'n1', 'my-secret'));
    // Its pod runs as the default account, so it may ask for that account's tokens, but only bound to its pods.
    const theirs = await c.client.kind<Pod>('Pod').get(NS, 'theirs');
    const boundTo = { apiVersion: 'v1', kind: 'Pod', name: 'theirs', uid: theirs.metadata.uid };
    const token = await outcome(
      n1.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/default/token`, {
        body: { kind: 'TokenRequest', spec: { audiences: [], boundObjectRef: boundTo } },
      }),
    );
    expect(token).toEqual({
      code: 403,
      message:
        'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
    });
    const running = await n1.kind<Pod>('Pod').patchStatus(NS, 'mine', { status: { phase: 'Running' } }, 'merge');
    expect(running.status?.phase).toBe('Running');

    await c.client
      .kind<Pod>('Pod')
      .create({ ...pod('evicted', 'n1'), spec: { ...pod('evicted', 'n1').spec!, terminationGracePeriodSeconds: 0 } });
    const evicted = await n1.request('POST', `/api/v1/namespaces/${NS}/pods/evicted/eviction`, {
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evicted', namespace: NS } },
    });
    expect(evicted.status).toBe(201);
    await expect(c.client.kind('Pod').get(NS, 'evicted')).rejects.toMatchObject({ code: 404 });
  });

  it('refuses restricted labels and taint changes on its own node', async () => {
    const n = c.cp.registry.naming;
    const nodes = n1.kind<Node>('Node');
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }).catch(() => undefined);
    const restricted = `${n.nodes?.restrictedLabelNamespace ?? `node-restriction.${n.domain}`}/dedicated`;
    const label = await outcome(
      nodes.patch(undefined, 'n1', { metadata: { labels: { [restricted]: 'db' } } }, 'merge'),
    );
    expect(label).toEqual({
      code: 403,
      message: `nodes "n1" is forbidden: is not allowed to modify labels: ${restricted}`,
    });
    const role = `${n.domain}/role`;
    const other = await outcome(nodes.patch(undefined, 'n1', { metadata: { labels: { [role]: 'x' } } }, 'merge'));
    expect(other.code).toBe(403);
    expect(other.message).toContain(role);
    const taint = await outcome(
      nodes.patch(undefined, 'n1', { spec: { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] } }, 'merge'),
    );
    expect(taint).toEqual({ code: 403, message: 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints' });
    const withLabel = await outcome(
      nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { [restricted]: 'db' } } }),
    );
    expect(withLabel.code).toBe(403);
    const stored = await c.client.kind<Node>('Node').get(undefined, 'n1');
    expect(stored.metadata.labels?.[restricted]).toBeUndefined();
    // The node's own taint is not there; the cordon an earlier test set has its own (the lifecycle controller's).
    expect((stored.spec?.taints ?? []).map((t) => t.key)).not.toContain('k');
  });

  it('reads only the secrets its own pods reference', async () => {
    await c.client
      .kind<Pod>('Pod')
      .create(pod('reader', 'n1', 'my-secret'))
      .catch(() => undefined);
    const secrets = n1.kind('Secret');
    expect((await secrets.get(NS, 'my-secret')).metadata.name).toBe('my-secret');
    for (const name of ['unrelated', 'their-secret']) {
      const denied = await outcome(secrets.get(NS, name));
      expect(denied).toEqual({
        code: 403,
        message: `secrets "${name}" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "${NS}": no relationship found between node 'n1' and this object`,
      });
    }
    expect((await outcome(secrets.list(NS))).code).toBe(403);
    // The relation ends with the pods: once they are gone, so is the access.
    for (const name of ['mine', 'reader']) {
      await c.client
        .kind<Pod>('Pod')
        .delete(NS, name, { gracePeriodSeconds: 0 })
        .catch(() => undefined);
    }
    const after = await outcome(secrets.get(NS, 'my-secret'));
    expect(after.code).toBe(403);
  });
});
