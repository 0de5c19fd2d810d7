import { describe, expect, it } from 'vitest';
import type { Obj } from './raw.ts';
import { ctx, fieldError, type Loose, n, variant } from './test-helpers.ts';
import {
  defaultValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyCreate,
  validateValidatingAdmissionPolicyStatusUpdate,
  validateValidatingAdmissionPolicyUpdate,
} from './validating-admission-policy.ts';

const rule = () => ({
  apiGroups: ['apps'],
  apiVersions: ['v1'],
  operations: ['CREATE', 'UPDATE'],
  resources: ['deployments'],
  scope: '*',
});
const valid = (): Loose => ({
  metadata: { name: 'replica-limit', resourceVersion: '1' },
  spec: {
    failurePolicy: 'Fail',
    paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
    matchConstraints: {
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      resourceRules: [rule()] as Obj[],
    } as Obj,
    matchConditions: [{ name: 'exclude-leases', expression: "request.resource.resource != 'leases'" }] as Obj[],
    variables: [{ name: 'replicas', expression: 'object.spec.replicas' }] as Obj[],
    validations: [
      { expression: 'variables.replicas <= params.maxReplicas', message: 'too many replicas', reason: 'Invalid' },
    ] as Obj[],
    auditAnnotations: [
      { key: 'high-replica-count', valueExpression: "'replicas: ' + string(object.spec.replicas)" },
    ] as Obj[],
  } as Obj & Record<string, unknown>,
});
type VAP = Loose;
const withChange = (change: (o: VAP) => void) => variant(valid, change as (o: Loose) => void) as VAP;
const err = fieldError;
const mc = (o: VAP) => o.spec.matchConstraints as Obj & { resourceRules: Obj[] };

