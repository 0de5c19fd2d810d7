/**
 * The generic `/scale` finder's I/O: the reconciler and the `why` answers look up, before the pure core
 * runs, the scales of the controller references that the typed finders do not resolve.
 */
import type { OwnerReference } from '../../src/api/meta.ts';
import type { Pod } from '../../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import type { KubeClient } from '../../src/client/client.ts';
import { isNotFound } from '../../src/client/errors.ts';
import { errorText } from '../../src/controller/controller.ts';
import { selectPods } from './core.ts';
import { controllerRefOf, findTypedController, type ScaleLookup, scaleResourceFor, type Workloads } from './finders.ts';

/** GET `<owner>/scale` through the registry's mapping; NotFound and failures as the finder reports them. */
export async function lookupScale(client: KubeClient, ref: OwnerReference, namespace: string): Promise<ScaleLookup> {
  const target = scaleResourceFor(ref, client.registry);
  if ('error' in target) return target;
  try {
    const scale = await client.resource(target.rt).getScale(namespace, ref.name);
    const replicas = (scale.spec as { replicas?: number } | undefined)?.replicas ?? 0;
    return { scale: { uid: scale.metadata.uid ?? '', replicas } };
  } catch (err) {
    if (isNotFound(err)) return { notFound: true };
    return { error: errorText(err) };
  }
}

/**
 * Answers the generic finder, in pod order, for the references the typed finders do not resolve; stops at
 * the first failure (which fails the sync, as in the reference). Returns the answers by reference UID.
 */
export async function prefetchScales(
  pdb: PodDisruptionBudget,
  candidates: readonly Pod[],
  typed: Workloads,
  lookup: (ref: OwnerReference, namespace: string) => Promise<ScaleLookup>,
): Promise<Map<string, ScaleLookup>> {
  const answers = new Map<string, ScaleLookup>();
  let pods: Pod[];
  try {
    pods = selectPods(pdb, candidates);
  } catch {
    return answers; // the core reports the selector
  }
  // The pods of one budget mostly share their controller: the typed finders answer each reference once.
  const typedFound = new Set<string>();
  for (const pod of pods) {
    const ref = controllerRefOf(pod);
    if (!ref || answers.has(ref.uid)) continue;
    const refKey = `${ref.apiVersion}\u0000${ref.kind}\u0000${ref.name}\u0000${ref.uid}`;
    if (typedFound.has(refKey)) continue;
    const ns = pod.metadata.namespace ?? '';
    try {
      if (findTypedController(ref, ns, typed)) {
        typedFound.add(refKey);
        continue;
      }
    } catch {
      return answers; // the core reports the malformed reference
    }
    const answer = await lookup(ref, ns);
    answers.set(ref.uid, answer);
    if ('error' in answer) break;
  }
  return answers;
}
