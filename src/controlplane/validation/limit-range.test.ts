import { describe, expect, it } from 'vitest';
import { defaultLimitRange, validateLimitRangeCreate, validateLimitRangeUpdate } from './limit-range.ts';
import { ctx, fieldError } from './test-helpers.ts';

type Item = Record<string, unknown>;
const lr = (...limits: Item[]) => ({
  metadata: { name: 'limits', namespace: 'team-a', resourceVersion: '1' },
  spec: { limits },
});
const err = fieldError;
const item0 = (member: string, name: string) => `spec.limits[0].${member}[${name}]`;

describe('LimitRange item rules', () => {
  it.each([
    [
      'a full container item',
      {
        type: 'Container',
        min: { cpu: '100m', memory: '64Mi' },
        defaultRequest: { cpu: '200m', memory: '128Mi' },
        default: { cpu: '500m', memory: '256Mi' },
        max: { cpu: '2', memory: '1Gi' },
        maxLimitRequestRatio: { cpu: '4' },
      },
    ],
    ['a pod item with min and max', { type: 'Pod', min: { cpu: '100m' }, max: { cpu: '4' } }],
    ['a PVC item with storage max', { type: 'PersistentVolumeClaim', max: { storage: '10Gi' } }],
    ['a custom type', { type: 'example.com/widget', max: { 'example.com/things': '3' } }],
    [
      'huge pages with equal default and request',
      { type: 'Container', default: { 'hugepages-2Mi': '4Mi' }, defaultRequest: { 'hugepages-2Mi': '4Mi' } },
    ],
    [
      'ratio within max/min',
      { type: 'Container', min: { cpu: '500m' }, max: { cpu: '2' }, maxLimitRequestRatio: { cpu: '4' } },
    ],
  ])('accepts %s', (_n, item) => {
    expect(validateLimitRangeCreate(lr(item), ctx)).toEqual([]);
  });

  it.each([
    [
      'an unknown plain type',
      { type: 'Widget' },
      err(
        'FieldValueInvalid',
        'spec.limits[0].type',
        'Invalid value: "Widget": must be a standard limit type or fully qualified',
      ),
    ],
    [
      'default on a Pod item',
      { type: 'Pod', default: { cpu: '1' } },
      err('FieldValueForbidden', 'spec.limits[0].default', "Forbidden: may not be specified when `type` is 'Pod'"),
    ],
    [
      'defaultRequest on a Pod item',
      { type: 'Pod', defaultRequest: { cpu: '1' } },
      err(
        'FieldValueForbidden',
        'spec.limits[0].defaultRequest',
        "Forbidden: may not be specified when `type` is 'Pod'",
      ),
    ],
    [
      'a PVC item without storage bounds',
      { type: 'PersistentVolumeClaim', max: { 'requests.storage': '1Gi' } },
      err(
        'FieldValueRequired',
        'spec.limits[0].limits',
        'Required value: either minimum or maximum storage value is required, but neither was provided',
      ),
    ],
    [
      'min above max',
      { type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } },
      err('FieldValueInvalid', item0('min', 'cpu'), 'Invalid value: "2": min value 2 is greater than max value 1'),
    ],
    [
      'min above defaultRequest',
      { type: 'Container', min: { cpu: '500m' }, defaultRequest: { cpu: '100m' } },
      err(
        'FieldValueInvalid',
        item0('defaultRequest', 'cpu'),
        'Invalid value: "100m": min value 500m is greater than default request value 100m',
      ),
    ],
    [
      'defaultRequest above max',
      { type: 'Container', defaultRequest: { cpu: '2' }, max: { cpu: '1' } },
      err(
        'FieldValueInvalid',
        item0('defaultRequest', 'cpu'),
        'Invalid value: "2": default request value 2 is greater than max value 1',
      ),
    ],
    [
      'defaultRequest above default',
      { type: 'Container', defaultRequest: { memory: '1Gi' }, default: { memory: '512Mi' } },
      err(
        'FieldValueInvalid',
        item0('defaultRequest', 'memory'),
        'Invalid value: "1Gi": default request value 1Gi is greater than default limit value 512Mi',
      ),
    ],
    [
      'min above default',
      { type: 'Container', min: { cpu: '1' }, default: { cpu: '500m' } },
      err(
        'FieldValueInvalid',
        item0('default', 'cpu'),
        'Invalid value: "1": min value 1 is greater than default value 500m',
      ),
    ],
    [
      'default above max',
      { type: 'Container', default: { cpu: '3' }, defaultRequest: { cpu: '1' }, max: { cpu: '2' } },
      err(
        'FieldValueInvalid',
        item0('default', 'cpu'),
        'Invalid value: "2": default value 3 is greater than max value 2',
      ),
    ],
    [
      'a ratio below 1',
      { type: 'Container', maxLimitRequestRatio: { cpu: '0.5' } },
      err(
        'FieldValueInvalid',
        item0('maxLimitRequestRatio', 'cpu'),
        'Invalid value: "500m": ratio 500m is less than 1',
      ),
    ],
    [
      'a ratio above max/min',
      { type: 'Container', min: { cpu: '1' }, max: { cpu: '2' }, maxLimitRequestRatio: { cpu: '3' } },
      err(
        'FieldValueInvalid',
        item0('maxLimitRequestRatio', 'cpu'),
        'Invalid value: "3": ratio 3 is greater than max/min = 2.000000',
      ),
    ],
    [
      'huge pages with default different from request',
      { type: 'Container', default: { 'hugepages-2Mi': '4Mi' }, defaultRequest: { 'hugepages-2Mi': '2Mi' } },
      err(
        'FieldValueInvalid',
        item0('defaultRequest', 'hugepages-2Mi'),
        'Invalid value: "2Mi": default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi',
      ),
    ],
    [
      'a resource not for containers',
      { type: 'Container', max: { pods: '3' } },
      err(
        'FieldValueInvalid',
        item0('max', 'pods'),
        'Invalid value: "pods": must be a standard resource for containers',
      ),
    ],
    [
      'an unqualified unknown resource on a PVC',
      { type: 'PersistentVolumeClaim', max: { storage: '1Gi', widgets: '1' } },
      err(
        'FieldValueInvalid',
        item0('max', 'widgets'),
        'Invalid value: "widgets": must be a standard resource type or fully qualified',
      ),
    ],
    [
      'an unparseable quantity',
      { type: 'Container', max: { cpu: 'two' } },
      err(
        'FieldValueInvalid',
        item0('max', 'cpu'),
        'Invalid value: "two": quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
      ),
    ],
  ])('rejects %s', (_n, item, expected) => {
    expect(validateLimitRangeCreate(lr(item), ctx)).toEqual([expected]);
  });

  it('rejects duplicate types', () => {
    expect(validateLimitRangeCreate(lr({ type: 'Pod' }, { type: 'Pod' }), ctx)).toEqual([
      err('FieldValueDuplicate', 'spec.limits[1].type', 'Duplicate value: "Pod"'),
    ]);
  });

  it('requires limits in a spec and rejects a spec of the wrong type', () => {
    expect(validateLimitRangeCreate({ metadata: { name: 'l', namespace: 'n' }, spec: {} }, ctx)).toEqual([
      err('FieldValueRequired', 'spec.limits', 'Required value'),
    ]);
    expect(validateLimitRangeCreate({ metadata: { name: 'l', namespace: 'n' }, spec: { limits: {} } }, ctx)).toEqual([
      err('FieldValueInvalid', 'spec.limits', 'Invalid value: {}: must be of type array'),
    ]);
  });

  it('validates updates like creates', () => {
    const old = lr({ type: 'Pod' });
    expect(validateLimitRangeUpdate(lr({ type: 'Pod', max: { cpu: '1' } }), old, ctx)).toEqual([]);
    expect(validateLimitRangeUpdate(lr({ type: 'Pod', default: { cpu: '1' } }), old, ctx)).toEqual([
      err('FieldValueForbidden', 'spec.limits[0].default', "Forbidden: may not be specified when `type` is 'Pod'"),
    ]);
  });
});

