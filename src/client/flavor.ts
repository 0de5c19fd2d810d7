import { type FlavorName, naming } from '../api/naming.ts';
import { ResourceRegistry } from '../api/registry.ts';
import { KubeClient } from './client.ts';
import type { KubeConfig } from './kubeconfig.ts';

/** `--api-flavor=auto`: the flavor whose coordination group the server serves. */
export async function detectFlavor(kc: KubeConfig): Promise<FlavorName> {
  // One client for both questions: one connection. (Its registry is not consulted by a bare request.)
  const probe = new KubeClient(kc, new ResourceRegistry('orch'), { qps: 0, timeoutMs: 10_000 });
  for (const flavor of ['orch', 'kubernetes'] as const) {
    try {
      await probe.request('GET', `/apis/coordination.${naming(flavor).groupSuffix}`);
      return flavor;
    } catch {
      // not this flavor
    }
  }
  throw new Error("the server serves neither flavor's coordination group");
}
