/**
 * Authorizers chained as the reference's `--authorization-mode` list: the first to allow decides; when none
 * does, the reasons of all of them, one per line. Rules reviews join every authorizer's rules.
 */
import type { SubjectRulesReviewStatus } from '../../api/types/index.ts';
import type { UserInfo } from '../admission.ts';
import { type AuthorizationAttributes, type Authorizer, aggregate, type Decision } from './rbac.ts';

export class UnionAuthorizer implements Authorizer {
  constructor(private readonly chain: readonly Authorizer[]) {}

  authorize(user: UserInfo, attrs: AuthorizationAttributes): Decision {
    const reasons: string[] = [];
    for (const authorizer of this.chain) {
      const decision = authorizer.authorize(user, attrs);
      if (decision.allowed) return decision;
      if (decision.reason) reasons.push(decision.reason);
    }
    return { allowed: false, reason: reasons.join('\n') };
  }

  rulesFor(user: UserInfo, namespace: string): SubjectRulesReviewStatus {
    const all = this.chain.map((a) => a.rulesFor(user, namespace));
    const errors = all.flatMap((s) => (s.evaluationError ? [s.evaluationError] : []));
    const status: SubjectRulesReviewStatus = {
      resourceRules: all.flatMap((s) => s.resourceRules),
      nonResourceRules: all.flatMap((s) => s.nonResourceRules),
      incomplete: all.some((s) => s.incomplete),
    };
    if (errors.length) status.evaluationError = aggregate(errors);
    return status;
  }
}
