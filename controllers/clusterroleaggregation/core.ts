/**
 * ClusterRole aggregation, free of I/O: the rules of an aggregated role are the union of the rules
 * of every other ClusterRole its selectors match, selector by selector in order, matched roles by
 * name, each rule in stored order, a rule equal to one already taken dropped. No normalization:
 * rules that mean the same but are spelled differently are both kept, as in the reference.
 */
import { selectorFromLabelSelector } from '../../src/api/labels.ts';
import type { ClusterRole, PolicyRule } from '../../src/api/types/rbac.ts';
import { jsonEqual } from '../../src/util/equal.ts';

/** A rule without its empty lists: nil and empty compare equal, as in the reference. */
function normalized(rule: PolicyRule): Record<string, unknown> {
  return Object.fromEntries(Object.entries(rule).filter(([, v]) => !(Array.isArray(v) && v.length === 0)));
}

export function sameRules(a: readonly PolicyRule[] | undefined, b: readonly PolicyRule[] | undefined): boolean {
  return jsonEqual((a ?? []).map(normalized), (b ?? []).map(normalized));
}

/** The aggregated rules; throws the selector's error when one is malformed. */
export function aggregateRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const seen: Record<string, unknown>[] = [];
  const self = role.metadata.name;
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const matches = selectorFromLabelSelector(selector);
    const matched = all
      .filter((r) => r.metadata.name !== self && matches.matches(r.metadata.labels))
      .sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    for (const r of matched) {
      for (const rule of r.rules ?? []) {
        const n = normalized(rule);
        if (seen.some((s) => jsonEqual(s, n))) continue;
        seen.push(n);
        rules.push(rule);
      }
    }
  }
  return rules;
}
