import { describe, expect, it } from 'vitest';
import { schemaFor } from '../../src/api/schema.ts';
import type { NamedRuleWithOperations, ValidatingAdmissionPolicy } from '../../src/api/types/admission.ts';
import { declType, openAPIFromNode } from '../../src/cel/schema-types.ts';
import { selectControllers } from '../../src/controller/controller.ts';
import { statusControllerDefinition } from './controller.ts';
import { checkedStatus, type GVK, type GVR, gvkString, kindsToCheck, needsCheck } from './core.ts';
import { typeCheck } from './type-check.ts';

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
          "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^\n",
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
    expect(blocks[0]).toMatch(/^apps\/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_'/);
    expect(blocks[1]).toMatch(/^apps\/v1, Kind=ReplicaSet: ERROR: <input>:1:22: found no matching overload for '_>_'/);
  });

  it('declares params only when the paramKind resolves', () => {
    const uses = [{ expression: 'object.spec.replicas <= int(params.data["max"])' }];
    const withConfigMap = policy({ validations: uses, paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } });
    expect(typeCheck(withConfigMap, [DEPLOYMENT], schemaOf)).toEqual([]);
    const withUnknown = policy({ validations: uses, paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' } });
    expect(typeCheck(withUnknown, [DEPLOYMENT], schemaOf)[0].warning).toMatch(
      /undeclared reference to 'params' \(in container ''\)/,
    );
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
    expect(warnings[0].warning).toMatch(/undefined field 'other'/);
    expect(warnings[1].warning).toMatch(/found no matching overload for '_>_' applied to '\(int, string\)'/);
    expect(warnings[2].warning).toMatch(/undefined field 'imag'/);
  });

  // Warnings a real kube-apiserver v1.37.2 wrote (its kube-controller-manager's status controller), whole. The
  // reference names object types after the kind plus a number that changes with every check
  // (`Deployment30881981.spec.selector`); that number is the one part left out of the comparison.
  const sansNumber = (w: string) => w.replace(/\b(Deployment|ReplicaSet)\d+\./g, '$1.');
  it.each<[string, string]>([
    [
      "object.spec.replicas > 'a'",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > 'a'\n | .....................^\n",
    ],
    [
      "object.spec.foo == 1 && object.spec.replicas > 'a'",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'foo'\n | object.spec.foo == 1 && object.spec.replicas > 'a'\n | ...........^\nERROR: <input>:1:46: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.foo == 1 && object.spec.replicas > 'a'\n | .............................................^\n",
    ],
    [
      'object.spec.replicas.foo == 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:21: type 'int' does not support field selection\n | object.spec.replicas.foo == 1\n | ....................^\n",
    ],
    [
      'size(object.spec.replicas) > 0',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'\n | size(object.spec.replicas) > 0\n | ....^\n",
    ],
    [
      'object.spec.replicas ? true : false',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_?_:_' applied to '(int, bool, bool)'\n | object.spec.replicas ? true : false\n | .....................^\n",
    ],
    [
      'object.spec.replicas && true',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: expected type 'bool' but found 'int'\n | object.spec.replicas && true\n | ...........^\n",
    ],
    [
      'object.spec.selector > 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(Deployment30881981.spec.selector, int)'\n | object.spec.selector > 1\n | .....................^\n",
    ],
    [
      'object.spec.replicas.all(x, x > 1)',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.spec.replicas.all(x, x > 1)\n | ...........^\n",
    ],
    [
      "object.metadata.name == 'é' && object.spec.foo == 1",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:43: undefined field 'foo'\n | object.metadata.name == 'é' && object.spec.foo == 1\n | .........................．................^\n",
    ],
    [
      "object.spec.template.spec.containers['a'].image == 'x'",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:37: found no matching overload for '_[_]' applied to '(list(Deployment283019982.spec.template.spec.containers.@idx), string)'\n | object.spec.template.spec.containers['a'].image == 'x'\n | ....................................^\n",
    ],
    [
      "-object.metadata.name == 'a'",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:1: found no matching overload for '-_' applied to '(string)'\n | -object.metadata.name == 'a'\n | ^\n",
    ],
    [
      '\tobject.spec.foo == 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:13: undefined field 'foo'\n |  object.spec.foo == 1\n | ............^\n",
    ],
    [
      'object.spec.replicas == null',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(int, null)'\n | object.spec.replicas == null\n | .....................^\n",
    ],
    [
      'object.metadata.creationTimestamp > 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:35: found no matching overload for '_>_' applied to '(timestamp, int)'\n | object.metadata.creationTimestamp > 1\n | ..................................^\n",
    ],
    [
      'object.spec.template.spec.containers.all(c, c.name)',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:46: expected type 'bool' but found 'string'\n | object.spec.template.spec.containers.all(c, c.name)\n | .............................................^\n",
    ],
    [
      'object.spec.template.spec.containers.filter(c, c.name).size() > 0',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:44: found no matching overload for '_?_:_' applied to '(string, list(Deployment265814843.spec.template.spec.containers.@idx), list(Deployment265814843.spec.template.spec.containers.@idx))'\n | object.spec.template.spec.containers.filter(c, c.name).size() > 0\n | ...........................................^\n",
    ],
    [
      'object.spec.template.spec.containers.exists_one(c, c.name)',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:48: found no matching overload for '_?_:_' applied to '(string, int, int)'\n | object.spec.template.spec.containers.exists_one(c, c.name)\n | ...............................................^\n",
    ],
    [
      "object.spec.replicas.startsWith('a')",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:32: found no matching overload for 'startsWith' applied to 'int.(string)'\n | object.spec.replicas.startsWith('a')\n | ...............................^\n",
    ],
    [
      "object.spec.foo == 2 ||\nobject.spec.replicas > 'a' ||\n  object.spec.bar == 3",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'foo'\n | object.spec.foo == 2 ||\n | ...........^\nERROR: <input>:2:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > 'a' ||\n | .....................^\nERROR: <input>:3:14: undefined field 'bar'\n |   object.spec.bar == 3\n | .............^\n",
    ],
    [
      'object.spec.replicas in object.metadata.name',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '@in' applied to '(int, string)'\n | object.spec.replicas in object.metadata.name\n | .....................^\n",
    ],
    [
      "'😀' == object.metadata.name && object.spec.foo == 1",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:43: undefined field 'foo'\n | '😀' == object.metadata.name && object.spec.foo == 1\n | .．........................................^\n",
    ],
    [
      'object.spec.paused || object.spec.replicas',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:34: expected type 'bool' but found 'int'\n | object.spec.paused || object.spec.replicas\n | .................................^\n",
    ],
    [
      'object.metadata.labels > 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:24: found no matching overload for '_>_' applied to '(map(string, string), int)'\n | object.metadata.labels > 1\n | .......................^\n",
    ],
    [
      'object.spec.replicas.size() > 0',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:26: found no matching overload for 'size' applied to 'int.()'\n | object.spec.replicas.size() > 0\n | .........................^\n",
    ],
    [
      'has(object.spec.foo)',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:4: undefined field 'foo'\n | has(object.spec.foo)\n | ...^\n",
    ],
    [
      'has(object.spec.replicas.foo)',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:4: type 'int' does not support field selection\n | has(object.spec.replicas.foo)\n | ...^\n",
    ],
    [
      'has(object.spec.foo.bar)',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:16: undefined field 'foo'\n | has(object.spec.foo.bar)\n | ...............^\n",
    ],
    [
      'object.spec.template.spec.containers.all(c, has(c.foo))',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:48: undefined field 'foo'\n | object.spec.template.spec.containers.all(c, has(c.foo))\n | ...............................................^\n",
    ],
    [
      'has(object.metadata.labels.foo) && has(object.spec.selector.matchLabels.x.y)',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:39: type 'string' does not support field selection\n | has(object.metadata.labels.foo) && has(object.spec.selector.matchLabels.x.y)\n | ......................................^\n",
    ],
    [
      'object.spec.?foo.orValue(1) == 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'foo'\n | object.spec.?foo.orValue(1) == 1\n | ...........^\n",
    ],
    [
      "object.metadata.labels[1] == 'a'",
      "apps/v1, Kind=Deployment: ERROR: <input>:1:23: found no matching overload for '_[_]' applied to '(map(string, string), int)'\n | object.metadata.labels[1] == 'a'\n | ......................^\n",
    ],
    [
      '(object.spec.replicas ? object.spec.foo : 1) == 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:23: found no matching overload for '_?_:_' applied to '(int, !error!, int)'\n | (object.spec.replicas ? object.spec.foo : 1) == 1\n | ......................^\nERROR: <input>:1:36: undefined field 'foo'\n | (object.spec.replicas ? object.spec.foo : 1) == 1\n | ...................................^\n",
    ],
    [
      'object.spec.template.spec.containers.map(c, c.name, c.foo).size() > 0',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:41: found no matching overload for '_?_:_' applied to '(string, list(!error!), list(!error!))'\n | object.spec.template.spec.containers.map(c, c.name, c.foo).size() > 0\n | ........................................^\nERROR: <input>:1:54: undefined field 'foo'\n | object.spec.template.spec.containers.map(c, c.name, c.foo).size() > 0\n | .....................................................^\n",
    ],
    [
      'object.spec.foo.bar.baz == 1 && object.spec.replicas.x == 1',
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'foo'\n | object.spec.foo.bar.baz == 1 && object.spec.replicas.x == 1\n | ...........^\nERROR: <input>:1:53: type 'int' does not support field selection\n | object.spec.foo.bar.baz == 1 && object.spec.replicas.x == 1\n | ....................................................^\n",
    ],
  ])('as a real cluster words it: %j', (expression, real) => {
    const [w] = typeCheck(policy({ validations: [{ expression }] }), [DEPLOYMENT], schemaOf);
    expect(w?.warning).toBe(sansNumber(real));
  });

  it('as a real cluster words it for two kinds: one block per kind, every issue in each', () => {
    const real =
      "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > 'a' && object.spec.foo == 1\n | .....................^\nERROR: <input>:1:42: undefined field 'foo'\n | object.spec.replicas > 'a' && object.spec.foo == 1\n | .........................................^\n\napps/v1, Kind=ReplicaSet: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > 'a' && object.spec.foo == 1\n | .....................^\nERROR: <input>:1:42: undefined field 'foo'\n | object.spec.replicas > 'a' && object.spec.foo == 1\n | .........................................^\n";
    const expression = "object.spec.replicas > 'a' && object.spec.foo == 1";
    const [w] = typeCheck(policy({ validations: [{ expression }] }), [DEPLOYMENT, REPLICASET], schemaOf);
    expect(w?.warning).toBe(real);
  });

  it('names the first 100 issues of an expression and counts the rest, as cel-go does', () => {
    const expression = Array.from({ length: 102 }, (_, i) => `object.spec.f${i} == 1`).join(' && ');
    const [w] = typeCheck(policy({ validations: [{ expression }] }), [DEPLOYMENT], schemaOf);
    expect(w?.warning.match(/ERROR: <input>/g)).toHaveLength(100);
    expect(w?.warning).toMatch(/undefined field 'f99'\n.*\n.*\^\n2 more errors were truncated\n$/);
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
