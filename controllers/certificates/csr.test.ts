import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, signingAlgorithmFor } from '../../src/pki/keys.ts';
import { derToPem } from '../../src/pki/pem.ts';
import {
  apiServerClientProblem,
  approvalState,
  goTime,
  hasTrueCondition,
  isApproved,
  nodeAgentClientProblem,
  nodeAgentServingProblem,
  type ParsedRequest,
  parseRequest,
  parseRequestByLibrary,
  parseRequestPem,
  RequestParseError,
  verifyRequestSignature,
} from './csr.ts';
import {
  csrObject,
  forgeRequest,
  opensslRequest,
  type RequestSpec,
  rsaKeyPkcs1,
  webcryptoRequestWithKeys,
} from './testing.ts';

type Encoder = (spec: RequestSpec) => Promise<string>;

/** Every encoder the predicates are checked against: WebCrypto (ECDSA and RSA), node-forge (RSA), openssl (EC). */
const encoders: [string, () => Promise<Encoder>][] = [
  [
    'webcrypto ECDSA P-256',
    async () => {
      const keys = await generateKeyPair('ECDSA-P256');
      return async (spec) => (await webcryptoRequestWithKeys(keys, spec)).pem;
    },
  ],
  [
    'webcrypto RSA-2048',
    async () => {
      const keys = await generateKeyPair('RSA-2048');
      return async (spec) => (await webcryptoRequestWithKeys(keys, spec)).pem;
    },
  ],
  [
    'node-forge RSA-2048',
    async () => {
      const key = rsaKeyPkcs1();
      return async (spec) => (await forgeRequest(spec, key)).pem;
    },
  ],
  [
    'openssl EC P-384',
    async () => async (spec) => {
      const subject = [
        ...(spec.organizations ?? []).map((o) => `/O=${o}`),
        ...(spec.commonName !== undefined ? [`/CN=${spec.commonName}`] : []),
      ].join('');
      const san = [
        ...(spec.dnsNames ?? []).map((d) => `DNS:${d}`),
        ...(spec.ipAddresses ?? []).map((d) => `IP:${d}`),
        ...(spec.emails ?? []).map((d) => `email:${d}`),
        ...(spec.uris ?? []).map((d) => `URI:${d}`),
      ].join(',');
      return opensslRequest(
        ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:secp384r1'],
        subject || '/',
        san || undefined,
      ).pem;
    },
  ],
];

const NODE = { organizations: ['system:nodes'], commonName: 'system:node:worker-1' };
const CLIENT3 = ['digital signature', 'key encipherment', 'client auth'];
const CLIENT2 = ['digital signature', 'client auth'];
const SERVING3 = ['digital signature', 'key encipherment', 'server auth'];
const SERVING2 = ['server auth', 'digital signature'];