describe('ValidatingAdmissionPolicy create', () => {
  it.each([
    ['a complete policy', () => {}],
    ['audit annotations only', (o: VAP) => delete o.spec.validations],
    ['validations only', (o: VAP) => delete o.spec.auditAnnotations],
    [
      'a multi-line expression with a message',
      (o: VAP) => (o.spec.validations = [{ expression: 'object.a ||\nobject.b', message: 'no' }]),
    ],
    [
      'excluding the policy resources',
      (o: VAP) =>
        (mc(o).excludeResourceRules = [{ ...rule(), apiGroups: ['*'], resources: ['validatingadmissionpolicies'] }]),
    ],
    [
      'the Unauthorized reason of the spec',
      (o: VAP) => (o.spec.validations = [{ expression: 'true', reason: 'Unauthorized' }]),
    ],
    [
      '64 match conditions',
      (o: VAP) =>
        (o.spec.matchConditions = Array.from({ length: 64 }, (_, i) => ({ name: `c${i}`, expression: 'true' }))),
    ],
    ['a core-group paramKind', (o: VAP) => (o.spec.paramKind = { apiVersion: 'v1', kind: 'ConfigMap' })],
  ])('accepts %s', (_n, change) => {
    expect(validateValidatingAdmissionPolicyCreate(withChange(change), ctx)).toEqual([]);
  });

  it.each([
    [
      'no failurePolicy',
      (o: VAP) => delete o.spec.failurePolicy,
      [err('FieldValueRequired', 'spec.failurePolicy', 'Required value')],
    ],
    [
      'an unknown failurePolicy',
      (o: VAP) => (o.spec.failurePolicy = 'Retry'),
      [
        err(
          'FieldValueNotSupported',
          'spec.failurePolicy',
          'Unsupported value: "Retry": supported values: "Fail", "Ignore"',
        ),
      ],
    ],
    [
      'no matchConstraints',
      (o: VAP) => delete o.spec.matchConstraints,
      [err('FieldValueRequired', 'spec.matchConstraints', 'Required value')],
    ],
    [
      'no resourceRules',
      (o: VAP) => (mc(o).resourceRules = []),
      [err('FieldValueRequired', 'spec.matchConstraints.resourceRules', 'Required value')],
    ],
    [
      'an unknown matchPolicy',
      (o: VAP) => (mc(o).matchPolicy = 'Fuzzy'),
      [
        err(
          'FieldValueNotSupported',
          'spec.matchConstraints.matchPolicy',
          'Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
        ),
      ],
    ],
    [
      'a rule without operations',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), operations: [] }]),
      [err('FieldValueRequired', 'spec.matchConstraints.resourceRules[0].operations', 'Required value')],
    ],
    [
      'an unknown operation',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), operations: ['PATCH'] }]),
      [
        err(
          'FieldValueNotSupported',
          'spec.matchConstraints.resourceRules[0].operations[0]',
          'Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
        ),
      ],
    ],
    [
      'a wildcard among groups',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), apiGroups: ['*', 'apps'] }]),
      [
        err(
          'FieldValueInvalid',
          'spec.matchConstraints.resourceRules[0].apiGroups',
          'Invalid value: ["*","apps"]: if \'*\' is present, must not specify other API groups',
        ),
      ],
    ],
    [
      'an unknown scope',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), scope: 'Global' }]),
      [
        err(
          'FieldValueNotSupported',
          'spec.matchConstraints.resourceRules[0].scope',
          'Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"',
        ),
      ],
    ],
    [
      'matching the policies themselves',
      (o: VAP) =>
        (mc(o).resourceRules = [
          {
            ...rule(),
            apiGroups: [`admissionregistration.${n.groupSuffix}`],
            resources: ['validatingadmissionpolicies'],
          },
        ]),
      [
        err(
          'FieldValueInvalid',
          'spec.matchConstraints.resourceRules[0].resources[0]',
          'Invalid value: "validatingadmissionpolicies": must not match ValidatingAdmissionPolicy or ValidatingAdmissionPolicyBinding resources',
        ),
      ],
    ],
    [
      'matching the bindings under a wildcard group',
      (o: VAP) =>
        (mc(o).resourceRules = [
          { ...rule(), apiGroups: ['*'], resources: ['validatingadmissionpolicybindings/status'] },
        ]),
      [
        err(
          'FieldValueInvalid',
          'spec.matchConstraints.resourceRules[0].resources[0]',
          'Invalid value: "validatingadmissionpolicybindings/status": must not match ValidatingAdmissionPolicy or ValidatingAdmissionPolicyBinding resources',
        ),
      ],
    ],
    [
      '65 match conditions',
      (o: VAP) =>
        (o.spec.matchConditions = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }))),
      [err('FieldValueTooMany', 'spec.matchConditions', 'Too many: 65: must have at most 64 items')],
    ],
    [
      'duplicate match condition names',
      (o: VAP) => o.spec.matchConditions.push({ name: 'exclude-leases', expression: 'true' }),
      [err('FieldValueDuplicate', 'spec.matchConditions[1].name', 'Duplicate value: "exclude-leases"')],
    ],
    [
      'a match condition without expression',
      (o: VAP) => (o.spec.matchConditions[0].expression = '  '),
      [err('FieldValueRequired', 'spec.matchConditions[0].expression', 'Required value')],
    ],
    [
      'a variable that is not an identifier',
      (o: VAP) => {
        o.spec.variables[0].name = 'in';
        o.spec.validations = [{ expression: 'true' }];
      },
      [err('FieldValueInvalid', 'spec.variables[0].name', 'Invalid value: "in": name is not a valid CEL identifier')],
    ],
    [
      'neither validations nor auditAnnotations',
      (o: VAP) => {
        delete o.spec.validations;
        delete o.spec.auditAnnotations;
      },
      [
        err(
          'FieldValueRequired',
          'spec.validations',
          'Required value: validations or auditAnnotations must contain at least one item',
        ),
        err(
          'FieldValueRequired',
          'spec.auditAnnotations',
          'Required value: validations or auditAnnotations must contain at least one item',
        ),
      ],
    ],
    [
      'a validation without expression',
      (o: VAP) => (o.spec.validations = [{ expression: '' }]),
      [err('FieldValueRequired', 'spec.validations[0].expression', 'Required value: expression is not specified')],
    ],
    [
      'a message with a line break',
      (o: VAP) => (o.spec.validations = [{ expression: 'true', message: 'a\nb' }]),
      [
        err(
          'FieldValueInvalid',
          'spec.validations[0].message',
          'Invalid value: "a\\nb": message must not contain line breaks',
        ),
      ],
    ],
    [
      'a multi-line expression without message',
      (o: VAP) => (o.spec.validations = [{ expression: 'object.a ||\nobject.b' }]),
      [
        err(
          'FieldValueRequired',
          'spec.validations[0].message',
          'Required value: message must be specified if expression contains line breaks',
        ),
      ],
    ],
    [
      'an unknown reason',
      (o: VAP) => (o.spec.validations = [{ expression: 'true', reason: 'Teapot' }]),
      [
        err(
          'FieldValueNotSupported',
          'spec.validations[0].reason',
          'Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"',
        ),
      ],
    ],
    [
      'a duplicate audit key',
      (o: VAP) => o.spec.auditAnnotations.push({ key: 'high-replica-count', valueExpression: "'x'" }),
      [err('FieldValueDuplicate', 'spec.auditAnnotations[1].key', 'Duplicate value: "high-replica-count"')],
    ],
    [
      'an audit key over 63 bytes',
      (o: VAP) => (o.spec.auditAnnotations[0].key = 'k'.repeat(64)),
      [
        err(
          'FieldValueInvalid',
          'spec.auditAnnotations[0].key',
          `Invalid value: "replica-limit/${'k'.repeat(64)}": name part must be no more than 63 bytes`,
        ),
      ],
    ],
    [
      'an audit key with a bad character',
      (o: VAP) => (o.spec.auditAnnotations[0].key = 'a b'),
      [
        err(
          'FieldValueInvalid',
          'spec.auditAnnotations[0].key',
          "Invalid value: \"replica-limit/a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
      ],
    ],
    [
      'a valueExpression over 5 KiB',
      (o: VAP) => (o.spec.auditAnnotations[0].valueExpression = `'${'x'.repeat(5119)}'`),
      [
        err(
          'FieldValueRequired',
          'spec.auditAnnotations[0].valueExpression',
          'Required value: must not exceed 5120 bytes in length',
        ),
      ],
    ],
    [
      '21 audit annotations',
      (o: VAP) =>
        (o.spec.auditAnnotations = Array.from({ length: 21 }, (_, i) => ({ key: `k${i}`, valueExpression: "'v'" }))),
      [
        err(
          'FieldValueInvalid',
          'spec.auditAnnotations',
          `Invalid value: ${JSON.stringify(Array.from({ length: 21 }, (_, i) => ({ key: `k${i}`, valueExpression: "'v'" })))}: must not have more than 20 auditAnnotations`,
        ),
      ],
    ],
    [
      'a variable without expression',
      (o: VAP) => {
        o.spec.variables = [{ name: 'v', expression: ' ' }];
        o.spec.validations = [{ expression: 'true' }];
      },
      [err('FieldValueRequired', 'spec.variables[0].expression', 'Required value: expression is not specified')],
    ],
    [
      'other resources next to */*',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), resources: ['*/*', 'pods'] }]),
      [
        err(
          'FieldValueInvalid',
          'spec.matchConstraints.resourceRules[0].resources',
          'Invalid value: ["*/*","pods"]: if \'*/*\' is present, must not specify other resources',
        ),
      ],
    ],
    [
      'a subresource under a wildcard subresource',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), resources: ['pods/*', 'pods/log'] }]),
      [
        err(
          'FieldValueInvalid',
          'spec.matchConstraints.resourceRules[0].resources[1]',
          'Invalid value: "pods/log": if \'pods/*\' is present, must not specify pods/log',
        ),
      ],
    ],
    [
      'an empty apiVersion',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), apiVersions: [''] }]),
      [err('FieldValueRequired', 'spec.matchConstraints.resourceRules[0].apiVersions[0]', 'Required value')],
    ],
    [
      'duplicate resourceNames',
      (o: VAP) => (mc(o).resourceRules = [{ ...rule(), resourceNames: ['a', 'a'] }]),
      [err('FieldValueDuplicate', 'spec.matchConstraints.resourceRules[0].resourceNames[1]', 'Duplicate value: "a"')],
    ],
    [
      'a whitespace-only messageExpression',
      (o: VAP) => (o.spec.validations = [{ expression: 'true', messageExpression: ' ' }]),
      [
        err(
          'FieldValueInvalid',
          'spec.validations[0].messageExpression',
          'Invalid value: " ": must be non-empty if specified',
        ),
      ],
    ],
    [
      'a whitespace-only message',
      (o: VAP) => (o.spec.validations = [{ expression: 'true', message: ' ' }]),
      [
        err(
          'FieldValueInvalid',
          'spec.validations[0].message',
          'Invalid value: " ": message must be non-empty if specified',
        ),
      ],
    ],
    [
      'a paramKind kind with bad characters',
      (o: VAP) => (o.spec.paramKind = { apiVersion: 'v1', kind: 'Replica_Limit' }),
      [
        err(
          'FieldValueInvalid',
          'spec.paramKind.kind',
          "Invalid value: \"Replica_Limit\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
      ],
    ],
    [
      'a paramKind without kind',
      (o: VAP) => (o.spec.paramKind = { apiVersion: 'v1' }),
      [err('FieldValueRequired', 'spec.paramKind.kind', 'Required value')],
    ],
    [
      'a paramKind without version',
      (o: VAP) => (o.spec.paramKind = { apiVersion: 'rules.example.com/', kind: 'X' }),
      [
        err(
          'FieldValueInvalid',
          'spec.paramKind.apiVersion',
          'Invalid value: "rules.example.com/": version must be specified',
        ),
      ],
    ],
  ])('rejects %s', (_n, change, expected) => {
    expect(validateValidatingAdmissionPolicyCreate(withChange(change), ctx)).toEqual(expected);
  });

  it('keeps a valueExpression of exactly 5 KiB', () => {
    const o = withChange((x) => (x.spec.auditAnnotations[0].valueExpression = `'${'x'.repeat(5118)}'`));
    expect(validateValidatingAdmissionPolicyCreate(o, ctx)).toEqual([]);
  });
});

