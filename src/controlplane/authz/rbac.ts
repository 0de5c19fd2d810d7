/**
 * Role-based access control as the reference API server evaluates it: a request is allowed when any rule of
 * any role bound to the user (ClusterRoleBindings everywhere, RoleBindings in the request's namespace) covers
 * it; members of `system:masters` are allowed everything before RBAC is consulted. Roles and bindings are
 * read from storage on every call, so a write takes effect for the very next request.
 */
import { selects } from '../../api/aggregation.ts';
import type { KubeObject } from '../../api/meta.ts';
import { group } from '../../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../../api/registry.ts';
import { serviceAccountUsername } from '../../api/service-accounts.ts';
import type {
  ClusterRole,
  NonResourceRule,
  PolicyRule,
  ResourceRule,
  RoleRef,
  Subject,
  SubjectRulesReviewStatus,
} from '../../api/types/index.ts';
import type { UserInfo } from '../admission.ts';
import { ApiError } from '../errors.ts';
import type { AccessChecker } from '../plugins/authorize.ts';
import type { RequestAuthorizer, RequestInfo } from '../request-info.ts';
import type { Storage } from '../storage.ts';
import { PRIVILEGED_GROUP } from './policy.ts';

export { defaultPolicy, PRIVILEGED_GROUP } from './policy.ts';

const ALL = '*';

/** What a resource request asks to do, as in a SubjectAccessReview's `resourceAttributes`. */
export interface ResourceRequestAttributes {
  verb: string;
  /** `""` for the core group. */
  group: string;
  resource: string;
  subresource?: string;
  /** Empty for cluster-scoped requests and for requests across all namespaces. */
  namespace?: string;
  /** Empty for list, watch, create and deletecollection. */
  name?: string;
}

/** What a non-resource request asks to do: a lower-case HTTP method on a path (`get` `/healthz`). */
export interface NonResourceRequestAttributes {
  verb: string;
  path: string;
}

/** A request is a non-resource request exactly when it has a `path`. */
export type AuthorizationAttributes = ResourceRequestAttributes | NonResourceRequestAttributes;

export interface Decision {
  allowed: boolean;
  /** Why: the binding that allowed the request, or the errors met while resolving roles; may be empty. */
  reason: string;
}

/** What the review endpoints need from an authorizer. */
export interface Authorizer {
  authorize(user: UserInfo, attrs: AuthorizationAttributes): Decision;
  rulesFor(user: UserInfo, namespace: string): SubjectRulesReviewStatus;
}

export function isResourceRequest(attrs: AuthorizationAttributes): attrs is ResourceRequestAttributes {
  return !('path' in attrs);
}

// ---------------------------------------------------------------------------------------------
// rule matching

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === ALL || v === verb);
}

export function apiGroupMatches(rule: PolicyRule, apiGroup: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === ALL || g === apiGroup);
}

// `combined` is `resource` or `resource/subresource`. A rule's resource matches when it is `*`, equals
// `combined`, or is `*/<subresource>` for the request's subresource. There is no `resource/*` wildcard:
// such an entry only matches a request for the literal subresource `*`.
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return (rule.resources ?? []).some(
    (r) => r === ALL || r === combined || (subresource !== '' && r === `${ALL}/${subresource}`),
  );
}

/** A rule without resourceNames covers every name; one with resourceNames never covers a request without a name. */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** `*` matches every path, `/a/*` every path starting with `/a/`, anything else only itself. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => {
    if (u === ALL || u === path) return true;
    return u.endsWith(ALL) && path.startsWith(u.replace(/\*+$/, ''));
  });
}

export function ruleAllows(attrs: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attrs.verb)) return false;
  if (!isResourceRequest(attrs)) return nonResourceURLMatches(rule, attrs.path);
  const subresource = attrs.subresource ?? '';
  const combined = subresource ? `${attrs.resource}/${subresource}` : attrs.resource;
  return (
    apiGroupMatches(rule, attrs.group) &&
    resourceMatches(rule, combined, subresource) &&
    resourceNameMatches(rule, attrs.name ?? '')
  );
}

