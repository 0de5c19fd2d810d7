import { describe, expect, it } from 'vitest';
import type { Pod } from '../api/types/core.ts';
import { crashBackoffMs, crashLoopStatus, nextCrashAtMs, notReadyConditions } from './containers.ts';

const pod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns', name: 'web-0', uid: 'u1' },
  spec: { containers: [{ name: 'app', image: 'app:crash' }] },
};

describe('crashBackoffMs', () => {
  it.each([
    [0, 10_000],
    [1, 20_000],
    [4, 160_000],
    [5, 300_000],
    [1000, 300_000],
    [-1, 10_000],
  ])('after %i restarts: %i ms', (restarts, want) => expect(crashBackoffMs(restarts)).toBe(want));
});

describe('notReadyConditions', () => {
  it('names the unready containers in both conditions', () => {
    expect(notReadyConditions(['a', 'b'], 'T')).toEqual(
      ['ContainersReady', 'Ready'].map((type) => ({
        type,
        status: 'False',
        lastTransitionTime: 'T',
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [a b]',
      })),
    );
  });
});

describe('nextCrashAtMs', () => {
  const at = '2026-01-01T00:00:00Z';
  const withStatus = (restarts: number): Pod => ({
    ...pod,
    status: { containerStatuses: [crashLoopStatus(pod, pod.spec!.containers[0]!, restarts, at)] },
  });
  it.each([
    [0, 10_000],
    [2, 40_000],
  ])('the last exit plus the back-off after %i restarts', (restarts, backoff) =>
    expect(nextCrashAtMs(withStatus(restarts))).toBe(Date.parse(at) + backoff),
  );
  it('nothing for a pod that does not wait to restart', () => {
    expect(nextCrashAtMs(pod)).toBeUndefined();
    expect(
      nextCrashAtMs({
        ...pod,
        status: { containerStatuses: [{ ...withStatus(0).status!.containerStatuses![0]!, state: { running: {} } }] },
      }),
    ).toBeUndefined();
  });
  it('the waiting message says the back-off and names the pod as the kubelet does', () => {
    expect(withStatus(1).status!.containerStatuses![0]!.state!.waiting!.message).toBe(
      'back-off 20s restarting failed container=app pod=web-0_ns(u1)',
    );
  });
});
