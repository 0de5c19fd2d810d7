/** ClusterRole aggregation's matching, shared by the aggregation controller and RBAC's escalation check. */
import { selectorFromLabelSelector } from './labels.ts';
import type { ClusterRole } from './types/rbac.ts';

/** Whether `role` aggregates from `candidate` (by its labels). Malformed selectors match nothing here. */
export function selects(role: ClusterRole, candidate: ClusterRole): boolean {
  if (role.metadata.name === candidate.metadata.name) return false;
  return (role.aggregationRule?.clusterRoleSelectors ?? []).some((s) => {
    try {
      return selectorFromLabelSelector(s).matches(candidate.metadata.labels);
    } catch {
      return false;
    }
  });
}
