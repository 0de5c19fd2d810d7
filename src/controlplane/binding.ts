/**
 * `POST .../pods/{name}/binding` (v1 Binding): assigns a pod no node runs yet to a node, as a scheduler does. A
 * pod's own update may not set `spec.nodeName`; this subresource is how a scheduler binds.
 */

import { isDNS1123Subdomain } from '../api/dns-names.ts';
import * as field from '../api/field-errors.ts';
import type { KubeObject } from '../api/meta.ts';
import { objectKey } from '../api/meta.ts';
import type { Pod, PodCondition } from '../api/types/core.ts';
import { rfc3339 } from '../util/time.ts';
import type { ApiServer, SubresourceHandler } from './api.ts';
import { decodeKindBody } from './decode.ts';
import { ApiError, badRequest, conflict, invalid, methodNotAllowed } from './errors.ts';
import { parseWriteOptions } from './options.ts';
import type { ResourceRequest } from './request-info.ts';

export interface Binding extends KubeObject {
  target?: { kind?: string; name?: string };
}

const BINDING = { group: '', plural: 'bindings', kind: 'Binding' };
const POD_BINDING = { group: '', plural: 'pods/binding' };
/** A livelock guard on re-reading the pod after another write got in first (the reference retries unbounded). */
const WRITE_ATTEMPTS = 100;

/** The reference's checks of a Binding: a node (or an unnamed kind) named as a node name must be. */
export function validateBinding(binding: Binding): field.FieldError[] {
  const kind = binding.target?.kind ?? '';
  const name = binding.target?.name ?? '';
  const errs: field.FieldError[] = [];
  if (kind !== '' && kind !== 'Node') errs.push(field.notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!name) errs.push(field.required('target.name'));
  else if (kind === '' || kind === 'Node') {
    for (const msg of isDNS1123Subdomain(name)) errs.push(field.invalid('target.name', name, msg));
  }
  return errs;
}

/**
 * The pod bound to the binding's target node, or why it cannot be: it must be unassigned, not being deleted and free of scheduling
 * gates. The binding's annotations and labels are merged in (labels as the topology-labels admission adds them),
 * the nomination is cleared and `PodScheduled` is true (its transition time kept if it was true already).
 */
export function boundPod(pod: Pod, binding: Binding, now: Date): Pod | string {
  const name = pod.metadata.name;
  if (pod.metadata.deletionTimestamp) return `pod ${name} is being deleted, cannot be assigned to a host`;
  if (pod.spec?.nodeName) return `pod ${name} is already assigned to node "${pod.spec.nodeName}"`;
  if (pod.spec?.schedulingGates?.length) return `pod ${name} has non-empty .spec.schedulingGates`;
  const { annotations, labels } = binding.metadata;
  const conditions = pod.status?.conditions ?? [];
  const previous = conditions.find((c) => c.type === 'PodScheduled');
  const scheduled: PodCondition = {
    type: 'PodScheduled',
    status: 'True',
    lastTransitionTime: previous?.status === 'True' ? previous.lastTransitionTime : rfc3339(now),
  };
  const { nominatedNodeName: _, ...status } = pod.status ?? {};
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      ...(annotations ? { annotations: { ...pod.metadata.annotations, ...annotations } } : {}),
      ...(labels ? { labels: { ...pod.metadata.labels, ...labels } } : {}),
    },
    spec: { ...pod.spec!, nodeName: binding.target?.name },
    status: {
      ...status,
      conditions: previous ? conditions.map((c) => (c === previous ? scheduled : c)) : [...conditions, scheduled],
    },
  };
}

/** `api.subresourceHandlers.set('pods/binding', bindingHandler)`. */
export const bindingHandler: SubresourceHandler = async (api, req, query, body, user) => {
  if (req.verb !== 'create') throw methodNotAllowed();
  const binding = decodeKindBody(body, 'Binding', ['v1']) as Binding;
  const name = req.name ?? '';
  if (binding.metadata.name !== name) throw badRequest('name in URL does not match name in Binding object');
  if (binding.metadata.namespace && binding.metadata.namespace !== req.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const { dryRun } = parseWriteOptions(query, 'CreateOptions', api.naming.protocol.metaGroup);
  // The reference answers these with a 500 (an aggregate, not a status error); a 422 names the field as well.
  const problems = validateBinding(binding);
  if (problems.length) throw invalid(BINDING, name, problems);
  await api.admitSubresource(req, binding, user, dryRun);
  await assignPod(api, req, binding, dryRun);
  return {
    status: 201,
    body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    warnings: [],
  };
};

/** Binds the latest pod, with the binding's uid and resourceVersion as preconditions, as one guaranteed update. */
async function assignPod(api: ApiServer, req: ResourceRequest, binding: Binding, dryRun: boolean): Promise<void> {
  const key = objectKey({ namespace: req.namespace, name: binding.metadata.name });
  const { uid, resourceVersion } = binding.metadata;
  for (let attempt = 1; ; attempt++) {
    const pod = api.read(req.rt, key) as Pod;
    const precondition =
      uid && uid !== pod.metadata.uid
        ? `UID in precondition: ${uid}, UID in object meta: ${pod.metadata.uid}`
        : resourceVersion && resourceVersion !== pod.metadata.resourceVersion
          ? `ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${pod.metadata.resourceVersion}`
          : undefined;
    if (precondition) throw conflict(req.rt, pod.metadata.name!, `Precondition failed: ${precondition}`);
    const next = boundPod(pod, binding, api.options.now());
    if (typeof next === 'string') throw conflict(POD_BINDING, pod.metadata.name!, next);
    if (dryRun) return;
    try {
      await api.storage.backend.update(req.rt, next, pod.metadata.resourceVersion);
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.reason === 'Conflict') || attempt >= WRITE_ATTEMPTS) throw err;
      await api.storage.backend.caughtUp(req.rt);
    }
  }
}
