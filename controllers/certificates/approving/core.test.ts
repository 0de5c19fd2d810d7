import type { webcrypto } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { group, naming } from '../../../src/api/naming.ts';
import type { Node } from '../../../src/api/types/core.ts';
import { generateKeyPair } from '../../../src/pki/keys.ts';
import { parseRequestPem } from '../csr.ts';
import {
  type CsrFields,
  csrObject,
  forgeRequest,
  type RequestSpec,
  rsaKeyPkcs1,
  webcryptoRequestWithKeys,
} from '../testing.ts';
import {
  approvalTarget,
  canonicalIp,
  clientRecognizers,
  compileDnsPatterns,
  notApprovedMessage,
  servingVerdict,
  subjectAccessReview,
  withApproval,
} from './core.ts';

const n = naming();
const k8s = naming('kubernetes');
const CLIENT = n.signers.apiServerClientNodeAgent;
const SERVING = n.signers.nodeAgentServing;
const NODE: RequestSpec = { organizations: ['system:nodes'], commonName: 'system:node:worker-1' };
const CLIENT_USAGES = ['digital signature', 'client auth'];
const SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];

describe('approval target (reference §2.3)', () => {
  const t = (f: Partial<CsrFields>, serving = false) =>
    approvalTarget(csrObject('', { signerName: CLIENT, usages: [], ...f }), n, serving).action;
  it.each([
    ['pending client request', {}, false, 'client'],
    ['issued', { conditions: [], certificatePem: 'x' }, false, 'skip'],
    ['approved', { conditions: [{ type: 'Approved', status: 'True' }] }, false, 'skip'],
    ['denied', { conditions: [{ type: 'Denied', status: 'True' }] }, false, 'skip'],
    [
      'an Approved condition with status False still counts',
      { conditions: [{ type: 'Approved', status: 'False' }] },
      false,
      'skip',
    ],
    ['only a Failed condition', { conditions: [{ type: 'Failed', status: 'True' }] }, false, 'client'],
    ['serving, approval off', { signerName: SERVING }, false, 'skip'],
    ['serving, approval on', { signerName: SERVING }, true, 'serving'],
    ['API client signer', { signerName: n.signers.apiServerClient }, true, 'skip'],
    ['custom signer', { signerName: 'example.com/x' }, true, 'skip'],
  ] as [string, Partial<CsrFields>, boolean, string][])('%s → %s', (_name, fields, serving, expected) => {
    expect(t(fields, serving)).toBe(expected);
  });
});

describe.each([
  ['webcrypto ECDSA P-256', 'ecdsa'],
  ['node-forge RSA', 'forge'],
])('client recognizers with %s requests (reference §2.1)', (_name, kind) => {
  let make: (spec: RequestSpec) => Promise<string>;
  beforeAll(async () => {
    if (kind === 'forge') {
      const key = rsaKeyPkcs1();
      make = async (spec) => (await forgeRequest(spec, key)).pem;
    } else {
      const keys = await generateKeyPair('ECDSA-P256');
      make = async (spec) => (await webcryptoRequestWithKeys(keys, spec)).pem;
    }
  });

  const recognize = async (spec: RequestSpec, f: Partial<CsrFields>, nm = n) => {
    const pem = await make(spec);
    const csr = csrObject(pem, { signerName: nm.signers.apiServerClientNodeAgent, usages: CLIENT_USAGES, ...f });
    return clientRecognizers(csr, await parseRequestPem(pem), nm);
  };

  it('a node renewing (username = CN): selfnodeclient first, then nodeclient', async () => {
    expect(await recognize(NODE, { username: 'system:node:worker-1' })).toEqual([
      {
        subresource: 'selfnodeclient',
        message: `Auto approving self ${n.nodeAgent} client certificate after SubjectAccessReview.`,
      },
      {
        subresource: 'nodeclient',
        message: `Auto approving ${n.nodeAgent} client certificate after SubjectAccessReview.`,
      },
    ]);
  });

  it('a bootstrap identity: nodeclient only', async () => {
    expect((await recognize(NODE, { username: 'system:bootstrap:abcdef' })).map((r) => r.subresource)).toEqual([
      'nodeclient',
    ]);
  });

  it("uses the reference's words in the kubernetes flavor", async () => {
    const r = await recognize(NODE, { username: 'system:node:worker-1' }, k8s);
    expect(r[0].message).toBe(`Auto approving self ${k8s.nodeAgent} client certificate after SubjectAccessReview.`);
  });

  it.each([
    ['a SAN', { ...NODE, dnsNames: ['worker-1'] }, {}],
    ['another organization', { ...NODE, organizations: ['admins'] }, {}],
    ['a CN outside system:node:', { ...NODE, commonName: 'worker-1' }, {}],
    ['serving usages', NODE, { usages: SERVING_USAGES }],
    ['another signer', NODE, { signerName: SERVING }],
  ] as [string, RequestSpec, Partial<CsrFields>][])('nothing for a request with %s', async (_n, spec, f) => {
    expect(await recognize(spec, { username: 'system:node:worker-1', ...f })).toEqual([]);
  });
});

