import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import type { Pod, Volume } from '../api/types/core.ts';
import { awaitsRelease, claimNamesOf, podUsesClaim, volumeInUse } from './storage-protection.ts';

const claim: KubeObject = {
  metadata: {
    namespace: 'ns',
    name: 'web-data',
    ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-uid', controller: true }],
  },
};
const pod = (
  volumes: Volume[],
  o: { node?: string; namespace?: string; shutDown?: boolean; phase?: 'Succeeded' | 'Failed' } = {},
): Pod => ({
  metadata: {
    namespace: o.namespace ?? 'ns',
    name: 'web',
    uid: 'pod-uid',
    ...(o.shutDown ? { deletionTimestamp: '2026-11-28T04:00:00Z', deletionGracePeriodSeconds: 0 } : {}),
  },
  spec: { nodeName: o.node ?? 'node-1', containers: [], volumes },
  ...(o.phase ? { status: { phase: o.phase } } : {}),
});
const mounts: Volume = { name: 'x', persistentVolumeClaim: { claimName: 'web-data' } };
const ephemeral: Volume = { name: 'data', ephemeral: { volumeClaimTemplate: {} } };

describe('podUsesClaim', () => {
  it.each<[string, Pod, boolean]>([
    ['a scheduled pod mounting it', pod([mounts]), true],
    ['an unscheduled pod', pod([mounts], { node: '' }), false],
    ['a pod of another namespace', pod([mounts], { namespace: 'other' }), false],
    ['a pod mounting another claim', pod([{ name: 'x', persistentVolumeClaim: { claimName: 'other' } }]), false],
    ['its ephemeral volume', pod([ephemeral]), true],
    ['its ephemeral volume, the pod shut down', pod([ephemeral], { shutDown: true }), false],
    ['a mounted claim, the pod shut down', pod([mounts], { shutDown: true }), true],
    // As the reference's pvc-protection (v1.37): a finished pod still holds what it mounts until it is deleted.
    ['a mounted claim, the pod Succeeded', pod([mounts], { phase: 'Succeeded' }), true],
    ['its ephemeral volume, the pod Failed', pod([ephemeral], { phase: 'Failed' }), true],
  ])('%s: %s', (_, p, expected) => {
    expect(podUsesClaim(p, claim)).toBe(expected);
  });

  it('an ephemeral claim of the same name that the pod does not control', () => {
    expect(podUsesClaim(pod([ephemeral]), { metadata: { namespace: 'ns', name: 'web-data' } })).toBe(false);
  });

  it('names the claims a pod may hold', () => {
    expect(claimNamesOf(pod([mounts, ephemeral, { name: 'cfg', configMap: { name: 'c' } }]))).toEqual([
      'web-data',
      'web-data',
    ]);
  });
});

describe('volumes and release', () => {
  it('a volume is in use while Bound', () => {
    expect(volumeInUse({ metadata: {}, status: { phase: 'Bound' } } as KubeObject)).toBe(true);
    expect(volumeInUse({ metadata: {}, status: { phase: 'Released' } } as KubeObject)).toBe(false);
  });

  it('an object awaits release while deleted and holding the finalizer', () => {
    const f = 'kubernetes.io/pvc-protection';
    expect(awaitsRelease({ metadata: { deletionTimestamp: 't', finalizers: [f] } }, f)).toBe(true);
    expect(awaitsRelease({ metadata: { finalizers: [f] } }, f)).toBe(false);
    expect(awaitsRelease({ metadata: { deletionTimestamp: 't', finalizers: ['other'] } }, f)).toBe(false);
  });
});
