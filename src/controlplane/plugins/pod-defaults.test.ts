/**
 * The pure rules of the pod admission defaults: which node-loss tolerations a pod lacks, where the token volume is
 * mounted (and where not), and who decides whether it is mounted at all, in both flavors' names.
 */
import { describe, expect, it } from 'vitest';
import { naming } from '../../api/naming.ts';
import type { PodSpec, Toleration } from '../../api/types/core.ts';
import { automountsToken, mountServiceAccountToken, tokenVolumeNames, withDefaultTolerations } from './pod-defaults.ts';

const k8s = naming('kubernetes');
const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

describe('withDefaultTolerations', () => {
  const added = (given: Toleration[]) =>
    withDefaultTolerations(given, k8s)
      .slice(given.length)
      .map((t) => t.key);
  it.each<[string, Toleration[], (string | undefined)[]]>([
    ['none', [], [NOT_READY, UNREACHABLE]],
    ['every taint', [{ operator: 'Exists' }], []],
    ['every NoExecute taint', [{ operator: 'Exists', effect: 'NoExecute' }], []],
    ['every NoSchedule taint only', [{ operator: 'Exists', effect: 'NoSchedule' }], [NOT_READY, UNREACHABLE]],
    ['not-ready for ever', [{ key: NOT_READY, operator: 'Exists' }], [UNREACHABLE]],
    [
      'unreachable for 10 s',
      [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }],
      [NOT_READY],
    ],
    ['another key', [{ key: 'dedicated', operator: 'Exists' }], [NOT_READY, UNREACHABLE]],
  ])('a pod tolerating %s gets the rest', (_, given, expected) => {
    expect(added(given)).toEqual(expected);
  });

  it('tolerates for 300 s with the NoExecute effect, in the orch names too', () => {
    expect(withDefaultTolerations([], naming('orch'))).toEqual([
      { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
  });
});

describe('mountServiceAccountToken', () => {
  const { mountPath } = tokenVolumeNames(k8s);
  const spec = (s: Partial<PodSpec>): PodSpec => ({ containers: [{ name: 'a', image: 'i' }], ...s });

  it('mounts a new volume in every container and init container', () => {
    const s = spec({ initContainers: [{ name: 'i', image: 'i' }] });
    mountServiceAccountToken(s, k8s, 'kube-api-access-abcde');
    const mount = { name: 'kube-api-access-abcde', readOnly: true, mountPath };
    expect([s.initContainers?.[0].volumeMounts, s.containers[0].volumeMounts]).toEqual([[mount], [mount]]);
    expect(s.volumes?.map((v) => v.name)).toEqual(['kube-api-access-abcde']);
  });

  it('reuses a token volume the pod has, and adds none when every container mounts its own', () => {
    const reused = spec({ volumes: [{ name: 'kube-api-access-xxxxx', emptyDir: {} }] });
    mountServiceAccountToken(reused, k8s, 'kube-api-access-new00');
    expect(reused.containers[0].volumeMounts?.[0].name).toBe('kube-api-access-xxxxx');
    expect(reused.volumes).toHaveLength(1);
    const own = spec({ containers: [{ name: 'a', image: 'i', volumeMounts: [{ name: 'v', mountPath }] }] });
    mountServiceAccountToken(own, k8s, 'kube-api-access-new00');
    expect([own.volumes, own.containers[0].volumeMounts?.length]).toEqual([undefined, 1]);
  });

  it('names the orch flavor its own way', () => {
    expect(tokenVolumeNames(naming('orch'))).toEqual({
      prefix: 'orch-api-access-',
      mountPath: '/var/run/secrets/orch.io/serviceaccount',
    });
  });
});

describe('automountsToken', () => {
  it.each([
    [undefined, undefined, true],
    [undefined, false, false],
    [true, false, true],
    [false, true, false],
  ])('pod %s, account %s: %s', (byPod, byAccount, expected) => {
    const s: PodSpec = { containers: [], automountServiceAccountToken: byPod };
    expect(automountsToken(s, { metadata: {}, automountServiceAccountToken: byAccount })).toBe(expected);
  });
});
