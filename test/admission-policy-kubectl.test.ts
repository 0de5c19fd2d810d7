/**
 * ValidatingAdmissionPolicy end to end with kubectl (the `kubernetes` flavor, whose groups kubectl knows):
 * the status controller's type-check warnings, and enforcement by the embedded control plane — Deny with
 * the policy's message and status code, Warn printed by kubectl, a param resource that moves the limit.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusControllerDefinition } from '../controllers/admissionpolicy/index.ts';
import { type RunningControllers, runControllers } from '../controllers/certificates/testing.ts';
import type { ValidatingAdmissionPolicy } from '../src/api/types/admission.ts';
import { StatusError } from '../src/client/errors.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';

const ADMISSION = 'admissionregistration.k8s.io/v1';

function policy(name: string, expression: string, extra: object = {}) {
  return {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] },
        ],
      },
      validations: [{ expression, message: 'replicas must be at most the limit', reason: 'Forbidden' }],
      ...extra,
    },
  };
}

function binding(name: string, policyName: string, actions: string[], extra: object = {}) {
  return {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName,
      validationActions: actions,
      matchResources: { namespaceSelector: { matchLabels: { [`policy-${name}`]: 'on' } } },
      ...extra,
    },
  };
}

function deployment(name: string, replicas: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
}

describe.skipIf(!hasKubectl)('ValidatingAdmissionPolicy with kubectl (kubernetes flavor)', () => {
  let c: TestCluster;
  let running: RunningControllers;
  let kubectl: Kubectl;
  const apply = (o: object) => kubectl.ok(['apply', '-f', '-'], { input: JSON.stringify(o) });
  const getPolicy = (name: string) =>
    c.client.kind<ValidatingAdmissionPolicy>('ValidatingAdmissionPolicy').get(undefined, name);

  beforeAll(async () => {
    c = await startTestCluster({ flavor: 'kubernetes' });
    running = await runControllers(c.client, c.cp.registry, [statusControllerDefinition]);
    kubectl = new Kubectl(c.kubeconfig, join(c.dir, 'kubectl-cache'));
  });

  afterAll(async () => {
    await running?.stop();
    await c?.stop();
  });

  it('warns about a typo, naming the field and the kind; fixing it clears the warning', async () => {
    await apply(policy('typo', 'object.spec.replica > 1'));
    const warned = await eventually(async () => {
      const p = await getPolicy('typo');
      return p.status?.observedGeneration === 1 && p.status.typeChecking ? p : undefined;
    });
    const warnings = warned.status?.typeChecking?.expressionWarnings ?? [];
    expect(warnings.map((w) => w.fieldRef)).toEqual(['spec.validations[0].expression']);
    expect(warnings[0].warning).toMatch(/^apps\/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'/);
    const shown = await kubectl.json(['get', 'validatingadmissionpolicy', 'typo']);
    expect(shown.status.typeChecking.expressionWarnings[0].fieldRef).toBe('spec.validations[0].expression');

    await apply(policy('typo', 'object.spec.replicas > 1'));
    const fixed = await eventually(async () => {
      const p = await getPolicy('typo');
      return p.status?.observedGeneration === 2 ? p : undefined;
    });
    expect(fixed.status?.typeChecking).toEqual({});
  });

  it('Deny refuses a Deployment with too many replicas with the message and status code', async () => {
    await kubectl.ok(['create', 'namespace', 'deny']);
    await kubectl.ok(['label', 'namespace', 'deny', 'policy-max-deny=on']);
    await apply(policy('max-replicas', 'object.spec.replicas <= 3'));
    await apply(binding('max-deny', 'max-replicas', ['Deny']));

    const refused = await kubectl.run(['apply', '-n', 'deny', '-f', '-'], {
      input: JSON.stringify(deployment('big', 5)),
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-deny' denied request: replicas must be at most the limit`,
    );
    const err = await c.client
      .kind('Deployment')
      .create({ ...deployment('big', 5), metadata: { name: 'big', namespace: 'deny' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(403);
    expect((err as StatusError).status?.reason).toBe('Forbidden');

    await kubectl.ok(['apply', '-n', 'deny', '-f', '-'], { input: JSON.stringify(deployment('small', 2)) });
    // dryRun requests are judged the same way, and nothing is stored.
    const dry = await kubectl.run(['apply', '--dry-run=server', '-n', 'deny', '-f', '-'], {
      input: JSON.stringify(deployment('small', 9)),
    });
    expect(dry.stderr).toContain('replicas must be at most the limit');
  });

  it('Warn lets the Deployment in and kubectl prints the warning', async () => {
    await kubectl.ok(['create', 'namespace', 'warn']);
    await kubectl.ok(['label', 'namespace', 'warn', 'policy-max-warn=on']);
    await apply(binding('max-warn', 'max-replicas', ['Warn', 'Audit']));
    const r = await kubectl.run(['apply', '-n', 'warn', '-f', '-'], { input: JSON.stringify(deployment('big', 5)) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "Warning: Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-warn': replicas must be at most the limit",
    );
    expect(await kubectl.ok(['get', 'deployment', 'big', '-n', 'warn', '-o', 'name'])).toContain('deployment.apps/big');
  });

  it('a param resource changes the limit without touching the policy', async () => {
    await kubectl.ok(['create', 'namespace', 'params']);
    await kubectl.ok(['label', 'namespace', 'params', 'policy-max-param=on']);
    await kubectl.ok(['create', 'configmap', 'limits', '-n', 'params', '--from-literal=max=3']);
    await apply(
      policy('max-from-params', 'object.spec.replicas <= int(params.data.max)', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      }),
    );
    await apply(
      binding('max-param', 'max-from-params', ['Deny'], {
        paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' },
      }),
    );

    const input = JSON.stringify(deployment('five', 5));
    const refused = await kubectl.run(['apply', '-n', 'params', '-f', '-'], { input });
    expect(refused.stderr).toContain(
      "ValidatingAdmissionPolicy 'max-from-params' with binding 'max-param' denied request",
    );

    await kubectl.ok(['patch', 'configmap', 'limits', '-n', 'params', '--type=merge', '-p', '{"data":{"max":"10"}}']);
    await kubectl.ok(['apply', '-n', 'params', '-f', '-'], { input });

    await kubectl.ok(['delete', 'configmap', 'limits', '-n', 'params']);
    const missing = await kubectl.run(['apply', '-n', 'params', '-f', '-'], {
      input: JSON.stringify(deployment('six', 1)),
    });
    expect(missing.stderr).toContain(
      'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction',
    );
    // The policy was type-checked with params typed as a ConfigMap: no warning.
    const checked = await eventually(async () => (await getPolicy('max-from-params')).status?.typeChecking);
    expect(checked).toEqual({});
  });
});
