/**
 * The control plane's audit log (`--audit-log-path`): every write, and only writes, as one audit Event per
 * line with who made it (user, user agent), what it touched, the answer's code and the resourceVersion it made.
 */
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { group } from '../src/api/naming.ts';
import type { AuditEvent } from '../src/controlplane/audit.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let c: TestCluster;
const auditLogPath = join(tmpdir(), `orch-audit-${process.pid}-${Date.now()}.jsonl`);

beforeAll(async () => {
  c = await startTestCluster({ auditLogPath });
});

afterAll(async () => {
  await c?.stop();
  await rm(auditLogPath, { force: true });
});

async function events(): Promise<AuditEvent[]> {
  await c.cp.audit!.flush();
  const text = await readFile(c.cp.audit!.path, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent);
}

describe('the audit log', () => {
  it('records each write with its author, target, code and resulting resourceVersion, and no reads', async () => {
    const agent = c.client.derive({ userAgent: 'audit-test/1.0 (replica-a)' });
    const configMaps = agent.kind('ConfigMap');
    const created = await configMaps.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'default', name: 'audited' },
    });
    await configMaps.get('default', 'audited');
    const patched = await configMaps.patch('default', 'audited', { data: { a: '1' } }, 'merge');
    await expect(configMaps.create(created)).rejects.toThrow(/already exists/);
    await configMaps.delete('default', 'audited');

    const mine = (await events()).filter((e) => e.userAgent === 'audit-test/1.0 (replica-a)');
    expect(mine.map((e) => [e.verb, e.responseStatus.code])).toEqual([
      ['create', 201],
      ['patch', 200],
      ['create', 409],
      ['delete', 200],
    ]);
    const [create, patch, conflict] = mine;
    expect(create).toMatchObject({
      apiVersion: `${group(c.cp.registry.naming, 'audit')}/v1`,
      kind: 'Event',
      level: 'Metadata',
      stage: 'ResponseComplete',
      requestURI: '/api/v1/namespaces/default/configmaps',
      user: { username: 'admin', groups: expect.arrayContaining(['system:masters']) },
      objectRef: {
        resource: 'configmaps',
        name: 'audited',
        namespace: 'default',
        apiVersion: 'v1',
        resourceVersion: created.metadata.resourceVersion,
      },
    });
    expect(patch.objectRef).toMatchObject({ name: 'audited', resourceVersion: patched.metadata.resourceVersion });
    expect(conflict.objectRef.resourceVersion).toBeUndefined();
    for (const e of mine) {
      expect(Date.parse(e.stageTimestamp)).toBeGreaterThanOrEqual(Date.parse(e.requestReceivedTimestamp));
    }
  });
});
