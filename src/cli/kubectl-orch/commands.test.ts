import { describe, expect, it } from 'vitest';
import { ResourceRegistry } from '../../api/registry.ts';
import type { CertificateSigningRequest } from '../../api/types/certificates.ts';
import { rulesTable } from './auth.ts';
import { withDecision } from './certificate.ts';
import { aggregationSelector, bindingParts, dryRunMode, roleRules } from './create.ts';
import { resolveResource } from './resources.ts';
import { shardRows } from './shards.ts';
import { parseTarget } from './why.ts';

const registry = new ResourceRegistry('orch');
const none = { verbs: [], resources: [], resourceNames: [], nonResourceUrls: [] };

describe('create role rules', () => {
  it('one rule per API group, in the order given, resource names on each', () => {
    expect(
      roleRules(
        registry,
        {
          ...none,
          verbs: ['get,list'],
          resources: ['pods', 'deployments.apps', 'pods/status', 'sts'],
          resourceNames: ['a'],
        },
        false,
      ),
    ).toEqual([
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/status'], resourceNames: ['a'] },
      { verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], resourceNames: ['a'] },
    ]);
  });

  it('a * verb stands alone; csr resolves to the flavor group', () => {
    expect(roleRules(registry, { ...none, verbs: ['get', '*'], resources: ['csr'] }, false)).toEqual([
      { verbs: ['*'], apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests'] },
    ]);
  });

  it('non-resource URLs in cluster roles', () => {
    expect(roleRules(registry, { ...none, verbs: ['get'], nonResourceUrls: ['/healthz'] }, true)).toEqual([
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
    ]);
  });

  it.each([
    [{ ...none, resources: ['pods'] }, 'at least one verb must be specified'],
    [{ ...none, verbs: ['get'] }, 'one of resource or nonResourceURL must be specified'],
    [{ ...none, verbs: ['fly'], resources: ['pods'] }, "invalid verb: 'fly'"],
    [{ ...none, verbs: ['get'], resources: ['widgets'] }, `the server doesn't have a resource type "widgets"`],
    [{ ...none, verbs: ['list'], nonResourceUrls: ['/x'] }, "invalid verb: 'list'"],
    [{ ...none, verbs: ['get'], nonResourceUrls: ['x'] }, 'nonResourceURL should start with /'],
    [
      { ...none, verbs: ['get'], aggregationRule: 'a=b' },
      'aggregation rule must be specified without nonResourceURLs, resources, verbs or resourceNames',
    ],
  ])('%j → %s', (flags, message) => {
    expect(() => roleRules(registry, flags, true)).toThrow(message);
  });

  it('aggregation rules read key=value pairs', () => {
    expect(aggregationSelector('a=b,c=d')).toEqual({ a: 'b', c: 'd' });
    expect(() => aggregationSelector('oops')).toThrow('invalid aggregation rule "oops": expected key=value');
  });
});

describe('create bindings', () => {
  const rbac = 'rbac.authorization.orch.io';
  it('subjects of each kind', () => {
    expect(
      bindingParts(rbac, { role: 'r', users: ['u1,u2'], groups: ['g'], serviceAccounts: ['ns:sa'] }, false),
    ).toEqual({
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'r' },
      subjects: [
        { kind: 'User', apiGroup: rbac, name: 'u1' },
        { kind: 'User', apiGroup: rbac, name: 'u2' },
        { kind: 'Group', apiGroup: rbac, name: 'g' },
        { kind: 'ServiceAccount', namespace: 'ns', name: 'sa' },
      ],
    });
  });

  it.each([
    [{ users: [], groups: [], serviceAccounts: [] }, false, 'exactly one of clusterrole or role must be specified'],
    [
      { role: 'a', clusterRole: 'b', users: [], groups: [], serviceAccounts: [] },
      false,
      'exactly one of clusterrole or role must be specified',
    ],
    [{ users: [], groups: [], serviceAccounts: [] }, true, 'clusterrole must be specified'],
    [
      { clusterRole: 'c', users: [], groups: [], serviceAccounts: ['nocolon'] },
      true,
      'serviceaccount must be <namespace>:<name>',
    ],
  ])('%j (cluster %s) → %s', (flags, cluster, message) => {
    expect(() => bindingParts(rbac, flags, cluster)).toThrow(message);
  });

  it.each([
    [undefined, 'none'],
    ['client', 'client'],
    ['server', 'server'],
    ['none', 'none'],
  ])('--dry-run=%s', (value, mode) => {
    expect(dryRunMode(value)).toBe(mode);
  });
});

