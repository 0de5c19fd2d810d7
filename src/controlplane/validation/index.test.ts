import { describe, expect, it } from 'vitest';
import { defaultsFor, isValidatedKind, validators, validatorsFor } from './index.ts';
import { ctx } from './test-helpers.ts';

describe('the validators table', () => {
  it('covers every documented kind with create and update', () => {
    expect(Object.keys(validators).sort()).toEqual(
      [
        'APIService',
        'CertificateSigningRequest',
        'ClusterRole',
        'ClusterRoleBinding',
        'ClusterTrustBundle',
        'ConfigMap',
        'ControllerRevision',
        'IngressClass',
        'LeaseCandidate',
        'Lease',
        'LimitRange',
        'PersistentVolume',
        'Pod',
        'PodDisruptionBudget',
        'Role',
        'RoleBinding',
        'RuntimeClass',
        'StatefulSet',
        'StorageClass',
        'ValidatingAdmissionPolicy',
      ].sort(),
    );
    for (const v of Object.values(validators)) {
      expect(typeof v.create).toBe('function');
      expect(typeof v.update).toBe('function');
    }
  });

  it('offers status validation where the kind has status rules', () => {
    const withStatus = Object.entries(validators)
      .filter(([, v]) => v.statusUpdate)
      .map(([k]) => k)
      .sort();
    expect(withStatus).toEqual([
      'APIService',
      'CertificateSigningRequest',
      'PodDisruptionBudget',
      'StatefulSet',
      'ValidatingAdmissionPolicy',
    ]);
    expect(validators.CertificateSigningRequest.approvalUpdate).toBeTypeOf('function');
  });

  it('looks up by kind name', () => {
    expect(isValidatedKind('Lease')).toBe(true);
    expect(isValidatedKind('Secret')).toBe(false);
    expect(validatorsFor('toString')).toBeUndefined();
    expect(defaultsFor('StatefulSet')).toBe(validators.StatefulSet.defaults);
    expect(defaultsFor('Lease')).toBeUndefined();
    expect(defaultsFor('Pod')).toBeUndefined();
  });

  it('never throws on hostile input', async () => {
    const inputs: unknown[] = [
      null,
      undefined,
      42,
      'x',
      [],
      {},
      { metadata: 'm', spec: [] },
      { metadata: {}, spec: { a: { b: [null] } }, status: 7 },
    ];
    for (const v of Object.values(validators)) {
      for (const input of inputs) {
        await expect(Promise.resolve(v.create?.(input, ctx))).resolves.toBeInstanceOf(Array);
        await expect(Promise.resolve(v.update?.(input, input, ctx))).resolves.toBeInstanceOf(Array);
        await expect(Promise.resolve(v.statusUpdate?.(input, {}, ctx) ?? [])).resolves.toBeInstanceOf(Array);
        expect(() => v.defaults?.(input, ctx)).not.toThrow();
      }
    }
  });
});
