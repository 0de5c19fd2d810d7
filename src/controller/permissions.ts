/**
 * What the daemon may do, as RBAC rules: each controller declares its own needs, the manager adds
 * its own (lease, candidate, events, delegated authentication), and the union is the ClusterRole
 * shipped in `deploy/`. Rules that name the same resources collapse into one with the union of verbs.
 */
import { group, type Naming } from '../api/naming.ts';
import type { PolicyRule } from '../api/types/rbac.ts';

export const READ = ['get', 'list', 'watch'];

export function rule(apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]): PolicyRule {
  return resourceNames ? { apiGroups, resources, verbs, resourceNames } : { apiGroups, resources, verbs };
}

/** The manager's own needs, whatever controllers run. */
export function managerPermissions(n: Naming): PolicyRule[] {
  const coordination = group(n, 'coordination');
  return [
    // list and watch: `--sharding` replicas watch every shard Lease.
    rule([coordination], ['leases'], [...READ, 'create', 'update']),
    rule([coordination], ['leasecandidates'], [...READ, 'create', 'update']),
    rule([group(n, 'events')], ['events'], ['create', 'update', 'patch']),
    rule([group(n, 'authentication')], ['tokenreviews'], ['create']),
    rule([group(n, 'authorization')], ['subjectaccessreviews'], ['create']),
    // --use-service-account-credentials: each controller's tokens, and its account (and namespace, looked up) created
    // when a token request answers 404.
    rule([''], ['namespaces'], ['get']),
    rule([''], ['serviceaccounts'], ['create']),
    rule([''], ['serviceaccounts/token'], ['create']),
  ];
}

/** One rule per (groups, resources, names), verbs merged and sorted; a stable order for diffs. */
export function mergeRules(rules: PolicyRule[]): PolicyRule[] {
  const byTarget = new Map<string, PolicyRule>();
  for (const r of rules) {
    const key = JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.nonResourceURLs ?? []]);
    const existing = byTarget.get(key);
    if (existing) existing.verbs = [...new Set([...existing.verbs, ...r.verbs])].sort();
    else byTarget.set(key, { ...r, verbs: [...new Set(r.verbs)].sort() });
  }
  return [...byTarget.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, r]) => r);
}
