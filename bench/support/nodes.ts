/** A benchmark's control plane started with 3 simulated nodes running its pods, and an unthrottled admin client. */

import { KubeClient } from '../../src/client/client.ts';
import { KubeConfig } from '../../src/client/kubeconfig.ts';
import type { ControlPlane } from '../../src/controlplane/control-plane.ts';
import { startSimulatedNodes } from '../../src/simulation/nodes.ts';

export async function startWithNodes(cp: ControlPlane): Promise<{ kc: KubeConfig; client: KubeClient }> {
  await cp.start();
  cp.attach(await startSimulatedNodes(cp, 3));
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  return { kc, client: new KubeClient(kc, cp.registry, { qps: 0 }) };
}
