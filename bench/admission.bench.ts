/**
 * `npm run bench -- admission`: ConfigMap creates/s through the embedded control plane over HTTPS with 10
 * ValidatingAdmissionPolicies (3 CEL expressions each) bound, against the same creates with no binding (the
 * floor), in alternating rounds on the same server. Client and server share this process (both sides alike).
 */
import type { KubeObject } from '../src/api/meta.ts';
import { startTestCluster } from '../test/support/cluster.ts';
import { inParallel, interleaved, pairedFigure, print } from './run.ts';

const POLICIES = 10;
const CREATES = 1500;
const ROUNDS = 5;

const configMap = (name: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { app: 'bench' } },
    data: { key: 'value', payload: 'x'.repeat(200) },
  }) as KubeObject;

const policy = (i: number): KubeObject =>
  ({
    metadata: { name: `bench-${i}` },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
        ],
      },
      validations: [
        { expression: 'object.metadata.name.size() < 64' },
        { expression: 'object.metadata.labels.app == "bench"' },
        { expression: '!has(object.data) || object.data.all(k, k.size() < 32)' },
      ],
    },
  }) as KubeObject;

const binding = (i: number): KubeObject =>
  ({ metadata: { name: `bench-${i}` }, spec: { policyName: `bench-${i}`, validationActions: ['Deny'] } }) as KubeObject;

export async function run(): Promise<void> {
  const cluster = await startTestCluster({ storage: 'memory', historySize: 20_000 });
  const { client } = cluster;
  const cms = client.kind('ConfigMap');
  const policies = client.kind('ValidatingAdmissionPolicy');
  const bindings = client.kind('ValidatingAdmissionPolicyBinding');
  let batch = 0;
  const creates = async () => {
    const prefix = `b${batch++}`;
    return CREATES / (await inParallel(CREATES, (i) => cms.create(configMap(`${prefix}-${i}`))));
  };
  const bound = async () => {
    await Promise.all(Array.from({ length: POLICIES }, (_, i) => bindings.create(binding(i))));
    const rate = await creates();
    await Promise.all(Array.from({ length: POLICIES }, (_, i) => bindings.delete(undefined, `bench-${i}`)));
    return rate;
  };
  try {
    await Promise.all(Array.from({ length: POLICIES }, (_, i) => policies.create(policy(i))));
    await creates(); // warm-up: JIT, TLS sessions
    await bound(); // warm-up of the policy path (compiles the expressions)
    const rounds = await interleaved(ROUNDS, bound, creates);
    print(`admission policies (HTTPS, 64 concurrent creates, client QPS unlimited, ${ROUNDS} paired rounds)`, [
      pairedFigure(`creates/s, ${POLICIES} policies × 3 expressions`, 'req/s', 'no policy', rounds),
    ]);
  } finally {
    await cluster.stop();
  }
}
