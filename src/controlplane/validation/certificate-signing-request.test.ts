import { beforeAll, describe, expect, it } from 'vitest';
import { goQuote } from '../../api/field-errors.ts';
import { pemToDer } from '../../pki/pem.ts';
import {
  defaultCsrConditions,
  validateCertificateSigningRequestApprovalUpdate,
  validateCertificateSigningRequestCreate,
  validateCertificateSigningRequestStatusUpdate,
  validateCertificateSigningRequestUpdate,
} from './certificate-signing-request.ts';
import { clone, type Obj } from './raw.ts';
import { b64, certPem, csrPem, ctx, fieldError, n, tamperedCsrPem, toPem } from './test-helpers.ts';

/** The certificate with one bit of its P-256 public key's x coordinate flipped. */
function keyOffCurve(der: Uint8Array): Buffer {
  const out = Buffer.from(der);
  // The curve's OID, the key's BIT STRING header and its form octet, then x.
  const key = out.indexOf(Buffer.from('06082a8648ce3d03010703420004', 'hex'));
  if (key < 0) throw new Error('no P-256 key in the certificate');
  out[key + 20] ^= 0x01;
  return out;
}

let request: string;
let tampered: string;
let certificate: string;

beforeAll(async () => {
  request = b64(await csrPem());
  tampered = b64(await tamperedCsrPem());
  certificate = b64(`issued by test\n${await certPem(false, 'leaf')}trailing text\n`);
});

function valid(): Obj {
  return {
    apiVersion: `certificates.${n.groupSuffix}/v1`,
    kind: 'CertificateSigningRequest',
    metadata: { name: 'node-csr', resourceVersion: '1' },
    spec: {
      request,
      signerName: n.signers.apiServerClientNodeAgent,
      usages: ['digital signature', 'client auth'],
      expirationSeconds: 3600,
    },
  };
}

function withChange(change: (o: Obj & { spec: Obj; status?: Obj }) => void): Obj {
  const o = clone(valid()) as Obj & { spec: Obj; status?: Obj };
  change(o);
  return o;
}

const err = fieldError;
const condition = (type: string, status = 'True') => ({ type, status, reason: 'Test', message: 'test' });

describe('create: the request', () => {
  it('accepts a signed CERTIFICATE REQUEST block', async () => {
    expect(await validateCertificateSigningRequestCreate(valid(), ctx)).toEqual([]);
  });

  it.each([
    ['a tampered signature', () => tampered, 'x509: ECDSA verification failure'],
    ['two PEM blocks', async () => b64((await csrPem()) + (await csrPem())), 'must contain exactly one PEM block'],
    ['a CERTIFICATE block', async () => b64(await certPem()), 'PEM block type must be CERTIFICATE REQUEST'],
    ['text without PEM', async () => b64('not a pem'), 'PEM block type must be CERTIFICATE REQUEST'],
    [
      'garbage DER',
      async () => b64(toPem('CERTIFICATE REQUEST', new Uint8Array([1, 2, 3]))),
      'x509: malformed certificate request',
    ],
  ])('rejects %s', async (_name, make, detail) => {
    const raw = await make();
    const errs = await validateCertificateSigningRequestCreate(
      withChange((o) => {
        o.spec.request = raw;
      }),
      ctx,
    );
    expect(errs).toEqual([err('FieldValueInvalid', 'spec.request', `Invalid value: ${goQuote(raw)}: ${detail}`)]);
  });

  it('requires the request', async () => {
    const errs = await validateCertificateSigningRequestCreate(
      withChange((o) => {
        delete o.spec.request;
      }),
      ctx,
    );
    expect(errs).toEqual([err('FieldValueRequired', 'spec.request', 'Required value')]);
  });

  it('rejects a request that is not base64', async () => {
    const errs = await validateCertificateSigningRequestCreate(
      withChange((o) => {
        o.spec.request = 'not base64!';
      }),
      ctx,
    );
    expect(errs).toEqual([
      err('FieldValueInvalid', 'spec.request', 'Invalid value: "not base64!": illegal base64 data at input byte 3'),
    ]);
  });
});

