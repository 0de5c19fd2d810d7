/**
 * The bootstrap RBAC policy this control plane needs, with the reference's role names, rules, labels and
 * annotations in the flavor's groups: `cluster-admin` for `system:masters`; discovery, health and the self
 * reviews for every authenticated user; the node bootstrap roles the certificates feature uses; and the roles of
 * the controllers' service accounts (`--use-service-account-credentials`).
 */
import type { KubeObject } from '../../api/meta.ts';
import { group, type Naming } from '../../api/naming.ts';
import { NODES_GROUP } from '../../api/node-identity.ts';
import type { PolicyRule } from '../../api/types/index.ts';
import { AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from '../authn.ts';
import { controllerPolicy, type Subject } from './controller-roles.ts';
import { userFacingRoles } from './user-roles.ts';

/** Members of this group are allowed every request, whatever the policy says. */
export const PRIVILEGED_GROUP = 'system:masters';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';

/** Cluster roles (first) and cluster role bindings, ready to store. */
export function defaultPolicy(n: Naming): KubeObject[] {
  const rbac = group(n, 'rbac.authorization');
  const certificates = group(n, 'certificates');
  const authorization = group(n, 'authorization');
  const authentication = group(n, 'authentication');
  const apiVersion = `${rbac}/v1`;
  const metadata = (name: string) => ({
    name,
    labels: { [`${n.domain}/bootstrapping`]: 'rbac-defaults' },
    annotations: { [`rbac.authorization.${n.domain}/autoupdate`]: 'true' },
  });
  const role = (name: string, rules: PolicyRule[]): KubeObject =>
    ({ apiVersion, kind: 'ClusterRole', metadata: metadata(name), rules }) as KubeObject;
  const bindingTo = (name: string, subjects: Subject[]): KubeObject =>
    ({
      apiVersion,
      kind: 'ClusterRoleBinding',
      metadata: metadata(name),
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name },
      subjects,
    }) as KubeObject;
  const binding = (name: string, groups: string[]): KubeObject =>
    bindingTo(
      name,
      groups.map((g) => ({ kind: 'Group', apiGroup: rbac, name: g })),
    );
  const [controllerRoles, controllerBindings] = controllerPolicy(n, role, bindingTo);
  // The reference's rule builder stores a rule's lists sorted: a rules review lists the URLs in that order.
  const urls = (...nonResourceURLs: string[]): PolicyRule => ({
    verbs: ['get'],
    nonResourceURLs: nonResourceURLs.sort(),
  });
  const csrRole = (sub: string) => `system:${certificates}:certificatesigningrequests:${sub}`;

  return [
    role('cluster-admin', [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]),
    role('system:discovery', [
      urls(
        '/livez',
        '/readyz',
        '/healthz',
        '/version',
        '/version/',
        '/openapi',
        '/openapi/*',
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
      ),
    ]),
    role('system:basic-user', [
      {
        verbs: ['create'],
        apiGroups: [authorization],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
      { verbs: ['create'], apiGroups: [authentication], resources: ['selfsubjectreviews'] },
    ]),
    role('system:public-info-viewer', [urls('/livez', '/readyz', '/healthz', '/version', '/version/')]),
    role('system:node-bootstrapper', [
      {
        verbs: ['create', 'get', 'list', 'watch'],
        apiGroups: [certificates],
        resources: ['certificatesigningrequests'],
      },
    ]),
    role(csrRole('nodeclient'), [
      { verbs: ['create'], apiGroups: [certificates], resources: ['certificatesigningrequests/nodeclient'] },
    ]),
    role(csrRole('selfnodeclient'), [
      { verbs: ['create'], apiGroups: [certificates], resources: ['certificatesigningrequests/selfnodeclient'] },
    ]),
    ...userFacingRoles(n, role),
    ...controllerRoles,
    binding('cluster-admin', [PRIVILEGED_GROUP]),
    binding('system:discovery', [AUTHENTICATED_GROUP]),
    binding('system:basic-user', [AUTHENTICATED_GROUP]),
    binding('system:public-info-viewer', [AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP]),
    binding('system:node-bootstrapper', [BOOTSTRAPPERS_GROUP]),
    binding(csrRole('nodeclient'), [BOOTSTRAPPERS_GROUP]),
    binding(csrRole('selfnodeclient'), [NODES_GROUP]),
    ...controllerBindings,
  ];
}