describe('LimitRange defaulting of Container items', () => {
  it('max → default, default → defaultRequest, min → defaultRequest', () => {
    const o = lr({
      type: 'Container',
      max: { cpu: '2', memory: '1Gi' },
      min: { cpu: '100m', 'ephemeral-storage': '1Gi' },
    });
    defaultLimitRange(o);
    expect(o.spec.limits[0]).toEqual({
      type: 'Container',
      max: { cpu: '2', memory: '1Gi' },
      min: { cpu: '100m', 'ephemeral-storage': '1Gi' },
      default: { cpu: '2', memory: '1Gi' },
      defaultRequest: { cpu: '2', memory: '1Gi', 'ephemeral-storage': '1Gi' },
    });
  });

  it('keeps given defaults and requests, and serializes quantities canonically', () => {
    const o = lr({ type: 'Container', max: { cpu: 1.5 }, default: { cpu: '1000m' }, defaultRequest: { cpu: '0.5' } });
    defaultLimitRange(o);
    expect(o.spec.limits[0]).toEqual({
      type: 'Container',
      max: { cpu: '1500m' },
      default: { cpu: '1' },
      defaultRequest: { cpu: '500m' },
    });
  });

  it('leaves other item types alone', () => {
    const o = lr({ type: 'Pod', max: { cpu: '2' } });
    defaultLimitRange(o);
    expect(o.spec.limits[0]).toEqual({ type: 'Pod', max: { cpu: '2' } });
  });
});
