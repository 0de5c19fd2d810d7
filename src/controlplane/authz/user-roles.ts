/**
 * The reference's user-facing roles: `admin`, `edit` and `view` have no rules of their own but an
 * `aggregationRule`, and the ClusterRole aggregation controller fills them from every role carrying
 * the matching `aggregate-to-*` label: the `system:aggregate-to-*` roles here, `view` into `edit`,
 * `edit` into `admin`, and any role a user labels. Rules cover the resources this server serves.
 */
import type { KubeObject } from '../../api/meta.ts';
import { group, type Naming } from '../../api/naming.ts';
import type { PolicyRule } from '../../api/types/index.ts';

type RoleBuilder = (name: string, rules: PolicyRule[]) => KubeObject;

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

export function userFacingRoles(n: Naming, role: RoleBuilder): KubeObject[] {
  const { aggregateToAdmin, aggregateToEdit, aggregateToView } = n.labels;
  const on = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({
    verbs,
    apiGroups,
    resources,
  });
  const workloads = ['deployments', 'replicasets', 'statefulsets'];
  const scaled = (names: string[]) => names.flatMap((r) => [r, `${r}/scale`]);
  const withStatus = (names: string[]) => names.flatMap((r) => [r, `${r}/status`]);

  const labelled = (name: string, label: string, rules: PolicyRule[]): KubeObject => {
    const r = role(name, rules);
    return { ...r, metadata: { ...r.metadata, labels: { ...r.metadata.labels, [label]: 'true' } } };
  };
  const aggregating = (name: string, from: string, label?: string): KubeObject => {
    const r = label ? labelled(name, label, []) : role(name, []);
    const { rules: _none, ...rest } = r as KubeObject & { rules?: PolicyRule[] };
    return { ...rest, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [from]: 'true' } }] } } as KubeObject;
  };

  return [
    aggregating('admin', aggregateToAdmin),
    aggregating('edit', aggregateToEdit, aggregateToAdmin),
    aggregating('view', aggregateToView, aggregateToEdit),
    labelled('system:aggregate-to-admin', aggregateToAdmin, [
      on(['create'], [group(n, 'authorization')], ['localsubjectaccessreviews']),
      on([...READ, ...WRITE], [group(n, 'rbac.authorization')], ['roles', 'rolebindings']),
    ]),
    labelled('system:aggregate-to-edit', aggregateToEdit, [
      on(
        WRITE,
        [''],
        ['pods', 'services', 'endpoints', 'configmaps', 'persistentvolumeclaims', 'secrets', 'serviceaccounts'],
      ),
      on(WRITE, [''], scaled(['replicationcontrollers'])),
      on(['create'], [''], ['pods/eviction']),
      on(READ, [''], ['secrets']),
      on(WRITE, ['apps'], scaled(workloads)),
      on(WRITE, ['policy'], ['poddisruptionbudgets']),
      on(WRITE, [group(n, 'networking')], ['ingresses']),
    ]),
    labelled('system:aggregate-to-view', aggregateToView, [
      on(
        READ,
        [''],
        [
          ...withStatus(['pods', 'services', 'persistentvolumeclaims', 'namespaces']),
          ...scaled(['replicationcontrollers']),
          'replicationcontrollers/status',
          'endpoints',
          'configmaps',
          'serviceaccounts',
          'events',
          'limitranges',
        ],
      ),
      on(READ, ['apps'], [...scaled(workloads), ...workloads.map((w) => `${w}/status`), 'controllerrevisions']),
      on(READ, ['policy'], withStatus(['poddisruptionbudgets'])),
      on(READ, [group(n, 'networking')], withStatus(['ingresses'])),
      on(READ, [group(n, 'discovery')], ['endpointslices']),
    ]),
  ];
}