/**
 * Whether a binding subject names the user. A ServiceAccount subject without a namespace means the
 * binding's own namespace (`bindingNamespace`, empty for cluster bindings, where such a subject matches nobody).
 */
export function subjectMatches(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== '' && user.username === serviceAccountUsername(namespace, subject.name);
    }
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// the authorizer

interface Binding extends KubeObject {
  subjects?: Subject[];
  roleRef?: RoleRef;
}

/** Called with each rule that applies to a user (and the binding that grants it), or with a resolution error. */
type RuleVisitor = (rule: PolicyRule | undefined, source: () => string, error?: string) => boolean;

export class RbacAuthorizer implements Authorizer {
  private readonly rbacGroup: string;
  private readonly roles: ResourceType;
  private readonly clusterRoles: ResourceType;
  private readonly roleBindings: ResourceType;
  private readonly clusterRoleBindings: ResourceType;

  constructor(
    private readonly storage: Pick<Storage, 'list' | 'get'>,
    registry: ResourceRegistry,
  ) {
    this.rbacGroup = group(registry.naming, 'rbac.authorization');
    const rt = (plural: string) => {
      const found = registry.resource(this.rbacGroup, 'v1', plural);
      if (!found) throw new Error(`the registry has no ${plural}.${this.rbacGroup}`);
      return found;
    };
    this.roles = rt('roles');
    this.clusterRoles = rt('clusterroles');
    this.roleBindings = rt('rolebindings');
    this.clusterRoleBindings = rt('clusterrolebindings');
  }

  authorize(user: UserInfo, attrs: AuthorizationAttributes): Decision {
    if (user.groups.includes(PRIVILEGED_GROUP)) return { allowed: true, reason: '' };
    const namespace = isResourceRequest(attrs) ? (attrs.namespace ?? '') : '';
    const errors: string[] = [];
    let allowedBy: string | undefined;
    this.visitRulesFor(user, namespace, (rule, source, error) => {
      if (rule && ruleAllows(attrs, rule)) {
        allowedBy = source();
        return false;
      }
      if (error) errors.push(error);
      return true;
    });
    if (allowedBy !== undefined) return { allowed: true, reason: `RBAC: allowed by ${allowedBy}` };
    return { allowed: false, reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
  }

  /** The user's rules in a namespace, as a SelfSubjectRulesReview reports them. */
  rulesFor(user: UserInfo, namespace: string): SubjectRulesReviewStatus {
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(user, namespace, (rule, _source, error) => {
      if (error) errors.push(error);
      if (rule?.resources?.length) {
        const r: ResourceRule = { verbs: [...(rule.verbs ?? [])] };
        if (rule.apiGroups?.length) r.apiGroups = [...rule.apiGroups];
        r.resources = [...rule.resources];
        if (rule.resourceNames?.length) r.resourceNames = [...rule.resourceNames];
        resourceRules.push(r);
      }
      if (rule?.nonResourceURLs?.length) {
        nonResourceRules.push({ verbs: [...(rule.verbs ?? [])], nonResourceURLs: [...rule.nonResourceURLs] });
      }
      return true;
    });
    const status: SubjectRulesReviewStatus = { resourceRules, nonResourceRules, incomplete: false };
    if (errors.length) status.evaluationError = aggregate(errors);
    return status;
  }

  /** Every rule the user holds in a namespace (cluster-wide only for `""`), and the errors met resolving them. */
  rulesOf(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(user, namespace, (rule, _source, error) => {
      if (rule) rules.push(rule);
      if (error) errors.push(error);
      return true;
    });
    return { rules, errors };
  }

  /**
   * The rules a binding of `ref` in `namespace` would grant. For a ClusterRole with an aggregationRule these
   * are its stored rules plus those of every role its selectors gather now, through aggregating roles they
   * gather in turn, so that a binding is judged on all it can grant before the aggregation controller runs.
   */
  grantedRules(ref: RoleRef, namespace: string): { rules: PolicyRule[] } | { error: string } {
    const resolved = this.roleReferenceRules(ref, namespace);
    if ('error' in resolved || ref.kind !== 'ClusterRole') return resolved;
    const all = this.storage.list(this.clusterRoles) as ClusterRole[];
    const rules: PolicyRule[] = [];
    const seen = new Set<string>();
    // Each role is visited once, so the walk ends even when selectors form a cycle.
    const visit = (role: ClusterRole) => {
      if (seen.has(role.metadata.name ?? '')) return;
      seen.add(role.metadata.name ?? '');
      rules.push(...(role.rules ?? []));
      if (role.aggregationRule) for (const other of all) if (selects(role, other)) visit(other);
    };
    visit(this.storage.get(this.clusterRoles, ref.name) as ClusterRole);
    return { rules };
  }

  /** Cluster role bindings first, then the role bindings of `namespace` (when given), in storage order. */
  private visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor): void {
    for (const binding of this.storage.list(this.clusterRoleBindings) as Binding[]) {
      const subject = (binding.subjects ?? []).find((s) => subjectMatches(user, s, ''));
      if (!subject) continue;
      const source = () =>
        `ClusterRoleBinding ${q(binding.metadata.name)} of ${roleRefText(binding.roleRef)} to ${describeSubject(subject, '')}`;
      if (!this.visitBinding(binding, '', source, visit)) return;
    }
    if (!namespace) return;
    for (const binding of this.storage.list(this.roleBindings, namespace) as Binding[]) {
      const subject = (binding.subjects ?? []).find((s) => subjectMatches(user, s, namespace));
      if (!subject) continue;
      const source = () =>
        `RoleBinding ${q(`${binding.metadata.name}/${namespace}`)} of ${roleRefText(binding.roleRef)} to ${describeSubject(subject, namespace)}`;
      if (!this.visitBinding(binding, namespace, source, visit)) return;
    }
  }

