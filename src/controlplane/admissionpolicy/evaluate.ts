/**
 * One policy evaluated against one request (with one param): its match conditions in order, then its
 * validations and audit annotations, variables computed lazily on first use. Expressions are compiled
 * once per policy generation (`compilePolicy`); a request only evaluates them, each within the
 * reference's per-expression cost limit, all of them within the policy's runtime budget.
 */
import type { ValidatingAdmissionPolicy, ValidationReason } from '../../api/types/admission.ts';
import { compile, enforcementEnvironment, type Program } from '../../cel/policy.ts';
import { CostLimitError, fromCel, metered, PER_CALL_COST_LIMIT } from '../../cel/values.ts';

type Compiled = { program: Program } | { error: string };

export interface CompiledPolicy {
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions: { name: string; compiled: Compiled }[];
  variables: { name: string; compiled: Compiled }[];
  validations: {
    expression: string;
    message?: string;
    reason: ValidationReason;
    compiled: Compiled;
    messageCompiled?: Compiled;
  }[];
  auditAnnotations: { key: string; compiled: Compiled }[];
}

export function compilePolicy(policy: ValidatingAdmissionPolicy): CompiledPolicy {
  const env = enforcementEnvironment();
  const spec = policy.spec;
  return {
    failurePolicy: spec?.failurePolicy ?? 'Fail',
    matchConditions: (spec?.matchConditions ?? []).map((m) => ({ name: m.name, compiled: compile(env, m.expression) })),
    variables: (spec?.variables ?? []).map((v) => ({ name: v.name, compiled: compile(env, v.expression) })),
    validations: (spec?.validations ?? []).map((v) => ({
      expression: v.expression,
      message: v.message,
      reason: v.reason ?? 'Invalid',
      compiled: compile(env, v.expression),
      messageCompiled: v.messageExpression ? compile(env, v.messageExpression) : undefined,
    })),
    auditAnnotations: (spec?.auditAnnotations ?? []).map((a) => ({
      key: a.key,
      compiled: compile(env, a.valueExpression),
    })),
  };
}

/** A failing validation or an error that the failure policy turns into a denial. */
export interface Failure {
  message: string;
  reason: ValidationReason;
  /** The validation's index; undefined for errors outside validations. */
  index?: number;
}

export interface Outcome {
  /** False when a match condition excluded the request (or errored under `Ignore`). */
  applies: boolean;
  failures: Failure[];
  /** Audit annotation values by key (without the policy-name prefix). */
  annotations: Record<string, string>;
}

/** The reference's bound on an audit annotation value. */
export const MAX_ANNOTATION_VALUE = 10 * 1024;

/** The reference's runtime cost budget of one policy evaluation (all its expressions together). */
export const POLICY_COST_BUDGET = 10_000_000;

export class BudgetExhausted extends Error {
  constructor() {
    super('validation failed due to running out of cost budget, no further validation rules will be run');
  }
}

type Run = (c: Compiled, context: Record<string, unknown>) => unknown;

/** Runs expressions within the per-expression limit and what is left of the policy's budget. */
function budgeted(budget: number): Run {
  let remaining = budget;
  return (c, context) => {
    if ('error' in c) throw new Error(`compilation failed: ${c.error}`);
    if (remaining <= 0) throw new BudgetExhausted();
    const limit = Math.min(PER_CALL_COST_LIMIT, remaining);
    try {
      const { value, cost } = metered(limit, () => c.program(context));
      remaining -= cost;
      return value;
    } catch (err) {
      if (!(err instanceof CostLimitError)) throw err;
      remaining -= limit;
      throw limit < PER_CALL_COST_LIMIT ? new BudgetExhausted() : err;
    }
  };
}

/** `variables`: each computed on first use and kept; a variable that needs itself is an error. */
function lazyVariables(policy: CompiledPolicy, context: Record<string, unknown>, run: Run): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  for (const v of policy.variables) {
    let state: 'new' | 'busy' | 'done' = 'new';
    let value: unknown;
    Object.defineProperty(vars, v.name, {
      enumerable: true,
      get() {
        if (state === 'busy') throw new Error(`variable '${v.name}' refers to itself`);
        if (state === 'new') {
          state = 'busy';
          try {
            value = run(v.compiled, context);
            state = 'done';
          } catch (err) {
            state = 'new';
            throw err;
          }
        }
        return value;
      },
    });
  }
  return vars;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0] : String(err));

/** A messageExpression's result, when usable: a non-blank single-line string. */
function customMessage(c: Compiled | undefined, context: Record<string, unknown>, run: Run): string | undefined {
  if (!c) return undefined;
  try {
    const m = run(c, context);
    if (typeof m !== 'string') return undefined;
    const trimmed = m.trim();
    return trimmed && !/[\r\n]/.test(trimmed) ? trimmed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Evaluates a compiled policy; `context` holds `object`, `oldObject`, `params`, `request`,
 * `namespaceObject` and `authorizer` as CEL values (`variables` is added here).
 */
export function evaluatePolicy(
  policy: CompiledPolicy,
  context: Record<string, unknown>,
  budget = POLICY_COST_BUDGET,
): Outcome {
  const run = budgeted(budget);
  const ctx = { ...context };
  if (policy.variables.length) ctx.variables = lazyVariables(policy, ctx, run);
  const fail = policy.failurePolicy === 'Fail';
  const skipped: Outcome = { applies: false, failures: [], annotations: {} };

  let conditionError: string | undefined;
  for (const m of policy.matchConditions) {
    try {
      const v = run(m.compiled, ctx);
      if (v === false) return skipped;
      if (v !== true) throw new Error(`must evaluate to bool, got ${typeof v}`);
    } catch (err) {
      conditionError ??= `matchCondition '${m.name}' resulted in error: ${errorText(err)}`;
    }
  }
  if (conditionError)
    return fail ? { ...skipped, applies: true, failures: [{ message: conditionError, reason: 'Invalid' }] } : skipped;

  const failures: Failure[] = [];
  for (const [index, v] of policy.validations.entries()) {
    let result: unknown;
    try {
      result = run(v.compiled, ctx);
    } catch (err) {
      const exhausted = err instanceof BudgetExhausted;
      if (fail) {
        const message = exhausted ? err.message : `expression '${v.expression}' resulted in error: ${errorText(err)}`;
        failures.push({ message, reason: 'Invalid', index });
      }
      if (exhausted) return { applies: true, failures, annotations: {} };
      continue;
    }
    if (result === true) continue;
    // messageExpression sees every variable but `authorizer`.
    const message =
      customMessage(v.messageCompiled, { ...ctx, authorizer: null }, run) ??
      v.message ??
      `failed expression: ${v.expression.trim()}`;
    failures.push({ message, reason: v.reason, index });
  }

  const annotations: Record<string, string> = {};
  for (const a of policy.auditAnnotations) {
    try {
      const value = fromCel(run(a.compiled, ctx));
      if (value === null) continue;
      if (typeof value !== 'string') {
        throw new Error(
          `valueExpression resulted in unsupported return type: ${typeof value}; must be either string or null`,
        );
      }
      if (value) annotations[a.key] = value.slice(0, MAX_ANNOTATION_VALUE);
    } catch (err) {
      if (fail)
        failures.push({
          message: `auditAnnotation '${a.key}' resulted in error: ${errorText(err)}`,
          reason: 'Invalid',
        });
    }
  }
  return { applies: true, failures, annotations };
}