describe('create: signer, expiration, usages', () => {
  it.each([
    ['a custom signer', (o: Obj & { spec: Obj }) => (o.spec.signerName = 'example.com/custom')],
    ['600 seconds', (o: Obj & { spec: Obj }) => (o.spec.expirationSeconds = 600)],
    ['no expiration', (o: Obj & { spec: Obj }) => delete o.spec.expirationSeconds],
    ['every usage once', (o: Obj & { spec: Obj }) => (o.spec.usages = ['any', 's/mime', 'server auth'])],
  ])('accepts %s', async (_name, change) => {
    expect(await validateCertificateSigningRequestCreate(withChange(change), ctx)).toEqual([]);
  });

  it.each([
    [
      'no signerName',
      (o: Obj & { spec: Obj }) => delete o.spec.signerName,
      err('FieldValueRequired', 'spec.signerName', 'Required value'),
    ],
    [
      'the legacy signer',
      (o: Obj & { spec: Obj }) => (o.spec.signerName = n.signers.legacyUnknown),
      err(
        'FieldValueInvalid',
        'spec.signerName',
        `Invalid value: "${n.signers.legacyUnknown}": the legacy signerName is not allowed via this API version`,
      ),
    ],
    [
      'a signer without a path',
      (o: Obj & { spec: Obj }) => (o.spec.signerName = 'example.com'),
      err(
        'FieldValueInvalid',
        'spec.signerName',
        'Invalid value: "example.com": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
      ),
    ],
    [
      'expirationSeconds 599',
      (o: Obj & { spec: Obj }) => (o.spec.expirationSeconds = 599),
      err(
        'FieldValueInvalid',
        'spec.expirationSeconds',
        'Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
      ),
    ],
    [
      'expirationSeconds of the wrong type',
      (o: Obj & { spec: Obj }) => (o.spec.expirationSeconds = '3600'),
      err('FieldValueInvalid', 'spec.expirationSeconds', 'Invalid value: "3600": must be of type integer'),
    ],
    [
      'no usages',
      (o: Obj & { spec: Obj }) => (o.spec.usages = []),
      err('FieldValueRequired', 'spec.usages', 'Required value'),
    ],
    [
      'an unknown usage',
      (o: Obj & { spec: Obj }) => (o.spec.usages = ['client auth', 'foo']),
      err(
        'FieldValueNotSupported',
        'spec.usages[1]',
        'Unsupported value: "foo": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
      ),
    ],
    [
      'a duplicate usage',
      (o: Obj & { spec: Obj }) => (o.spec.usages = ['digital signature', 'key encipherment', 'digital signature']),
      err('FieldValueDuplicate', 'spec.usages[2]', 'Duplicate value: "digital signature"'),
    ],
  ])('rejects %s', async (_name, change, expected) => {
    expect(await validateCertificateSigningRequestCreate(withChange(change), ctx)).toEqual([expected]);
  });

  it('rejects input of the wrong shape without throwing', async () => {
    expect(await validateCertificateSigningRequestCreate('csr', ctx)).toEqual([
      { type: 'FieldValueInvalid', field: '', message: ': Invalid value: "csr": must be of type object' },
    ]);
    const errs = await validateCertificateSigningRequestCreate(
      { metadata: { name: 'x' }, spec: { usages: 'any' } },
      ctx,
    );
    expect(errs).toContainEqual(err('FieldValueInvalid', 'spec.usages', 'Invalid value: "any": must be of type array'));
    expect(await validateCertificateSigningRequestCreate({ metadata: { name: 'x' } }, ctx)).toContainEqual(
      err('FieldValueRequired', 'spec', 'Required value'),
    );
  });
});

