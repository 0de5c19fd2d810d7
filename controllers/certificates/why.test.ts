import { beforeAll, describe, expect, it } from 'vitest';
import { naming } from '../../src/api/naming.ts';
import type { CertificateSigningRequest } from '../../src/api/types/certificates.ts';
import { csrObject, webcryptoRequest } from './testing.ts';
import { type ApprovalFacts, explainCsr } from './why.ts';

const n = naming('orch');
const src = { naming: n };
const facts = (f: Partial<ApprovalFacts> = {}): ApprovalFacts => ({
  servingEnabled: false,
  reviews: [],
  dnsPatterns: [],
  signingDurationMs: 3600_000,
  ...f,
});

let nodeClient: string;
let plain: string;
let nodeServing: string;

beforeAll(async () => {
  nodeClient = (await webcryptoRequest('ECDSA-P256', { commonName: 'system:node:n1', organizations: ['system:nodes'] }))
    .pem;
  plain = (await webcryptoRequest('ECDSA-P256', { commonName: 'alice' })).pem;
  nodeServing = (
    await webcryptoRequest('ECDSA-P256', {
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
      ipAddresses: ['10.0.0.1'],
    })
  ).pem;
});

const approved = [{ type: 'Approved', status: 'True' as const, reason: 'R' }];

describe('why csr', () => {
  it.each<[string, () => CertificateSigningRequest, Partial<ApprovalFacts>, string | RegExp, string?]>([
    [
      'issued',
      () =>
        csrObject(plain, {
          signerName: n.signers.apiServerClient,
          usages: ['client auth'],
          conditions: approved,
          certificatePem: 'x',
        }),
      {},
      'issued: status.certificate holds the certificate',
    ],
    [
      'denied',
      () =>
        csrObject(plain, {
          signerName: n.signers.apiServerClient,
          usages: ['client auth'],
          conditions: [{ type: 'Denied', status: 'True' }],
        }),
      {},
      'denied: no signer issues a denied request',
    ],
    [
      'signer nobody here approves',
      () => csrObject(plain, { signerName: 'example.com/x', usages: ['client auth'] }),
      {},
      'pending: no controller here approves this signer; a person or another approver must',
    ],
    [
      'not a node agent request: the x509 rule',
      () =>
        csrObject(plain, {
          signerName: n.signers.apiServerClientNodeAgent,
          usages: ['client auth'],
          username: 'alice',
        }),
      {},
      'pending: not recognized as a node agent client request',
      'x509 rule failed: ',
    ],
    [
      'reviews say no',
      () =>
        csrObject(nodeClient, {
          signerName: n.signers.apiServerClientNodeAgent,
          usages: ['client auth', 'digital signature'],
          username: 'bob',
        }),
      { reviews: [{ subresource: 'nodeclient', allowed: false }] },
      'pending: bob may not create any of the recognized subresources, so it is not auto-approved',
      'SubjectAccessReview: may bob create certificatesigningrequests/nodeclient? no',
    ],
    [
      'review says yes',
      () =>
        csrObject(nodeClient, {
          signerName: n.signers.apiServerClientNodeAgent,
          usages: ['client auth', 'digital signature'],
          username: 'bob',
        }),
      { reviews: [{ subresource: 'nodeclient', allowed: true, reason: 'RBAC: allowed' }] },
      'pending: the approver will approve it through nodeclient (is the daemon running?)',
      'SubjectAccessReview: may bob create certificatesigningrequests/nodeclient? yes (RBAC: allowed)',
    ],
    [
      'serving request, Node missing',
      () =>
        csrObject(nodeServing, {
          signerName: n.signers.nodeAgentServing,
          usages: ['server auth', 'digital signature'],
          username: 'system:node:n1',
          groups: ['system:nodes'],
        }),
      { servingEnabled: true },
      'pending: the serving approval refuses it (rule node-exists)',
      'Node "n1" does not exist',
    ],
    [
      'approved, signer policy refuses',
      () => csrObject(plain, { signerName: n.signers.apiServerClient, usages: ['server auth'], conditions: approved }),
      {},
      /^approved, but the signer refuses it: /,
    ],
    [
      'approved, no loop for the signer',
      () => csrObject(plain, { signerName: n.signers.apiServerClient, usages: ['client auth'], conditions: approved }),
      { runningSigners: new Set() },
      `approved, not issued: no signing loop runs for ${n.signers.apiServerClient} (no CA is configured for it)`,
    ],
    [
      'approved and valid',
      () => csrObject(plain, { signerName: n.signers.apiServerClient, usages: ['client auth'], conditions: approved }),
      {},
      `approved and valid for ${n.signers.apiServerClient}: the signer will issue it`,
    ],
    [
      'unparseable request',
      () => csrObject('not a pem', { signerName: n.signers.apiServerClient, usages: ['client auth'] }),
      {},
      /^the request cannot be parsed, so nothing will approve or sign it: /,
    ],
  ])('%s', async (_name, make, f, summary, detail) => {
    const a = await explainCsr(make(), facts(f), src);
    if (typeof summary === 'string') expect(a.summary).toBe(summary);
    else expect(a.summary).toMatch(summary);
    if (detail) expect(a.details.join('\n')).toContain(detail);
  });
});