describe.each(encoders)('request predicates with %s requests', (_name, make) => {
  let encode: Encoder;
  const parse = async (spec: RequestSpec): Promise<ParsedRequest> => parseRequestPem(await encode(spec));
  beforeAll(async () => {
    encode = await make();
  });

  it('parses subject, SANs and key, and verifies the self-signature', async () => {
    const p = await parse({
      ...NODE,
      dnsNames: ['a.example.test'],
      ipAddresses: ['10.0.0.1', '2001:db8::1'],
      emails: ['x@example.test'],
      uris: ['spiffe://cluster/ns/a'],
    });
    expect(p.subject.organization).toEqual(['system:nodes']);
    expect(p.subject.commonName).toBe('system:node:worker-1');
    expect(p.dnsNames).toEqual(['a.example.test']);
    expect(p.ipAddresses.length).toBe(2);
    expect(p.emailAddresses).toEqual(['x@example.test']);
    expect(p.uris).toEqual(['spiffe://cluster/ns/a']);
    expect(p.subjectEmpty).toBe(false);
    expect(await verifyRequestSignature(p)).toBeUndefined();
  });

  // The DER walk (readCertificationRequest) against @peculiar/x509's parse of the same bytes.
  it.each<[string, RequestSpec]>([
    ['a node agent client request', NODE],
    ['an empty subject', {}],
    ['UTF-8, several values and escaped characters', { organizations: ['Ünïcødé', 'a+b, "c"'], commonName: 'ä b' }],
    [
      'every SAN kind, IPv6 zero runs included',
      {
        ...NODE,
        dnsNames: ['a.example.test', 'b.example.test'],
        ipAddresses: ['10.0.0.1', '::', '::1', 'fe80::', '2001:db8:0:0:1:0:0:1', '1:0:2:0:0:3:0:0', '1:2:3:4:5:6:7:8'],
        emails: ['x@example.test'],
        uris: ['spiffe://cluster/ns/a'],
      },
    ],
  ])('reads %s as @peculiar/x509 does', async (_name, spec) => {
    const p = await parse(spec);
    expect(p.fields).toBeDefined();
    const { der, spki, subject, subjectEmpty, dnsNames, emailAddresses, ipAddresses, uris, keyAlgorithm } =
      await parseRequestByLibrary(p.der);
    expect(p).toMatchObject({ der, subject, subjectEmpty, dnsNames, emailAddresses, ipAddresses, uris, keyAlgorithm });
    expect(Buffer.from(p.spki)).toEqual(Buffer.from(spki));
    expect(await verifyRequestSignature(p)).toBeUndefined();
  });

  // Reference §2.2: each row breaks one check; the expected text is the first failing check's.
  const clientRows: [string, RequestSpec, string[], string | undefined][] = [
    ['three usages', NODE, CLIENT3, undefined],
    ['two usages (non-RSA node agents)', NODE, CLIENT2, undefined],
    ['no organization', { commonName: NODE.commonName }, CLIENT3, 'subject organization is not system:nodes'],
    [
      'an extra organization',
      { ...NODE, organizations: ['system:nodes', 'admins'] },
      CLIENT3,
      'subject organization is not system:nodes',
    ],
    [
      'another organization',
      { ...NODE, organizations: ['nodes'] },
      CLIENT3,
      'subject organization is not system:nodes',
    ],
    ['a DNS SAN', { ...NODE, dnsNames: ['n.example.test'] }, CLIENT3, 'DNS subjectAltNames are not allowed'],
    ['an email SAN', { ...NODE, emails: ['n@example.test'] }, CLIENT3, 'Email subjectAltNames are not allowed'],
    ['an IP SAN', { ...NODE, ipAddresses: ['10.1.2.3'] }, CLIENT3, 'IP subjectAltNames are not allowed'],
    ['a URI SAN', { ...NODE, uris: ['https://n.example.test'] }, CLIENT3, 'URI subjectAltNames are not allowed'],
    [
      'a CN outside system:node:',
      { ...NODE, commonName: 'worker-1' },
      CLIENT3,
      'subject common name does not begin with system:node:',
    ],
    [
      'signing instead of digital signature',
      NODE,
      ['signing', 'key encipherment', 'client auth'],
      'usages did not match [client auth digital signature key encipherment]',
    ],
    [
      'server auth too',
      NODE,
      [...CLIENT3, 'server auth'],
      'usages did not match [client auth digital signature key encipherment]',
    ],
    [
      'client auth only',
      NODE,
      ['client auth'],
      'usages did not match [client auth digital signature key encipherment]',
    ],
    [
      'several problems: the organization is reported first',
      { commonName: 'x', dnsNames: ['d.example.test'] },
      ['server auth'],
      'subject organization is not system:nodes',
    ],
    [
      'SANs before the CN',
      { organizations: ['system:nodes'], commonName: 'x', ipAddresses: ['10.0.0.2'] },
      CLIENT3,
      'IP subjectAltNames are not allowed',
    ],
  ];
  it.each(clientRows)('node agent client: %s', async (_row, spec, usages, expected) => {
    expect(nodeAgentClientProblem(await parse(spec), new Set(usages))).toBe(expected);
  });

  // Reference §3.3, serving predicate.
  const servingRows: [string, RequestSpec, string[], string | undefined][] = [
    ['DNS SAN, three usages', { ...NODE, dnsNames: ['w1.example.test'] }, SERVING3, undefined],
    ['IP SAN, two usages', { ...NODE, ipAddresses: ['10.0.0.5'] }, SERVING2, undefined],
    [
      'no organization',
      { commonName: NODE.commonName, dnsNames: ['w1'] },
      SERVING3,
      'subject organization is not system:nodes',
    ],
    ['no SAN', NODE, SERVING3, 'DNS or IP subjectAltName is required'],
    [
      'an email SAN',
      { ...NODE, dnsNames: ['w1'], emails: ['w@example.test'] },
      SERVING3,
      'Email subjectAltNames are not allowed',
    ],
    ['a URI SAN', { ...NODE, dnsNames: ['w1'], uris: ['https://w1'] }, SERVING3, 'URI subjectAltNames are not allowed'],
    [
      'client usages',
      { ...NODE, dnsNames: ['w1'] },
      CLIENT3,
      'usages did not match [digital signature key encipherment server auth]',
    ],
    [
      'a CN outside system:node: (checked after usages)',
      { ...NODE, commonName: 'w1', dnsNames: ['w1'] },
      SERVING3,
      'subject common name does not begin with system:node:',
    ],
    [
      'bad usages and bad CN: usages first',
      { ...NODE, commonName: 'w1', dnsNames: ['w1'] },
      ['server auth'],
      'usages did not match [digital signature key encipherment server auth]',
    ],
  ];
  it.each(servingRows)('node agent serving: %s', async (_row, spec, usages, expected) => {
    expect(nodeAgentServingProblem(await parse(spec), new Set(usages))).toBe(expected);
  });

  it('API client: only usages matter', async () => {
    const p = await parse({ commonName: 'anyone', dnsNames: ['whatever'] });
    const rows: [string[], string | undefined][] = [
      [['client auth'], undefined],
      [['digital signature', 'key encipherment', 'client auth'], undefined],
      [['key encipherment', 'client auth', 'digital signature'], undefined],
      [['server auth', 'client auth'], 'invalid usage for client certificate: server auth'],
      [['client auth', 'signing', 'code signing'], 'invalid usage for client certificate: signing'],
      [['digital signature'], 'missing required usage for client certificate: client auth'],
      [[], 'missing required usage for client certificate: client auth'],
    ];
    for (const [usages, expected] of rows) expect(apiServerClientProblem(p, usages), usages.join(',')).toBe(expected);
  });
});

