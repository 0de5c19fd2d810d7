/**
 * The real kubectl's `get` tables against the embedded control plane with simulated nodes: the columns the
 * reference's printers declare (wide ones with `-o wide`) and cells filled from what the simulation reports:
 * pod IPs and nodes, node addresses and system info, StatefulSet containers and images, and claims bound to
 * the PersistentVolume the simulated provisioner made for them under the seeded default StorageClass.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import type { PersistentVolumeClaim, Pod } from '../src/api/types/core.ts';
import { startSimulatedNodes } from '../src/simulation/nodes.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl, parseTable } from './support/kubectl.ts';

let cluster: TestCluster;
let kubectl: Kubectl;
let cacheDir: string;
const NS = 'default';

beforeAll(async () => {
  cluster = await startTestCluster();
  const nodes = await startSimulatedNodes(cluster.cp, 2);
  cluster.cp.attach(nodes);
  cacheDir = await mkdtemp(join(tmpdir(), 'tables-kubectl-'));
  kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
  await cluster.client.kind<PersistentVolumeClaim>('PersistentVolumeClaim').create({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { namespace: NS, name: 'data-web-0' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const pod = (name: string, image: string, claim?: string): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: NS, name },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'app', image }],
      ...(claim ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] } : {}),
    },
  });
  await cluster.client.kind<Pod>('Pod').create(pod('web-0', 'nginx:1.27', 'data-web-0'));
  await cluster.client.kind<Pod>('Pod').create(pod('crasher', 'busybox:crash'));
  await cluster.client.kind<KubeObject>('StatefulSet').create({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { namespace: NS, name: 'web' },
    spec: {
      replicas: 1,
      serviceName: 'web',
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'app', image: 'nginx:1.27' },
            { name: 'sidecar', image: 'busybox:1.36' },
          ],
        },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

async function get(...args: string[]) {
  return parseTable(await kubectl.ok(['get', ...args]));
}

describe.skipIf(!hasKubectl)('kubectl get tables', () => {
  it('pods -o wide: Ready, Status, Restarts with the last restart, IP, Node, Nominated Node, Readiness Gates', async () => {
    const table = await eventually(async () => {
      const t = await get('pods', '-n', NS, '-o', 'wide');
      const byName = Object.fromEntries(t.rows.map((r) => [r.NAME, r]));
      expect(byName['web-0']?.STATUS).toBe('Running');
      expect(byName.crasher?.STATUS).toBe('CrashLoopBackOff');
      return t;
    });
    expect(table.columns).toEqual([
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      'IP',
      'NODE',
      'NOMINATED NODE',
      'READINESS GATES',
    ]);
    const web = table.rows.find((r) => r.NAME === 'web-0')!;
    expect(web.READY).toMatch(/^[01]\/1$/);
    expect(web.RESTARTS).toBe('0');
    expect(web.IP).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(web.NODE).toMatch(/^sim-node-\d$/);
    expect(web['NOMINATED NODE']).toBe('<none>');
    expect(web['READINESS GATES']).toBe('<none>');
    const crasher = table.rows.find((r) => r.NAME === 'crasher')!;
    expect(crasher.READY).toBe('0/1');
    expect(crasher.RESTARTS).toMatch(/^\d+ \(\d+s ago\)$/);
    // Without -o wide only the priority-0 columns are printed.
    expect((await get('pods', '-n', NS)).columns).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
  });

  it('nodes -o wide: Status, Roles, Version, addresses and the system info the nodes report', async () => {
    const table = await get('nodes', '-o', 'wide');
    expect(table.columns).toEqual([
      'NAME',
      'STATUS',
      'ROLES',
      'AGE',
      'VERSION',
      'INTERNAL-IP',
      'EXTERNAL-IP',
      'OS-IMAGE',
      'KERNEL-VERSION',
      'CONTAINER-RUNTIME',
    ]);
    expect(table.rows.map((r) => r.NAME)).toEqual(['sim-node-1', 'sim-node-2']);
    for (const [i, row] of table.rows.entries()) {
      expect(row).toMatchObject({
        STATUS: 'Ready',
        ROLES: '<none>',
        'INTERNAL-IP': `10.0.0.${i + 1}`,
        'EXTERNAL-IP': '<none>',
        'OS-IMAGE': 'Simulated Linux',
      });
      expect(row.VERSION).toMatch(/^v\d+\.\d+\.\d+$/);
      expect(row['KERNEL-VERSION']).not.toMatch(/^<|^$/);
      expect(row['CONTAINER-RUNTIME']).toMatch(/^simulated:\/\//);
    }
  });

  it('statefulsets -o wide: Ready, Containers and Images', async () => {
    const table = await get('sts', '-n', NS, '-o', 'wide');
    expect(table.columns).toEqual(['NAME', 'READY', 'AGE', 'CONTAINERS', 'IMAGES']);
    expect(table.rows).toHaveLength(1);
    expect(table.rows[0]).toMatchObject({
      NAME: 'web',
      CONTAINERS: 'app,sidecar',
      IMAGES: 'nginx:1.27,busybox:1.36',
    });
    expect(table.rows[0].READY).toMatch(/^\d\/1$/);
  });

  it('configmaps, secrets, services, roles and bindings: the columns and cells of the reference printers', async () => {
    const create = (kind: string, apiVersion: string, fields: Record<string, unknown>) =>
      cluster.client
        .kind<KubeObject>(kind)
        .create({ apiVersion, kind, metadata: { namespace: NS, name: 'cols' }, ...fields });
    await create('ConfigMap', 'v1', { data: { a: '1' }, binaryData: { b: 'Ag==' } });
    await create('Secret', 'v1', { type: 'Opaque', data: { k: 'dg==' } });
    await create('Service', 'v1', { spec: { selector: { app: 'cols' }, ports: [{ port: 80 }] } });
    const rbac = group(cluster.cp.registry.naming, 'rbac.authorization');
    await create('Role', `${rbac}/v1`, { rules: [] });
    await create('RoleBinding', `${rbac}/v1`, {
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', name: 'alice', apiGroup: rbac },
        { kind: 'ServiceAccount', name: 'default', namespace: NS },
      ],
    });
    const cm = await get('configmap', 'cols', '-n', NS);
    expect(cm.columns).toEqual(['NAME', 'DATA', 'AGE']);
    expect(cm.rows[0]).toMatchObject({ NAME: 'cols', DATA: '2' });
    const secret = await get('secret', 'cols', '-n', NS);
    expect(secret.columns).toEqual(['NAME', 'TYPE', 'DATA', 'AGE']);
    expect(secret.rows[0]).toMatchObject({ TYPE: 'Opaque', DATA: '1' });
    const svc = await get('service', 'cols', '-n', NS, '-o', 'wide');
    expect(svc.columns).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
    expect(svc.rows[0]).toMatchObject({
      TYPE: 'ClusterIP',
      'EXTERNAL-IP': '<none>',
      'PORT(S)': '80/TCP',
      SELECTOR: 'app=cols',
    });
    const role = await get('role', 'cols', '-n', NS);
    expect(role.columns).toEqual(['NAME', 'CREATED AT']);
    expect(role.rows[0]['CREATED AT']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const binding = await get('rolebinding', 'cols', '-n', NS, '-o', 'wide');
    expect(binding.columns).toEqual(['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS']);
    expect(binding.rows[0]).toMatchObject({
      ROLE: 'ClusterRole/view',
      USERS: 'alice',
      GROUPS: '',
      SERVICEACCOUNTS: `${NS}/default`,
    });
  });

  it('pvc and pv: the claim bound to the volume provisioned for it under the default class', async () => {
    const claims = await eventually(async () => {
      const t = await get('pvc', '-n', NS);
      expect(t.rows[0]?.STATUS).toBe('Bound');
      return t;
    });
    expect(claims.columns).toEqual([
      'NAME',
      'STATUS',
      'VOLUME',
      'CAPACITY',
      'ACCESS MODES',
      'STORAGECLASS',
      'VOLUMEATTRIBUTESCLASS',
      'AGE',
    ]);
    const claim = claims.rows[0];
    const uid = (await cluster.client.kind<PersistentVolumeClaim>('PersistentVolumeClaim').get(NS, 'data-web-0'))
      .metadata.uid;
    expect(claim).toMatchObject({
      NAME: 'data-web-0',
      VOLUME: `pvc-${uid}`,
      CAPACITY: '1Gi',
      'ACCESS MODES': 'RWO',
      STORAGECLASS: 'standard',
      VOLUMEATTRIBUTESCLASS: '<unset>',
    });
    const volumes = await eventually(async () => {
      const t = await get('pv');
      expect(t.rows[0]?.STATUS).toBe('Bound');
      return t;
    });
    expect(volumes.columns).toEqual([
      'NAME',
      'CAPACITY',
      'ACCESS MODES',
      'RECLAIM POLICY',
      'STATUS',
      'CLAIM',
      'STORAGECLASS',
      'VOLUMEATTRIBUTESCLASS',
      'REASON',
      'AGE',
    ]);
    expect(volumes.rows).toHaveLength(1);
    expect(volumes.rows[0]).toMatchObject({
      NAME: `pvc-${uid}`,
      CAPACITY: '1Gi',
      'ACCESS MODES': 'RWO',
      'RECLAIM POLICY': 'Delete',
      CLAIM: `${NS}/data-web-0`,
      STORAGECLASS: 'standard',
      VOLUMEATTRIBUTESCLASS: '<unset>',
      // An empty reason is printed blank, as the reference prints it.
      REASON: '',
    });
    const classes = await get('storageclass');
    expect(classes.columns).toEqual([
      'NAME',
      'PROVISIONER',
      'RECLAIMPOLICY',
      'VOLUMEBINDINGMODE',
      'ALLOWVOLUMEEXPANSION',
      'AGE',
    ]);
    expect(classes.rows[0]).toMatchObject({
      NAME: 'standard (default)',
      RECLAIMPOLICY: 'Delete',
      VOLUMEBINDINGMODE: 'Immediate',
      ALLOWVOLUMEEXPANSION: 'false',
    });
  });

  it('deleting the claim deletes its volume, as the class reclaim policy Delete says', async () => {
    await cluster.client.kind<Pod>('Pod').delete(NS, 'web-0');
    await cluster.client.kind<PersistentVolumeClaim>('PersistentVolumeClaim').delete(NS, 'data-web-0');
    await eventually(async () => {
      const out = await kubectl.run(['get', 'pv']);
      expect(out.stderr).toContain('No resources found');
      return true;
    });
  });
});