describe('the SubjectAccessReview (reference §2.4)', () => {
  it('asks create on the subresource as the requester, extra copied', () => {
    const csr = csrObject('', {
      signerName: CLIENT,
      usages: [],
      username: 'system:bootstrap:abcdef',
      uid: 'u-1',
      groups: ['system:bootstrappers', 'system:authenticated'],
      extra: { scopes: ['a', 'b'] },
    });
    expect(subjectAccessReview(csr, 'nodeclient', n)).toEqual({
      apiVersion: `${group(n, 'authorization')}/v1`,
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: 'system:bootstrap:abcdef',
        uid: 'u-1',
        groups: ['system:bootstrappers', 'system:authenticated'],
        extra: { scopes: ['a', 'b'] },
        resourceAttributes: {
          group: group(n, 'certificates'),
          resource: 'certificatesigningrequests',
          subresource: 'nodeclient',
          verb: 'create',
        },
      },
    });
    expect(subjectAccessReview(csr, 'selfnodeclient', k8s).spec.resourceAttributes!.group).toBe(
      group(k8s, 'certificates'),
    );
  });

  it('builds the approval and the not-approved message', () => {
    const csr = csrObject('', { signerName: CLIENT, usages: [], conditions: [{ type: 'Failed', status: 'True' }] });
    const approved = withApproval(csr, 'ok', '2026-01-01T00:00:00Z');
    expect(approved.status!.conditions).toEqual([
      { type: 'Failed', status: 'True' },
      {
        type: 'Approved',
        status: 'True',
        reason: 'AutoApproved',
        message: 'ok',
        lastUpdateTime: '2026-01-01T00:00:00Z',
      },
    ]);
    expect(csr.status!.conditions).toHaveLength(1);
    expect(notApprovedMessage('node-csr-1', ['selfnodeclient', 'nodeclient'])).toBe(
      'recognized csr "node-csr-1" as [selfnodeclient nodeclient] but subject access review was not approved',
    );
  });
});

