/** Resource names as kubectl's REST mapper reads them: plural, singular or short name, optionally `.group`. */
import type { ResourceRegistry, ResourceType } from '../../api/registry.ts';

export interface ResourceRef {
  resource: string;
  group: string;
  /** The served type, when the server has it. */
  rt?: ResourceType;
}

export function resolveResource(registry: ResourceRegistry, text: string): ResourceRef {
  const lower = text.toLowerCase();
  const dot = lower.indexOf('.');
  const name = dot < 0 ? lower : lower.slice(0, dot);
  const groupGiven = dot < 0 ? undefined : lower.slice(dot + 1);
  const rt = registry.all.find(
    (r) =>
      !r.virtual &&
      (groupGiven === undefined || r.group === groupGiven || r.group.startsWith(`${groupGiven}.`)) &&
      (r.plural === name || r.singular === name || r.shortNames.includes(name) || r.kind.toLowerCase() === name),
  );
  if (rt) return { resource: rt.plural, group: rt.group, rt };
  return { resource: name, group: groupGiven ?? '' };
}
