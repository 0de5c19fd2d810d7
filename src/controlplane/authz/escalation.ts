/**
 * The reference's RBAC escalation check: nobody grants, through a Role, a ClusterRole or a binding, more than
 * they hold themselves. A role may be written when the caller may `escalate` it or already holds every rule it
 * grants; a binding when the caller may `bind` its role or already holds every rule of that role. Members of
 * `system:masters` skip the check (the control plane's own bootstrap writes storage directly).
 *
 * It runs where the reference's RBAC storage runs it: after mutating admission and before validation, on
 * every create and update of the main resource, so POST, PUT, each kind of PATCH and server-side apply are
 * judged on the object they would store.
 */

import { goQuote } from '../../api/field-errors.ts';
import { group } from '../../api/naming.ts';
import type { ResourceRegistry } from '../../api/registry.ts';
import type { PolicyRule, RoleRef } from '../../api/types/index.ts';
import { type AdmissionAttributes, type AdmissionPlugin, onlyGcFieldsChanged, type UserInfo } from '../admission.ts';
import { forbidden } from '../errors.ts';
import { describeMissing, uncovered } from './covers.ts';
import { PRIVILEGED_GROUP, type RbacAuthorizer } from './rbac.ts';

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const ROLE_RESOURCES: Record<string, string> = { Role: 'roles', ClusterRole: 'clusterroles' };

/** A well-formed role reference, or undefined (validation refuses the others). */
function roleRefOf(obj: object, clusterBinding: boolean): RoleRef | undefined {
  const ref = (obj as { roleRef?: unknown }).roleRef as Partial<RoleRef> | undefined;
  if (!ref || typeof ref !== 'object' || typeof ref.name !== 'string' || !ref.name) return undefined;
  if (ref.kind !== 'ClusterRole' && (clusterBinding || ref.kind !== 'Role')) return undefined;
  return ref as RoleRef;
}

/** `user "<name>" (groups=["a" "b"]) is attempting to grant RBAC permissions not currently held:` and what is missing. */
export function escalationMessage(user: UserInfo, missing: string, resolutionErrors: string[]): string {
  const groups = `[${user.groups.map(goQuote).join(' ')}]`;
  let message = `user ${goQuote(user.username)} (groups=${groups}) is attempting to grant RBAC permissions not currently held:\n${missing}`;
  if (resolutionErrors.length) message += `; resolution errors: [${resolutionErrors.join(' ')}]`;
  return message;
}

export function escalationCheck(rbac: RbacAuthorizer, registry: ResourceRegistry): AdmissionPlugin {
  const rbacGroup = group(registry.naming, 'rbac.authorization');
  const may = (user: UserInfo, verb: string, resource: string, namespace: string, name: string) =>
    rbac.authorize(user, { verb, group: rbacGroup, resource, namespace, name }).allowed;

  type Held = ReturnType<RbacAuthorizer['rulesOf']>;
  /** Refuses unless the rules the user holds cover every rule of `requested`. */
  const confirmHeld = (a: AdmissionAttributes, held: Held, requested: PolicyRule[], why?: string) => {
    const missing = uncovered(held.rules, requested);
    if (missing.length === 0) return;
    throw forbidden(a.rt, a.name, why ?? escalationMessage(a.user, describeMissing(missing), held.errors));
  };

  const checkRole = (a: AdmissionAttributes, obj: object) => {
    const namespace = a.namespace ?? '';
    if (may(a.user, 'escalate', a.rt.plural, namespace, a.name)) return;
    const rules = (obj as { rules?: unknown }).rules;
    // Malformed entries grant nothing and are left to validation, which refuses them.
    const held = rbac.rulesOf(a.user, namespace);
    confirmHeld(a, held, Array.isArray(rules) ? rules.filter((r) => r && typeof r === 'object') : []);
    // An aggregationRule gathers whatever matches, now or later: setting or changing one needs everything.
    const aggregates = (o: object | undefined) => Boolean((o as { aggregationRule?: unknown })?.aggregationRule);
    if (a.rt.plural === 'clusterroles' && (aggregates(obj) || aggregates(a.oldObject))) {
      confirmHeld(a, held, FULL_AUTHORITY, 'must have cluster-admin privileges to use the aggregationRule');
    }
  };

  const checkBinding = (a: AdmissionAttributes, obj: object) => {
    const clusterBinding = a.rt.plural === 'clusterrolebindings';
    const ref = roleRefOf(obj, clusterBinding);
    if (!ref) return;
    const namespace = clusterBinding ? '' : (a.namespace ?? '');
    if (may(a.user, 'bind', ROLE_RESOURCES[ref.kind], namespace, ref.name)) return;
    const granted = rbac.grantedRules(ref, namespace);
    // A role that does not exist yet could be created with anything in it: only `bind` allows that.
    if ('error' in granted) throw forbidden(a.rt, a.name, escalationMessage(a.user, granted.error, []));
    confirmHeld(a, rbac.rulesOf(a.user, namespace), granted.rules);
  };

  return {
    name: 'RBACEscalation',
    admit(a) {
      const obj = a.object;
      if (!obj || a.subresource || a.rt.group !== rbacGroup) return;
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      if (a.user.groups.includes(PRIVILEGED_GROUP)) return;
      if (a.operation === 'UPDATE' && a.oldObject && onlyGcFieldsChanged(obj, a.oldObject)) return;
      if (a.rt.plural === 'roles' || a.rt.plural === 'clusterroles') checkRole(a, obj);
      else if (a.rt.plural === 'rolebindings' || a.rt.plural === 'clusterrolebindings') checkBinding(a, obj);
    },
  };
}
