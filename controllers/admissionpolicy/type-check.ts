/**
 * The type-check warnings of a ValidatingAdmissionPolicy (reference §6), on the CEL library. The controller loads this
 * module on its first check: loading the library costs every start a few milliseconds, and a cluster without policies
 * never needs it.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { ExpressionWarning, ValidatingAdmissionPolicy } from '../../src/api/types/admission.ts';
import { typeCheckIssues } from '../../src/cel/issues.ts';
import { typeCheckEnvironment } from '../../src/cel/policy.ts';
import type { DeclType } from '../../src/cel/schema-types.ts';
import { type GVK, gvkString, paramKindOf } from './core.ts';

/**
 * The warnings of a policy checked against `kinds` (kinds without a schema are skipped): one per
 * validation expression or messageExpression with issues, in validation order, each holding a
 * `<gvk>: <issues>\n` block per kind with issues, the blocks joined by a newline.
 */
export function typeCheck(
  policy: ValidatingAdmissionPolicy,
  kinds: GVK[],
  schemaOf: (k: GVK) => DeclType | undefined,
): ExpressionWarning[] {
  const spec = policy.spec;
  const paramGVK = paramKindOf(policy);
  const paramsType = paramGVK && schemaOf(paramGVK);
  const variables = spec?.variables ?? [];
  type Checker = { gvk: GVK; env: Environment } | { gvk: GVK; broken: string };
  const envs = kinds.flatMap((k): Checker[] => {
    const type = schemaOf(k);
    if (!type) return [];
    const params = paramsType && paramGVK ? { name: paramGVK.kind, type: paramsType } : undefined;
    try {
      return [{ gvk: k, env: typeCheckEnvironment({ object: { name: k.kind, type }, params, variables }) }];
    } catch (err) {
      return [{ gvk: k, broken: (err as Error).message }];
    }
  });
  const warnings: ExpressionWarning[] = [];
  (spec?.validations ?? []).forEach((v, i) => {
    const fields: [string, string | undefined][] = [
      ['expression', v.expression],
      ['messageExpression', v.messageExpression],
    ];
    for (const [field, expression] of fields) {
      if (!expression) continue;
      const blocks = envs.flatMap((e) => {
        if ('broken' in e) return [`${gvkString(e.gvk)}: type checking error: ${e.broken}\n`];
        const issues = typeCheckIssues(e.env, expression);
        return issues ? [`${gvkString(e.gvk)}: ${issues}\n`] : [];
      });
      if (blocks.length) warnings.push({ fieldRef: `spec.validations[${i}].${field}`, warning: blocks.join('\n') });
    }
  });
  return warnings;
}
