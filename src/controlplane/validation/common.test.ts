import { describe, expect, it } from 'vitest';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain } from '../../api/dns-names.ts';
import {
  isConfigMapKey,
  isDomainPrefixedPath,
  labelSelectorMatches,
  nameIsDNSSubdomain,
  validateAnnotations,
  validateConditions,
  validateLabelSelector,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateSignerName,
} from './common.ts';

const LABEL_REGEX =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_REGEX =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_REGEX =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_REGEX =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('DNS names', () => {
  it.each([
    ['label ok', isDNS1123Label, 'my-name', []],
    ['label uppercase', isDNS1123Label, 'My', [LABEL_REGEX]],
    ['label with dots', isDNS1123Label, 'a.b', ['must not contain dots']],
    ['label too long', isDNS1123Label, 'a'.repeat(64), ['must be no more than 63 bytes']],
    ['subdomain ok', isDNS1123Subdomain, 'example.com', []],
    ['subdomain trailing dash', isDNS1123Subdomain, 'a-', [SUBDOMAIN_REGEX]],
    ['subdomain too long', isDNS1123Subdomain, 'a'.repeat(254), ['must be no more than 253 bytes']],
    ['1035 ok', isDNS1035Label, 'v1beta1', []],
    ['1035 leading digit', isDNS1035Label, '1v', [DNS1035_REGEX]],
  ])('%s', (_n, fn, value, expected) => {
    expect(fn(value)).toEqual(expected);
  });
});

describe('other string formats', () => {
  it('isConfigMapKey', () => {
    expect(isConfigMapKey('controller-manager_host-1')).toEqual([]);
    expect(isConfigMapKey('..a')).toEqual(["must not start with '..'"]);
    expect(isConfigMapKey('a/b')).toEqual([
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ]);
  });

  it('isDomainPrefixedPath', () => {
    expect(isDomainPrefixedPath('spec.controller', 'example.com/ingress')).toEqual([]);
    expect(isDomainPrefixedPath('spec.controller', '')).toEqual([
      { type: 'FieldValueRequired', field: 'spec.controller', message: 'spec.controller: Required value' },
    ]);
    expect(isDomainPrefixedPath('spec.controller', 'nodomain')).toEqual([
      {
        type: 'FieldValueInvalid',
        field: 'spec.controller',
        message: 'spec.controller: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")',
      },
    ]);
    expect(isDomainPrefixedPath('spec.controller', 'example.com/a b')).toEqual([
      {
        type: 'FieldValueInvalid',
        field: 'spec.controller',
        message:
          "spec.controller: Invalid value: \"a b\": Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
      },
    ]);
  });
});

describe('labels, annotations, selectors', () => {
  it('validateLabels reports at the map path', () => {
    expect(validateLabels({ app: 'web' }, 'metadata.labels')).toEqual([]);
    expect(validateLabels({ app: 'a-' }, 'metadata.labels')).toEqual([
      {
        type: 'FieldValueInvalid',
        field: 'metadata.labels',
        message: `metadata.labels: Invalid value: "a-": ${LABEL_VALUE_REGEX}`,
      },
    ]);
  });

  it('validateAnnotations: keys case-insensitive, total size 256 KiB', () => {
    expect(validateAnnotations({ 'Example.com/Key': 'x' }, 'metadata.annotations')).toEqual([]);
    expect(validateAnnotations({ a: 'x'.repeat(256 * 1024) }, 'metadata.annotations')).toEqual([
      {
        type: 'FieldValueTooLong',
        field: 'metadata.annotations',
        message: 'metadata.annotations: Too long: may not be more than 262144 bytes',
      },
    ]);
  });

  it.each([
    ['valid', { matchExpressions: [{ key: 'a', operator: 'In', values: ['x'] }] }, []],
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      [
        {
          type: 'FieldValueRequired',
          field: 's.matchExpressions[0].values',
          message: "s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        },
      ],
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      [
        {
          type: 'FieldValueForbidden',
          field: 's.matchExpressions[0].values',
          message:
            "s.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        },
      ],
    ],
    [
      'unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'Gt' }] },
      [
        {
          type: 'FieldValueInvalid',
          field: 's.matchExpressions[0].operator',
          message: 's.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator',
        },
      ],
    ],
    [
      'invalid value',
      { matchExpressions: [{ key: 'a', operator: 'In', values: ['-x'] }] },
      [
        {
          type: 'FieldValueInvalid',
          field: 's.matchExpressions[0].values[0]',
          message: `s.matchExpressions[0].values[0]: Invalid value: "-x": ${LABEL_VALUE_REGEX}`,
        },
      ],
    ],
  ])('validateLabelSelector %s', (_n, sel, expected) => {
    expect(validateLabelSelector(sel, 's')).toEqual(expected);
  });

  it.each([
    [{ matchLabels: { a: 'x' } }, { a: 'x', b: 'y' }, true],
    [{ matchLabels: { a: 'x' } }, { a: 'y' }, false],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['x'] }] }, {}, true],
    [{ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: '' }, false],
    [{}, {}, true],
    [undefined, { a: 'x' }, false],
  ])('labelSelectorMatches(%j, %j) = %s', (sel, labels, out) => {
    expect(labelSelectorMatches(sel, labels)).toBe(out);
  });
});

