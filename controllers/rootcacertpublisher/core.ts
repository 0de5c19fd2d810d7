/**
 * The root CA publisher's decisions, free of I/O. What a namespace's root CA ConfigMap must hold is exactly
 * `ca.crt` = the root CA bundle and a non-empty description annotation, the reference publisher's rule, so that
 * beside a kube-controller-manager publishing the same bundle both find nothing to change. And how soon to restore
 * it again when someone keeps changing it: a second publisher with another bundle must not make the two of them
 * rewrite it as fast as the server allows.
 */

import { isActiveNamespace } from '../../src/api/namespaces.ts';
import type { Naming } from '../../src/api/naming.ts';
import type { ConfigMap, Namespace } from '../../src/api/types/core.ts';
import { jsonEqual } from '../../src/util/equal.ts';

export const CA_KEY = 'ca.crt';

export interface PublishPlan {
  create?: ConfigMap;
  /** The existing ConfigMap with its data and description restored, everything else kept. */
  update?: ConfigMap;
}

/** The write that makes `ns`'s root CA ConfigMap right; none for a namespace that is not Active. */
export function publishPlan(
  n: Naming,
  ns: Namespace | undefined,
  existing: ConfigMap | undefined,
  ca: string,
): PublishPlan {
  if (!isActiveNamespace(ns)) return {};
  const data = { [CA_KEY]: ca };
  const description = n.annotations.description;
  if (!existing) {
    const metadata = {
      name: n.rootCAConfigMap,
      namespace: ns.metadata.name,
      annotations: { [description]: n.rootCADescription },
    };
    return { create: { apiVersion: 'v1', kind: 'ConfigMap', metadata, data } };
  }
  if (jsonEqual(existing.data ?? {}, data) && existing.metadata.annotations?.[description]) return {};
  const annotations = { ...existing.metadata.annotations, [description]: n.rootCADescription };
  return {
    update: { apiVersion: 'v1', kind: 'ConfigMap', ...existing, metadata: { ...existing.metadata, annotations }, data },
  };
}

/** The restores of one namespace's ConfigMap since it was last left alone for `RESTORE_QUIET_MS`. */
export interface Restores {
  count: number;
  lastMs: number;
}

/** Restoring again within this long of the last restore counts as a tussle: each such restore waits twice as long. */
export const RESTORE_QUIET_MS = 10 * 60_000;
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 5 * 60_000;

/** How long to wait before restoring a changed ConfigMap: 0 for at once (the first change in a while). */
export function restoreWaitMs(prev: Restores | undefined, nowMs: number): number {
  if (!prev || nowMs - prev.lastMs >= RESTORE_QUIET_MS) return 0;
  const backoff = Math.min(FIRST_WAIT_MS * 2 ** (prev.count - 1), MAX_WAIT_MS);
  return Math.max(0, prev.lastMs + backoff - nowMs);
}

/** The record after a restore at `nowMs`. */
export function restored(prev: Restores | undefined, nowMs: number): Restores {
  if (!prev || nowMs - prev.lastMs >= RESTORE_QUIET_MS) return { count: 1, lastMs: nowMs };
  return { count: prev.count + 1, lastMs: nowMs };
}
