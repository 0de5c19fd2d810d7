/**
 * ValidatingAdmissionPolicy enforcement (spec §2.13): every binding whose policy and match resources
 * take the request is evaluated, once per param the binding selects; failures act per the binding's
 * validationActions: `Deny` rejects with the first failure's message and reason (and its HTTP status),
 * `Warn` adds a `Warning` header, `Audit` records an audit annotation on the request. Configuration
 * errors (an unknown paramKind, missing params under `Deny`) and expression errors follow the policy's
 * failurePolicy. Requests on the policies and bindings themselves are never subject to policies.
 */

import type { KubeObject } from '../../api/meta.ts';
import { group, type Naming } from '../../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../../api/registry.ts';
import type {
  ParamRef,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  ValidationAction,
  ValidationReason,
} from '../../api/types/admission.ts';
import { type AuthorizeFn, Authorizer } from '../../cel/ext/authorizer.ts';
import { toCel } from '../../cel/values.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.ts';
import { type CompiledPolicy, compilePolicy, evaluatePolicy } from '../admissionpolicy/evaluate.ts';
import { matches, type RequestFacts } from '../admissionpolicy/match.ts';
import { ApiError, forbidden } from '../errors.ts';
import type { Storage } from '../storage.ts';
import { labelSelectorMatches } from '../validation/common.ts';

export const REASON_CODES: Record<ValidationReason, number> = {
  Unauthorized: 401,
  Forbidden: 403,
  RequestEntityTooLarge: 413,
  Invalid: 422,
};

class ConfigurationError extends Error {}

