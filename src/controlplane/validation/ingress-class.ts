/**
 * IngressClass (`networking.<suffix>/v1`, cluster-scoped).
 *
 * spec.controller: a domain-prefixed path of at most 250 bytes, immutable. spec.parameters: kind and name
 * required (path-segment names), apiGroup a DNS subdomain when set, scope `Cluster` (the default) or
 * `Namespace`, namespace required with `Namespace` and forbidden with `Cluster`.
 */

import { isDNS1123Subdomain } from '../../api/dns-names.ts';
import {
  child,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
  tooLong,
  validateImmutableField,
} from '../../api/field-errors.ts';
import {
  byteLength,
  isDomainPrefixedPath,
  isValidPathSegmentName,
  nameIsDNSSubdomain,
  validateNamespaceName,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './common.ts';
import type { ValidationContext } from './context.ts';
import { absent, checkShape, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';

export const MAX_CONTROLLER_LENGTH = 250;
const SCOPES = ['Cluster', 'Namespace'];

const SHAPE = topLevel({
  spec: {
    fields: {
      controller: 'string',
      parameters: {
        fields: { apiGroup: 'string', kind: 'string', name: 'string', scope: 'string', namespace: 'string' },
      },
    },
  },
});

function validateParameters(params: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiGroup = str(params.apiGroup);
  if (apiGroup !== undefined)
    for (const msg of isDNS1123Subdomain(apiGroup)) errs.push(invalid(child(path, 'apiGroup'), apiGroup, msg));
  for (const f of ['kind', 'name']) {
    const v = params[f];
    if (absent(v) || v === '') errs.push(required(child(path, f), `${f} is required`));
    else if (typeof v === 'string')
      for (const msg of isValidPathSegmentName(v)) errs.push(invalid(child(path, f), v, msg));
  }
  if (absent(params.scope)) {
    errs.push(required(child(path, 'scope')));
    return errs;
  }
  const scope = str(params.scope);
  if (scope === undefined) return errs;
  if (!SCOPES.includes(scope)) {
    errs.push(notSupported(child(path, 'scope'), scope, SCOPES));
    return errs;
  }
  const namespace = params.namespace;
  if (scope === 'Namespace') {
    if (absent(namespace)) errs.push(required(child(path, 'namespace'), "`parameters.scope` is set to 'Namespace'"));
    else if (typeof namespace === 'string') {
      for (const msg of validateNamespaceName(namespace, false))
        errs.push(invalid(child(path, 'namespace'), namespace, msg));
    }
  } else if (!absent(namespace)) {
    errs.push(forbidden(child(path, 'namespace'), "`parameters.scope` is set to 'Cluster'"));
  }
  return errs;
}

export function validateIngressClassCreate(o: unknown, _ctx?: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const ic = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMeta(ic.metadata, false, nameIsDNSSubdomain));
  const spec = obj(ic.spec) ?? {};
  const controller = spec.controller;
  if (typeof controller === 'string' || absent(controller)) {
    const c = str(controller) ?? '';
    if (byteLength(c) > MAX_CONTROLLER_LENGTH) errs.push(tooLong('spec.controller', MAX_CONTROLLER_LENGTH));
    errs.push(...isDomainPrefixedPath('spec.controller', c));
  }
  const params = obj(spec.parameters);
  if (params) errs.push(...validateParameters(params, 'spec.parameters'));
  return errs;
}

export function validateIngressClassUpdate(o: unknown, old: unknown, ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = validateObjectMetaUpdate(o.metadata, obj(old)?.metadata);
  const controller = str(obj(o.spec)?.controller) ?? '';
  const oldController = str(obj(obj(old)?.spec)?.controller) ?? '';
  errs.push(...validateImmutableField(controller, oldController, 'spec.controller'));
  errs.push(...validateIngressClassCreate(o, ctx));
  return errs;
}

/** `spec.parameters.scope` defaults to `Cluster` when parameters are given. */
export function defaultIngressClass(o: unknown): void {
  const params = obj(obj(obj(o)?.spec)?.parameters);
  if (params && absent(params.scope)) params.scope = 'Cluster';
}
