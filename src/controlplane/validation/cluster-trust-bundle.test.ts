import { beforeAll, describe, expect, it } from 'vitest';
import {
  clusterTrustBundleNameFn,
  MAX_TRUST_BUNDLE_SIZE,
  validateClusterTrustBundleCreate,
  validateClusterTrustBundleUpdate,
} from './cluster-trust-bundle.ts';
import { certPem, csrPem, ctx, fieldError, n, toPem } from './test-helpers.ts';

let ca1: string;
let ca2: string;
let leaf: string;
let noConstraints: string;
let request: string;

beforeAll(async () => {
  [ca1, ca2, leaf, noConstraints, request] = await Promise.all([
    certPem(true, 'ca-1'),
    certPem(true, 'ca-2'),
    certPem(false, 'leaf'),
    certPem('none', 'bare'),
    csrPem(),
  ]);
});

const signer = 'example.com/my-signer';
const bundle = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: `certificates.${n.groupSuffix}/v1`,
  kind: 'ClusterTrustBundle',
  metadata: { name, resourceVersion: '1' },
  spec,
});
const err = fieldError;
const invalidBundle = (detail: string) =>
  err('FieldValueInvalid', 'spec.trustBundle', `Invalid value: "<value omitted>": ${detail}`);

const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('names', () => {
  it.each([
    ['a signer-prefixed name', 'example.com:my-signer:bundle-1', { signerName: signer }],
    ['a plain name without signer', 'my-bundle', {}],
  ])('accepts %s', (_n, name, spec) => {
    expect(validateClusterTrustBundleCreate(bundle(name, { ...spec, trustBundle: ca1 }), ctx)).toEqual([]);
  });

  it.each([
    [
      'a name without the signer prefix',
      'look-ma-no-prefix',
      { signerName: signer },
      err(
        'FieldValueInvalid',
        'metadata.name',
        'Invalid value: "look-ma-no-prefix": ClusterTrustBundle for signerName example.com/my-signer must be named with prefix example.com:my-signer:',
      ),
    ],
    [
      'an empty suffix',
      'example.com:my-signer:',
      { signerName: signer },
      err('FieldValueInvalid', 'metadata.name', `Invalid value: "example.com:my-signer:": ${SUBDOMAIN_REGEX}`),
    ],
    [
      'an uppercase suffix',
      'example.com:my-signer:Bad',
      { signerName: signer },
      err('FieldValueInvalid', 'metadata.name', `Invalid value: "example.com:my-signer:Bad": ${SUBDOMAIN_REGEX}`),
    ],
    [
      'a colon without signer',
      'example.com:bar:foo',
      {},
      err(
        'FieldValueInvalid',
        'metadata.name',
        'Invalid value: "example.com:bar:foo": ClusterTrustBundle without signer name must not have ":" in its name',
      ),
    ],
    [
      'an invalid signer name',
      'nosigner:x',
      { signerName: 'nosigner' },
      err(
        'FieldValueInvalid',
        'spec.signerName',
        'Invalid value: "nosigner": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
      ),
    ],
  ])('rejects %s', (_n, name, spec, expected) => {
    expect(validateClusterTrustBundleCreate(bundle(name, { ...spec, trustBundle: ca1 }), ctx)).toEqual([expected]);
  });

  it('applies the prefix rule to generateName', () => {
    expect(clusterTrustBundleNameFn(signer)('example.com:my-signer:gen-', true)).toEqual([]);
  });
});

describe('trust bundle content', () => {
  it('accepts several CA certificates with text between them', () => {
    expect(validateClusterTrustBundleCreate(bundle('b', { trustBundle: `# one\n${ca1}# two\n${ca2}` }), ctx)).toEqual(
      [],
    );
  });

  it.each([
    ['a non-certificate block', () => ca1 + request, 'entry 1 has bad block type: CERTIFICATE REQUEST'],
    [
      'a block with headers',
      () => toPem('CERTIFICATE', Buffer.from(ca1.split('\n').slice(1, -2).join(''), 'base64'), 'Key: v\n\n'),
      'entry 0 has PEM block headers',
    ],
    [
      'an unparseable certificate',
      () => toPem('CERTIFICATE', new Uint8Array([1, 2, 3])),
      'entry 0 does not parse as X.509',
    ],
    ['a certificate without the CA bit', () => leaf, 'entry 0 does not have the CA bit set'],
    ['a certificate without basic constraints', () => noConstraints, 'entry 0 does not have the CA bit set'],
    ['no certificate at all', () => 'no pem here', 'at least one trust anchor must be provided'],
    ['a duplicate certificate', () => ca1 + ca2 + ca1, 'duplicate trust anchor (indices [0 2])'],
  ])('rejects %s', (_n, make, detail) => {
    expect(validateClusterTrustBundleCreate(bundle('b', { trustBundle: make() }), ctx)).toEqual([
      invalidBundle(detail),
    ]);
  });

  it('rejects a bundle over 1 MiB', () => {
    const big = `${'#'.repeat(MAX_TRUST_BUNDLE_SIZE)}\n${ca1}`;
    expect(validateClusterTrustBundleCreate(bundle('b', { trustBundle: big }), ctx)).toEqual([
      err('FieldValueTooLong', 'spec.trustBundle', 'Too long: may not be more than 1048576 bytes'),
    ]);
  });

  it('requires the spec and rejects the wrong types', () => {
    expect(validateClusterTrustBundleCreate({ metadata: { name: 'b' } }, ctx)).toEqual([
      err('FieldValueRequired', 'spec', 'Required value'),
    ]);
    expect(validateClusterTrustBundleCreate(bundle('b', { trustBundle: 7 }), ctx)).toEqual([
      err('FieldValueInvalid', 'spec.trustBundle', 'Invalid value: 7: must be of type string'),
    ]);
  });
});

describe('updates', () => {
  it('keeps signerName immutable', () => {
    const old = bundle('example.com:my-signer:b', { signerName: signer, trustBundle: ca1 });
    const next = bundle('example.com:my-signer:b', { signerName: 'example.com/other', trustBundle: ca1 });
    expect(validateClusterTrustBundleUpdate(next, old, ctx)).toContainEqual(
      err('FieldValueInvalid', 'spec.signerName', 'Invalid value: "example.com/other": field is immutable'),
    );
  });

  it('does not re-check an unchanged bundle, checks a changed one', () => {
    const stored = bundle('b', { trustBundle: leaf });
    expect(validateClusterTrustBundleUpdate(bundle('b', { trustBundle: leaf }), stored, ctx)).toEqual([]);
    expect(validateClusterTrustBundleUpdate(bundle('b', { trustBundle: `${leaf}\n` }), stored, ctx)).toEqual([
      invalidBundle('entry 0 does not have the CA bit set'),
    ]);
  });
});