describe('create: conditions', () => {
  it.each([
    ['Approved True', [condition('Approved')]],
    [
      'Failed True with a custom condition False',
      [condition('Approved'), condition('Failed'), condition('Custom', 'False')],
    ],
  ])('accepts %s', async (_name, conditions) => {
    expect(
      await validateCertificateSigningRequestCreate(
        withChange((o) => (o.status = { conditions })),
        ctx,
      ),
    ).toEqual([]);
  });

  it.each([
    [
      'Approved False',
      [condition('Approved', 'False')],
      err(
        'FieldValueNotSupported',
        'status.conditions[0].status',
        'Unsupported value: "False": supported values: "True"',
      ),
    ],
    [
      'Failed Unknown',
      [condition('Failed', 'Unknown')],
      err(
        'FieldValueNotSupported',
        'status.conditions[0].status',
        'Unsupported value: "Unknown": supported values: "True"',
      ),
    ],
    [
      'a custom status',
      [condition('Custom', 'Maybe')],
      err(
        'FieldValueNotSupported',
        'status.conditions[0].status',
        'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      ),
    ],
    ['no status', [{ type: 'Custom' }], err('FieldValueRequired', 'status.conditions[0].status', 'Required value')],
    ['no type', [{ status: 'True' }], err('FieldValueRequired', 'status.conditions[0].type', 'Required value')],
    [
      'Approved and Denied',
      [condition('Approved'), condition('Denied')],
      err(
        'FieldValueInvalid',
        'status.conditions',
        'Invalid value: "{conditions[{\\"type\\": \\"Approved\\"}], conditions[{\\"type\\": \\"Denied\\"}]}": must specify at most one of: `conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`',
      ),
    ],
    [
      'two Failed conditions',
      [condition('Failed'), condition('Failed')],
      err('FieldValueDuplicate', 'status.conditions[1].type', 'Duplicate value: "Failed"'),
    ],
  ])('rejects %s', async (_name, conditions, expected) => {
    expect(
      await validateCertificateSigningRequestCreate(
        withChange((o) => (o.status = { conditions })),
        ctx,
      ),
    ).toEqual([expected]);
  });
});

describe('create: status.certificate', () => {
  it('accepts CERTIFICATE blocks with text around them', async () => {
    expect(
      await validateCertificateSigningRequestCreate(
        withChange((o) => (o.status = { certificate })),
        ctx,
      ),
    ).toEqual([]);
  });

  it('accepts a block of certificates back to back, as Go parses such a block', async () => {
    const der = pemToDer(await certPem(false, 'leaf'));
    const twoInOne = b64(toPem('CERTIFICATE', Buffer.concat([der, der])));
    expect(
      await validateCertificateSigningRequestCreate(
        withChange((o) => (o.status = { certificate: twoInOne })),
        ctx,
      ),
    ).toEqual([]);
  });

  it.each([
    [
      'a CERTIFICATE REQUEST block',
      async () => b64(await csrPem()),
      'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
    ],
    [
      'a block with headers',
      async () => b64(toPem('CERTIFICATE', new Uint8Array([48, 0]), 'Proc-Type: 4,ENCRYPTED\n\n')),
      'no PEM block headers are permitted',
    ],
    [
      'an unparseable certificate',
      async () => b64(toPem('CERTIFICATE', new Uint8Array([1, 2, 3]))),
      'x509: malformed certificate',
    ],
    [
      'a certificate whose key is off its curve (Go refuses it, OpenSSL would not)',
      async () => b64(toPem('CERTIFICATE', keyOffCurve(pemToDer(await certPem(false, 'leaf'))))),
      'x509: malformed certificate',
    ],
    ['no PEM block', async () => b64('just text'), 'must contain at least one CERTIFICATE PEM block'],
  ])('rejects %s', async (_name, make, detail) => {
    const value = await make();
    expect(
      await validateCertificateSigningRequestCreate(
        withChange((o) => (o.status = { certificate: value })),
        ctx,
      ),
    ).toEqual([err('FieldValueInvalid', 'status.certificate', `Invalid value: "<certificate data>": ${detail}`)]);
  });
});

describe('updates', () => {
  const approved = () => withChange((o) => (o.status = { conditions: [condition('Approved')] }));

  it('accepts a metadata change', async () => {
    const next = withChange((o) => ((o.metadata as Obj).labels = { a: 'b' }));
    expect(await validateCertificateSigningRequestUpdate(next, valid(), ctx)).toEqual([]);
  });

  it.each([
    ['signerName', 'example.com/other', 'Invalid value: "example.com/other": field is immutable'],
    ['usages', ['client auth'], 'Invalid value: ["client auth"]: field is immutable'],
    ['expirationSeconds', 7200, 'Invalid value: 7200: field is immutable'],
  ])('the spec is immutable: %s', async (field, value, body) => {
    const next = withChange((o) => (o.spec[field] = value));
    expect(await validateCertificateSigningRequestUpdate(next, valid(), ctx)).toEqual([
      err('FieldValueInvalid', `spec.${field}`, body),
    ]);
  });

  it('Approved is added through /approval only', async () => {
    expect(await validateCertificateSigningRequestApprovalUpdate(approved(), valid(), ctx)).toEqual([]);
    for (const fn of [validateCertificateSigningRequestUpdate, validateCertificateSigningRequestStatusUpdate]) {
      expect(await fn(approved(), valid(), ctx)).toEqual([
        err(
          'FieldValueForbidden',
          'status.conditions',
          'Forbidden: updates may not add a condition of type "Approved"',
        ),
      ]);
    }
  });

  it('Denied may not be added next to Approved', async () => {
    const next = withChange((o) => (o.status = { conditions: [condition('Approved'), condition('Denied')] }));
    expect(await validateCertificateSigningRequestApprovalUpdate(next, approved(), ctx)).toEqual([
      err(
        'FieldValueInvalid',
        'status.conditions',
        'Invalid value: "{conditions[{\\"type\\": \\"Approved\\"}], conditions[{\\"type\\": \\"Denied\\"}]}": must specify at most one of: `conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`',
      ),
    ]);
  });

  it('conditions are never removed', async () => {
    expect(await validateCertificateSigningRequestApprovalUpdate(valid(), approved(), ctx)).toEqual([
      err(
        'FieldValueForbidden',
        'status.conditions',
        'Forbidden: updates may not remove a condition of type "Approved"',
      ),
    ]);
  });

  it('Approved may not be modified outside /approval', async () => {
    const next = withChange((o) => (o.status = { conditions: [{ ...condition('Approved'), reason: 'Changed' }] }));
    const errs = await validateCertificateSigningRequestStatusUpdate(next, approved(), ctx);
    expect(errs).toHaveLength(1);
    expect(errs[0].type).toBe('FieldValueForbidden');
    expect(
      errs[0].message.startsWith(
        'status.conditions: Forbidden: updates may not modify a condition of type "Approved"\n',
      ),
    ).toBe(true);
  });

  it('Failed is added through /status', async () => {
    const next = withChange((o) => (o.status = { conditions: [condition('Approved'), condition('Failed')] }));
    expect(await validateCertificateSigningRequestStatusUpdate(next, approved(), ctx)).toEqual([]);
  });

  it('the certificate is set through /status, once', async () => {
    const issued = withChange((o) => (o.status = { conditions: [condition('Approved')], certificate }));
    expect(await validateCertificateSigningRequestStatusUpdate(issued, approved(), ctx)).toEqual([]);
    expect(await validateCertificateSigningRequestUpdate(issued, approved(), ctx)).toEqual([
      err('FieldValueForbidden', 'status.certificate', 'Forbidden: updates may not set certificate content'),
    ]);
    const reissued = withChange(
      (o) =>
        (o.status = {
          conditions: [condition('Approved')],
          certificate: b64(`x\n${Buffer.from(certificate, 'base64')}`),
        }),
    );
    expect(await validateCertificateSigningRequestStatusUpdate(reissued, issued, ctx)).toEqual([
      err(
        'FieldValueForbidden',
        'status.certificate',
        'Forbidden: updates may not modify existing certificate content',
      ),
    ]);
  });

  it('problems already stored are tolerated', async () => {
    const stored = withChange((o) => (o.spec.usages = ['client auth', 'client auth']));
    const next = withChange((o) => {
      o.spec.usages = ['client auth', 'client auth'];
      (o.metadata as Obj).labels = { a: 'b' };
    });
    expect(await validateCertificateSigningRequestUpdate(next, stored, ctx)).toEqual([]);
  });

  it('an unchanged request is not verified again; a changed one is, and is refused as immutable', async () => {
    // A stored request whose signature does not verify shows that the unchanged bytes are not re-checked.
    const stored = withChange((o) => (o.spec.request = tampered));
    const next = withChange((o) => {
      o.spec.request = tampered;
      o.status = { conditions: [condition('Approved')] };
    });
    expect(await validateCertificateSigningRequestApprovalUpdate(next, stored, ctx)).toEqual([]);
    const changed = withChange((o) => (o.spec.request = tampered));
    expect(await validateCertificateSigningRequestUpdate(changed, valid(), ctx)).toEqual([
      err('FieldValueInvalid', 'spec.request', `Invalid value: "${tampered}": x509: ECDSA verification failure`),
      err('FieldValueInvalid', 'spec.request', `Invalid value: "${tampered}": field is immutable`),
    ]);
  });
});

describe('defaultCsrConditions', () => {
  const now = new Date('2026-03-04T05:06:07.890Z');

  it('fills unset times with now', () => {
    const o = { status: { conditions: [condition('Approved')] } };
    defaultCsrConditions(o, { status: {} }, now);
    expect(o.status.conditions[0]).toMatchObject({
      lastUpdateTime: '2026-03-04T05:06:07Z',
      lastTransitionTime: '2026-03-04T05:06:07Z',
    });
  });

  it('keeps the transition time of an old condition with the same type and status, and set times', () => {
    const old = { status: { conditions: [{ ...condition('Approved'), lastTransitionTime: '2020-01-01T00:00:00Z' }] } };
    const o = {
      status: {
        conditions: [condition('Approved'), { ...condition('Failed'), lastUpdateTime: '2021-01-01T00:00:00Z' }],
      },
    };
    defaultCsrConditions(o, old, now);
    expect(o.status.conditions[0]).toMatchObject({
      lastUpdateTime: '2026-03-04T05:06:07Z',
      lastTransitionTime: '2020-01-01T00:00:00Z',
    });
    expect(o.status.conditions[1]).toMatchObject({
      lastUpdateTime: '2021-01-01T00:00:00Z',
      lastTransitionTime: '2026-03-04T05:06:07Z',
    });
  });
});
