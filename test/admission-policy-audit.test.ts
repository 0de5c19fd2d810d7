/**
 * ValidatingAdmissionPolicy audit annotations reach the audit log: a policy's `auditAnnotations` as
 * `<policy>/<key>`, and the failures of a binding with the `Audit` action as the
 * `validation.policy.admission.<suffix>/validation_failure` annotation.
 */
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import type { AuditEvent } from '../src/controlplane/audit.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const auditLogPath = join(tmpdir(), `orch-vap-audit-${process.pid}-${Date.now()}.jsonl`);

describe('ValidatingAdmissionPolicy in the audit log', () => {
  let c: TestCluster;

  beforeAll(async () => {
    c = await startTestCluster({ auditLogPath, storage: 'memory' });
  });

  afterAll(async () => {
    await c?.stop();
    await rm(auditLogPath, { force: true });
  });

  it('records the annotations of the write they were computed for', async () => {
    await c.client.kind('ValidatingAdmissionPolicy').create({
      metadata: { name: 'sizes' },
      spec: {
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
        },
        validations: [{ expression: 'size(object.data) <= 1', message: 'at most one key' }],
        auditAnnotations: [{ key: 'keys', valueExpression: 'string(size(object.data))' }],
      },
    } as KubeObject);
    await c.client.kind('ValidatingAdmissionPolicyBinding').create({
      metadata: { name: 'sizes-audit' },
      spec: { policyName: 'sizes', validationActions: ['Audit'] },
    } as KubeObject);
    await c.client
      .kind('ConfigMap')
      .create({ metadata: { name: 'two', namespace: 'default' }, data: { a: '1', b: '2' } } as KubeObject);

    await c.cp.audit!.flush();
    const events = (await readFile(auditLogPath, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
    const create = events.find((e) => e.objectRef.resource === 'configmaps' && e.objectRef.name === 'two');
    const failureKey = c.cp.registry.naming.annotations.validationFailure;
    expect(create?.annotations?.['sizes/keys']).toBe('2');
    expect(JSON.parse(create?.annotations?.[failureKey] ?? '[]')).toEqual([
      {
        message: 'at most one key',
        policy: 'sizes',
        binding: 'sizes-audit',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
    const policyCreate = events.find((e) => e.objectRef.resource === 'validatingadmissionpolicies');
    expect(policyCreate?.annotations).toBeUndefined();
  });
});
