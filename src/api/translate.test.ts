import { describe, expect, it } from 'vitest';
import { naming } from './naming.ts';
import { namePairs, translateNames } from './translate.ts';

const orch = naming('orch');
const k8s = naming('kubernetes');

describe('translateNames', () => {
  it.each([
    ['apiVersion: certificates.orch.io/v1', 'apiVersion: certificates.k8s.io/v1'],
    [
      '  signerName: orch.io/orch-apiserver-client-nodeagent',
      '  signerName: kubernetes.io/kube-apiserver-client-kubelet',
    ],
    ['apiVersion: rbac.authorization.orch.io/v1', 'apiVersion: rbac.authorization.k8s.io/v1'],
    ['    ingressclass.orch.io/is-default-class: "true"', '    ingressclass.kubernetes.io/is-default-class: "true"'],
    ['  - apiGroups: ["coordination.orch.io"]', '  - apiGroups: ["coordination.k8s.io"]'],
    [
      '    statefulset.orch.io/recover-broken-rollout: "true"',
      '    statefulset.kubernetes.io/recover-broken-rollout: "true"',
    ],
    ['namespace: orch-system', 'namespace: kube-system'],
    // Not whole identifiers: left alone.
    ['image: registry.example/orch.iox:1', 'image: registry.example/orch.iox:1'],
    ['apiVersion: apps/v1', 'apiVersion: apps/v1'],
    ['example.com/my-signer', 'example.com/my-signer'],
  ])('%s', (from, to) => {
    expect(translateNames(from, orch, k8s)).toBe(to);
  });

  it('goes both ways', () => {
    const text = 'apiVersion: certificates.k8s.io/v1\nsignerName: kubernetes.io/kube-apiserver-client\n';
    expect(translateNames(translateNames(text, k8s, orch), orch, k8s)).toBe(text);
  });

  it('lists longer names first', () => {
    const lengths = namePairs(orch, k8s).map(([name]) => name.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => b - a));
  });
});
