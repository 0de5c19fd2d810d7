import { describe, expect, it } from 'vitest';
import { naming } from '../api/naming.ts';
import { apiVersionOf, ResourceRegistry } from '../api/registry.ts';
import { objectValidation } from './object-validation.ts';

describe('object names, as the reference: RBAC objects a path segment, others a DNS subdomain', () => {
  for (const flavor of ['orch', 'kubernetes'] as const) {
    const registry = new ResourceRegistry(flavor);
    const validation = objectValidation(
      naming(flavor),
      () => true,
      () => new Date(),
    );
    const create = async (kind: string, name: string) => {
      const rt = registry.byKind(kind)!;
      const metadata = { name, ...(rt.namespaced ? { namespace: 'default' } : {}) };
      const roleRef = { apiGroup: rt.group, kind: 'ClusterRole', name: 'view' };
      const obj = { apiVersion: apiVersionOf(rt), kind, metadata, ...(kind.endsWith('Binding') ? { roleRef } : {}) };
      return (await validation.validate('CREATE', rt, obj, undefined, undefined)).map(
        (e) => `${e.field}: ${e.message}`,
      );
    };
    it.each([
      // RBAC objects: a path segment, so the bootstrap roles' `system:` names (e.g. `system:kube-controller-manager`).
      ['ClusterRole', 'system:orch-controller-manager', 0],
      ['ClusterRoleBinding', 'system:orch-controller-manager', 0],
      ['Role', 'system:leader-locking', 0],
      ['RoleBinding', 'system:leader-locking', 0],
      ['ClusterRole', 'a/b', 1],
      ['ClusterRoleBinding', '..', 1],
      // Other kinds: a DNS subdomain (a namespace: a DNS label).
      ['ConfigMap', 'system:config', 1],
      ['Namespace', 'a.b', 1],
      ['ConfigMap', 'a.b', 0],
    ])(`${flavor}: %s named %s: %i errors`, async (kind, name, count) => {
      const errors = await create(kind, name);
      expect(errors).toHaveLength(count);
      for (const e of errors) expect(e).toMatch(/^metadata\.name: /);
    });
  }
});