  private visitBinding(binding: Binding, namespace: string, source: () => string, visit: RuleVisitor): boolean {
    const resolved = this.roleReferenceRules(binding.roleRef, namespace);
    if ('error' in resolved) return visit(undefined, source, resolved.error);
    for (const rule of resolved.rules) if (!visit(rule, source)) return false;
    return true;
  }

  /** The rules of the role a binding references; a RoleBinding may reference a ClusterRole. */
  private roleReferenceRules(ref: RoleRef | undefined, namespace: string): { rules: PolicyRule[] } | { error: string } {
    const name = ref?.name ?? '';
    switch (ref?.kind) {
      case 'Role': {
        const role = namespace ? this.storage.get(this.roles, `${namespace}/${name}`) : undefined;
        if (!role) return { error: `role.${this.rbacGroup} ${q(name)} not found` };
        return { rules: (role as { rules?: PolicyRule[] }).rules ?? [] };
      }
      case 'ClusterRole': {
        const role = this.storage.get(this.clusterRoles, name);
        if (!role) return { error: `clusterrole.${this.rbacGroup} ${q(name)} not found` };
        return { rules: (role as { rules?: PolicyRule[] }).rules ?? [] };
      }
      default:
        return { error: `unsupported role reference kind: ${q(ref?.kind ?? '')}` };
    }
  }
}

/** An authorizer that allows everything (the reference's AlwaysAllow mode). */
export class AlwaysAllowAuthorizer implements Authorizer {
  authorize(): Decision {
    return { allowed: true, reason: '' };
  }

