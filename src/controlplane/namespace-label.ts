/**
 * The reference's namespace strategy: every namespace carries its own name in the `metadata.name` label
 * (`kubernetes.io/metadata.name`), set on create and put back on every update, so that namespace selectors
 * (admission policy bindings, network policies) can pick a namespace by name. Users cannot change it.
 */
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/registry.ts';

export function isNamespaceType(rt: Pick<ResourceType, 'group' | 'kind'>): boolean {
  return rt.group === '' && rt.kind === 'Namespace';
}

/** `ns` itself when its label already names it, else a copy with the label set (stored objects stay untouched). */
export function withNameLabel(ns: KubeObject, label: string): KubeObject {
  const name = ns.metadata.name;
  if (!name || ns.metadata.labels?.[label] === name) return ns;
  return { ...ns, metadata: { ...ns.metadata, labels: { ...ns.metadata.labels, [label]: name } } };
}
