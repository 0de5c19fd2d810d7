/**
 * ValidatingAdmissionPolicy (`admissionregistration.<suffix>/v1`, cluster-scoped): validation of create,
 * update and `/status`, and the reference's defaults.
 *
 * failurePolicy `Fail` or `Ignore`; matchConstraints required, with at least one resourceRule, valid rules,
 * matchPolicy `Exact` or `Equivalent`, label selectors; the policy may not name the ValidatingAdmissionPolicy
 * or ValidatingAdmissionPolicyBinding resources; at most 64 matchConditions with unique qualified names and
 * an expression; paramKind apiVersion and kind; variables named as CEL identifiers; at least one of
 * validations or auditAnnotations. Validations: an expression; a message without line breaks (and a message
 * when the expression spans lines); reason `Unauthorized`, `Forbidden`, `Invalid` or `RequestEntityTooLarge`.
 * Audit annotations: at most 20; unique keys forming a qualified name `<policy>/<key>` (so at most 63 bytes);
 * a valueExpression of at most 5 KiB. Every expression must compile, as the reference compiles it (`params` only
 * with a paramKind, `variables` as declared before it) and evaluate to its type: validations and match conditions
 * bool, messageExpression string, valueExpression string or null; else a 422 naming the field with the compile
 * error. Type errors against the matched kinds' schemas are not refused: the status controller warns of them.
 */

import { isDNS1035Label, isDNS1123Subdomain } from '../../api/dns-names.ts';
import {
  child,
  deepEqual,
  duplicate,
  type FieldError,
  index,
  invalid,
  notSupported,
  required,
  tooMany,
} from '../../api/field-errors.ts';
import { group } from '../../api/naming.ts';
import { checkPolicyExpression, type Declarations } from '../../cel/policy.ts';
import {
  isValidPathSegmentName,
  nameIsDNSSubdomain,
  validateConditions,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateQualifiedName,
} from './common.ts';
import type { ValidationContext } from './context.ts';
import {
  absent,
  arr,
  CONDITION,
  checkShape,
  isObj,
  LABEL_SELECTOR,
  type Obj,
  obj,
  rootProblem,
  str,
  topLevel,
} from './raw.ts';

export const MAX_MATCH_CONDITIONS = 64;
export const MAX_AUDIT_ANNOTATIONS = 20;
export const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH = 5 * 1024;

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
/** The spec adds `Unauthorized` to the reference's three. */
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const POLICY_RESOURCES = ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'];

const RULE = {
  fields: {
    resourceNames: { items: 'string' },
    operations: { items: 'string' },
    apiGroups: { items: 'string' },
    apiVersions: { items: 'string' },
    resources: { items: 'string' },
    scope: 'string',
  },
} as const;

const SHAPE = topLevel({
  spec: {
    fields: {
      paramKind: { fields: { apiVersion: 'string', kind: 'string' } },
      matchConstraints: {
        fields: {
          namespaceSelector: LABEL_SELECTOR,
          objectSelector: LABEL_SELECTOR,
          resourceRules: { items: RULE },
          excludeResourceRules: { items: RULE },
          matchPolicy: 'string',
        },
      },
      validations: {
        items: { fields: { expression: 'string', message: 'string', reason: 'string', messageExpression: 'string' } },
      },
      failurePolicy: 'string',
      auditAnnotations: { items: { fields: { key: 'string', valueExpression: 'string' } } },
      matchConditions: { items: { fields: { name: 'string', expression: 'string' } } },
      variables: { items: { fields: { name: 'string', expression: 'string' } } },
    },
  },
  status: {
    fields: {
      observedGeneration: 'int64',
      typeChecking: {
        fields: { expressionWarnings: { items: { fields: { fieldRef: 'string', warning: 'string' } } } },
      },
      conditions: { items: CONDITION },
    },
  },
});

const strings = (v: unknown): string[] => (arr(v) ?? []).filter((s): s is string => typeof s === 'string');
const hasNewlines = (s: string): boolean => /[\n\r]/.test(s);

