/** Starts an embedded control plane on a free port for a test, with clients for it. */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../src/client/client.ts';
import { KubeConfig } from '../../src/client/kubeconfig.ts';
import { ControlPlane, type ControlPlaneOptions, type StorageKind } from '../../src/controlplane/control-plane.ts';
import { sharedEtcd } from './etcd.ts';

export interface TestCluster {
  cp: ControlPlane;
  kubeconfig: string;
  kc: KubeConfig;
  client: KubeClient;
  dir: string;
  stop(): Promise<void>;
}

/**
 * The store test clusters use: `ORCH_TEST_STORAGE` = memory (the default), embedded (in the cluster's
 * fresh temp directory) or etcd (this process's etcd, under a prefix of the cluster's own).
 */
export const TEST_STORAGE = (process.env.ORCH_TEST_STORAGE ?? 'memory') as StorageKind;

export async function testStorage(kind: StorageKind = TEST_STORAGE): Promise<Partial<ControlPlaneOptions>> {
  if (kind !== 'etcd') return { storage: kind };
  return { storage: 'etcd', etcdServers: [await sharedEtcd()], etcdPrefix: `/test-${randomUUID()}/` };
}

export async function startTestCluster(options: Partial<ControlPlaneOptions> = {}): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-test-'));
  const storage = options.storage ? {} : await testStorage();
  const cp = new ControlPlane({ port: 0, dataDir: dir, ...storage, ...options });
  await cp.start();
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const client = new KubeClient(kc, cp.registry, { qps: 0 });
  return {
    cp,
    kubeconfig: cp.kubeconfigPath,
    kc,
    client,
    dir,
    async stop() {
      await cp.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
