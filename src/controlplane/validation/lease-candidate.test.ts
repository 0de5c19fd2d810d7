import { describe, expect, it } from 'vitest';
import { validateLeaseCandidateCreate, validateLeaseCandidateUpdate } from './lease-candidate.ts';
import { ctx, fieldError, n } from './test-helpers.ts';

const candidate = (spec: Record<string, unknown>) => ({
  metadata: { name: `${n.controllerManager}-host_1`, namespace: n.systemNamespace, resourceVersion: '1' },
  spec: {
    leaseName: n.controllerManager,
    binaryVersion: '1.33.0',
    emulationVersion: '1.32.0',
    strategy: 'OldestEmulationVersion',
    ...spec,
  },
});
const err = fieldError;

describe('LeaseCandidate', () => {
  it.each([
    ['the default strategy', {}],
    [
      'a third-party strategy without emulationVersion',
      { strategy: 'example.com/custom', emulationVersion: undefined },
    ],
    ['equal versions with pre-release', { binaryVersion: '1.33.0-alpha.1', emulationVersion: '1.33.0-alpha.1' }],
  ])('accepts %s', (_n, spec) => {
    expect(validateLeaseCandidateCreate(candidate(spec), ctx)).toEqual([]);
  });

  it.each([
    ['no leaseName', { leaseName: undefined }, [err('FieldValueRequired', 'spec.leaseName', 'Required value')]],
    ['no binaryVersion', { binaryVersion: '' }, [err('FieldValueRequired', 'spec.binaryVersion', 'Required value')]],
    [
      'a binaryVersion with a leading v',
      { binaryVersion: 'v1.33.0', emulationVersion: undefined, strategy: 'example.com/custom' },
      [err('FieldValueInvalid', 'spec.binaryVersion', 'Invalid value: "v1.33.0": must be a valid semantic version')],
    ],
    [
      'an incomplete emulationVersion',
      { emulationVersion: '1.32' },
      [
        err('FieldValueInvalid', 'spec.emulationVersion', 'Invalid value: "1.32": must be a valid semantic version'),
        err(
          'FieldValueRequired',
          'spec.emulationVersion',
          "Required value: must be specified when `strategy` is 'OldestEmulationVersion'",
        ),
      ],
    ],
    [
      'emulationVersion above binaryVersion',
      { emulationVersion: '1.34.0' },
      [
        err(
          'FieldValueInvalid',
          'spec.binaryVersion',
          'Invalid value: "1.33.0": must be greater than or equal to `emulationVersion`',
        ),
      ],
    ],
    [
      'OldestEmulationVersion without emulationVersion',
      { emulationVersion: undefined },
      [
        err(
          'FieldValueRequired',
          'spec.emulationVersion',
          "Required value: must be specified when `strategy` is 'OldestEmulationVersion'",
        ),
      ],
    ],
    ['no strategy', { strategy: '' }, [err('FieldValueRequired', 'spec.strategy', 'Required value')]],
    [
      'an unqualified unknown strategy',
      { strategy: 'Random' },
      [
        err(
          'FieldValueNotSupported',
          'spec.strategy.strategy',
          'Unsupported value: "Random": supported values: "OldestEmulationVersion"',
        ),
      ],
    ],
  ])('rejects %s', (_n, spec, expected) => {
    expect(validateLeaseCandidateCreate(candidate(spec), ctx)).toEqual(expected);
  });

  it('rejects a name that is not a config-map key', () => {
    const o = candidate({});
    o.metadata.name = 'a/b';
    expect(validateLeaseCandidateCreate(o, ctx)).toEqual([
      err(
        'FieldValueInvalid',
        'metadata.name',
        "Invalid value: \"a/b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      ),
    ]);
  });

  it('keeps leaseName immutable', () => {
    expect(validateLeaseCandidateUpdate(candidate({ binaryVersion: '1.34.0' }), candidate({}), ctx)).toEqual([]);
    expect(validateLeaseCandidateUpdate(candidate({ leaseName: 'other' }), candidate({}), ctx)).toEqual([
      err('FieldValueInvalid', 'spec.leaseName', 'Invalid value: "other": field is immutable'),
    ]);
  });
});
