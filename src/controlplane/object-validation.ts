/**
 * Connects the per-kind validators and defaulters (`validation/`) to the write path: which rules
 * run for a create, an update of the main resource, and an update through `/status` or `/approval`.
 * Kinds without rules of their own still get the reference's object-metadata checks, and every member is
 * checked against the kind's field schema for its JSON type, as decoding into the typed object does.
 */
import type { KubeObject } from '../api/meta.ts';
import { group, type Naming } from '../api/naming.ts';
import { apiVersionOf, type ResourceType } from '../api/registry.ts';
import type { ObjectValidation } from './api.ts';
import { defaultCsrConditions } from './validation/certificate-signing-request.ts';
import {
  type NameFn,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  nameIsPathSegment,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation/common.ts';
import type { ValidationContext } from './validation/context.ts';
import { validatorsFor } from './validation/index.ts';
import { schemaShapeErrors } from './validation/raw.ts';
import { defaultPersistentVolumeClaim } from './validation/storage.ts';
import {
  defaultDeployment,
  defaultEndpointSlice,
  defaultEndpoints,
  defaultPod,
  defaultReplicated,
  defaultReplicationController,
  defaultSecret,
  defaultService,
} from './validation/workload-defaults.ts';

/** Defaults of kinds that have no validators here (by `<group>/<kind>`). */
const WORKLOAD_DEFAULTS: Readonly<Record<string, (obj: unknown) => void>> = {
  '/Pod': defaultPod,
  '/Service': defaultService,
  '/Secret': defaultSecret,
  '/PersistentVolumeClaim': defaultPersistentVolumeClaim,
  '/Endpoints': defaultEndpoints,
  '/ReplicationController': defaultReplicationController,
  'apps/ReplicaSet': defaultReplicated,
  'apps/Deployment': defaultDeployment,
};

export function objectValidation(
  naming: Naming,
  features: (gate: string) => boolean,
  now: () => Date,
): ObjectValidation {
  const ctx: ValidationContext = { naming, featureGates: features };
  const defaulters = { ...WORKLOAD_DEFAULTS, [`${group(naming, 'discovery')}/EndpointSlice`]: defaultEndpointSlice };
  return {
    defaults(rt: ResourceType, obj: KubeObject): void {
      validatorsFor(rt.kind)?.defaults?.(obj, ctx);
      defaulters[`${rt.group}/${rt.kind}`]?.(obj);
    },
    // Only the CSR rules are asynchronous (they verify signatures): the rest answer without a turn of the event loop.
    validate(op, rt, obj, old, subresource) {
      const v = validatorsFor(rt.kind);
      if (op === 'CREATE') {
        if (v?.create) return v.create(obj, ctx);
        return [
          ...schemaShapeErrors(obj, rt.kind, apiVersionOf(rt)),
          ...validateObjectMeta(obj.metadata, rt.namespaced, nameRule(naming, rt)),
        ];
      }
      if (op !== 'UPDATE') return [];
      if (rt.kind === 'CertificateSigningRequest' && subresource) defaultCsrConditions(obj, old, now());
      const rule =
        subresource === 'status' ? v?.statusUpdate : subresource === 'approval' ? v?.approvalUpdate : v?.update;
      if (rule) return rule(obj, old, ctx);
      return [
        ...schemaShapeErrors(obj, rt.kind, apiVersionOf(rt)),
        ...validateObjectMetaUpdate(obj.metadata, old?.metadata),
      ];
    },
  };
}

/**
 * The reference's name rule of a kind without validators of its own: a DNS label for namespaces, a path segment for
 * roles (as for their bindings: `system:kube-controller-manager`), else a DNS subdomain.
 */
function nameRule(naming: Naming, rt: ResourceType): NameFn {
  if (rt.kind === 'Namespace' && rt.group === '') return nameIsDNSLabel;
  if (rt.group === group(naming, 'rbac.authorization')) return nameIsPathSegment;
  return nameIsDNSSubdomain;
}
