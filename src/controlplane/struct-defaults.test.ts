import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import { Storage } from './storage.ts';
import { withEmptyStructs } from './struct-defaults.ts';

const obj = (apiVersion: string, kind: string, rest: Record<string, unknown> = {}): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: 'x' },
  ...rest,
});

describe('withEmptyStructs', () => {
  it.each([
    ['a CSR: status', obj('certificates.k8s.io/v1', 'CertificateSigningRequest', { spec: {} }), { status: {} }],
    ['a Service: spec, status.loadBalancer', obj('v1', 'Service'), { spec: {}, status: { loadBalancer: {} } }],
    ['a Lease: spec', obj('coordination.k8s.io/v1', 'Lease'), { spec: {} }],
    ['a ConfigMap: nothing', obj('v1', 'ConfigMap', { data: { a: '1' } }), { data: { a: '1' } }],
    [
      'a PodDisruptionBudget: status counts without omitempty, zero',
      obj('policy/v1', 'PodDisruptionBudget', { spec: {} }),
      { status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } },
    ],
    [
      'a ReplicaSet: status.replicas, the omitempty counts left out',
      obj('apps/v1', 'ReplicaSet', { spec: { template: {} } }),
      { spec: { template: { metadata: {}, spec: {} } }, status: { replicas: 0 } },
    ],
    [
      'a set count is kept',
      obj('policy/v1', 'PodDisruptionBudget', { spec: {}, status: { expectedPods: 3 } }),
      { status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 3 } },
    ],
    [
      'a RoleBinding: roleRef',
      obj('rbac.authorization.k8s.io/v1', 'RoleBinding', { subjects: [] }),
      { roleRef: {}, subjects: [] },
    ],
  ])('%s', (_what, given, expected) => {
    expect(withEmptyStructs(given)).toEqual({ ...given, ...expected });
  });

  it('reaches into lists and templates, and leaves pointers out', () => {
    const set = obj('apps/v1', 'StatefulSet', {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
    });
    const filled = withEmptyStructs(set) as any;
    expect(filled.spec).toEqual({
      template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'i', resources: {} }] } },
      updateStrategy: {},
    });
    expect(filled.status).toEqual({ replicas: 0, availableReplicas: 0 });
    expect(filled.spec.selector).toBeUndefined();
    expect(filled.spec.template.spec.securityContext).toBeUndefined();
    expect(filled.spec.template.spec.containers[0].securityContext).toBeUndefined();
  });

  it('copies on write: the same object when nothing is missing, the input never changed', () => {
    const given = obj('v1', 'Service', { spec: { ports: [{ port: 80 }] } });
    const before = structuredClone(given);
    const filled = withEmptyStructs(given);
    expect(given).toEqual(before);
    expect(filled.spec).toBe(given.spec);
    expect(withEmptyStructs(filled)).toBe(filled);
  });

  it('leaves a kind it has no table for as it is', () => {
    const given = obj('example.io/v1', 'Widget');
    expect(withEmptyStructs(given)).toBe(given);
  });

  it('fills what a store kept from an older version as the storage loads it', () => {
    const storage = new Storage({ loaded: withEmptyStructs });
    const rt = { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true } as never;
    const kept = {
      ...obj('v1', 'Service', { spec: {} }),
      metadata: { name: 's', namespace: 'n', resourceVersion: '3' },
    };
    storage.restore({ rv: 3, objects: [{ rt, object: kept }], events: [], keptAfter: 0 });
    expect(storage.get(rt, 'n/s')?.status).toEqual({ loadBalancer: {} });
  });
});
