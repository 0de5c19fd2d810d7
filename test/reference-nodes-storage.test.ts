/**
 * Nodes, volumes and claims, and apply conflicts on atomic structs, answered as kube-apiserver v1.37.2 answers
 * them (`npm run conformance:diff` found each difference), with the parts of kube-controller-manager the embedded
 * plane stands in for: the node lifecycle controller's condition taints and the pv/pvc-protection controllers.
 * Kubernetes flavor, through the HTTPS server as the admin client-certificate user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { RawClient } from './support/raw-https.ts';

let c: TestCluster;
let raw: RawClient;
const NS = 'ref-storage';

const json = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
  raw.send({
    method,
    path,
    headers: { 'Content-Type': contentType, Accept: 'application/json', 'User-Agent': 'ref-test/1.0' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  c = await startTestCluster({ flavor: 'kubernetes' });
  raw = await RawClient.fromKubeconfig(c.kubeconfig);
  expect((await json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).code).toBe(201);
});

afterAll(async () => {
  raw?.close();
  await c?.stop();
});

describe('apply conflicts', () => {
  it("conflicts when an apply changes an atomic struct another manager owns (a policy's defaulted matchConstraints)", async () => {
    const path = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
    const rules = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }];
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'atomic' },
      spec: { matchConstraints: { resourceRules: rules }, validations: [{ expression: 'true' }] },
    };
    const created = await json('POST', path, policy);
    expect(created.code).toBe(201);
    // Stored with its defaults (scope, selectors, matchPolicy): the same rules applied are another value.
    expect(created.json.spec.matchConstraints.matchPolicy).toBe('Equivalent');
    const applied = await json('PATCH', `${path}/atomic?fieldManager=applier`, policy, 'application/apply-patch+yaml');
    expect(applied.code).toBe(409);
    expect(applied.json.details.causes).toEqual([
      {
        reason: 'FieldManagerConflict',
        message: 'conflict with "ref-test" using admissionregistration.k8s.io/v1',
        field: '.spec.matchConstraints',
      },
    ]);
    // The value as stored is no change: applying it shares the field without a conflict.
    const same = { ...policy, spec: { ...policy.spec, matchConstraints: created.json.spec.matchConstraints } };
    const shared = await json('PATCH', `${path}/atomic?fieldManager=applier`, same, 'application/apply-patch+yaml');
    expect(shared.code).toBe(200);
  });
});