describe('parsing bad requests', () => {
  it.each([
    ['empty', '', 'PEM block type must be CERTIFICATE REQUEST'],
    ['not PEM', 'hello', 'PEM block type must be CERTIFICATE REQUEST'],
    [
      'wrong block type',
      derToPem(new Uint8Array([48, 3, 2, 1, 1]), 'CERTIFICATE'),
      'PEM block type must be CERTIFICATE REQUEST',
    ],
    ['unterminated block', '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n', 'PEM block type must be CERTIFICATE REQUEST'],
    [
      'garbage DER',
      derToPem(new Uint8Array([1, 2, 3, 4]), 'CERTIFICATE REQUEST'),
      'x509: malformed certificate request',
    ],
    ['huge', `${'x'.repeat(300_000)}`, 'more than the 262144 accepted'],
  ])('%s', async (_name, pem, message) => {
    await expect(parseRequestPem(pem)).rejects.toThrow(RequestParseError);
    await expect(parseRequestPem(pem)).rejects.toThrow(message);
  });

  it('takes the first block, as the reference does', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const { pem } = await webcryptoRequestWithKeys(keys, NODE);
    const junkBefore = await parseRequestPem(`junk before\n${pem}${derToPem(new Uint8Array([1]), 'CERTIFICATE')}`);
    expect(junkBefore.subject.commonName).toBe(NODE.commonName);
    await expect(parseRequestPem(`${derToPem(new Uint8Array([1]), 'CERTIFICATE')}${pem}`)).rejects.toThrow(
      'PEM block type must be CERTIFICATE REQUEST',
    );
  });

  it('reports a self-signature that does not verify', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const { pem } = await webcryptoRequestWithKeys(keys, NODE);
    const der = Buffer.from(pem.split('\n').slice(1, -2).join(''), 'base64');
    der[der.length - 5] ^= 0xff; // inside the signature
    const p = await parseRequestPem(derToPem(der, 'CERTIFICATE REQUEST'));
    expect(await verifyRequestSignature(p)).toMatch(/^unable to verify certificate request signature/);
  });
});

