/**
 * ValidatingAdmissionPolicy bad input against the embedded control plane: unparseable CEL, an expression
 * over the cost limit, a paramKind that does not exist, a policy that matches policies. Each gives a clear
 * error in status or at admission, and the server keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusControllerDefinition } from '../controllers/admissionpolicy/index.ts';
import { type RunningControllers, runControllers } from '../controllers/certificates/testing.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { MatchResources, ValidatingAdmissionPolicy } from '../src/api/types/admission.ts';
import { StatusError } from '../src/client/errors.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';

const rules = (apiGroups: string[], resources: string[], apiVersions = ['v1']): MatchResources => ({
  resourceRules: [{ apiGroups, apiVersions, operations: ['*'], resources }],
});

describe('ValidatingAdmissionPolicy bad input', () => {
  let c: TestCluster;
  let running: RunningControllers;
  const admission = () => c.cp.registry.naming;
  const policies = () => c.client.kind<ValidatingAdmissionPolicy>('ValidatingAdmissionPolicy');
  const bindings = () => c.client.kind('ValidatingAdmissionPolicyBinding');
  const configMaps = () => c.client.kind('ConfigMap');

  async function bind(name: string, spec: ValidatingAdmissionPolicy['spec'], binding: object = {}) {
    await policies().create({ metadata: { name }, spec } as ValidatingAdmissionPolicy);
    await bindings().create({
      metadata: { name },
      spec: { policyName: name, validationActions: ['Deny'], ...binding },
    } as KubeObject);
  }

  async function refusal(name: string, data: Record<string, string> = {}): Promise<StatusError> {
    const err = await configMaps()
      .create({ metadata: { name, namespace: 'default' }, data } as KubeObject)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    return err as StatusError;
  }

  beforeAll(async () => {
    c = await startTestCluster();
    running = await runControllers(c.client, c.cp.registry, [statusControllerDefinition]);
  });

  afterAll(async () => {
    await running?.stop();
    await c?.stop();
  });

  it('unparseable CEL: refused at create; stored anyway (by an older server), a warning in status and a refusal at admission under Fail', async () => {
    const spec = {
      matchConstraints: rules([''], ['configmaps']),
      validations: [{ expression: 'object.data.size() >' }],
      matchConditions: [{ name: 'only-bad', expression: 'object.metadata.name.startsWith("bad-")' }],
    };
    const refused = await policies()
      .create({ metadata: { name: 'unparseable' }, spec } as ValidatingAdmissionPolicy)
      .catch((e: unknown) => e as StatusError);
    expect((refused as StatusError).code).toBe(422);
    expect((refused as StatusError).message).toContain(
      'spec.validations[0].expression: Invalid value: "object.data.size() >": compilation failed: ERROR: <input>:1:21:',
    );
    const policy = await policies().create({
      metadata: { name: 'placeholder' },
      spec: { ...spec, validations: [{ expression: 'true' }] },
    } as ValidatingAdmissionPolicy);
    await c.cp.seed({
      ...policy,
      metadata: { name: 'unparseable' },
      spec: { ...policy.spec, validations: spec.validations },
    } as KubeObject);
    await policies().delete(undefined, 'placeholder');
    await bindings().create({
      metadata: { name: 'unparseable' },
      spec: { policyName: 'unparseable', validationActions: ['Deny'] },
    } as KubeObject);
    const status = await eventually(async () => (await policies().get(undefined, 'unparseable')).status?.typeChecking);
    expect(status.expressionWarnings?.[0].fieldRef).toBe('spec.validations[0].expression');
    expect(status.expressionWarnings?.[0].warning).toMatch(
      /^\/v1, Kind=ConfigMap: ERROR: <input>:1:21: Unexpected token/,
    );
    const err = await refusal('bad-parse');
    expect(err.code).toBe(422);
    expect(err.message).toMatch(
      /ValidatingAdmissionPolicy 'unparseable' with binding 'unparseable' denied request: expression 'object.data.size\(\) >' resulted in error: compilation failed/,
    );
  });

  it('an expression over the cost limit is stopped with a clear error', async () => {
    await bind('costly', {
      matchConstraints: rules([''], ['configmaps']),
      matchConditions: [{ name: 'only-costly', expression: 'object.metadata.name.startsWith("costly-")' }],
      variables: [{ name: 'keys', expression: 'object.data.map(k, k)' }],
      validations: [{ expression: 'variables.keys.all(a, variables.keys.all(b, variables.keys.all(c, a != "")))' }],
    });
    const data = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 'v']));
    const started = performance.now();
    const err = await refusal('costly-one', data);
    expect(err.message).toContain('operation cancelled: actual cost limit exceeded');
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('a paramKind that does not exist: misconfiguration under the failure policy', async () => {
    await bind(
      'no-such-param',
      {
        matchConstraints: rules([''], ['configmaps']),
        matchConditions: [{ name: 'only', expression: 'object.metadata.name.startsWith("param-")' }],
        paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' },
        validations: [{ expression: 'params.max > 1' }],
      },
      { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } },
    );
    const err = await refusal('param-one');
    expect(err.message).toContain(
      "ValidatingAdmissionPolicy 'no-such-param' with binding 'no-such-param' denied request: failed to configure binding: paramKind kind `example.com/v1, Kind=Nope` not known",
    );
    const status = await eventually(
      async () => (await policies().get(undefined, 'no-such-param')).status?.typeChecking,
    );
    expect(status.expressionWarnings?.[0].warning).toMatch(/undeclared reference to 'params' \(in container ''\)/);

    const p = await policies().get(undefined, 'no-such-param');
    await policies().replace({ ...p, spec: { ...p.spec!, failurePolicy: 'Ignore' } });
    await configMaps().create({ metadata: { name: 'param-two', namespace: 'default' } } as KubeObject);
  });

  it('a policy cannot name policies or bindings, and a wildcard policy never blocks them', async () => {
    const group = `admissionregistration.${admission().groupSuffix}`;
    const err = await policies()
      .create({
        metadata: { name: 'self' },
        spec: {
          matchConstraints: rules([group], ['validatingadmissionpolicies']),
          validations: [{ expression: 'false' }],
        },
      } as ValidatingAdmissionPolicy)
      .catch((e: unknown) => e);
    expect((err as StatusError).code).toBe(422);
    expect((err as StatusError).message).toContain(
      'must not match ValidatingAdmissionPolicy or ValidatingAdmissionPolicyBinding resources',
    );

    await bind('deny-all', {
      matchConstraints: rules(['*'], ['*'], ['*']),
      matchConditions: [{ name: 'not-namespaces', expression: 'request.resource.resource != "namespaces"' }],
      validations: [{ expression: 'request.resource.resource != "secrets"', message: 'no secrets here' }],
    });
    const secret = await c.client
      .kind('Secret')
      .create({ metadata: { name: 's', namespace: 'default' } } as KubeObject)
      .catch((e: unknown) => e);
    expect((secret as StatusError).message).toContain('no secrets here');
    // The policies themselves stay writable, so the mistake can be undone.
    await bindings().delete(undefined, 'deny-all');
    await policies().delete(undefined, 'deny-all');
    await c.client.kind('Secret').create({ metadata: { name: 's', namespace: 'default' } } as KubeObject);
  });
});
