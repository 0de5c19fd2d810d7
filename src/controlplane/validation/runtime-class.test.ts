import { describe, expect, it } from 'vitest';
import type { Obj } from './raw.ts';
import { validateRuntimeClassCreate, validateRuntimeClassUpdate } from './runtime-class.ts';
import { ctx, fieldError, type Loose, variant } from './test-helpers.ts';

const valid = (): Loose => ({
  metadata: { name: 'gvisor', resourceVersion: '1' },
  handler: 'runsc',
  overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
  scheduling: {
    nodeSelector: { sandbox: 'gvisor' },
    tolerations: [{ key: 'sandbox', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' }],
  },
});
type RC = Loose;
const withChange = (change: (o: RC) => void) => variant(valid, change as (o: Loose) => void) as RC;
const err = fieldError;
const LABEL_REGEX =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('RuntimeClass create', () => {
  it.each([
    ['a full class', () => {}],
    ['a match-all toleration', (o: RC) => (o.scheduling.tolerations = [{ operator: 'Exists' }])],
    ['no overhead or scheduling', (o: RC) => delete (o as Obj).overhead && delete (o as Obj).scheduling],
    [
      'an extended resource in the overhead',
      (o: RC) => (o.overhead.podFixed = { cpu: '1', 'example.com/gpu': '1' } as never),
    ],
  ])('accepts %s', (_n, change) => {
    expect(validateRuntimeClassCreate(withChange(change), ctx)).toEqual([]);
  });

  it.each([
    [
      'an uppercase handler',
      (o: RC) => (o.handler = 'Runsc'),
      err('FieldValueInvalid', 'handler', `Invalid value: "Runsc": ${LABEL_REGEX}`),
    ],
    [
      'a handler with dots',
      (o: RC) => (o.handler = 'run.sc'),
      err('FieldValueInvalid', 'handler', 'Invalid value: "run.sc": must not contain dots'),
    ],
    [
      'no handler',
      (o: RC) => delete (o as Obj).handler,
      err('FieldValueInvalid', 'handler', `Invalid value: "": ${LABEL_REGEX}`),
    ],
    [
      'a negative overhead',
      (o: RC) => (o.overhead.podFixed.cpu = '-1'),
      err('FieldValueInvalid', 'overhead.limits[cpu]', 'Invalid value: "-1": must be greater than or equal to 0'),
    ],
    [
      'an unparseable overhead',
      (o: RC) => (o.overhead.podFixed.memory = 'lots'),
      err(
        'FieldValueInvalid',
        'overhead.podFixed[memory]',
        'Invalid value: "lots": quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
      ),
    ],
    [
      'a non-container resource name',
      (o: RC) => (o.overhead.podFixed = { pods: '1' } as never),
      err(
        'FieldValueInvalid',
        'overhead.limits[pods]',
        'Invalid value: "pods": must be a standard resource for containers',
      ),
    ],
    [
      'a fractional extended resource',
      (o: RC) => (o.overhead.podFixed = { cpu: '1', 'example.com/gpu': '500m' } as never),
      err('FieldValueInvalid', 'overhead.limits[example.com/gpu]', 'Invalid value: "500m": must be an integer'),
    ],
    [
      'huge pages without cpu or memory',
      (o: RC) => (o.overhead.podFixed = { 'hugepages-2Mi': '2Mi' } as never),
      err('FieldValueForbidden', 'overhead', 'Forbidden: HugePages require cpu or memory'),
    ],
    [
      'an invalid node selector value',
      (o: RC) => (o.scheduling.nodeSelector.sandbox = '-x'),
      err(
        'FieldValueInvalid',
        'scheduling.nodeSelector',
        "Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ),
    ],
    [
      'a duplicate toleration',
      (o: RC) => o.scheduling.tolerations.push({ ...o.scheduling.tolerations[0] }),
      err(
        'FieldValueDuplicate',
        'scheduling.tolerations[1]',
        'Duplicate value: {"effect":"NoSchedule","key":"sandbox","operator":"Equal","value":"gvisor"}',
      ),
    ],
    [
      'Exists with a value',
      (o: RC) => (o.scheduling.tolerations[0].operator = 'Exists'),
      err(
        'FieldValueInvalid',
        'scheduling.tolerations[0].operator',
        'Invalid value: {"effect":"NoSchedule","key":"sandbox","operator":"Exists","value":"gvisor"}: value must be empty when `operator` is \'Exists\'',
      ),
    ],
    [
      'an empty key without Exists',
      (o: RC) => (o.scheduling.tolerations = [{ operator: 'Equal' }]),
      err(
        'FieldValueInvalid',
        'scheduling.tolerations[0].operator',
        'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      ),
    ],
    [
      'tolerationSeconds without NoExecute',
      (o: RC) => (o.scheduling.tolerations[0].tolerationSeconds = 30),
      err(
        'FieldValueInvalid',
        'scheduling.tolerations[0].effect',
        'Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
      ),
    ],
    [
      'an unknown toleration effect',
      (o: RC) => (o.scheduling.tolerations[0].effect = 'Never'),
      err(
        'FieldValueNotSupported',
        'scheduling.tolerations[0].effect',
        'Unsupported value: "Never": supported values: "NoExecute", "NoSchedule", "PreferNoSchedule"',
      ),
    ],
  ])('rejects %s', (_n, change, expected) => {
    expect(validateRuntimeClassCreate(withChange(change), ctx)).toEqual([expected]);
  });
});

describe('RuntimeClass update', () => {
  it('keeps the handler immutable', () => {
    expect(validateRuntimeClassUpdate(valid(), valid(), ctx)).toEqual([]);
    expect(
      validateRuntimeClassUpdate(
        withChange((o) => (o.handler = 'kata')),
        valid(),
        ctx,
      ),
    ).toEqual([err('FieldValueInvalid', 'handler', 'Invalid value: "kata": field is immutable')]);
  });
});
