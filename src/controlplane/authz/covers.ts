/**
 * Whether rules a user holds cover rules they want to grant, as the reference's escalation check decides
 * it: every requested rule is broken into atoms (one verb on one group, resource and name, or one verb on
 * one non-resource URL), and each atom must be allowed by a single held rule. Pure; no I/O.
 */

import { goQuote } from '../../api/field-errors.ts';
import type { PolicyRule } from '../../api/types/index.ts';
import { apiGroupMatches, nonResourceURLMatches, resourceMatches, verbMatches } from './rbac.ts';

/** Rule lists as they come off the wire: anything not a string is kept, as text, so that it is never covered by accident. */
function list(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** The atoms of a rule: each has exactly one verb, and one group, resource and (maybe) name, or one URL. */
export function breakdown(rule: PolicyRule): PolicyRule[] {
  const verbs = list(rule.verbs);
  const names = list(rule.resourceNames);
  const atoms: PolicyRule[] = [];
  for (const group of list(rule.apiGroups)) {
    for (const resource of list(rule.resources)) {
      for (const verb of verbs) {
        const atom = { apiGroups: [group], resources: [resource], verbs: [verb] };
        if (names.length === 0) atoms.push(atom);
        for (const name of names) atoms.push({ ...atom, resourceNames: [name] });
      }
    }
  }
  for (const url of list(rule.nonResourceURLs)) {
    for (const verb of verbs) atoms.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return atoms;
}

/**
 * Whether one held rule allows an atom. `*` in the held rule covers anything in its position (but a
 * requested `*` is only covered by a held `*`); a held `*` slash `<sub>` covers that subresource of every
 * resource; a held rule with resourceNames covers only atoms naming one of them; a held URL ending in `*` covers the
 * URLs it prefixes.
 */
export function ruleCovers(held: PolicyRule, atom: PolicyRule): boolean {
  const verb = atom.verbs[0];
  if (!verbMatches(held, verb)) return false;
  if (atom.nonResourceURLs?.length) return nonResourceURLMatches(held, atom.nonResourceURLs[0]);
  const resource = atom.resources?.[0] ?? '';
  const slash = resource.indexOf('/');
  const subresource = slash < 0 ? '' : resource.slice(slash + 1);
  const heldNames = list(held.resourceNames);
  const name = atom.resourceNames?.[0];
  const nameCovered = heldNames.length === 0 || (name !== undefined && heldNames.includes(name));
  return (
    apiGroupMatches(held, atom.apiGroups?.[0] ?? '') && resourceMatches(held, resource, subresource) && nameCovered
  );
}

/** The atoms of `requested` that no rule of `held` covers; empty when the held rules cover everything. */
export function uncovered(held: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  return requested.flatMap(breakdown).filter((atom) => !held.some((rule) => ruleCovers(rule, atom)));
}

/**
 * Missing atoms folded back for reading: atoms on the same group and resource with no name differ only by
 * verb and become one rule with all their (distinct) verbs; the others stay as they are.
 */
export function compact(atoms: readonly PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, PolicyRule>();
  const others: PolicyRule[] = [];
  for (const atom of atoms) {
    if (atom.nonResourceURLs?.length || atom.resourceNames?.length) {
      others.push(atom);
      continue;
    }
    const key = JSON.stringify([atom.apiGroups, atom.resources]);
    const into = merged.get(key);
    if (into) into.verbs = [...new Set([...into.verbs, ...atom.verbs])];
    else merged.set(key, { apiGroups: atom.apiGroups, resources: atom.resources, verbs: [...atom.verbs] });
  }
  return [...others, ...merged.values()];
}

/** A rule as the reference prints it in escalation errors: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["delete"]}`. */
export function compactString(rule: PolicyRule): string {
  const fields: [string, string[] | undefined][] = [
    ['APIGroups', rule.apiGroups],
    ['Resources', rule.resources],
    ['NonResourceURLs', rule.nonResourceURLs],
    ['ResourceNames', rule.resourceNames],
    ['Verbs', rule.verbs],
  ];
  const parts = fields
    .filter(([, values]) => values?.length)
    .map(([label, values]) => `${label}:[${values!.map(goQuote).join(' ')}]`);
  return `{${parts.join(', ')}}`;
}

/** The missing rules as the reference lists them: compacted, printed, distinct, sorted, one a line. */
export function describeMissing(atoms: readonly PolicyRule[]): string {
  return [...new Set(compact(atoms).map(compactString))].sort().join('\n');
}
