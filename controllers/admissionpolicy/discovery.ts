/**
 * The REST mapping the status controller resolves kinds with: the server's discovery documents
 * (`/api/v1`, `/apis`, `/apis/<group>/<version>`), read whole and kept until the next refresh.
 */
import type { KubeClient } from '../../src/client/client.ts';
import type { GVK, GVR } from './core.ts';

interface ResourceList {
  resources?: { name: string; kind: string }[];
}
interface GroupList {
  groups?: { name: string; versions?: { version: string }[] }[];
}

export interface Discovery {
  kindsFor(r: GVR): GVK[];
  /** Changes exactly when the set of served resources changes. */
  readonly fingerprint: string;
}

const key = (r: GVR) => `${r.group}/${r.version}/${r.resource}`;

export async function discover(client: KubeClient, signal?: AbortSignal): Promise<Discovery> {
  const get = async <T>(path: string) => (await client.request<T>('GET', path, { signal })).body;
  const lists: [string, string, ResourceList][] = [['', 'v1', await get<ResourceList>('/api/v1')]];
  for (const g of (await get<GroupList>('/apis')).groups ?? []) {
    for (const { version } of g.versions ?? []) {
      try {
        lists.push([g.name, version, await get<ResourceList>(`/apis/${g.name}/${version}`)]);
      } catch (err) {
        // As client-go's partial discovery: a group version that fails (an aggregated API whose backend is
        // down) leaves only its own kinds unresolved; the rest still type-check. A refresh picks it up later.
        if (signal?.aborted) throw err;
      }
    }
  }
  const kinds = new Map<string, GVK>();
  for (const [group, version, list] of lists) {
    for (const r of list.resources ?? []) {
      if (!r.name.includes('/')) kinds.set(key({ group, version, resource: r.name }), { group, version, kind: r.kind });
    }
  }
  return {
    kindsFor: (r) => {
      const k = kinds.get(key(r));
      return k ? [k] : [];
    },
    fingerprint: [...kinds.keys()].sort().join(','),
  };
}
