/**
 * What a simulated node reports about its containers, in the kubelet's words: the pod conditions of
 * containers that are not ready, a crash-looping container's status and back-off, and the texts of the
 * kubelet's `BackOff` and `Unhealthy` events. Pure: the node agent in nodes.ts writes what these return.
 */
import type { Container, ContainerState, ContainerStatus, Pod, PodCondition } from '../api/types/core.ts';

/** The kubelet's crash back-off: 10 s, doubling after each restart, capped at 5 minutes. */
export const CRASH_BACKOFF_BASE_MS = 10_000;
export const CRASH_BACKOFF_MAX_MS = 300_000;
/** The readiness probe's default period: how often a `:broken` container's failing probe is reported. */
export const PROBE_PERIOD_MS = 10_000;

/** How long the kubelet waits before restarting a container that has crashed after `restarts` restarts. */
export function crashBackoffMs(restarts: number): number {
  const doublings = Math.min(Math.max(0, restarts), 30); // 2^30 × 10 s is far past the cap: no overflow
  return Math.min(CRASH_BACKOFF_BASE_MS * 2 ** doublings, CRASH_BACKOFF_MAX_MS);
}

/** The kubelet's way to name a pod in messages: `name_namespace(uid)`. */
export const podRef = (pod: Pod) => `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid ?? ''})`;

export function condition(type: string, ready: boolean, at: string, why?: { reason: string; message: string }) {
  const c: PodCondition = { type, status: ready ? 'True' : 'False', lastTransitionTime: at };
  return why ? { ...c, ...why } : c;
}

/** ContainersReady and Ready as the kubelet sets them while these containers are not ready. */
export function notReadyConditions(unready: string[], at: string): PodCondition[] {
  const why = { reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]` };
  return [condition('ContainersReady', false, at, why), condition('Ready', false, at, why)];
}

export function containerStatus(c: Container, state: ContainerState): ContainerStatus {
  const image = c.image ?? '';
  return { name: c.name, image, imageID: `simulated://${image}`, ready: false, restartCount: 0, state };
}

/**
 * A container that has just exited with an error for the `restarts`-th time and now waits out its back-off,
 * as the kubelet reports it (`CrashLoopBackOff`, the last run in `lastState`).
 */
export function crashLoopStatus(pod: Pod, c: Container, restarts: number, at: string): ContainerStatus {
  const backoffSeconds = crashBackoffMs(restarts) / 1000;
  return {
    ...containerStatus(c, {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${backoffSeconds}s restarting failed container=${c.name} pod=${podRef(pod)}`,
      },
    }),
    lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: at, finishedAt: at } },
    restartCount: restarts,
    started: false,
  };
}

/** When a crash-looping pod's containers are due to run (and crash) again: the last exit plus the back-off. */
export function nextCrashAtMs(pod: Pod): number | undefined {
  const s = pod.status?.containerStatuses?.[0];
  const finished = Date.parse(s?.lastState?.terminated?.finishedAt ?? '');
  if (!s?.state?.waiting || Number.isNaN(finished)) return undefined;
  return finished + crashBackoffMs(s.restartCount);
}

export const backOffNote = (pod: Pod, container: string) =>
  `Back-off restarting failed container ${container} in pod ${podRef(pod)}`;

export const unhealthyNote = (c: Container) =>
  `Readiness probe failed: the simulated image ${c.image ?? ''} never becomes ready`;