describe('certificate approve/deny', () => {
  const csr = (types: string[]): CertificateSigningRequest => ({
    metadata: { name: 'c' },
    spec: { request: '', signerName: 's' },
    status: { conditions: types.map((type) => ({ type, status: 'True' as const })) },
  });

  it('adds the condition kubectl adds', () => {
    const next = withDecision(csr([]), 'deny', '2026-01-01T00:00:00Z');
    expect(next).not.toBe('unchanged');
    expect((next as CertificateSigningRequest).status?.conditions).toEqual([
      {
        type: 'Denied',
        status: 'True',
        reason: 'KubectlDeny',
        message: 'This CSR was denied by kubectl certificate deny.',
        lastUpdateTime: '2026-01-01T00:00:00Z',
      },
    ]);
  });

  it('leaves a decided CSR alone and refuses the opposite decision', () => {
    expect(withDecision(csr(['Approved']), 'approve', 'now')).toBe('unchanged');
    expect(() => withDecision(csr(['Approved']), 'deny', 'now')).toThrow(
      'certificate signing request "c" is already Approved',
    );
  });
});

describe('resources, targets and tables', () => {
  it.each([
    ['pods', 'pods', ''],
    ['po', 'pods', ''],
    ['Pod', 'pods', ''],
    ['deployments.apps', 'deployments', 'apps'],
    ['csr', 'certificatesigningrequests', 'certificates.orch.io'],
    ['pdb.policy', 'poddisruptionbudgets', 'policy'],
    ['widgets.example.com', 'widgets', 'example.com'],
  ])('%s → %s in %j', (text, resource, group) => {
    expect(resolveResource(registry, text)).toMatchObject({ resource, group });
  });

  it.each([
    [['pdb/web'], { resource: 'pdb', name: 'web' }],
    [['csr', 'x'], { resource: 'csr', name: 'x' }],
  ])('why %j', (args, target) => {
    expect(parseTarget(args)).toEqual(target);
  });

  it.each([[[]], [['pdb']], [['a/b', 'c']], [['/x']]])('why %j is a usage error', (args) => {
    expect(() => parseTarget(args)).toThrow('you must specify one object as KIND/NAME');
  });

  it('can-i --list prints resource rules per group, then non-resource rules', () => {
    expect(
      rulesTable({
        resourceRules: [{ verbs: ['get'], apiGroups: ['', 'apps'], resources: ['pods'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
        incomplete: false,
      }),
    ).toBe(
      'Resources   Non-Resource URLs   Resource Names   Verbs\n' +
        'pods        []                  []               [get]\n' +
        'pods.apps   []                  []               [get]\n' +
        '            [/healthz]          []               [get]\n',
    );
  });
});

describe('shards', () => {
  const lease = (name: string, holderIdentity: string, renewTime: string) => ({
    metadata: { namespace: 'orch-system', name },
    spec: { holderIdentity, renewTime, leaseDurationSeconds: 15 },
  });
  const now = Date.parse('2026-11-28T01:00:10Z');
  const prefix = 'orch-controller-manager-shard';

  it('one row per shard up to the highest Lease, ranges of that many, holders and renewal ages', () => {
    const rows = shardRows(
      [
        lease(`${prefix}-01`, 'vm_b', '2026-11-28T01:00:07.000000Z'),
        lease(`${prefix}-00`, 'vm_a', '2026-11-28T01:00:09.500000Z'),
        lease(`${prefix}-03`, '', '2026-11-28T00:57:10.000000Z'),
        lease('orch-controller-manager', 'vm_a', '2026-11-28T01:00:09.000000Z'),
      ],
      prefix,
      now,
    );
    expect(rows).toEqual([
      ['0', '0x0000000000000000-0x4000000000000000', 'vm_a', '0s'],
      ['1', '0x4000000000000000-0x8000000000000000', 'vm_b', '3s'],
      ['2', '0x8000000000000000-0xc000000000000000', '<none>', '<none>'],
      ['3', '0xc000000000000000-0x10000000000000000', '<none>', '3m'],
    ]);
  });

  it('--shards fixes the count; no Lease gives no rows', () => {
    expect(shardRows([lease(`${prefix}-00`, 'vm_a', '2026-11-28T01:00:09Z')], prefix, now, 2)).toHaveLength(2);
    expect(shardRows([], prefix, now)).toEqual([]);
  });
});
