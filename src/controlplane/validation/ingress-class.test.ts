import { describe, expect, it } from 'vitest';
import { defaultIngressClass, validateIngressClassCreate, validateIngressClassUpdate } from './ingress-class.ts';
import type { Obj } from './raw.ts';
import { ctx, fieldError, type Loose, variant } from './test-helpers.ts';

const valid = (): Loose => ({
  metadata: { name: 'nginx', resourceVersion: '1' },
  spec: {
    controller: 'example.com/ingress-nginx',
    parameters: {
      apiGroup: 'k8s.example.com',
      kind: 'IngressParameters',
      name: 'external',
      scope: 'Namespace',
      namespace: 'ingress',
    },
  },
});
type IC = Loose;
const withChange = (change: (o: IC) => void) => variant(valid, change as (o: Loose) => void) as IC;
const err = fieldError;

describe('IngressClass create', () => {
  it.each([
    ['namespaced parameters', () => {}],
    ['cluster parameters', (o: IC) => (o.spec.parameters = { kind: 'ConfigMap', name: 'c', scope: 'Cluster' })],
    ['no parameters', (o: IC) => delete (o.spec as Obj).parameters],
    ['a controller of 250 bytes', (o: IC) => (o.spec.controller = `example.com/${'a'.repeat(238)}`)],
  ])('accepts %s', (_n, change) => {
    expect(validateIngressClassCreate(withChange(change), ctx)).toEqual([]);
  });

  it.each([
    [
      'a controller over 250 bytes',
      (o: IC) => (o.spec.controller = `example.com/${'a'.repeat(239)}`),
      err('FieldValueTooLong', 'spec.controller', 'Too long: may not be more than 250 bytes'),
    ],
    [
      'a controller without domain',
      (o: IC) => (o.spec.controller = 'nginx'),
      err(
        'FieldValueInvalid',
        'spec.controller',
        'Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
      ),
    ],
    [
      'no controller',
      (o: IC) => delete (o.spec as Obj).controller,
      err('FieldValueRequired', 'spec.controller', 'Required value'),
    ],
    [
      'a parameters kind missing',
      (o: IC) => delete o.spec.parameters.kind,
      err('FieldValueRequired', 'spec.parameters.kind', 'Required value: kind is required'),
    ],
    [
      'a parameters name missing',
      (o: IC) => delete o.spec.parameters.name,
      err('FieldValueRequired', 'spec.parameters.name', 'Required value: name is required'),
    ],
    [
      'a parameters name with a slash',
      (o: IC) => (o.spec.parameters.name = 'a/b'),
      err('FieldValueInvalid', 'spec.parameters.name', 'Invalid value: "a/b": may not contain \'/\''),
    ],
    [
      'an invalid apiGroup',
      (o: IC) => (o.spec.parameters.apiGroup = 'Example'),
      err(
        'FieldValueInvalid',
        'spec.parameters.apiGroup',
        "Invalid value: \"Example\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ),
    ],
    [
      'an unknown scope',
      (o: IC) => (o.spec.parameters.scope = 'Global'),
      err(
        'FieldValueNotSupported',
        'spec.parameters.scope',
        'Unsupported value: "Global": supported values: "Cluster", "Namespace"',
      ),
    ],
    [
      'no scope',
      (o: IC) => delete o.spec.parameters.scope,
      err('FieldValueRequired', 'spec.parameters.scope', 'Required value'),
    ],
    [
      'scope Namespace without namespace',
      (o: IC) => delete o.spec.parameters.namespace,
      err(
        'FieldValueRequired',
        'spec.parameters.namespace',
        "Required value: `parameters.scope` is set to 'Namespace'",
      ),
    ],
    [
      'scope Cluster with a namespace',
      (o: IC) => (o.spec.parameters.scope = 'Cluster'),
      err('FieldValueForbidden', 'spec.parameters.namespace', "Forbidden: `parameters.scope` is set to 'Cluster'"),
    ],
    [
      'parameters of the wrong type',
      (o: IC) => ((o.spec as Obj).parameters = 'x'),
      err('FieldValueInvalid', 'spec.parameters', 'Invalid value: "x": must be of type object'),
    ],
  ])('rejects %s', (_n, change, expected) => {
    expect(validateIngressClassCreate(withChange(change), ctx)).toEqual([expected]);
  });
});

describe('IngressClass update and defaults', () => {
  it('keeps the controller immutable', () => {
    expect(validateIngressClassUpdate(valid(), valid(), ctx)).toEqual([]);
    const next = withChange((o) => (o.spec.controller = 'example.com/other'));
    expect(validateIngressClassUpdate(next, valid(), ctx)).toEqual([
      err('FieldValueInvalid', 'spec.controller', 'Invalid value: "example.com/other": field is immutable'),
    ]);
  });

  it('defaults the parameters scope to Cluster', () => {
    const o = { spec: { controller: 'example.com/x', parameters: { kind: 'K', name: 'n' } } };
    defaultIngressClass(o);
    expect(o.spec.parameters).toEqual({ kind: 'K', name: 'n', scope: 'Cluster' });
    const none = { spec: { controller: 'example.com/x' } };
    defaultIngressClass(none);
    expect(none).toEqual({ spec: { controller: 'example.com/x' } });
  });
});
