/**
 * `admissionregistration.<group suffix>/v1` shapes as raw JSON: ValidatingAdmissionPolicy and its binding.
 * Expressions are CEL strings.
 */
import type { Condition, KubeObject, LabelSelector } from '../meta.ts';

export type OperationType = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | '*';

export interface NamedRuleWithOperations {
  /** Empty means every name. */
  resourceNames?: string[];
  operations?: OperationType[];
  apiGroups?: string[];
  apiVersions?: string[];
  /** `*` means all resources; `pods/*` means every pod subresource. */
  resources?: string[];
  /** Default `*`. */
  scope?: 'Cluster' | 'Namespaced' | '*';
}

export interface MatchResources {
  /** Default: matches every namespace (cluster-scoped objects are matched by their own name). */
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRuleWithOperations[];
  /** Takes precedence over `resourceRules`. */
  excludeResourceRules?: NamedRuleWithOperations[];
  /** Default `Equivalent`: also match the request converted to another matching version. */
  matchPolicy?: 'Exact' | 'Equivalent';
}

export interface MatchCondition {
  /** Required; merge key; qualified name. */
  name: string;
  /** Required CEL expression evaluating to a boolean. */
  expression: string;
}

export interface ParamKind {
  /** `<group>/<version>`, e.g. `apps/v1`. */
  apiVersion?: string;
  kind?: string;
}

export interface Variable {
  /** Required; merge key; exposed as `variables.<name>`. */
  name: string;
  /** Required CEL expression; may refer only to earlier variables; evaluated lazily. */
  expression: string;
}

export type ValidationReason = 'Unauthorized' | 'Forbidden' | 'Invalid' | 'RequestEntityTooLarge';

export interface Validation {
  /**
   * Required CEL expression over `object` (null on DELETE), `oldObject` (null on CREATE), `request`, `params`,
   * `namespaceObject`, `variables` and `authorizer`. Only apiVersion, kind, metadata.name and
   * metadata.generateName of metadata are accessible.
   */
  expression: string;
  /** Must not contain line breaks; required if the expression has line breaks. */
  message?: string;
  /** Default `Invalid`; the first failing validation's reason and HTTP status are returned. */
  reason?: ValidationReason;
  /** Takes precedence over `message`; an error or an empty, blank or multi-line result falls back to message. */
  messageExpression?: string;
}

export interface AuditAnnotation {
  /** Required; matches `[A-Za-z0-9][-A-Za-z0-9_.]*`, at most 63 bytes, unique in the policy; audit key `<policy_name>/<key>`. */
  key: string;
  /** Required CEL expression, at most 5kb, yielding a string or null (null or empty omits it); truncated at 10kb. */
  valueExpression: string;
}

export type FailurePolicyType = 'Fail' | 'Ignore';

export interface ValidatingAdmissionPolicySpec {
  /** Kind of parameter resources; when absent no params are provided. */
  paramKind?: ParamKind;
  /** Required; the policy cannot match ValidatingAdmissionPolicy or its binding. */
  matchConstraints: MatchResources;
  /** At least one of validations or auditAnnotations is required. */
  validations?: Validation[];
  /** Default `Fail`; covers expression errors and misconfiguration, not validations evaluating to false. */
  failurePolicy?: FailurePolicyType;
  auditAnnotations?: AuditAnnotation[];
  /** At most 64, evaluated in order: any false skips the policy; an error with none false follows failurePolicy. */
  matchConditions?: MatchCondition[];
  /** Not available to matchConditions. */
  variables?: Variable[];
}

export interface ExpressionWarning {
  /** Path such as `spec.validations[0].expression`. */
  fieldRef: string;
  /** Human-readable type-check lines. */
  warning: string;
}

/** Its presence means type checking completed. */
export interface TypeChecking {
  expressionWarnings?: ExpressionWarning[];
}

export interface ValidatingAdmissionPolicyStatus {
  observedGeneration?: number;
  typeChecking?: TypeChecking;
  conditions?: Condition[];
}

/** Expression-based accept or reject rules for requests (spec §2.13). Cluster-scoped; `status` is read-only. */
export interface ValidatingAdmissionPolicy extends KubeObject {
  spec?: ValidatingAdmissionPolicySpec;
  status?: ValidatingAdmissionPolicyStatus;
}

export interface ParamRef {
  /** Exclusive with `selector`. */
  name?: string;
  /** Unset for cluster-scoped params; for namespaced params unset means the request's namespace. */
  namespace?: string;
  selector?: LabelSelector;
  /** Required: whether to admit (`Allow`) or reject (`Deny`) when no params are found. */
  parameterNotFoundAction: 'Allow' | 'Deny';
}

export type ValidationAction = 'Deny' | 'Warn' | 'Audit';

export interface ValidatingAdmissionPolicyBindingSpec {
  /** Required; the policy bound; a missing policy makes the binding inert. */
  policyName: string;
  paramRef?: ParamRef;
  /** Further limits what the policy matches; cannot widen `matchConstraints`. */
  matchResources?: MatchResources;
  /** Required, unique; `Deny` and `Warn` may not both be set. */
  validationActions: ValidationAction[];
}

/** Binds a ValidatingAdmissionPolicy to resources and parameters. Cluster-scoped. */
export interface ValidatingAdmissionPolicyBinding extends KubeObject {
  spec?: ValidatingAdmissionPolicyBindingSpec;
}