describe('ValidatingAdmissionPolicy expressions, compiled as the reference compiles them', () => {
  const problems = (change: (o: VAP) => void) =>
    validateValidatingAdmissionPolicyCreate(withChange(change), ctx).map((e) => `${e.field}: ${e.message}`);

  it.each([
    [
      'a validation that does not parse',
      (o: VAP) => (o.spec.validations[0].expression = 'object.spec.replicas <='),
      'spec.validations[0].expression: spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:24:',
    ],
    [
      'a validation that is no bool',
      (o: VAP) => (o.spec.validations[0].expression = 'object.spec.replicas'),
      'spec.validations[0].expression: spec.validations[0].expression: Invalid value: "object.spec.replicas": must evaluate to bool but got dyn',
    ],
    [
      'a validation naming a variable nobody declared',
      (o: VAP) => (o.spec.validations[0].expression = 'variables.nope == 2'),
      'spec.validations[0].expression: spec.validations[0].expression: Invalid value: "variables.nope == 2": compilation failed: ERROR:',
    ],
    [
      'params without a paramKind',
      (o: VAP) => {
        delete o.spec.paramKind;
        o.spec.validations[0].expression = 'params.max > 1';
      },
      'spec.validations[0].expression: spec.validations[0].expression: Invalid value: "params.max > 1": compilation failed: ERROR: <input>:1:1:',
    ],
    [
      'a match condition that does not parse',
      (o: VAP) => (o.spec.matchConditions[0].expression = 'object.x in [1, 2,'),
      'spec.matchConditions[0].expression: spec.matchConditions[0].expression: Invalid value: "object.x in [1, 2,": compilation failed:',
    ],
    [
      'a messageExpression that is no string',
      (o: VAP) => (o.spec.validations[0].messageExpression = '0 == 0'),
      'spec.validations[0].messageExpression: spec.validations[0].messageExpression: Invalid value: "0 == 0": must evaluate to string but got bool',
    ],
    [
      'an audit annotation value that is neither string nor null',
      (o: VAP) => (o.spec.auditAnnotations[0].valueExpression = 'true'),
      'spec.auditAnnotations[0].valueExpression: spec.auditAnnotations[0].valueExpression: Invalid value: "true": must evaluate to one of [string null_type] but got bool',
    ],
    [
      'a variable that does not compile',
      (o: VAP) => (o.spec.variables[0].expression = "114 + '514'"),
      `spec.variables[0].expression: spec.variables[0].expression: Invalid value: "114 + '514'": compilation failed: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(int, string)'`,
    ],
  ])('refuses %s, naming the field and the compile error', (_what, change, expected) => {
    const found = problems(change);
    expect(found.length, found.join('\n')).toBe(1);
    expect(found[0].startsWith(expected), found[0]).toBe(true);
  });

  it('types variables from their expressions, in order', () => {
    expect(
      problems((o) => {
        o.spec.variables = [
          { name: 'n', expression: 'object.spec.replicas > 1' },
          { name: 'm', expression: 'variables.n && true' },
        ];
        o.spec.validations = [{ expression: 'variables.m' }];
      }),
    ).toEqual([]);
  });
});