function validateResources(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(required(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(required(index(path, i)));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSub = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res))
      errs.push(invalid(index(path, i), resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub))
      errs.push(invalid(index(path, i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) {
    errs.push(invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  }
  if (singleWildcard && withoutSub) {
    errs.push(invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  }
  return errs;
}

function validateRule(rule: Obj, path: string, ctx: ValidationContext, checkPolicyResources: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const resourceNames = new Set<string>();
  strings(rule.resourceNames).forEach((name, i) => {
    const p = index(child(path, 'resourceNames'), i);
    for (const msg of isValidPathSegmentName(name)) errs.push(invalid(p, name, msg));
    if (resourceNames.has(name)) errs.push(duplicate(p, name));
    resourceNames.add(name);
  });
  const operations = strings(rule.operations);
  if (operations.length === 0) errs.push(required(child(path, 'operations')));
  if (operations.length > 1 && operations.includes('*')) {
    errs.push(invalid(child(path, 'operations'), operations, "if '*' is present, must not specify other operations"));
  }
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(notSupported(index(child(path, 'operations'), i), op, OPERATIONS));
  });
  const apiGroups = strings(rule.apiGroups);
  if (apiGroups.length === 0) errs.push(required(child(path, 'apiGroups')));
  if (apiGroups.length > 1 && apiGroups.includes('*')) {
    errs.push(invalid(child(path, 'apiGroups'), apiGroups, "if '*' is present, must not specify other API groups"));
  }
  const apiVersions = strings(rule.apiVersions);
  if (apiVersions.length === 0) errs.push(required(child(path, 'apiVersions')));
  if (apiVersions.length > 1 && apiVersions.includes('*')) {
    errs.push(
      invalid(child(path, 'apiVersions'), apiVersions, "if '*' is present, must not specify other API versions"),
    );
  }
  apiVersions.forEach((v, i) => {
    if (v === '') errs.push(required(index(child(path, 'apiVersions'), i)));
  });
  const resources = strings(rule.resources);
  errs.push(...validateResources(resources, child(path, 'resources')));
  const scope = str(rule.scope);
  if (scope !== undefined && !SCOPES.includes(scope)) errs.push(notSupported(child(path, 'scope'), scope, SCOPES));

  // The policy may not match its own kind or its bindings.
  const admissionGroup = group(ctx.naming, 'admissionregistration');
  if (checkPolicyResources && apiGroups.some((g) => g === '*' || g === admissionGroup)) {
    resources.forEach((r, i) => {
      if (POLICY_RESOURCES.includes(r.split('/')[0])) {
        errs.push(
          invalid(
            index(child(path, 'resources'), i),
            r,
            'must not match ValidatingAdmissionPolicy or ValidatingAdmissionPolicyBinding resources',
          ),
        );
      }
    });
  }
  return errs;
}

function validateMatchResources(mc: Obj, path: string, ctx: ValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  const matchPolicy = mc.matchPolicy;
  if (absent(matchPolicy)) errs.push(required(child(path, 'matchPolicy')));
  else if (typeof matchPolicy === 'string' && !MATCH_POLICIES.includes(matchPolicy)) {
    errs.push(notSupported(child(path, 'matchPolicy'), matchPolicy, MATCH_POLICIES));
  }
  for (const f of ['namespaceSelector', 'objectSelector']) {
    if (absent(mc[f])) errs.push(required(child(path, f)));
    else errs.push(...validateLabelSelector(mc[f], child(path, f)));
  }
  arr(mc.resourceRules)?.forEach((r, i) => {
    if (isObj(r)) errs.push(...validateRule(r, index(child(path, 'resourceRules'), i), ctx, true));
  });
  arr(mc.excludeResourceRules)?.forEach((r, i) => {
    if (isObj(r)) errs.push(...validateRule(r, index(child(path, 'excludeResourceRules'), i), ctx, false));
  });
  return errs;
}

function validateParamKind(pk: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = str(pk.apiVersion) ?? '';
  if (!apiVersion) {
    errs.push(required(child(path, 'apiVersion')));
  } else {
    const slashes = apiVersion.split('/').length - 1;
    if (slashes > 1) {
      errs.push(invalid(child(path, 'apiVersion'), apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
    } else {
      const [g, v] = apiVersion === '/' ? ['', ''] : slashes === 0 ? ['', apiVersion] : apiVersion.split('/');
      if (g) {
        const msgs = isDNS1123Subdomain(g);
        if (msgs.length) errs.push(invalid(child(path, 'apiVersion'), g, msgs.join(',')));
      }
      if (!v) errs.push(invalid(child(path, 'apiVersion'), apiVersion, 'version must be specified'));
      else {
        const msgs = isDNS1035Label(v);
        if (msgs.length) errs.push(invalid(child(path, 'apiVersion'), v, msgs.join(',')));
      }
    }
  }
  const kind = str(pk.kind) ?? '';
  if (!kind) errs.push(required(child(path, 'kind')));
  else {
    const msgs = isDNS1035Label(kind.toLowerCase());
    if (msgs.length)
      errs.push(
        invalid(child(path, 'kind'), kind, `may have mixed case, but should otherwise match: ${msgs.join(',')}`),
      );
  }
  return errs;
}

function validateMatchConditions(list: unknown[], path: string, params: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (list.length > MAX_MATCH_CONDITIONS) errs.push(tooMany(path, list.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  list.forEach((raw, i) => {
    const mc = obj(raw);
    if (!mc) return;
    const p = index(path, i);
    const expression = (str(mc.expression) ?? '').trim();
    if (!expression) errs.push(required(child(p, 'expression')));
    else errs.push(...compileErrors(expression, { params, authorizer: true }, child(p, 'expression'), ['bool']));
    const name = str(mc.name) ?? '';
    if (!name) errs.push(required(child(p, 'name')));
    else errs.push(...validateQualifiedName(name, child(p, 'name')));
    if (name) {
      if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
      names.add(name);
    }
  });
  return errs;
}

/** The reference's compile check of one expression: a 422 naming the field when it does not compile. */
function compileErrors(
  expression: string,
  d: Declarations,
  path: string,
  returnTypes?: readonly string[],
): FieldError[] {
  const checked = checkPolicyExpression(expression, d, returnTypes);
  return 'error' in checked ? [invalid(path, expression, checked.error)] : [];
}

const CEL_IDENT = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** `variables` gets this variable's type (dyn when it does not compile) for the expressions after it. */
function validateVariable(v: Obj, path: string, d: Declarations, variables: Record<string, string>): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(v.name) ?? '';
  if (!name.trim()) errs.push(required(child(path, 'name'), 'name is not specified'));
  else if (!CEL_IDENT.test(name) || CEL_RESERVED.has(name)) {
    errs.push(invalid(child(path, 'name'), name, 'name is not a valid CEL identifier'));
  }
  const expression = str(v.expression) ?? '';
  if (!expression.trim()) {
    errs.push(required(child(path, 'expression'), 'expression is not specified'));
    return errs;
  }
  const checked = checkPolicyExpression(expression, { ...d, variables: { ...variables } });
  if ('error' in checked) errs.push(invalid(child(path, 'expression'), expression, checked.error));
  if (name.trim()) variables[name] = 'error' in checked ? 'dyn' : checked.type;
  return errs;
}

function validateValidation(v: Obj, path: string, d: Declarations): FieldError[] {
  const errs: FieldError[] = [];
  const expression = str(v.expression) ?? '';
  const trimmedExpression = expression.trim();
  if (!trimmedExpression) errs.push(required(child(path, 'expression'), 'expression is not specified'));
  else errs.push(...compileErrors(expression, d, child(path, 'expression'), ['bool']));
  const messageExpression = str(v.messageExpression) ?? '';
  if (messageExpression.length > 0 && !messageExpression.trim()) {
    errs.push(invalid(child(path, 'messageExpression'), messageExpression, 'must be non-empty if specified'));
  } else if (messageExpression.trim()) {
    const withoutAuthorizer = { ...d, authorizer: false };
    errs.push(...compileErrors(messageExpression, withoutAuthorizer, child(path, 'messageExpression'), ['string']));
  }
  const message = str(v.message) ?? '';
  const trimmedMessage = message.trim();
  if (message.length > 0 && !trimmedMessage) {
    errs.push(invalid(child(path, 'message'), message, 'message must be non-empty if specified'));
  } else if (hasNewlines(trimmedMessage)) {
    errs.push(invalid(child(path, 'message'), message, 'message must not contain line breaks'));
  } else if (hasNewlines(trimmedExpression) && !trimmedMessage) {
    errs.push(required(child(path, 'message'), 'message must be specified if expression contains line breaks'));
  }
  const reason = str(v.reason);
  if (reason !== undefined && !REASONS.includes(reason))
    errs.push(notSupported(child(path, 'reason'), reason, REASONS));
  return errs;
}

function validateAuditAnnotation(a: Obj, policyName: string, path: string, d: Declarations): FieldError[] {
  const errs: FieldError[] = [];
  const key = str(a.key) ?? '';
  if (policyName) errs.push(...validateQualifiedName(`${policyName}/${key}`, child(path, 'key')));
  else errs.push(invalid(child(path, 'key'), key, 'requires metadata.name be non-empty'));
  const valueExpression = (str(a.valueExpression) ?? '').trim();
  if (!valueExpression) {
    errs.push(required(child(path, 'valueExpression'), 'valueExpression is not specified'));
  } else if (Buffer.byteLength(valueExpression, 'utf8') > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH) {
    errs.push(
      required(
        child(path, 'valueExpression'),
        `must not exceed ${MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH} bytes in length`,
      ),
    );
  } else {
    errs.push(...compileErrors(valueExpression, d, child(path, 'valueExpression'), ['string', 'null_type']));
  }
  return errs;
}

function validateSpec(
  spec: Obj,
  policyName: string,
  ctx: ValidationContext,
  ignoreMatchConditions: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  const failurePolicy = spec.failurePolicy;
  if (absent(failurePolicy)) errs.push(required('spec.failurePolicy'));
  else if (typeof failurePolicy === 'string' && !FAILURE_POLICIES.includes(failurePolicy)) {
    errs.push(notSupported('spec.failurePolicy', failurePolicy, FAILURE_POLICIES));
  }
  const paramKind = obj(spec.paramKind);
  if (paramKind) errs.push(...validateParamKind(paramKind, 'spec.paramKind'));
  const mc = obj(spec.matchConstraints);
  if (!mc) {
    if (absent(spec.matchConstraints)) errs.push(required('spec.matchConstraints'));
  } else {
    errs.push(...validateMatchResources(mc, 'spec.matchConstraints', ctx));
    if ((arr(mc.resourceRules) ?? []).length === 0) errs.push(required('spec.matchConstraints.resourceRules'));
  }
  const params = isObj(spec.paramKind);
  if (!ignoreMatchConditions)
    errs.push(...validateMatchConditions(arr(spec.matchConditions) ?? [], 'spec.matchConditions', params));
  const variables: Record<string, string> = {};
  const declared = { params, authorizer: true };
  arr(spec.variables)?.forEach((v, i) => {
    if (isObj(v)) errs.push(...validateVariable(v, index('spec.variables', i), declared, variables));
  });
  const d: Declarations = { ...declared, variables };
  const validations = arr(spec.validations) ?? [];
  const auditAnnotations = arr(spec.auditAnnotations);
  if (validations.length === 0 && (auditAnnotations?.length ?? 0) === 0) {
    const detail = 'validations or auditAnnotations must contain at least one item';
    errs.push(required('spec.validations', detail), required('spec.auditAnnotations', detail));
    return errs;
  }
  validations.forEach((v, i) => {
    if (isObj(v)) errs.push(...validateValidation(v, index('spec.validations', i), d));
  });
  if (auditAnnotations) {
    if (auditAnnotations.length > MAX_AUDIT_ANNOTATIONS) {
      errs.push(
        invalid(
          'spec.auditAnnotations',
          auditAnnotations,
          `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`,
        ),
      );
    }
    const keys = new Set<string>();
    auditAnnotations.forEach((raw, i) => {
      const a = obj(raw);
      if (!a) return;
      const p = index('spec.auditAnnotations', i);
      errs.push(...validateAuditAnnotation(a, policyName, p, d));
      const key = str(a.key) ?? '';
      if (keys.has(key)) errs.push(duplicate(child(p, 'key'), key));
      keys.add(key);
    });
  }
  return errs;
}

function validate(o: unknown, ctx: ValidationContext, ignoreMatchConditions: boolean): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const vap = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(vap.metadata, false, nameIsDNSSubdomain));
  const name = str(obj(vap.metadata)?.name) ?? '';
  errs.push(...validateSpec(obj(vap.spec) ?? {}, name, ctx, ignoreMatchConditions));
  return errs;
}

export function validateValidatingAdmissionPolicyCreate(o: unknown, ctx: ValidationContext): FieldError[] {
  return validate(o, ctx, false);
}

/** Match conditions are re-checked only when they or the paramKind changed. */
export function validateValidatingAdmissionPolicyUpdate(
  o: unknown,
  old: unknown,
  ctx: ValidationContext,
): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const spec = obj(o.spec) ?? {};
  const oldSpec = obj(obj(old)?.spec) ?? {};
  const unchanged =
    deepEqual(spec.paramKind, oldSpec.paramKind) && deepEqual(spec.matchConditions, oldSpec.matchConditions);
  const errs = validateObjectMetaUpdate(o.metadata, obj(old)?.metadata);
  errs.push(...validate(o, ctx, unchanged));
  return errs;
}

export function validateValidatingAdmissionPolicyStatusUpdate(
  o: unknown,
  old: unknown,
  _ctx?: ValidationContext,
): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  const status = obj(o.status) ?? {};
  arr(obj(status.typeChecking)?.expressionWarnings)?.forEach((raw, i) => {
    const w = obj(raw);
    if (!w) return;
    const p = index('status.typeChecking.expressionWarnings', i);
    if (!str(w.warning)) errs.push(required(child(p, 'warning')));
    const fieldRef = (str(w.fieldRef) ?? '').trim();
    if (!fieldRef) errs.push(required(child(p, 'fieldRef')));
    else if (!/^[A-Za-z_][\w]*(\[\d+\])*(\.[A-Za-z_][\w]*(\[\d+\])*)*$/.test(fieldRef)) {
      errs.push(invalid(child(p, 'fieldRef'), fieldRef, 'invalid JSONPath: unrecognized field reference'));
    }
  });
  errs.push(...validateConditions(status.conditions, 'status.conditions'));
  return errs;
}

/**
 * The reference's defaults: failurePolicy Fail; matchConstraints matchPolicy Equivalent and empty namespace
 * and object selectors; each resource rule's scope `*`.
 */
export function defaultValidatingAdmissionPolicy(o: unknown): void {
  const spec = obj(obj(o)?.spec);
  if (!spec) return;
  if (absent(spec.failurePolicy)) spec.failurePolicy = 'Fail';
  const mc = obj(spec.matchConstraints);
  if (!mc) return;
  if (absent(mc.matchPolicy)) mc.matchPolicy = 'Equivalent';
  if (absent(mc.namespaceSelector)) mc.namespaceSelector = {};
  if (absent(mc.objectSelector)) mc.objectSelector = {};
  for (const list of [mc.resourceRules, mc.excludeResourceRules]) {
    for (const raw of arr(list) ?? []) {
      const rule = obj(raw);
      if (rule && absent(rule.scope)) rule.scope = '*';
    }
  }
}
