/** Starts an embedded control plane on a free port for a test, with clients for it. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/client/client.ts';
import { ControlPlane, type ControlPlaneOptions } from '../../src/controlplane/control-plane.ts';

export interface TestCluster {
  cp: ControlPlane;
  kubeconfig: string;
  kc: KubeConfig;
  client: KubeClient;
  dir: string;
  stop(): Promise<void>;
}

export async function startTestCluster(options: Partial<ControlPlaneOptions> = {}): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-test-'));
  const cp = new ControlPlane({ port: 0, dataDir: dir, ...options });
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
