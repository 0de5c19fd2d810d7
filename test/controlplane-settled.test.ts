/**
 * `ControlPlane.settled()`, which tests rely on to see the plane's own controllers done: the garbage collector and
 * the pv/pvc-protection controller feed each other (the collector deletes a pod, which releases a claim, whose
 * removal is the collector's again), so it returns only once both are idle. On etcd, where each of their writes
 * takes a round trip, a look at each once leaves the last links undone. Kubernetes flavor, as the admin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, OwnerReference } from '../src/api/meta.ts';
import { isNotFound } from '../src/client/errors.ts';
import { startTestCluster, type TestCluster, testStorage } from './support/cluster.ts';
import { etcdAvailable } from './support/etcd.ts';

const NS = 'settling';
let c: TestCluster;

describe.skipIf(!etcdAvailable)('settled, on etcd', () => {
  beforeAll(async () => {
    c = await startTestCluster({ flavor: 'kubernetes', ...(await testStorage('etcd')) });
    await c.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  afterAll(async () => {
    await c?.stop();
  });

  const create = (kind: string, name: string, rest: Partial<KubeObject> = {}, owner?: KubeObject) => {
    const ownerReferences: OwnerReference[] | undefined = owner && [
      { apiVersion: 'v1', kind: owner.kind ?? '', name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '' },
    ];
    return c.client
      .kind(kind)
      .create({ apiVersion: 'v1', kind, ...rest, metadata: { name, namespace: NS, ownerReferences } });
  };

  it('waits until the collector and the protection controller are both idle, as each feeds the other', async () => {
    const podOwner = await create('ConfigMap', 'pod-owner');
    const claim = await create('PersistentVolumeClaim', 'held', {
      spec: { storageClassName: 'manual', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    const podSpec = {
      nodeName: 'somewhere',
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'registry.example/app:1' }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'held' } }],
    };
    await create('Pod', 'mounter', { spec: podSpec }, podOwner);
    // What the claim owns: a chain, each ConfigMap owning the next.
    const chain = Array.from({ length: 8 }, (_, i) => `dependent-${i + 1}`);
    let owner = claim;
    for (const name of chain) owner = await create('ConfigMap', name, {}, owner);
    await c.client.kind('PersistentVolumeClaim').delete(NS, 'held');

    // The collector deletes the pod, the pod's going releases the claim, the claim's removal is the collector's.
    await c.client.kind('ConfigMap').delete(NS, 'pod-owner');
    await c.cp.settled();

    const left = [
      ['Pod', 'mounter'],
      ['PersistentVolumeClaim', 'held'],
      ...chain.map((name) => ['ConfigMap', name]),
    ].map(([kind, name]) =>
      c.client
        .kind(kind)
        .get(NS, name)
        .then(
          () => `${kind} ${name}`,
          (err) => (isNotFound(err) ? undefined : Promise.reject(err)),
        ),
    );
    expect((await Promise.all(left)).filter(Boolean)).toEqual([]);
  });
});
