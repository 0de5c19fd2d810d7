/**
 * APIService (`apiregistration.<suffix>/v1`, cluster-scoped).
 *
 * The name is `<version>.<group>` (and a valid path segment). An empty group is only for `v1`; otherwise the
 * group is a DNS subdomain; the version a DNS-1035 label. groupPriorityMinimum in 1..20000, versionPriority
 * in 1..1000. A local service (no `service`) has no caBundle and no insecureSkipTLSVerify; a remote one needs
 * namespace and name, a port in 1..65535 (default 443), and not both insecureSkipTLSVerify and a caBundle.
 * Status conditions have status True, False or Unknown.
 */

import { DEFAULT_SERVICE_PORT } from '../../api/apiservice.ts';
import { isDNS1035Label, isDNS1123Subdomain } from '../../api/dns-names.ts';
import { child, type FieldError, goQuote, index, invalid, notSupported, required } from '../../api/field-errors.ts';
import { isValidPathSegmentName, isValidPortNum, validateObjectMeta, validateObjectMetaUpdate } from './common.ts';
import type { ValidationContext } from './context.ts';
import { absent, arr, bool, bytes, checkShape, int, isObj, type Obj, obj, rootProblem, str, topLevel } from './raw.ts';

const STATUSES = ['True', 'False', 'Unknown'];

const SHAPE = topLevel({
  spec: {
    fields: {
      service: { fields: { namespace: 'string', name: 'string', port: 'int32' } },
      group: 'string',
      version: 'string',
      insecureSkipTLSVerify: 'boolean',
      caBundle: 'bytes',
      groupPriorityMinimum: 'int32',
      versionPriority: 'int32',
    },
  },
  status: {
    fields: {
      conditions: {
        items: {
          fields: { type: 'string', status: 'string', lastTransitionTime: 'time', reason: 'string', message: 'string' },
        },
      },
    },
  },
});

export function validateAPIServiceCreate(o: unknown, ctx: ValidationContext): FieldError[] {
  const root = rootProblem(o);
  if (root.length) return root;
  const svc = o as Obj;
  const errs = checkShape(o, SHAPE, '');
  const spec = obj(svc.spec) ?? {};
  const group = str(spec.group) ?? '';
  const version = str(spec.version) ?? '';
  const requiredName = `${version}.${group}`;
  errs.push(
    ...validateObjectMeta(svc.metadata, false, (name) => {
      const minimal = isValidPathSegmentName(name);
      if (minimal.length) return minimal;
      return name === requiredName ? [] : [`must be \`spec.version+"."+spec.group\`: ${goQuote(requiredName)}`];
    }),
  );
  if (!group && version !== 'v1') {
    const word = ctx.naming.apiServer.replace(/-apiserver$/, '');
    errs.push(required('spec.group', `only v1 may have an empty group and it better be legacy ${word}`));
  }
  if (group) for (const msg of isDNS1123Subdomain(group)) errs.push(invalid('spec.group', group, msg));
  for (const msg of isDNS1035Label(version)) errs.push(invalid('spec.version', version, msg));

  const groupPriority = int(spec.groupPriorityMinimum) ?? 0;
  if (groupPriority <= 0 || groupPriority > 20000) {
    errs.push(invalid('spec.groupPriorityMinimum', groupPriority, 'must be positive and less than 20000'));
  }
  const versionPriority = int(spec.versionPriority) ?? 0;
  if (versionPriority <= 0 || versionPriority > 1000) {
    errs.push(invalid('spec.versionPriority', versionPriority, 'must be positive and less than 1000'));
  }

  const caBundle = bytes(spec.caBundle);
  const caLength = caBundle?.length ?? 0;
  const insecure = bool(spec.insecureSkipTLSVerify) ?? false;
  const service = obj(spec.service);
  if (!service) {
    if (caLength) errs.push(invalid('spec.caBundle', `${caLength} bytes`, 'local APIServices may not have a caBundle'));
    if (insecure)
      errs.push(
        invalid('spec.insecureSkipTLSVerify', insecure, 'local APIServices may not have insecureSkipTLSVerify'),
      );
    return errs;
  }
  if (!str(service.namespace)) errs.push(required('spec.service.namespace'));
  if (!str(service.name)) errs.push(required('spec.service.name'));
  if (typeof service.port === 'number' || absent(service.port)) {
    const port = int(service.port) ?? DEFAULT_SERVICE_PORT;
    const problems = isValidPortNum(port);
    if (problems.length) errs.push(invalid('spec.service.port', port, `port is not valid: ${problems.join(', ')}`));
  }
  if (insecure && caLength > 0)
    errs.push(invalid('spec.insecureSkipTLSVerify', insecure, 'may not be true if caBundle is present'));
  return errs;
}

export function validateAPIServiceUpdate(o: unknown, old: unknown, ctx: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = validateObjectMetaUpdate(o.metadata, obj(old)?.metadata);
  errs.push(...validateAPIServiceCreate(o, ctx));
  return errs;
}

function validateStatus(o: Obj): FieldError[] {
  const errs: FieldError[] = [];
  arr(obj(o.status)?.conditions)?.forEach((raw, i) => {
    const c = obj(raw);
    if (!c) return;
    const status = str(c.status) ?? '';
    if (!STATUSES.includes(status))
      errs.push(notSupported(child(index('status.conditions', i), 'status'), status, STATUSES));
  });
  return errs;
}

export function validateAPIServiceStatusUpdate(o: unknown, old: unknown, _ctx?: ValidationContext): FieldError[] {
  if (!isObj(o)) return rootProblem(o);
  const errs = checkShape(o, SHAPE, '');
  errs.push(...validateObjectMetaUpdate(o.metadata, obj(old)?.metadata));
  errs.push(...validateStatus(o));
  return errs;
}

/** `spec.service.port` defaults to 443. */
export function defaultAPIService(o: unknown): void {
  const service = obj(obj(obj(o)?.spec)?.service);
  if (service && absent(service.port)) service.port = DEFAULT_SERVICE_PORT;
}
