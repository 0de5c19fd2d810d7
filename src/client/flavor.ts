import type { KubeConfig } from '@kubernetes/client-node';
import { type FlavorName, naming } from '../api/naming.ts';
import { ResourceRegistry } from '../api/registry.ts';
import { KubeClient } from './client.ts';

/** `--api-flavor=auto`: the flavor whose coordination group the server serves. */
export async function detectFlavor(kc: KubeConfig): Promise<FlavorName> {
  for (const flavor of ['orch', 'kubernetes'] as const) {
    const probe = new KubeClient(kc, new ResourceRegistry(flavor), { qps: 0, timeoutMs: 10_000 });
    try {
      await probe.request('GET', `/apis/coordination.${naming(flavor).groupSuffix}`);
      return flavor;
    } catch {
      // not this flavor
    }
  }
  throw new Error("the server serves neither flavor's coordination group");
}
