/**
 * What every `kubectl orch` command starts from, read the way kubectl reads it: the kubeconfig
 * (`--kubeconfig`, `$KUBECONFIG`, `~/.kube/config`), `--context`, the namespace (`-n`, else the
 * context's, else `default`), impersonation (`--as`, `--as-group`, `--as-uid`), and the server's naming
 * flavor, which discovery decides as the daemon's `--api-flavor=auto` does.
 */
import type { FlavorName } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import { KubeClient } from '../../client/client.ts';
import { detectFlavor } from '../../client/flavor.ts';
import { KubeConfig } from '../../client/kubeconfig.ts';

export interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  as?: string;
  asGroups: string[];
  asUid?: string;
}

export interface Session {
  client: KubeClient;
  registry: ResourceRegistry;
  flavor: FlavorName;
  namespace: string;
  /** Whether `-n` was given (kubectl warns or refuses on some commands when it was). */
  namespaceGiven: boolean;
}

export function loadKubeConfig(o: Pick<GlobalOptions, 'kubeconfig' | 'context'>): KubeConfig {
  const kc = new KubeConfig();
  if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
  else kc.loadFromDefault();
  if (o.context) {
    if (!kc.getContextObject(o.context)) throw new Error(`context "${o.context}" does not exist`);
    kc.currentContext = o.context;
  }
  return kc;
}

function impersonation(o: GlobalOptions): Record<string, string[]> {
  if (!o.as && (o.asGroups.length || o.asUid)) {
    throw new Error('requesting uid or groups without a user is not allowed');
  }
  const headers: Record<string, string[]> = {};
  if (o.as) headers['Impersonate-User'] = [o.as];
  if (o.asGroups.length) headers['Impersonate-Group'] = o.asGroups;
  if (o.asUid) headers['Impersonate-Uid'] = [o.asUid];
  return headers;
}

export async function openSession(o: GlobalOptions): Promise<Session> {
  const kc = loadKubeConfig(o);
  const flavor = await detectFlavor(kc);
  const registry = new ResourceRegistry(flavor);
  // A person at a terminal: no client-side throttle, kubectl's user agent family.
  const client = new KubeClient(kc, registry, { qps: 0, userAgent: 'kubectl-orch', headers: impersonation(o) });
  const contextNamespace = kc.getContextObject(kc.currentContext)?.namespace;
  return {
    client,
    registry,
    flavor,
    namespace: o.namespace || contextNamespace || 'default',
    namespaceGiven: Boolean(o.namespace),
  };
}
