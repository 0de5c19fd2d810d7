import { describe, expect, it } from 'vitest';
import type { ValidatingAdmissionPolicySpec } from '../../api/types/admission.ts';
import { Authorizer } from '../../cel/ext/authorizer.ts';
import { metered, PER_CALL_COST_LIMIT, toCel } from '../../cel/values.ts';
import { compilePolicy, evaluatePolicy, type Outcome } from './evaluate.ts';

const object = toCel({
  metadata: { name: 'web', labels: { team: 'a' } },
  spec: { replicas: 5, items: Array(3000).fill(1) },
});
const params = toCel({ data: { max: '3' } });
const authorizer = new Authorizer({ username: 'u', groups: [] }, () => ({ allowed: true, reason: 'allowed' }), {
  group: '',
  resource: 'configmaps',
});
const context = {
  object,
  oldObject: null,
  params,
  request: toCel({ operation: 'CREATE' }),
  namespaceObject: null,
  authorizer,
};

function evaluate(spec: Partial<ValidatingAdmissionPolicySpec>): Outcome {
  const policy = compilePolicy({ metadata: { name: 'p' }, spec: { matchConstraints: {}, ...spec } });
  return evaluatePolicy(policy, context);
}
const v = (expression: string, more: object = {}) => ({ validations: [{ expression, ...more }] });

describe('validations', () => {
  it.each<[string, Partial<ValidatingAdmissionPolicySpec>, Outcome['failures']]>([
    ['true passes', v('object.spec.replicas > 0'), []],
    [
      'validations see the authorizer',
      v('authorizer.path("/").check("get").reason() != "allowed"'),
      [
        {
          message: 'failed expression: authorizer.path("/").check("get").reason() != "allowed"',
          reason: 'Invalid',
          index: 0,
        },
      ],
    ],
    [
      'false fails with the default message and reason',
      v('object.spec.replicas < 3'),
      [{ message: 'failed expression: object.spec.replicas < 3', reason: 'Invalid', index: 0 }],
    ],
    [
      'a non-bool result fails',
      v('object.spec.replicas'),
      [{ message: 'failed expression: object.spec.replicas', reason: 'Invalid', index: 0 }],
    ],
    [
      'message and reason',
      v('false', { message: 'no', reason: 'Forbidden' }),
      [{ message: 'no', reason: 'Forbidden', index: 0 }],
    ],
    [
      'messageExpression takes precedence',
      v('object.spec.replicas <= int(params.data.max)', {
        message: 'm',
        messageExpression: '"replicas " + string(object.spec.replicas) + " > " + params.data.max',
      }),
      [{ message: 'replicas 5 > 3', reason: 'Invalid', index: 0 }],
    ],
    [
      'a blank messageExpression falls back to message',
      v('false', { message: 'm', messageExpression: '"  "' }),
      [{ message: 'm', reason: 'Invalid', index: 0 }],
    ],
    [
      'a multi-line messageExpression falls back',
      v('false', { message: 'm', messageExpression: '"a\\nb"' }),
      [{ message: 'm', reason: 'Invalid', index: 0 }],
    ],
    [
      'messageExpression has no authorizer',
      v('false', { message: 'm', messageExpression: 'authorizer.path("/").check("get").reason()' }),
      [{ message: 'm', reason: 'Invalid', index: 0 }],
    ],
    [
      'an erroring messageExpression falls back',
      v('false', { message: 'm', messageExpression: 'object.nope' }),
      [{ message: 'm', reason: 'Invalid', index: 0 }],
    ],
    [
      'a runtime error fails under Fail',
      v('object.spec.nope > 1'),
      [
        {
          message: "expression 'object.spec.nope > 1' resulted in error: No such key: nope",
          reason: 'Invalid',
          index: 0,
        },
      ],
    ],
    ['a runtime error is ignored under Ignore', { ...v('object.spec.nope > 1'), failurePolicy: 'Ignore' }, []],
    [
      'a compile error fails under Fail',
      v('object.spec.replicas >'),
      [
        {
          message: expect.stringMatching(
            /^expression 'object.spec.replicas >' resulted in error: compilation failed: ERROR: <input>:1:23: Unexpected token/,
          ) as unknown as string,
          reason: 'Invalid',
          index: 0,
        },
      ],
    ],
    [
      'an expression over the cost limit fails',
      v('object.spec.items.all(x, object.spec.items.all(y, x == y))'),
      [
        {
          message: expect.stringMatching(/actual cost limit exceeded/) as unknown as string,
          reason: 'Invalid',
          index: 0,
        },
      ],
    ],
    [
      'variables are computed when used',
      {
        variables: [
          { name: 'max', expression: 'int(params.data.max)' },
          { name: 'over', expression: 'object.spec.replicas > variables.max' },
        ],
        ...v('!variables.over'),
      },
      [{ message: 'failed expression: !variables.over', reason: 'Invalid', index: 0 }],
    ],
    [
      'an unused failing variable costs nothing',
      { variables: [{ name: 'broken', expression: 'object.nope' }], ...v('true') },
      [],
    ],
  ])('%s', (_, spec, failures) => {
    const out = evaluate(spec);
    expect(out.applies).toBe(true);
    expect(out.failures).toEqual(failures);
  });
});

