/**
 * Lease (`coordination.<suffix>/v1`, namespaced).
 *
 * leaseDurationSeconds > 0, leaseTransitions >= 0, strategy `OldestEmulationVersion` or a prefixed qualified
 * name, preferredHolder only together with a strategy. Strategy and preferredHolder belong to coordinated
 * leader election: they may only be newly set while the `CoordinatedLeaderElection` gate is on.
 */

import { type FieldError, forbidden, invalid } from '../../api/field-errors.ts';
import { validateCoordinatedLeaseStrategy } from '../../api/lease-strategy.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import { gateEnabled, type ValidationContext } from './context.ts';
import { checkShape, int, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';

export const COORDINATED_LEADER_ELECTION = 'CoordinatedLeaderElection';

const SHAPE = topLevel({
  spec: {
    fields: {
      holderIdentity: 'string',
      leaseDurationSeconds: 'int32',
      acquireTime: 'time',
      renewTime: 'time',
      leaseTransitions: 'int32',
      strategy: 'string',
      preferredHolder: 'string',
    },
  },
});

function validateSpec(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const duration = int(spec.leaseDurationSeconds);
  if (duration !== undefined && duration <= 0)
    errs.push(invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = int(spec.leaseTransitions);
  if (transitions !== undefined && transitions < 0) {
    errs.push(invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  }
  const strategy = str(spec.strategy);
  if (strategy !== undefined) errs.push(...validateCoordinatedLeaseStrategy(strategy, 'spec.strategy'));
  if (str(spec.preferredHolder) && !strategy) {
    errs.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  }
  return errs;
}

function gateErrors(spec: Obj, oldSpec: Obj | undefined, ctx: ValidationContext | undefined): FieldError[] {
  if (gateEnabled(ctx, COORDINATED_LEADER_ELECTION)) return [];
  const errs: FieldError[] = [];
  for (const f of ['strategy', 'preferredHolder']) {
    if (str(spec[f]) && !str(oldSpec?.[f])) {
      errs.push(
        forbidden(`spec.${f}`, `may only be set when the ${COORDINATED_LEADER_ELECTION} feature gate is enabled`),
      );
    }
  }
  return errs;
}

export function validateLeaseCreate(o: unknown, ctx?: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const lease = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(lease.metadata, true, nameIsDNSSubdomain));
  const spec = obj(lease.spec) ?? {};
  errs.push(...validateSpec(spec));
  errs.push(...gateErrors(spec, undefined, ctx));
  return errs;
}

export function validateLeaseUpdate(o: unknown, old: unknown, ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  const spec = obj(o.spec) ?? {};
  errs.push(...validateSpec(spec));
  errs.push(...gateErrors(spec, obj(obj(old)?.spec), ctx));
  return errs;
}
