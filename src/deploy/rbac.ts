/**
 * The daemon's RBAC: a ClusterRole with exactly the rules the manager and the default controllers
 * declare, bound to the daemon's user (for kubeconfig or client-certificate identities) and to its
 * ServiceAccount (in a pod).
 */
import type { KubeObject } from '../api/meta.ts';
import { DAEMON_NAME, group, type Naming } from '../api/naming.ts';
import type { PolicyRule } from '../api/types/rbac.ts';
import type { ControllerDefinition } from '../controller/controller.ts';
import { managerPermissions, mergeRules } from '../controller/permissions.ts';

/** The user the daemon authenticates as outside a pod (a client certificate or kubeconfig identity). */
export function controllerManagerUser(): string {
  return `system:${DAEMON_NAME}`;
}

export function controllerManagerRules(n: Naming, definitions: ControllerDefinition[]): PolicyRule[] {
  const controllers = definitions.filter((d) => d.enabledByDefault).flatMap((d) => d.permissions(n, {}));
  return mergeRules([...managerPermissions(n), ...controllers]);
}

/** Who gets the role: a ServiceAccount (in a pod) and a user (kubeconfig or client certificate). */
export interface Grantee {
  /** ServiceAccount name. */
  name: string;
  namespace: string;
  /** User name, also the ClusterRole and binding name. */
  user: string;
}

export function defaultGrantee(n: Naming): Grantee {
  return { name: DAEMON_NAME, namespace: n.systemNamespace, user: controllerManagerUser() };
}

export function controllerManagerRbac(
  n: Naming,
  definitions: ControllerDefinition[],
  { name, namespace, user }: Grantee = defaultGrantee(n),
): KubeObject[] {
  const rbac = `${group(n, 'rbac.authorization')}/v1`;
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: user }, rules: controllerManagerRules(n, definitions) },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: user },
      roleRef: { apiGroup: group(n, 'rbac.authorization'), kind: 'ClusterRole', name: user },
      subjects: [
        { kind: 'User', apiGroup: group(n, 'rbac.authorization'), name: user },
        { kind: 'ServiceAccount', name, namespace },
      ],
    },
  ];
}
