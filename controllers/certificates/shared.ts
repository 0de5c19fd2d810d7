/** Small helpers the certificate reconcilers share: the CSR informer, keys, Events, timestamps. */
import type { KubeObject } from '../../src/api/meta.ts';
import { apiVersionOf, type ResourceType } from '../../src/api/registry.ts';
import type { CertificateSigningRequest } from '../../src/api/types/certificates.ts';
import type { SharedInformer } from '../../src/cache/informer.ts';
import { isTombstone } from '../../src/cache/informer.ts';
import type { ControllerContext, Enqueuer } from '../../src/controller/controller.ts';
import type { EventType } from '../../src/controller/events.ts';
import { rfc3339 } from '../../src/util/time.ts';

export function csrResource(ctx: Pick<ControllerContext, 'registry'>): ResourceType {
  const rt = ctx.registry.byKind('CertificateSigningRequest');
  if (!rt) throw new Error('the registry has no CertificateSigningRequest');
  return rt;
}

/** The shared CSR informer, every add, update and delete enqueuing the CSR's name. */
export function watchCsrs(ctx: ControllerContext, enqueue: Enqueuer): SharedInformer<CertificateSigningRequest> {
  const informer = ctx.informers.informerFor<CertificateSigningRequest>(csrResource(ctx));
  informer.addEventHandler({
    add: (csr) => enqueue.add(csr.metadata.name!),
    update: (_old, csr) => enqueue.add(csr.metadata.name!),
    delete: (csr) => enqueue.add((isTombstone(csr) ? csr.obj : csr).metadata.name!),
  });
  return informer;
}

/** An Event about an object read from a cache, whose list items may lack apiVersion and kind. */
export function recordEvent(
  ctx: ControllerContext,
  rt: ResourceType,
  obj: KubeObject,
  type: EventType,
  reason: string,
  action: string,
  note: string,
): void {
  ctx.recorder.event(
    { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(rt), kind: obj.kind ?? rt.kind },
    type,
    reason,
    action,
    note,
  );
}

export const nowStamp = (): string => rfc3339(new Date());

/**
 * Workers of the approver and of the signer each (`--concurrent-<name>-syncs` sets another count). The reference
 * runs 5 goroutines each; a worker here is a chain of requests in flight on one thread, so more of them hide more
 * round trips at no cost in threads. kcm bench, CSRs with the client limits lifted, alternating 16 and 5: ours ÷ KCM
 * 0.95–1.01× against 0.83–0.93× (RSA CA) and 0.83–0.93× against 0.71–0.88× (ECDSA), with less CPU per CSR.
 */
export const CSR_WORKERS = 16;
