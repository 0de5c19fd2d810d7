/**
 * Text written with one flavor's names, rewritten with another's: every identifier of the naming table
 * (groups, signers, label and annotation keys, ...) is looked up whole, so `orch.io` as a group suffix and
 * `orch.io` as a label domain each become what the other flavor calls them. The examples are written once,
 * in the `orch` flavor, and filled in this way for the `kubernetes` one.
 */
import type { Naming } from './naming.ts';
import { ResourceRegistry } from './registry.ts';

/** Every string of a naming table, by its path (`signers.apiServerClient`, `labels.podIndex`, ...). */
function leaves(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
  }
  return [];
}

/** The identifier pairs from → to, longest first, so a group is rewritten before the suffix inside it. */
export function namePairs(from: Naming, to: Naming): [string, string][] {
  const target = new Map(leaves(to));
  const pairs = new Map<string, string>();
  for (const [path, text] of leaves(from)) {
    const other = target.get(path);
    if (other !== undefined && other !== text) pairs.set(text, other);
  }
  // API groups, matched by position: both registries list the same resources in the same order.
  const a = new ResourceRegistry(from).all;
  const b = new ResourceRegistry(to).all;
  a.forEach((rt, i) => {
    if (rt.group !== b[i].group) pairs.set(rt.group, b[i].group);
  });
  return [...pairs].sort((x, y) => y[0].length - x[0].length);
}

const boundary = /[A-Za-z0-9._/-]/;

/** Rewrites each identifier that stands whole (not inside a longer name). */
export function translateNames(text: string, from: Naming, to: Naming): string {
  const pairs = namePairs(from, to);
  let out = '';
  let i = 0;
  outer: while (i < text.length) {
    if (i === 0 || !boundary.test(text[i - 1])) {
      for (const [name, replacement] of pairs) {
        const end = i + name.length;
        if (text.startsWith(name, i) && (end === text.length || !boundary.test(text[end]) || text[end] === '/')) {
          out += replacement;
          i = end;
          continue outer;
        }
      }
    }
    out += text[i];
    i++;
  }
  return out;
}