describe('match conditions', () => {
  const m = (...expressions: string[]) => expressions.map((expression, i) => ({ name: `c${i}`, expression }));
  it.each<[string, string[], 'Fail' | 'Ignore', boolean, number]>([
    ['all true: evaluated', ['true', 'object.spec.replicas > 1'], 'Fail', true, 1],
    ['any false: skipped', ['true', 'false'], 'Fail', false, 0],
    ['false wins over an error', ['object.nope', 'false'], 'Fail', false, 0],
    ['an error with none false rejects under Fail', ['object.nope', 'true'], 'Fail', true, 1],
    ['an error with none false skips under Ignore', ['object.nope', 'true'], 'Ignore', false, 0],
    ['empty matches all', [], 'Fail', true, 1],
  ])('%s', (_, conditions, failurePolicy, applies, failures) => {
    const out = evaluate({ matchConditions: m(...conditions), failurePolicy, ...v('false') });
    expect(out.applies).toBe(applies);
    expect(out.failures).toHaveLength(failures);
  });

  it('names the failing condition', () => {
    const out = evaluate({ matchConditions: m('object.nope'), ...v('true') });
    expect(out.failures[0].message).toBe("matchCondition 'c0' resulted in error: No such key: nope");
  });
});

describe('audit annotations', () => {
  it.each<[string, string, Record<string, string>, number]>([
    ['a string is recorded', '"replicas=" + string(object.spec.replicas)', { k: 'replicas=5' }, 0],
    ['null omits it', 'null', {}, 0],
    ['an empty string omits it', '""', {}, 0],
    ['another type is an error under Fail', '1', {}, 1],
  ])('%s', (_, valueExpression, annotations, failures) => {
    const out = evaluate({ auditAnnotations: [{ key: 'k', valueExpression }] });
    expect(out.annotations).toEqual(annotations);
    expect(out.failures).toHaveLength(failures);
  });

  it('truncates to 10 KiB', () => {
    const out = evaluate({
      auditAnnotations: [{ key: 'k', valueExpression: 'object.spec.items.map(x, "abcdefghij").join("")' }],
    });
    expect(out.annotations.k).toHaveLength(10 * 1024);
  });
});

describe('the policy cost budget', () => {
  const policy = compilePolicy({
    metadata: { name: 'p' },
    spec: {
      matchConstraints: {},
      validations: [
        { expression: 'object.spec.items.all(x, x == 1)' },
        { expression: 'object.spec.items.all(x, x == 1)' },
        { expression: 'false', message: 'never reached' },
      ],
    },
  });
  /** What one of the loops costs. */
  const one = () => {
    const first = policy.validations[0].compiled;
    if (!('program' in first)) throw new Error(first.error);
    return metered(PER_CALL_COST_LIMIT, () => first.program(context)).cost;
  };

  it('stops further validations once spent, under Fail with the reference message', () => {
    const out = evaluatePolicy(policy, context, Math.floor(one() * 1.5));
    expect(out.failures).toEqual([
      {
        message: 'validation failed due to running out of cost budget, no further validation rules will be run',
        reason: 'Invalid',
        index: 1,
      },
    ]);
  });

  it('lets every validation run within the budget', () => {
    expect(one()).toBeGreaterThan(3000);
    expect(evaluatePolicy(policy, context, one() * 3).failures.map((f) => f.message)).toEqual(['never reached']);
  });
});
