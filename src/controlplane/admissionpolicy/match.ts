/**
 * Whether a request falls within a policy's `matchConstraints` or a binding's `matchResources`, with the
 * reference's rules: the namespace selector (cluster-scoped objects other than Namespaces always pass; a
 * Namespace is matched by its own labels), the object selector (the new or the old object's labels),
 * exclusions first, then any resource rule (operation, group, version, `resource[/subresource]` with
 * wildcards, scope, resource names). A binding without resource rules does not narrow the policy's.
 */
import type { MatchResources, NamedRuleWithOperations } from '../../api/types/admission.ts';
import { labelSelectorEmpty, labelSelectorMatches } from '../validation/common.ts';

export interface RequestFacts {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  group: string;
  version: string;
  resource: string;
  subresource: string;
  name: string;
  namespaced: boolean;
  objectLabels?: Record<string, string>;
  oldObjectLabels?: Record<string, string>;
  /** Labels of the request's namespace (undefined for cluster-scoped requests). */
  namespaceLabels?: Record<string, string>;
}

const anyOf = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).some((x) => x === '*' || x === value);

function resourceMatches(patterns: string[], resource: string, subresource: string): boolean {
  return patterns.some((p) => {
    if (p === '*/*') return true;
    const [res, sub = ''] = p.split('/', 2);
    const subOk = p.includes('/') ? sub === '*' || sub === subresource : subresource === '';
    return (res === '*' || res === resource) && subOk;
  });
}

export function ruleMatches(rule: NamedRuleWithOperations, r: RequestFacts): boolean {
  const scope = rule.scope ?? '*';
  const isNamespace = r.group === '' && r.resource === 'namespaces';
  const scopeOk =
    scope === '*' || (scope === 'Namespaced' ? r.namespaced && !isNamespace : !r.namespaced || isNamespace);
  const names = rule.resourceNames ?? [];
  return (
    anyOf(rule.operations, r.operation) &&
    anyOf(rule.apiGroups, r.group) &&
    anyOf(rule.apiVersions, r.version) &&
    resourceMatches(rule.resources ?? [], r.resource, r.subresource) &&
    scopeOk &&
    (names.length === 0 || names.includes(r.name))
  );
}

function namespaceMatches(m: MatchResources, r: RequestFacts): boolean {
  const isNamespace = r.group === '' && r.resource === 'namespaces' && !r.subresource;
  if (!r.namespaced && !isNamespace) return true;
  const labels = isNamespace ? (r.objectLabels ?? r.oldObjectLabels) : r.namespaceLabels;
  return labelSelectorMatches(m.namespaceSelector ?? {}, labels ?? {});
}

function objectMatches(m: MatchResources, r: RequestFacts): boolean {
  const selector = m.objectSelector ?? {};
  if (labelSelectorEmpty(selector)) return true;
  return [r.objectLabels, r.oldObjectLabels].some((labels) => labels && labelSelectorMatches(selector, labels));
}

/** Whether `m` matches the request; `narrowing` (a binding's) lets empty resource rules match everything. */
export function matches(m: MatchResources, r: RequestFacts, narrowing = false): boolean {
  if (!namespaceMatches(m, r) || !objectMatches(m, r)) return false;
  if ((m.excludeResourceRules ?? []).some((rule) => ruleMatches(rule, r))) return false;
  const rules = m.resourceRules ?? [];
  return (narrowing && rules.length === 0) || rules.some((rule) => ruleMatches(rule, r));
}