/** The params a binding selects: `[null]` without paramKind or paramRef (reference `CollectParams`). */
export function collectParams(
  registry: ResourceRegistry,
  storage: Storage,
  policy: ValidatingAdmissionPolicy,
  ref: ParamRef | undefined,
  requestNamespace: string | undefined,
): (KubeObject | null)[] {
  const kind = policy.spec?.paramKind;
  if (!kind || !ref) return [null];
  const rt = kind.apiVersion && kind.kind ? registry.kind(kind.apiVersion, kind.kind) : undefined;
  if (!rt) throw new ConfigurationError(`paramKind kind \`${kind.apiVersion}, Kind=${kind.kind}\` not known`);
  let namespace: string | undefined;
  if (rt.namespaced) {
    namespace = ref.namespace || requestNamespace;
    if (!namespace) {
      throw new ConfigurationError(
        'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
      );
    }
  } else if (ref.namespace) {
    throw new ConfigurationError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  let params: KubeObject[];
  if (ref.name) {
    const found = storage.get(rt, namespace ? `${namespace}/${ref.name}` : ref.name);
    params = found ? [found] : [];
  } else if (ref.selector) {
    params = storage.list(rt, namespace).filter((p) => labelSelectorMatches(ref.selector, p.metadata.labels ?? {}));
  } else {
    throw new ConfigurationError('one of name or selector must be provided');
  }
  if (params.length === 0 && ref.parameterNotFoundAction === 'Deny') {
    throw new ConfigurationError('no params found for policy binding with `Deny` parameterNotFoundAction');
  }
  return params;
}

/** The admission request as expressions see it. */
function admissionRequest(a: AdmissionAttributes): Record<string, unknown> {
  const kind = { group: a.rt.group, version: a.rt.version, kind: a.rt.kind };
  const resource = { group: a.rt.group, version: a.rt.version, resource: a.rt.plural };
  return {
    kind,
    resource,
    subResource: a.subresource ?? '',
    requestKind: kind,
    requestResource: resource,
    requestSubResource: a.subresource ?? '',
    name: a.name,
    namespace: a.namespace ?? '',
    operation: a.operation,
    userInfo: { username: a.user.username, uid: a.user.uid ?? '', groups: a.user.groups, extra: a.user.extra ?? {} },
    dryRun: a.dryRun,
    options: {},
  };
}

interface Denial {
  message: string;
  reason: ValidationReason;
}

function denialError(a: AdmissionAttributes, d: Denial): ApiError {
  const base = forbidden(a.rt, a.name, d.message);
  return new ApiError(REASON_CODES[d.reason], d.reason, base.message, {
    ...base.details,
    causes: [{ message: d.message }],
  });
}

export function validatingAdmissionPolicy(
  registry: ResourceRegistry,
  storage: Storage,
  n: Naming,
  authorize: AuthorizeFn,
): AdmissionPlugin {
  const admissionGroup = group(n, 'admissionregistration');
  const policies = registry.resource(admissionGroup, 'v1', 'validatingadmissionpolicies')!;
  const bindings = registry.resource(admissionGroup, 'v1', 'validatingadmissionpolicybindings')!;
  const namespaces = registry.resource('', 'v1', 'namespaces')!;
  const compiled = new Map<string, { uid?: string; generation?: number; policy: CompiledPolicy }>();

  /** Compiled once per policy generation. */
  function compiledFor(p: ValidatingAdmissionPolicy): CompiledPolicy {
    const name = p.metadata.name ?? '';
    const cached = compiled.get(name);
    if (cached && cached.uid === p.metadata.uid && cached.generation === p.metadata.generation) return cached.policy;
    const policy = compilePolicy(p);
    compiled.set(name, { uid: p.metadata.uid, generation: p.metadata.generation, policy });
    return policy;
  }

  function facts(a: AdmissionAttributes, rt: ResourceType, namespaceObject: KubeObject | undefined): RequestFacts {
    return {
      operation: a.operation,
      group: rt.group,
      version: rt.version,
      resource: rt.plural,
      subresource: a.subresource ?? '',
      name: a.name,
      namespaced: rt.namespaced,
      objectLabels: a.object?.metadata.labels ?? (a.object ? {} : undefined),
      oldObjectLabels: a.oldObject?.metadata.labels ?? (a.oldObject ? {} : undefined),
      namespaceLabels: namespaceObject?.metadata.labels ?? {},
    };
  }

  return {
    name: 'ValidatingAdmissionPolicy',
    validate(a) {
      if (a.rt.group === admissionGroup || a.rt.virtual) return;
      const all = storage.list(bindings) as ValidatingAdmissionPolicyBinding[];
      if (all.length === 0) return;
      const namespaceObject = a.rt.namespaced && a.namespace ? storage.get(namespaces, a.namespace) : undefined;
      const request = facts(a, a.rt, namespaceObject);
      let context: Record<string, unknown> | undefined;
      const denials: Denial[] = [];
      const audits: object[] = [];
      const annotations = new Map<string, Set<string>>();

      // In name order: the store lists cluster-scoped objects by name.
      for (const binding of all) {
        const policy = storage.get(policies, binding.spec?.policyName ?? '') as ValidatingAdmissionPolicy | undefined;
        if (!policy?.spec?.matchConstraints || !matches(policy.spec.matchConstraints, request)) continue;
        if (binding.spec?.matchResources && !matches(binding.spec.matchResources, request, true)) continue;
        const policyName = policy.metadata.name ?? '';
        const bindingName = binding.metadata.name ?? '';
        const prefix = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}' denied request: `;
        const failClosed = (policy.spec.failurePolicy ?? 'Fail') === 'Fail';
        let params: (KubeObject | null)[];
        try {
          params = collectParams(registry, storage, policy, binding.spec?.paramRef, a.namespace);
        } catch (err) {
          if (!(err instanceof ConfigurationError)) throw err;
          if (failClosed)
            denials.push({ message: `${prefix}failed to configure binding: ${err.message}`, reason: 'Invalid' });
          continue;
        }
        context ??= {
          object: toCel(a.object ?? null),
          oldObject: toCel(a.oldObject ?? null),
          request: toCel(admissionRequest(a)),
          namespaceObject: toCel(namespaceObject ?? null),
          authorizer: new Authorizer(a.user, authorize, {
            group: a.rt.group,
            resource: a.rt.plural,
            subresource: a.subresource,
            namespace: a.namespace,
            name: a.name,
          }),
        };
        const actions: ValidationAction[] = binding.spec?.validationActions ?? [];
        for (const param of params) {
          const outcome = evaluatePolicy(compiledFor(policy), { ...context, params: toCel(param) });
          for (const f of outcome.failures) {
            if (actions.includes('Deny')) denials.push({ message: prefix + f.message, reason: f.reason });
            if (actions.includes('Warn')) {
              a.warnings?.push(
                `Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${f.message}`,
              );
            }
            if (actions.includes('Audit')) {
              audits.push({
                message: f.message,
                policy: policyName,
                binding: bindingName,
                expressionIndex: f.index,
                validationActions: actions,
              });
            }
          }
          for (const [key, value] of Object.entries(outcome.annotations)) {
            const k = `${policyName}/${key}`;
            annotations.set(k, (annotations.get(k) ?? new Set()).add(value));
          }
        }
      }
      if (a.auditAnnotations) {
        for (const [k, values] of annotations) a.auditAnnotations[k] ??= [...values].join(', ');
        if (audits.length) a.auditAnnotations[n.annotations.validationFailure] = JSON.stringify(audits);
      }
      if (denials.length) throw denialError(a, denials[0]);
    },
  };
}
