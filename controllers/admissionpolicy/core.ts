/**
 * The ValidatingAdmissionPolicy status controller's decisions (reference §6): which kinds a policy is
 * checked against and when a policy needs a check. The type check itself, on the CEL library, is type-check.ts.
 */

import type {
  ExpressionWarning,
  NamedRuleWithOperations,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyStatus,
} from '../../src/api/types/admission.ts';

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

export interface GVR {
  group: string;
  version: string;
  resource: string;
}

/** The reference's bound on kinds checked per policy. */
export const MAX_KINDS = 10;

/** `apps/v1, Kind=Deployment`; the core group prints as `/v1, Kind=Pod`. */
export const gvkString = (k: GVK) => `${k.group}/${k.version}, Kind=${k.kind}`;

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const sorted = (xs: string[]) => [...xs].sort(byteOrder);

/**
 * The kinds to check, from `matchConstraints.resourceRules` only: rules with a wildcard group or version
 * are skipped; wildcard resources and subresources are dropped; groups, versions and resources are
 * walked in sorted order; at most 10 resolved kinds (duplicates count); the result sorted by group,
 * version, kind. `kindsFor` is the REST mapping (empty when the resource is unknown).
 */
export function kindsToCheck(rules: NamedRuleWithOperations[], kindsFor: (r: GVR) => GVK[]): GVK[] {
  const found = new Map<string, GVK>();
  let resolved = 0;
  outer: for (const rule of rules) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    if (groups.length === 0 || groups.includes('*') || versions.length === 0 || versions.includes('*')) continue;
    const resources = (rule.resources ?? []).filter((r) => !r.includes('*') && !r.includes('/'));
    for (const group of sorted(groups)) {
      for (const version of sorted(versions)) {
        for (const resource of sorted(resources)) {
          for (const k of kindsFor({ group, version, resource })) {
            found.set(gvkString(k), k);
            if (++resolved >= MAX_KINDS) break outer;
          }
        }
      }
    }
  }
  return [...found.values()].sort(
    (a, b) => byteOrder(a.group, b.group) || byteOrder(a.version, b.version) || byteOrder(a.kind, b.kind),
  );
}

/** `apps/v1` → group `apps`, version `v1`; `v1` → the core group. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The policy's paramKind as a group, version and kind, when set. */
export function paramKindOf(policy: ValidatingAdmissionPolicy): GVK | undefined {
  const pk = policy.spec?.paramKind;
  return pk?.apiVersion && pk.kind ? { ...parseApiVersion(pk.apiVersion), kind: pk.kind } : undefined;
}

/** The status to write: observedGeneration current, typeChecking replaced (its presence means "checked"). */
export function checkedStatus(
  policy: ValidatingAdmissionPolicy,
  warnings: ExpressionWarning[],
): ValidatingAdmissionPolicyStatus {
  return {
    ...policy.status,
    observedGeneration: policy.metadata.generation,
    typeChecking: warnings.length ? { expressionWarnings: warnings } : {},
  };
}

/**
 * Whether to check: a new generation, or (beyond the reference) a change of the schemas the last check
 * of this process resolved (`schemas` is their fingerprint), e.g. after a resource appeared or vanished
 * from discovery.
 */
export function needsCheck(
  policy: ValidatingAdmissionPolicy,
  lastSchemas: string | undefined,
  schemas: string,
): boolean {
  const generation = policy.metadata.generation ?? 0;
  const observed = policy.status?.observedGeneration ?? 0;
  if (generation > observed) return true;
  return lastSchemas !== undefined && lastSchemas !== schemas;
}
