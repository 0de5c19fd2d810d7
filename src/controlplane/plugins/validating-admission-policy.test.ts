/**
 * ValidatingAdmissionPolicy enforcement, called directly over an in-memory store: binding actions, reasons
 * and status codes, params (name, selector, namespaces, not found), configuration errors under each
 * failure policy, audit annotations, and the exemption of the policy resources themselves.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import { group } from '../../api/naming.ts';
import { ResourceRegistry } from '../../api/registry.ts';
import type { ValidatingAdmissionPolicyBindingSpec, ValidatingAdmissionPolicySpec } from '../../api/types/admission.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.ts';
import { ApiError } from '../errors.ts';
import { Storage } from '../storage.ts';
import { validatingAdmissionPolicy } from './validating-admission-policy.ts';

const registry = new ResourceRegistry('orch');
const n = registry.naming;
const admission = group(n, 'admissionregistration');
const policies = registry.resource(admission, 'v1', 'validatingadmissionpolicies')!;
const bindings = registry.resource(admission, 'v1', 'validatingadmissionpolicybindings')!;
const configMaps = registry.resource('', 'v1', 'configmaps')!;
const namespaces = registry.resource('', 'v1', 'namespaces')!;
const clusterRoles = registry.byKind('ClusterRole')!;

let storage: Storage;
let plugin: AdmissionPlugin;
let generation = 0;

beforeEach(() => {
  storage = new Storage();
  storage.create(namespaces, { metadata: { name: 'team', labels: { env: 'prod' } } });
  plugin = validatingAdmissionPolicy(registry, storage, n, (_, attrs) => ({
    allowed: 'resource' in attrs && attrs.namespace === 'team',
    reason: '',
  }));
});

const onConfigMaps = {
  resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['*' as const], resources: ['configmaps'] }],
};

function addPolicy(name: string, spec: Partial<ValidatingAdmissionPolicySpec>): void {
  const existing = storage.get(policies, name);
  const metadata = { name, uid: `uid-${name}`, generation: ++generation };
  const object = { metadata, spec: { matchConstraints: onConfigMaps, ...spec } } as KubeObject;
  if (existing) storage.update(policies, { ...object, metadata: { ...existing.metadata, ...metadata } });
  else storage.create(policies, object);
}

function addBinding(name: string, spec: Partial<ValidatingAdmissionPolicyBindingSpec>): void {
  storage.create(bindings, {
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'], ...spec },
  } as KubeObject);
}

function configMapCreate(data: Record<string, string> = {}, namespace = 'team'): AdmissionAttributes {
  return {
    operation: 'CREATE',
    rt: configMaps,
    namespace,
    name: 'cm',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace }, data },
    user: { username: 'alice', groups: [] },
    dryRun: false,
    warnings: [],
    auditAnnotations: {},
  };
}

async function refusal(a: AdmissionAttributes): Promise<ApiError> {
  const err = await (async () => plugin.validate?.(a))().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('validation actions', () => {
  it.each([
    ['Invalid', 422],
    ['Forbidden', 403],
    ['Unauthorized', 401],
    ['RequestEntityTooLarge', 413],
  ] as const)('Deny with reason %s answers %i', async (reason, code) => {
    addPolicy('p', { validations: [{ expression: 'false', message: 'no', reason }] });
    addBinding('p', {});
    const err = await refusal(configMapCreate());
    expect(err.code).toBe(code);
    expect(err.reason).toBe(reason);
    expect(err.message).toBe(
      `configmaps "cm" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no`,
    );
    expect(err.details?.causes).toEqual([
      { message: "ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no" },
    ]);
  });

  it('the first failure decides the reason', async () => {
    addPolicy('p', {
      validations: [
        { expression: 'true', reason: 'Unauthorized' },
        { expression: 'false', message: 'second', reason: 'Forbidden' },
        { expression: 'false', message: 'third', reason: 'Unauthorized' },
      ],
    });
    addBinding('p', {});
    const err = await refusal(configMapCreate());
    expect([err.code, err.message]).toEqual([403, expect.stringContaining('denied request: second')]);
  });

  it('Warn adds a warning; Audit records the failure; neither refuses', async () => {
    addPolicy('p', { validations: [{ expression: 'true' }, { expression: 'false', message: 'too big' }] });
    addBinding('p', { validationActions: ['Warn', 'Audit'] });
    const a = configMapCreate();
    await plugin.validate?.(a);
    expect(a.warnings).toEqual(["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'p': too big"]);
    expect(JSON.parse(a.auditAnnotations?.[n.annotations.validationFailure] ?? '')).toEqual([
      { message: 'too big', policy: 'p', binding: 'p', expressionIndex: 1, validationActions: ['Warn', 'Audit'] },
    ]);
  });

  it('the binding narrows the policy by namespace', async () => {
    addPolicy('p', { validations: [{ expression: 'false' }] });
    addBinding('p', { matchResources: { namespaceSelector: { matchLabels: { env: 'dev' } } } });
    await plugin.validate?.(configMapCreate());
  });

  it('requests on policies and bindings are never judged', async () => {
    addPolicy('p', {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }],
      },
      validations: [{ expression: 'false' }],
    });
    addBinding('p', {});
    const a = { ...configMapCreate(), rt: bindings, namespace: undefined, object: { metadata: { name: 'x' } } };
    await plugin.validate?.(a);
    expect((await refusal({ ...configMapCreate(), rt: clusterRoles, namespace: undefined })).code).toBe(422);
  });

  it('recompiles when the policy changes', async () => {
    addPolicy('p', { validations: [{ expression: 'false' }] });
    addBinding('p', {});
    await refusal(configMapCreate());
    addPolicy('p', { validations: [{ expression: 'true' }] });
    await plugin.validate?.(configMapCreate());
  });

  it('gives expressions the request, the namespace and the authorizer', async () => {
    addPolicy('p', {
      validations: [
        { expression: 'request.userInfo.username == "alice" && request.operation == "CREATE"' },
        { expression: 'namespaceObject.metadata.labels.env == "prod" && oldObject == null' },
        { expression: 'authorizer.requestResource.check("create").allowed()' },
      ],
    });
    addBinding('p', {});
    await plugin.validate?.(configMapCreate());
  });
});

describe('params', () => {
  const limitPolicy = (failurePolicy: 'Fail' | 'Ignore' = 'Fail', kind = 'ConfigMap') =>
    addPolicy('p', {
      failurePolicy,
      paramKind: { apiVersion: 'v1', kind },
      validations: [
        { expression: 'params == null || size(object.data) <= int(params.data.max)', message: 'too many keys' },
      ],
    });
  const limits = (name: string, max: string, namespace = 'team', labels: Record<string, string> = {}) =>
    storage.create(configMaps, { metadata: { name, namespace, labels }, data: { max } } as KubeObject);
  const twoKeys = () => configMapCreate({ a: '1', b: '2' });

  it('by name, in the request namespace by default', async () => {
    limitPolicy();
    limits('limits', '1');
    addBinding('p', { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } });
    expect((await refusal(twoKeys())).message).toContain('too many keys');
  });

  it('by name in another namespace', async () => {
    limitPolicy();
    limits('limits', '5', 'default');
    limits('limits', '1', 'team');
    addBinding('p', { paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' } });
    await plugin.validate?.(twoKeys());
  });

  it('by selector: evaluated once per param', async () => {
    limitPolicy();
    limits('a', '5', 'team', { limits: 'yes' });
    limits('b', '1', 'team', { limits: 'yes' });
    limits('c', '0', 'team');
    addBinding('p', { paramRef: { selector: { matchLabels: { limits: 'yes' } }, parameterNotFoundAction: 'Deny' } });
    expect((await refusal(twoKeys())).message).toContain('too many keys');
  });

  it.each([
    [
      'Deny',
      'Fail',
      'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction',
    ],
    ['Deny', 'Ignore', undefined],
    ['Allow', 'Fail', undefined],
  ] as const)('none found with parameterNotFoundAction %s under %s', async (action, failurePolicy, message) => {
    limitPolicy(failurePolicy);
    addBinding('p', { paramRef: { name: 'absent', parameterNotFoundAction: action } });
    if (message) expect((await refusal(twoKeys())).message).toContain(message);
    else await plugin.validate?.(twoKeys());
  });

  it('a paramKind without paramRef gives null params', async () => {
    limitPolicy();
    addBinding('p', {});
    await plugin.validate?.(twoKeys());
  });

  it.each([
    [
      'an unknown paramKind',
      () => {
        limitPolicy('Fail', 'Nope');
        addBinding('p', { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } });
      },
      'paramKind kind `v1, Kind=Nope` not known',
    ],
    [
      'a namespace for a cluster-scoped paramKind',
      () => {
        addPolicy('p', {
          paramKind: { apiVersion: `${group(n, 'rbac.authorization')}/v1`, kind: 'ClusterRole' },
          validations: [{ expression: 'true' }],
        });
        addBinding('p', { paramRef: { name: 'x', namespace: 'team', parameterNotFoundAction: 'Allow' } });
      },
      'paramRef.namespace must not be provided for a cluster-scoped `paramKind`',
    ],
  ])('%s is a configuration error', async (_, setup, message) => {
    setup();
    const err = await refusal(twoKeys());
    expect(err.message).toContain(`failed to configure binding: ${message}`);
  });

  it('a namespaced paramKind without namespace cannot serve cluster-scoped requests', async () => {
    addPolicy('p', {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['clusterroles'] }],
      },
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [{ expression: 'true' }],
    });
    addBinding('p', { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } });
    const err = await refusal({ ...configMapCreate(), rt: clusterRoles, namespace: undefined });
    expect(err.message).toContain(
      'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources',
    );
  });
});

describe('audit annotations', () => {
  it('are keyed by policy; unique values of several bindings are joined', async () => {
    addPolicy('p', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      auditAnnotations: [{ key: 'tier', valueExpression: 'params.data.tier' }],
    });
    storage.create(configMaps, { metadata: { name: 'gold', namespace: 'team' }, data: { tier: 'gold' } } as KubeObject);
    storage.create(configMaps, {
      metadata: { name: 'silver', namespace: 'team' },
      data: { tier: 'silver' },
    } as KubeObject);
    addBinding('p', { paramRef: { name: 'gold', parameterNotFoundAction: 'Deny' } });
    storage.create(bindings, {
      metadata: { name: 'q' },
      spec: {
        policyName: 'p',
        validationActions: ['Audit'],
        paramRef: { name: 'silver', parameterNotFoundAction: 'Deny' },
      },
    } as KubeObject);
    storage.create(bindings, {
      metadata: { name: 'r' },
      spec: {
        policyName: 'p',
        validationActions: ['Audit'],
        paramRef: { name: 'gold', parameterNotFoundAction: 'Deny' },
      },
    } as KubeObject);
    const a = configMapCreate();
    await plugin.validate?.(a);
    expect(a.auditAnnotations).toEqual({ 'p/tier': 'gold, silver' });
  });
});