describe('serving approval rules (opt-in)', () => {
  let keys: webcrypto.CryptoKeyPair;
  beforeAll(async () => {
    keys = await generateKeyPair('ECDSA-P256');
  });
  const node: Node = {
    metadata: { name: 'worker-1' },
    status: {
      addresses: [
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'ExternalIP', address: '2001:db8::5' },
        { type: 'Hostname', address: 'worker-1' },
      ],
    },
  };
  const config = {
    enabled: true,
    dnsPatterns: ['[a-z0-9-]+\\.nodes\\.example\\.test'],
    maxDurationMs: 30 * 24 * 3600_000,
  };
  const verdict = async (spec: RequestSpec, f: Partial<CsrFields> = {}, n2: Node | null = node) => {
    const { pem } = await webcryptoRequestWithKeys(keys, spec);
    const csr = csrObject(pem, {
      signerName: SERVING,
      usages: SERVING_USAGES,
      username: 'system:node:worker-1',
      groups: ['system:nodes', 'system:authenticated'],
      expirationSeconds: 7 * 86400,
      ...f,
    });
    return servingVerdict(
      {
        csr,
        parsed: await parseRequestPem(pem),
        node: n2 ?? undefined,
        config,
        dnsPatterns: compileDnsPatterns(config.dnsPatterns),
        signingDurationMs: 8760 * 3600_000,
      },
      n,
    );
  };
  const ok = {
    ...NODE,
    dnsNames: ['worker-1', 'worker-1.nodes.example.test'],
    ipAddresses: ['10.0.0.5', '2001:db8:0:0::5'],
  };

  it('approves the node asking for its own names and addresses', async () => {
    expect(await verdict(ok)).toEqual({
      approve: true,
      message: `Auto approving self ${n.nodeAgent} serving certificate: requester, Node addresses and lifetime checked.`,
    });
  });

  it.each([
    [
      'fails the signer policy',
      { ...ok, emails: ['a@b.c'] },
      {},
      'signer-policy',
      'Email subjectAltNames are not allowed',
    ],
    ['client usages', ok, { usages: ['digital signature', 'client auth'] }, 'signer-policy', 'usages did not match'],
    ['another requester', ok, { username: 'system:node:worker-2' }, 'requester', 'is not the subject'],
    ['a bootstrap requester', ok, { username: 'system:bootstrap:abcdef' }, 'requester', 'is not the subject'],
    [
      'a requester outside system:nodes',
      ok,
      { groups: ['system:authenticated'] },
      'requester',
      'is not in group system:nodes',
    ],
    [
      'an IP not the node',
      { ...ok, ipAddresses: ['10.0.0.6'] },
      {},
      'ip-sans',
      'IP SAN 10.0.0.6 is not an address of Node "worker-1"',
    ],
    ['a DNS name of another node', { ...ok, dnsNames: ['worker-2'] }, {}, 'dns-sans', 'DNS SAN worker-2 is neither'],
    [
      'a DNS name only partly matching a pattern',
      { ...ok, dnsNames: ['evil.com.worker-1.nodes.example.test.evil'] },
      {},
      'dns-sans',
      'nor matches a configured pattern',
    ],
    [
      'a lifetime over the maximum',
      ok,
      { expirationSeconds: 60 * 86400 },
      'lifetime',
      'requested lifetime 1440h exceeds the maximum 720h',
    ],
    [
      'no lifetime: the cluster duration, over the maximum',
      ok,
      { expirationSeconds: undefined },
      'lifetime',
      'requested lifetime 8760h',
    ],
  ] as [string, RequestSpec, Partial<CsrFields>, string, string][])(
    'refuses a request with %s',
    async (_name, spec, fields, rule, message) => {
      const v = await verdict(spec, fields);
      expect(v.approve).toBe(false);
      expect(v).toMatchObject({ rule });
      expect((v as { message: string }).message).toContain(message);
    },
  );

  it('refuses when the Node does not exist', async () => {
    expect(await verdict(ok, {}, null)).toEqual({
      approve: false,
      rule: 'node-exists',
      message: 'Node "worker-1" does not exist',
    });
  });

  it('refuses to start with a pattern that does not compile', () => {
    expect(() => compileDnsPatterns(['ok', '('])).toThrow('invalid DNS name pattern for serving approval "("');
  });

  it('compares IPv6 addresses in canonical form', () => {
    expect(canonicalIp('2001:DB8:0:0:0:0:0:5')).toBe('2001:db8::5');
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
    expect(canonicalIp('nope')).toBeUndefined();
  });
});
