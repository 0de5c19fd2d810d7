/**
 * The reference's bootstrap roles of the controllers this project runs (`system:controller:<account>`, each bound
 * to its service account in the system namespace), so that a daemon with `--use-service-account-credentials`
 * works here as against a real cluster: the rules of the reference's controller policy, in the flavor's groups
 * and signer names, for the accounts in `CONTROLLER_ACCOUNTS` only.
 */
import {
  CONTROLLER_ACCOUNTS,
  CONTROLLER_ROLE_PREFIX,
  trustBundlePublisherAccount,
} from '../../api/controller-accounts.ts';
import type { KubeObject } from '../../api/meta.ts';
import { group, type Naming } from '../../api/naming.ts';
import type { PolicyRule } from '../../api/types/index.ts';

/** A rule with its lists sorted, as the reference's rule builder stores them. */
function rule(verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule {
  const sorted = (xs: string[]) => [...new Set(xs)].sort();
  return {
    verbs: sorted(verbs),
    apiGroups: sorted(apiGroups),
    resources: sorted(resources),
    ...(resourceNames && { resourceNames: sorted(resourceNames) }),
  };
}

/** Each controller account and its role's rules. */
export function controllerRoleRules(n: Naming): Record<string, PolicyRule[]> {
  const A = CONTROLLER_ACCOUNTS;
  const certificates = group(n, 'certificates');
  const admission = group(n, 'admissionregistration');
  const events = rule(['create', 'update', 'patch'], ['', group(n, 'events')], ['events']);
  const READ = ['get', 'list', 'watch'];
  const s = n.signers;
  return {
    [A.clusterRoleAggregation]: [
      rule(['escalate', ...READ, 'update', 'patch'], [group(n, 'rbac.authorization')], ['clusterroles']),
    ],
    [A.disruption]: [
      rule(READ, ['extensions', 'apps'], ['deployments']),
      rule(READ, ['apps', 'extensions'], ['replicasets']),
      rule(READ, [''], ['replicationcontrollers']),
      rule(READ, ['policy'], ['poddisruptionbudgets']),
      rule(READ, ['apps'], ['statefulsets']),
      rule(['update'], ['policy'], ['poddisruptionbudgets/status']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(['get'], ['*'], ['*/scale']),
      events,
    ],
    [A.serviceAccount]: [rule(['create'], [''], ['serviceaccounts']), events],
    [A.statefulSet]: [
      rule(['list', 'watch'], [''], ['pods']),
      rule(READ, ['apps'], ['statefulsets']),
      rule(['update'], ['apps'], ['statefulsets/status']),
      rule(['update'], ['apps'], ['statefulsets/finalizers']),
      rule(['get', 'create', 'delete', 'update', 'patch'], [''], ['pods']),
      rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], ['apps'], ['controllerrevisions']),
      rule(['get', 'create', 'list', 'watch'], [''], ['persistentvolumeclaims']),
      rule(['update', 'delete'], [''], ['persistentvolumeclaims']),
      rule(['update'], [''], ['pods/finalizers']),
      events,
    ],
    [A.certificates]: [
      rule([...READ, 'delete'], [certificates], ['certificatesigningrequests']),
      rule(['update'], [certificates], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
      rule(['approve'], [certificates], ['signers'], [s.apiServerClientNodeAgent]),
      rule(
        ['sign'],
        [certificates],
        ['signers'],
        [s.legacyUnknown, s.apiServerClient, s.apiServerClientNodeAgent, s.nodeAgentServing],
      ),
      rule(['create'], [group(n, 'authorization')], ['subjectaccessreviews']),
      events,
    ],
    [A.rootCaPublisher]: [rule(['create', 'update'], [''], ['configmaps']), events],
    [trustBundlePublisherAccount(n)]: [
      rule(['attest'], [certificates], ['signers'], [s.apiServerServing]),
      rule(['create', 'update', 'delete', 'list', 'watch'], [certificates], ['clustertrustbundles']),
      events,
    ],
    [A.admissionPolicyStatus]: [
      rule(READ, [admission], ['validatingadmissionpolicies']),
      rule(['get', 'patch', 'update'], [admission], ['validatingadmissionpolicies/status']),
      events,
    ],
  };
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

/**
 * The controller roles and their bindings, built with the policy's own builders: each binding names the role and
 * the account of the same name in the system namespace.
 */
export function controllerPolicy(
  n: Naming,
  role: (name: string, rules: PolicyRule[]) => KubeObject,
  binding: (name: string, subjects: Subject[]) => KubeObject,
): [roles: KubeObject[], bindings: KubeObject[]] {
  const entries = Object.entries(controllerRoleRules(n));
  const subject = (account: string) => ({ kind: 'ServiceAccount', name: account, namespace: n.systemNamespace });
  return [
    entries.map(([account, rules]) => role(`${CONTROLLER_ROLE_PREFIX}${account}`, rules)),
    entries.map(([account]) => binding(`${CONTROLLER_ROLE_PREFIX}${account}`, [subject(account)])),
  ];
}