describe('requests the DER walk leaves to the library', () => {
  /** A request with these extensions, made by WebCrypto through @peculiar/x509. */
  async function withExtensions(extensions: x509.Extension[], name = 'CN=system:node:a, O=system:nodes') {
    const keys = await generateKeyPair('ECDSA-P256');
    const signingAlgorithm = signingAlgorithmFor(keys.privateKey);
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name, keys, signingAlgorithm, extensions });
    return csr.toString('pem');
  }

  it('reads a request with an extension besides the SAN through the library, with the same result', async () => {
    const usage = new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true);
    const pem = await withExtensions([usage, new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'a' }])]);
    const p = await parseRequestPem(pem);
    expect(p.fields).toBeUndefined();
    expect(p.dnsNames).toEqual(['a']);
    expect(p.subject.commonName).toBe('system:node:a');
    expect(await verifyRequestSignature(p)).toBeUndefined();
  });

  it("keeps the library's refusal of a malformed extension it knows", async () => {
    const pem = await withExtensions([new x509.Extension('2.5.29.15', true, new Uint8Array([0xff]))]);
    await expect(parseRequestPem(pem)).rejects.toThrow('x509: malformed certificate request');
  });

  it('keeps a leading byte order mark in a UTF-8 value, as the library does', async () => {
    const p = await parseRequestPem(await withExtensions([], 'CN=\uFEFFsystem:node:a'));
    expect(p.fields).toBeDefined();
    expect(p.subject.commonName).toBe((await parseRequestByLibrary(p.der)).subject.commonName);
    expect(p.subject.commonName.startsWith('\uFEFF')).toBe(true);
  });
});

describe('parseRequest', () => {
  const signer = 'orch.io/orch-apiserver-client-nodeagent';
  const usages = ['client auth'];

  it('parses a request once, and never serves one request for another under the same name', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const first = (await webcryptoRequestWithKeys(keys, { ...NODE, commonName: 'system:node:first' })).pem;
    const second = (await webcryptoRequestWithKeys(keys, { ...NODE, commonName: 'system:node:second' })).pem;
    const parsed = await parseRequest(csrObject(first, { name: 'same', signerName: signer, usages }));
    expect(await parseRequest(csrObject(first, { name: 'same', signerName: signer, usages }))).toBe(parsed);
    const other = await parseRequest(csrObject(second, { name: 'same', signerName: signer, usages }));
    expect(other.subject.commonName).toBe('system:node:second');
    const again = await parseRequest(csrObject(first, { name: 'same', signerName: signer, usages }));
    expect(again.subject.commonName).toBe('system:node:first');
  });

  it('keeps no failed parse: a bad request is reported each time', async () => {
    const bad = csrObject('not a request', { signerName: signer, usages });
    await expect(parseRequest(bad)).rejects.toThrow(RequestParseError);
    await expect(parseRequest(bad)).rejects.toThrow('PEM block type must be CERTIFICATE REQUEST');
  });

  it('verifies a parsed request once and gives the same answer after', async () => {
    const { pem } = await webcryptoRequestWithKeys(await generateKeyPair('Ed25519'), NODE);
    const parsed = await parseRequest(csrObject(pem, { signerName: signer, usages }));
    const answer = verifyRequestSignature(parsed);
    expect(verifyRequestSignature(parsed)).toBe(answer);
    expect(await answer).toBeUndefined();
  });
});

describe('conditions', () => {
  const csr = (conditions: { type: string; status: string }[]) =>
    csrObject('', { signerName: 's/x', usages: [], conditions: conditions as never });
  it.each([
    [[], false, false, false],
    [[{ type: 'Approved', status: 'True' }], true, false, true],
    // The condition status is not looked at.
    [[{ type: 'Approved', status: 'False' }], true, false, true],
    [[{ type: 'Denied', status: 'True' }], false, true, false],
    [
      [
        { type: 'Approved', status: 'True' },
        { type: 'Denied', status: 'True' },
      ],
      true,
      true,
      false,
    ],
  ])('%j → approved %s, denied %s, isApproved %s', (conditions, approved, denied, ok) => {
    expect(approvalState(csr(conditions))).toEqual({ approved, denied });
    expect(isApproved(csr(conditions))).toBe(ok);
  });

  it('has-true-condition counts True and empty statuses only', () => {
    expect(hasTrueCondition(csr([{ type: 'Failed', status: 'True' }]), 'Failed')).toBe(true);
    expect(hasTrueCondition(csr([{ type: 'Failed', status: '' }]), 'Failed')).toBe(true);
    expect(hasTrueCondition(csr([{ type: 'Failed', status: 'False' }]), 'Failed')).toBe(false);
    expect(hasTrueCondition(csr([{ type: 'Approved', status: 'True' }]), 'Failed')).toBe(false);
  });

  it('prints times as Go does', () => {
    expect(goTime(new Date('2026-01-01T00:00:00Z'))).toBe('2026-01-01 00:00:00 +0000 UTC');
  });
});