describe('ValidatingAdmissionPolicy update, status and defaults', () => {
  it('re-checks match conditions only when they change', () => {
    const stored = withChange((o) => (o.spec.matchConditions = [{ name: 'Bad Name', expression: 'true' }]));
    const next = withChange((o) => {
      o.spec.matchConditions = [{ name: 'Bad Name', expression: 'true' }];
      o.spec.failurePolicy = 'Ignore';
    });
    expect(validateValidatingAdmissionPolicyUpdate(next, stored, ctx)).toEqual([]);
    expect(validateValidatingAdmissionPolicyUpdate(next, valid(), ctx)).toHaveLength(1);
  });

  it('validates the type-checking warnings and conditions of the status', () => {
    const status = (expressionWarnings: Obj[]) => ({
      ...valid(),
      status: { observedGeneration: 1, typeChecking: { expressionWarnings } },
    });
    expect(
      validateValidatingAdmissionPolicyStatusUpdate(
        status([{ fieldRef: 'spec.validations[0].expression', warning: 'x' }]),
        valid(),
        ctx,
      ),
    ).toEqual([]);
    expect(
      validateValidatingAdmissionPolicyStatusUpdate(status([{ fieldRef: '', warning: '' }]), valid(), ctx),
    ).toEqual([
      err('FieldValueRequired', 'status.typeChecking.expressionWarnings[0].warning', 'Required value'),
      err('FieldValueRequired', 'status.typeChecking.expressionWarnings[0].fieldRef', 'Required value'),
    ]);
  });

  it('applies the reference defaults', () => {
    const o = {
      spec: {
        matchConstraints: {
          resourceRules: [{ apiGroups: ['apps'] }],
          excludeResourceRules: [{ apiGroups: [''], scope: 'Cluster' }],
        },
      },
    };
    defaultValidatingAdmissionPolicy(o);
    expect(o.spec).toEqual({
      failurePolicy: 'Fail',
      matchConstraints: {
        matchPolicy: 'Equivalent',
        namespaceSelector: {},
        objectSelector: {},
        resourceRules: [{ apiGroups: ['apps'], scope: '*' }],
        excludeResourceRules: [{ apiGroups: [''], scope: 'Cluster' }],
      },
    });
  });
});
