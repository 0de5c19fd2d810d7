import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../src/api/schema.ts';
import type { NamedRuleWithOperations, ValidatingAdmissionPolicy } from '../../src/api/types/admission.ts';
import { declType, openAPIFromNode } from '../../src/cel/schema-types.ts';
import { selectControllers } from '../../src/controller/controller.ts';
import { statusControllerDefinition } from './controller.ts';
import { checkedStatus, type GVK, type GVR, gvkString, kindsToCheck, needsCheck, typeCheck } from './core.ts';

/** A REST mapping: `<resource>` → its kind, in any group and version it is listed for. */
const SERVED: Record<string, string> = {
  deployments: 'Deployment',
  replicasets: 'ReplicaSet',
  pods: 'Pod',
  configmaps: 'ConfigMap',
  ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`r${i}`, `K${i}`])),
};
const kindsFor = ({ group, version, resource }: GVR): GVK[] =>
  SERVED[resource] ? [{ group, version, kind: SERVED[resource] }] : [];

const rule = (apiGroups: string[], apiVersions: string[], resources: string[]): NamedRuleWithOperations => ({
  apiGroups,
  apiVersions,
  resources,
  operations: ['*'],
});
const names = (ks: GVK[]) => ks.map(gvkString);

describe('kinds to check (reference §6.2)', () => {
  it.each<[string, NamedRuleWithOperations[], string[]]>([
    ['one resource', [rule(['apps'], ['v1'], ['deployments'])], ['apps/v1, Kind=Deployment']],
    ['the core group prints with a leading slash', [rule([''], ['v1'], ['pods'])], ['/v1, Kind=Pod']],
    ['a wildcard group skips the rule', [rule(['*'], ['v1'], ['pods'])], []],
    ['a wildcard version skips the rule', [rule(['apps'], ['*'], ['deployments'])], []],
    [
      'wildcard resources and subresources are dropped, the rest kept',
      [rule(['apps'], ['v1'], ['*', 'deployments/status', 'deployments', '*/scale'])],
      ['apps/v1, Kind=Deployment'],
    ],
    ['a rule left without resources is skipped', [rule(['apps'], ['v1'], ['deployments/scale'])], []],
    ['unknown resources resolve to nothing', [rule(['apps'], ['v1'], ['nope'])], []],
    [
      'duplicates collapse; sorted by group, version, kind',
      [
        rule(['apps'], ['v1'], ['replicasets', 'deployments']),
        rule([''], ['v1'], ['pods', 'configmaps']),
        rule(['apps'], ['v1'], ['deployments']),
      ],
      ['/v1, Kind=ConfigMap', '/v1, Kind=Pod', 'apps/v1, Kind=Deployment', 'apps/v1, Kind=ReplicaSet'],
    ],
    [
      'at most 10 kinds, counted in sorted resource order',
      [
        rule(
          ['x'],
          ['v1'],
          Array.from({ length: 12 }, (_, i) => `r${i}`),
        ),
      ],
      ['r0', 'r1', 'r10', 'r11', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'].map((r) => `x/v1, Kind=K${r.slice(1)}`).sort(),
    ],
  ])('%s', (_, rules, want) => {
    expect(names(kindsToCheck(rules, kindsFor))).toEqual(want);
  });

  it('counts duplicates toward the limit of 10', () => {
    const rules = Array.from({ length: 10 }, () => rule(['apps'], ['v1'], ['deployments']));
    rules.push(rule([''], ['v1'], ['pods']));
    expect(names(kindsToCheck(rules, kindsFor))).toEqual(['apps/v1, Kind=Deployment']);
  });
});

const schemaOf = (k: GVK) => {
  const node = schemaFor(k.kind);
  return node && declType(openAPIFromNode(node));
};
const DEPLOYMENT = { group: 'apps', version: 'v1', kind: 'Deployment' };
const REPLICASET = { group: 'apps', version: 'v1', kind: 'ReplicaSet' };

function policy(
  spec: Partial<NonNullable<ValidatingAdmissionPolicy['spec']>>,
  generation = 1,
): ValidatingAdmissionPolicy {
  return {
    metadata: { name: 'p', generation },
    spec: { matchConstraints: { resourceRules: [rule(['apps'], ['v1'], ['deployments'])] }, ...spec },
  };
}

describe('type-check warnings (reference §6.3)', () => {
  it('names the field and the kind, with the issue in cel-go layout', () => {
    const warnings = typeCheck(
      policy({ validations: [{ expression: 'object.spec.replica > 1' }] }),
      [DEPLOYMENT],
      schemaOf,
    );
    expect(warnings).toEqual([
      {
        fieldRef: 'spec.validations[0].expression',
        warning:
          'apps/v1, Kind=Deployment: ERROR: <input>:1:13: No such key: replica\n | object.spec.replica > 1\n | ............^\n',
      },
    ]);
  });

  it('gives no warning for a correct policy, whatever the result type', () => {
    const p = policy({
      validations: [
        { expression: 'object.spec.replicas <= 5', messageExpression: '"too many: " + string(object.spec.replicas)' },
        { expression: 'object.spec.replicas' },
        { expression: 'oldObject == null || request.userInfo.username != ""' },
        { expression: 'has(object.metadata.labels) && namespaceObject.metadata.name != ""' },
        { expression: 'authorizer.group("apps").resource("deployments").check("get").allowed()' },
      ],
    });
    expect(typeCheck(p, [DEPLOYMENT], schemaOf)).toEqual([]);
  });

  it('orders by validation, expression before messageExpression, one block per kind joined by a newline', () => {
    const p = policy({
      validations: [
        { expression: 'true' },
        { expression: 'object.spec.replicas > "1"', messageExpression: 'object.nope' },
      ],
    });
    const warnings = typeCheck(p, [DEPLOYMENT, REPLICASET], schemaOf);
    expect(warnings.map((w) => w.fieldRef)).toEqual([
      'spec.validations[1].expression',
      'spec.validations[1].messageExpression',
    ]);
    const blocks = warnings[0].warning.split('\n\n');
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(/^apps\/v1, Kind=Deployment: ERROR: <input>:1:\d+: no such overload: int > string/);
    expect(blocks[1]).toMatch(/^apps\/v1, Kind=ReplicaSet: ERROR: .*no such overload: int > string/);
  });

  it('declares params only when the paramKind resolves', () => {
    const uses = [{ expression: 'object.spec.replicas <= int(params.data["max"])' }];
    const withConfigMap = policy({ validations: uses, paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } });
    expect(typeCheck(withConfigMap, [DEPLOYMENT], schemaOf)).toEqual([]);
    const withUnknown = policy({ validations: uses, paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' } });
    expect(typeCheck(withUnknown, [DEPLOYMENT], schemaOf)[0].warning).toMatch(/Unknown variable: params/);
  });

  it('types variables from their expressions, in order', () => {
    const p = policy({
      variables: [
        { name: 'replicas', expression: 'object.spec.replicas' },
        { name: 'double', expression: 'variables.replicas * 2' },
        { name: 'containers', expression: 'object.spec.template.spec.containers' },
        { name: 'broken', expression: 'object.nope' },
      ],
      validations: [
        { expression: 'variables.double > 1 && variables.containers.all(c, c.image != "")' },
        { expression: 'variables.other > 1' },
        { expression: 'variables.replicas > "1"' },
        { expression: 'variables.containers.exists(c, c.imag == "")' },
        { expression: 'variables.broken.anything > 1' },
      ],
    });
    const warnings = typeCheck(p, [DEPLOYMENT], schemaOf);
    expect(warnings.map((w) => w.fieldRef)).toEqual([
      'spec.validations[1].expression',
      'spec.validations[2].expression',
      'spec.validations[3].expression',
    ]);
    expect(warnings[0].warning).toMatch(/No such key: other/);
    expect(warnings[1].warning).toMatch(/no such overload: int > string/);
    expect(warnings[2].warning).toMatch(/No such key: imag/);
  });

  it('reports unparseable expressions', () => {
    const warnings = typeCheck(
      policy({ validations: [{ expression: 'object.spec.replicas >' }] }),
      [DEPLOYMENT],
      schemaOf,
    );
    expect(warnings[0].warning).toMatch(/^apps\/v1, Kind=Deployment: ERROR: <input>:1:23: Unexpected token/);
  });

  it('reports a schema the checker cannot declare as a type checking error', () => {
    const broken = { kind: 'object', fields: { spec: { kind: 'object', fields: {} } } } as const;
    // A kind named like a reserved type cannot be declared.
    const warnings = typeCheck(
      policy({ validations: [{ expression: 'true' }] }),
      [{ ...DEPLOYMENT, kind: 'int' }],
      () => broken,
    );
    expect(warnings).toEqual([
      {
        fieldRef: 'spec.validations[0].expression',
        warning: expect.stringMatching(/^apps\/v1, Kind=int: type checking error: .+\n$/),
      },
    ]);
  });

  it('skips kinds without a schema and writes no warnings without kinds', () => {
    const p = policy({ validations: [{ expression: 'object.nope' }] });
    expect(typeCheck(p, [{ group: 'x', version: 'v1', kind: 'Unknown' }], schemaOf)).toEqual([]);
    expect(typeCheck(p, [], schemaOf)).toEqual([]);
  });
});

describe('status and when to check', () => {
  it('sets observedGeneration and replaces typeChecking, keeping conditions', () => {
    const conditions = [{ type: 'X', status: 'True' as const, lastTransitionTime: 't', reason: 'R', message: '' }];
    const p = {
      ...policy({}, 3),
      status: {
        observedGeneration: 2,
        conditions,
        typeChecking: { expressionWarnings: [{ fieldRef: 'a', warning: 'b' }] },
      },
    };
    expect(checkedStatus(p, [])).toEqual({ observedGeneration: 3, conditions, typeChecking: {} });
    expect(checkedStatus(p, [{ fieldRef: 'f', warning: 'w' }]).typeChecking).toEqual({
      expressionWarnings: [{ fieldRef: 'f', warning: 'w' }],
    });
  });

  it.each([
    ['a new policy', undefined, 1, undefined, 'k', true],
    ['a new generation', 1, 2, 'k', 'k', true],
    ['a current generation checked by another process', 2, 2, undefined, 'k', false],
    ['a current generation, schemas unchanged', 2, 2, 'k', 'k', false],
    ['a current generation, schemas changed', 2, 2, 'k', 'k2', true],
  ])('%s → %s', (_, observed, generation, last, now, want) => {
    const p = {
      ...policy({}, generation),
      status: observed === undefined ? undefined : { observedGeneration: observed },
    };
    expect(needsCheck(p, last, now)).toBe(want);
  });
});

describe('the controller definition', () => {
  it('is the reference name, and off by default where the API server runs it', () => {
    const d = statusControllerDefinition;
    expect(d.name).toBe('validatingadmissionpolicy-status-controller');
    expect(selectControllers([d], ['*'], { apiServerControllers: false })).toEqual([d]);
    expect(selectControllers([d], ['*'], { apiServerControllers: true })).toEqual([]);
    expect(selectControllers([d], ['*', d.name], { apiServerControllers: true })).toEqual([d]);
  });
});
