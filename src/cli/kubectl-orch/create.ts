/**
 * `kubectl orch create role|clusterrole|rolebinding|clusterrolebinding`: kubectl's flags, checks and
 * objects, in either flavor's RBAC group. The objects are built by pure functions (table-tested).
 */
import type { KubeObject } from '../../api/meta.ts';
import { group } from '../../api/naming.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { PolicyRule, RoleRef, Subject } from '../../api/types/rbac.ts';
import { type OutputFormat, printObject, UsageError } from './output.ts';
import { resolveResource } from './resources.ts';
import type { Session } from './session.ts';

const RESOURCE_VERBS = [
  '*',
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'use',
  'bind',
  'escalate',
  'impersonate',
];
const NON_RESOURCE_VERBS = ['*', 'get', 'post', 'put', 'delete', 'patch', 'head', 'options'];

export interface RoleFlags {
  verbs: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceUrls: string[];
  aggregationRule?: string;
}

export interface BindingFlags {
  role?: string;
  clusterRole?: string;
  users: string[];
  groups: string[];
  serviceAccounts: string[];
}

/** Comma-separated values of a repeated flag, as kubectl's string slices read them. */
export const splitList = (values: readonly string[]): string[] => values.flatMap((v) => v.split(',')).filter(Boolean);

/** The rules kubectl builds: one per API group, resources in the order given, resource names on each. */
export function roleRules(registry: ResourceRegistry, f: RoleFlags, clusterScoped: boolean): PolicyRule[] {
  const verbs = splitList(f.verbs);
  const resources = splitList(f.resources);
  const urls = splitList(f.nonResourceUrls);
  if (f.aggregationRule !== undefined) {
    if (verbs.length || resources.length || urls.length) {
      throw new UsageError(
        'aggregation rule must be specified without nonResourceURLs, resources, verbs or resourceNames',
      );
    }
    return [];
  }
  if (!verbs.length) throw new UsageError('at least one verb must be specified');
  if (!resources.length && !urls.length) {
    throw new UsageError(
      clusterScoped ? 'one of resource or nonResourceURL must be specified' : 'at least one resource must be specified',
    );
  }
  const allowedVerbs = resources.length ? RESOURCE_VERBS : NON_RESOURCE_VERBS;
  for (const verb of verbs) if (!allowedVerbs.includes(verb)) throw new UsageError(`invalid verb: '${verb}'`);
  if (urls.length) {
    for (const verb of verbs) {
      if (!NON_RESOURCE_VERBS.includes(verb)) throw new UsageError(`invalid verb: '${verb}' for nonResourceURL`);
    }
    for (const url of urls) {
      if (!url.startsWith('/')) throw new UsageError(`nonResourceURL should start with /`);
    }
  }
  const ruleVerbs = verbs.includes('*') ? ['*'] : verbs;
  const byGroup = new Map<string, string[]>();
  for (const text of resources) {
    const [base, sub] = text.split('/', 2);
    const ref = resolveResource(registry, base);
    if (!ref.rt && base !== '*') throw new UsageError(`the server doesn't have a resource type "${base}"`);
    const list = byGroup.get(ref.group) ?? [];
    list.push(sub ? `${ref.resource}/${sub}` : ref.resource);
    byGroup.set(ref.group, list);
  }
  const names = splitList(f.resourceNames);
  const rules: PolicyRule[] = [...byGroup].map(([g, rs]) => ({
    verbs: ruleVerbs,
    apiGroups: [g],
    resources: rs,
    ...(names.length ? { resourceNames: names } : {}),
  }));
  if (urls.length) rules.push({ verbs: ruleVerbs, nonResourceURLs: urls });
  return rules;
}

/** `key=value,key2=value2` to a label selector's matchLabels. */
export function aggregationSelector(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid aggregation rule "${pair}": expected key=value`);
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

export function bindingParts(
  rbacGroup: string,
  f: BindingFlags,
  clusterScoped: boolean,
): { roleRef: RoleRef; subjects: Subject[] } {
  if (clusterScoped && f.role) throw new UsageError('unknown flag: --role');
  if (clusterScoped ? !f.clusterRole : Boolean(f.role) === Boolean(f.clusterRole)) {
    throw new UsageError(
      clusterScoped ? 'clusterrole must be specified' : 'exactly one of clusterrole or role must be specified',
    );
  }
  const subjects: Subject[] = [
    ...splitList(f.users).map((name) => ({ kind: 'User', apiGroup: rbacGroup, name })),
    ...splitList(f.groups).map((name) => ({ kind: 'Group', apiGroup: rbacGroup, name })),
    ...splitList(f.serviceAccounts).map((text) => {
      const parts = text.split(':');
      if (parts.length !== 2 || !parts[0] || !parts[1])
        throw new UsageError(`serviceaccount must be <namespace>:<name>`);
      return { kind: 'ServiceAccount', namespace: parts[0], name: parts[1] };
    }),
  ];
  return {
    roleRef: { apiGroup: rbacGroup, kind: f.role ? 'Role' : 'ClusterRole', name: (f.role ?? f.clusterRole)! },
    subjects,
  };
}

export type DryRun = 'none' | 'client' | 'server';

export function dryRunMode(value: string | undefined): DryRun {
  if (value === undefined || value === 'none' || value === 'false') return 'none';
  if (value === 'client' || value === 'true') return 'client';
  if (value === 'server') return 'server';
  throw new UsageError(`Invalid dry-run value (${value}). Must be "none", "server", or "client".`);
}

export type CreateKind = 'role' | 'clusterrole' | 'rolebinding' | 'clusterrolebinding';

const KINDS: Record<CreateKind, string> = {
  role: 'Role',
  clusterrole: 'ClusterRole',
  rolebinding: 'RoleBinding',
  clusterrolebinding: 'ClusterRoleBinding',
};

export async function create(
  s: Session,
  what: CreateKind,
  names: string[],
  f: RoleFlags & BindingFlags & { dryRun: DryRun; output: OutputFormat; fieldManager: string },
  out: (text: string) => void,
): Promise<number> {
  if (names.length !== 1) throw new UsageError(`exactly one NAME is required, got ${names.length}`);
  const rbacGroup = group(s.registry.naming, 'rbac.authorization');
  const kind = KINDS[what];
  const rt = s.registry.kind(`${rbacGroup}/v1`, kind);
  if (!rt) throw new Error(`the server has no ${rbacGroup}/v1 ${kind}`);
  const clusterScoped = what.startsWith('cluster');
  const body: Record<string, unknown> =
    what === 'role' || what === 'clusterrole'
      ? {
          rules: roleRules(s.registry, f, clusterScoped),
          ...(f.aggregationRule !== undefined
            ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: aggregationSelector(f.aggregationRule) }] } }
            : {}),
        }
      : bindingParts(rbacGroup, f, clusterScoped);
  const metadata = { name: names[0], ...(rt.namespaced ? { namespace: s.namespace } : {}) };
  const obj = { apiVersion: `${rbacGroup}/v1`, kind, metadata, ...body } as KubeObject;
  if (f.dryRun === 'client') {
    out(printObject(rt, obj, f.output, 'created (dry run)'));
    return 0;
  }
  const created = await s.client
    .resource(rt)
    .create(obj, { dryRun: f.dryRun === 'server', fieldManager: f.fieldManager });
  out(printObject(rt, created, f.output, f.dryRun === 'server' ? 'created (server dry run)' : 'created'));
  return 0;
}