describe('metav1 conditions', () => {
  const good = { type: 'Ready', status: 'True', reason: 'Ok', lastTransitionTime: '2025-01-01T00:00:00Z' };
  it('accepts a complete condition', () => {
    expect(validateConditions([good], 'status.conditions')).toEqual([]);
  });
  it.each([
    [
      { ...good, status: 'Yes' },
      'status.conditions[0].status: Unsupported value: "Yes": supported values: "False", "True", "Unknown"',
    ],
    [{ ...good, reason: '' }, 'status.conditions[0].reason: Required value: must be set'],
    [
      { ...good, lastTransitionTime: undefined },
      'status.conditions[0].lastTransitionTime: Required value: must be set',
    ],
    [
      { ...good, reason: '1bad' },
      "status.conditions[0].reason: Invalid value: \"1bad\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
    ],
  ])('rejects %j', (c, message) => {
    expect(validateConditions([c], 'status.conditions').map((e) => e.message)).toEqual([message]);
  });
  it('rejects duplicate types', () => {
    expect(validateConditions([good, good], 'c').map((e) => e.message)).toEqual([
      'c[1].type: Duplicate value: "Ready"',
    ]);
  });
});

describe('ObjectMeta', () => {
  it('accepts a namespaced object with labels and annotations', () => {
    const meta = { name: 'web', namespace: 'default', labels: { app: 'web' }, annotations: { note: 'x' } };
    expect(validateObjectMeta(meta, true, nameIsDNSSubdomain)).toEqual([]);
  });

  it.each([
    [{}, false, 'metadata.name: Required value: name or generateName is required'],
    [{ name: 'Web', namespace: 'd' }, true, `metadata.name: Invalid value: "Web": ${SUBDOMAIN_REGEX}`],
    [{ name: 'web' }, true, 'metadata.namespace: Required value'],
    [{ name: 'web', namespace: 'Bad' }, true, `metadata.namespace: Invalid value: "Bad": ${LABEL_REGEX}`],
    [{ name: 'web', namespace: 'd' }, false, 'metadata.namespace: Forbidden: not allowed on this type'],
    [
      { name: 'web', namespace: 'd', labels: { 'a b': 'x' } },
      true,
      `metadata.labels: Invalid value: "a b": ${NAME_PART_REGEX}`,
    ],
    [
      { name: 'web', namespace: 'd', annotations: { '/x': 'y' } },
      true,
      'metadata.annotations: Invalid value: "/x": prefix part must be non-empty',
    ],
    [
      { name: 'web', namespace: 'd', generation: -1 },
      true,
      'metadata.generation: Invalid value: -1: must be greater than or equal to 0',
    ],
    [
      { name: 'x', namespace: 'd', generateName: 'Web-' },
      true,
      `metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_REGEX}`,
    ],
  ])('rejects %j (namespaced %s)', (meta, namespaced, message) => {
    expect(validateObjectMeta(meta, namespaced, nameIsDNSSubdomain).map((e) => e.message)).toEqual([message]);
  });

  it('generateName ending in a dash is accepted', () => {
    expect(validateObjectMeta({ name: 'web-x1', generateName: 'web-' }, false, nameIsDNSSubdomain)).toEqual([]);
  });

  const old = { name: 'web', namespace: 'd', uid: 'u1', resourceVersion: '5', generation: 2 };
  it('accepts an update that keeps the identity', () => {
    expect(validateObjectMetaUpdate({ ...old, resourceVersion: '5', labels: { a: 'b' } }, old)).toEqual([]);
  });
  it.each([
    [{ ...old, name: 'other' }, 'metadata.name: Invalid value: "other": field is immutable'],
    [{ ...old, uid: 'u2' }, 'metadata.uid: Invalid value: "u2": field is immutable'],
    [{ ...old, resourceVersion: '' }, 'metadata.resourceVersion: Invalid value: "": must be specified for an update'],
    [{ ...old, generation: 1 }, 'metadata.generation: Invalid value: 1: must not be decremented'],
  ])('rejects the update %j', (next, message) => {
    expect(validateObjectMetaUpdate(next, old).map((e) => e.message)).toEqual([message]);
  });
});

describe('signer names', () => {
  it('accepts a domain and a path', () => {
    expect(validateSignerName('spec.signerName', 'example.com/my-signer')).toEqual([]);
  });
  it.each([
    ['', 'spec.signerName: Required value'],
    [
      'nodomain',
      'spec.signerName: Invalid value: "nodomain": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
    ],
    [
      'example/x',
      'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots',
    ],
    ['Example.com/x', `spec.signerName: Invalid value: "Example.com": validating label "Example": ${LABEL_REGEX}`],
    ['example.com/X', `spec.signerName: Invalid value: "X": validating label "X": ${SUBDOMAIN_REGEX}`],
  ])('rejects %j', (name, message) => {
    expect(validateSignerName('spec.signerName', name).map((e) => e.message)).toEqual([message]);
  });
});