  rulesFor(): SubjectRulesReviewStatus {
    return {
      resourceRules: [{ verbs: [ALL], apiGroups: [ALL], resources: [ALL] }],
      nonResourceRules: [{ verbs: [ALL], nonResourceURLs: [ALL] }],
      incomplete: false,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// the HTTP side: request attributes and the 403 answer

/** The attributes of an HTTP request: resource verbs from the request info, lower-case methods for other paths. */
export function requestAttributes(info: RequestInfo, method: string): AuthorizationAttributes {
  if (info.kind === 'nonresource') return { verb: method.toLowerCase(), path: info.path };
  if (info.kind === 'unserved') {
    const { kind: _kind, ...attrs } = info;
    return attrs;
  }
  const { rt, name, subresource } = info;
  // As in the reference, a request for one Namespace object is a request inside that namespace.
  const namespace = rt.group === '' && rt.plural === 'namespaces' && name ? name : info.namespace;
  const attrs: ResourceRequestAttributes = { verb: info.verb, group: rt.group, resource: rt.plural };
  if (subresource) attrs.subresource = subresource;
  if (namespace) attrs.namespace = namespace;
  if (name) attrs.name = name;
  return attrs;
}

const SANITIZE: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** `User "<user>" cannot <verb> resource "<resource>" in API group "<group>" in the namespace "<ns>"` and its variants. */
export function forbiddenMessage(user: UserInfo, attrs: AuthorizationAttributes): string {
  let text: string;
  if (!isResourceRequest(attrs)) {
    text = `User ${q(user.username)} cannot ${attrs.verb} path ${q(attrs.path)}`;
  } else {
    const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
    const scope = attrs.namespace ? `in the namespace ${q(attrs.namespace)}` : 'at the cluster scope';
    text = `User ${q(user.username)} cannot ${attrs.verb} resource ${q(resource)} in API group ${q(attrs.group)} ${scope}`;
  }
  return text.replace(/[&<>]/g, (c) => SANITIZE[c]);
}

/** The 403 the reference answers: `<resource>.<group> "<name>" is forbidden: <message>[: <reason>]`. */
export function forbiddenError(user: UserInfo, attrs: AuthorizationAttributes, reason: string): ApiError {
  const why = reason ? `${forbiddenMessage(user, attrs)}: ${reason}` : forbiddenMessage(user, attrs);
  if (!isResourceRequest(attrs) || (!attrs.group && !attrs.resource)) {
    return new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
  }
  const qualified = attrs.group ? `${attrs.resource}.${attrs.group}` : attrs.resource;
  const subject = attrs.name ? `${qualified} ${q(attrs.name)}` : qualified;
  return new ApiError(
    403,
    'Forbidden',
    `${subject} is forbidden: ${why}`,
    omitEmpty({ name: attrs.name, group: attrs.group, kind: attrs.resource }),
  );
}

/** The server's authorization hook over an authorizer: throws the reference's 403 when a request is not allowed. */
export function requestAuthorizer(authz: Pick<Authorizer, 'authorize'>): RequestAuthorizer {
  return async (user, info, method) => {
    const attrs = requestAttributes(info, method);
    const decision = authz.authorize(user, attrs);
    if (!decision.allowed) throw forbiddenError(user, attrs, decision.reason);
  };
}

/** What admission plugins ask (approve or sign on a signer, ...), answered by the authorizer, as the reference's plugins do. */
export function accessChecker(authz: Pick<Authorizer, 'authorize'>): AccessChecker {
  return async (user, check) =>
    authz.authorize(user, { verb: check.verb, group: check.group, resource: check.resource, name: check.name }).allowed;
}

// ---------------------------------------------------------------------------------------------
// helpers

/** Go's `%q` for the names that appear here. */
function q(s: string | undefined): string {
  return JSON.stringify(s ?? '');
}

function roleRefText(ref: RoleRef | undefined): string {
  return `${ref?.kind ?? ''} ${q(ref?.name)}`;
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${q(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${q(s.name)}`;
}

/** Several errors as one message: the only one alone, else distinct messages in brackets. */
export function aggregate(errors: string[]): string {
  if (errors.length === 1) return errors[0];
  const distinct = [...new Set(errors)];
  return distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
}

/** Drops undefined, empty-string and empty-array fields, as Go's `omitempty` does. */
function omitEmpty<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out as T;
}
