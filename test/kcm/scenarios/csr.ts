/**
 * CertificateSigningRequests of every signer and shape, made as a node would (a bootstrap token, then its own
 * client certificate) or as a user would, approved or denied as an admin would, and the cleaner's ages, written
 * as condition times in the past since neither side has a flag for them.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { createSelfSignedCa, issueKeyAndCertificate } from '../../../src/pki/certs.ts';
import { type Call, expectStatus } from '../client.ts';
import type { Scenario, ScenarioContext } from '../scenario.ts';

x509.cryptoProvider.set(webcrypto);

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const NODE = 'kwok-node-1';
const BOOTSTRAP_TOKEN = 'diffkc.0123456789abcdef';
const HOUR_MS = 3_600_000;

const ALGORITHMS = {
  ecdsa: { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' },
  rsa: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
};

interface RequestShape {
  cn: string;
  orgs?: string[];
  dns?: string[];
  ips?: string[];
  rsa?: boolean;
}

/** A base64 PEM certificate request of a fresh key. */
async function requestPem(shape: RequestShape): Promise<string> {
  const algorithm = shape.rsa ? ALGORITHMS.rsa : ALGORITHMS.ecdsa;
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const names = [
    ...(shape.dns ?? []).map((value) => ({ type: x509.DNS, value })),
    ...(shape.ips ?? []).map((value) => ({ type: x509.IP, value })),
  ];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [`CN=${shape.cn}`, ...(shape.orgs ?? []).map((o) => `O=${o}`)].join(', '),
    keys,
    signingAlgorithm: algorithm,
    extensions: names.length ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  });
  return Buffer.from(csr.toString('pem')).toString('base64');
}

interface CsrOptions extends RequestShape {
  signerName: string;
  usages: string[];
  expirationSeconds?: number;
  as?: Call;
}

async function createCsr(ctx: ScenarioContext, name: string, options: CsrOptions): Promise<void> {
  const { signerName, usages, expirationSeconds, as = ctx.admin } = options;
  const reply = await as('POST', CSRS, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: `${ctx.prefix}-${name}` },
    spec: { request: await requestPem(options), signerName, usages, expirationSeconds },
  });
  ctx.record(`create ${name}`, `${reply.status} ${reply.json?.message ?? ''}`.trim());
}

/** Writes a condition through the approval subresource (Approved, Denied) or status (Failed), as an admin does. */
async function addCondition(ctx: ScenarioContext, name: string, type: string, agoMs = 0) {
  const at = new Date(Date.now() - agoMs).toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = { type, status: 'True', reason: `Diff${type}`, message: `${type} by diff:kcm`, lastUpdateTime: at };
  await writeStatus(ctx, name, type === 'Failed' ? 'status' : 'approval', (status) => ({
    ...status,
    conditions: [...(status?.conditions ?? []), condition],
  }));
}

async function writeStatus(ctx: ScenarioContext, name: string, sub: string, change: (status: any) => unknown) {
  const path = `${CSRS}/${ctx.prefix}-${name}`;
  const csr = expectStatus(await ctx.admin('GET', path), `reading CSR ${name}`, 200);
  csr.status = change(csr.status);
  expectStatus(await ctx.admin('PUT', `${path}/${sub}`, csr), `${sub} of CSR ${name}`, 200);
}

const issued = (ctx: ScenarioContext, name: string) =>
  ctx.waitFor(`${name} issued`, async () => {
    const { json } = await ctx.admin('GET', `${CSRS}/${ctx.prefix}-${name}`);
    return json?.status?.certificate ? true : undefined;
  });

/** What a node needs to ask for certificates: the bootstrap token and kubeadm's bindings of the CSR roles. */
async function ensureNodeAccess(admin: Call): Promise<void> {
  const [id, secret] = BOOTSTRAP_TOKEN.split('.');
  const token = await admin('POST', '/api/v1/namespaces/kube-system/secrets', {
    metadata: { name: `bootstrap-token-${id}` },
    type: 'bootstrap.kubernetes.io/token',
    stringData: {
      'token-id': id,
      'token-secret': secret,
      'usage-bootstrap-authentication': 'true',
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
    },
  });
  expectStatus(token, 'bootstrap token', 201, 409);
  const bindings: [string, string, string][] = [
    ['diff-kcm-bootstrap', 'system:bootstrappers', 'system:node-bootstrapper'],
    ['diff-kcm-nodeclient', 'system:bootstrappers', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient'],
    ['diff-kcm-selfnodeclient', 'system:nodes', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient'],
  ];
  for (const [name, group, role] of bindings) {
    const reply = await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
    });
    expectStatus(reply, `binding ${name}`, 201, 409);
  }
}

const kubeletClient = { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', orgs: ['system:nodes'] };
const clientUsages = ['digital signature', 'client auth'];
const servingUsages = ['digital signature', 'server auth'];

export const csrScenarios: Scenario[] = [
  {
    name: 'csr-node-client',
    quick: true,
    async run(ctx) {
      await ensureNodeAccess(ctx.admin);
      const bootstrap = ctx.id.token(BOOTSTRAP_TOKEN);
      const cn = `system:node:${NODE}`;
      await createCsr(ctx, 'bootstrap', { ...kubeletClient, cn, usages: clientUsages, as: bootstrap });
      await createCsr(ctx, 'bootstrap-rsa', {
        ...kubeletClient,
        cn,
        rsa: true,
        usages: ['digital signature', 'key encipherment', 'client auth'],
        as: bootstrap,
      });
      await issued(ctx, 'bootstrap');
      await issued(ctx, 'bootstrap-rsa');
      const node = await ctx.id.user({ commonName: cn, organizations: ['system:nodes'] });
      await createCsr(ctx, 'renewal', { ...kubeletClient, cn, usages: clientUsages, as: node });
      await issued(ctx, 'renewal');
      // Another node's name: NodeRestriction refuses it.
      await createCsr(ctx, 'other-node', {
        ...kubeletClient,
        cn: 'system:node:kwok-node-2',
        usages: clientUsages,
        as: node,
      });
      // The same made by an admin, whom RBAC lets ask for any node's client certificate.
      await createCsr(ctx, 'other-node-admin', {
        ...kubeletClient,
        cn: 'system:node:kwok-node-2',
        usages: clientUsages,
      });
      // A server usage on a client signer: not approved automatically; approved by hand, the signer refuses it.
      await createCsr(ctx, 'server-usage', { ...kubeletClient, cn, usages: servingUsages, as: node });
      await ctx.checkpoint('requested');
      await addCondition(ctx, 'server-usage', 'Approved');
    },
  },
  {
    name: 'csr-serving',
    quick: true,
    async run(ctx) {
      await ensureNodeAccess(ctx.admin);
      const cn = `system:node:${NODE}`;
      const node = await ctx.id.user({ commonName: cn, organizations: ['system:nodes'] });
      const serving = { signerName: 'kubernetes.io/kubelet-serving', cn, orgs: ['system:nodes'], as: node };
      await createCsr(ctx, 'addresses', { ...serving, dns: [NODE], ips: ['127.0.0.1'], usages: servingUsages });
      await createCsr(ctx, 'rsa', {
        ...serving,
        rsa: true,
        dns: [NODE],
        usages: ['digital signature', 'key encipherment', 'server auth'],
      });
      await createCsr(ctx, 'no-addresses', { ...serving, usages: servingUsages });
      await createCsr(ctx, 'unapproved', { ...serving, dns: [NODE], usages: servingUsages });
      await ctx.checkpoint('requested');
      for (const name of ['addresses', 'rsa', 'no-addresses']) await addCondition(ctx, name, 'Approved');
      await issued(ctx, 'addresses');
      await issued(ctx, 'rsa');
    },
  },
  {
    name: 'csr-client',
    async run(ctx) {
      const client = { signerName: 'kubernetes.io/kube-apiserver-client', usages: clientUsages, cn: 'alice' };
      const lengths: [string, number | undefined][] = [
        ['min', 600],
        ['hour', 3600],
        ['max', 2 ** 31 - 1],
        ['unset', undefined],
      ];
      for (const [name, expirationSeconds] of lengths) {
        await createCsr(ctx, name, { ...client, orgs: ['devs'], expirationSeconds });
        await addCondition(ctx, name, 'Approved');
      }
      const below = await ctx.admin('POST', CSRS, {
        metadata: { name: `${ctx.prefix}-below-min` },
        spec: { request: await requestPem(client), ...client, expirationSeconds: 599 },
      });
      ctx.record('expirationSeconds 599', below.status);
      await createCsr(ctx, 'denied', client);
      await addCondition(ctx, 'denied', 'Denied');
      await createCsr(ctx, 'other-signer', { ...client, signerName: 'example.com/other' });
      await addCondition(ctx, 'other-signer', 'Approved');
      for (const [name] of lengths) await issued(ctx, name);
    },
  },
  {
    name: 'csr-cleaner',
    async run(ctx) {
      const client = { signerName: 'kubernetes.io/kube-apiserver-client', usages: clientUsages, cn: 'bob' };
      const other = { ...client, signerName: 'example.com/other' };
      for (const name of ['issued-old', 'issued-new', 'denied-old', 'denied-new', 'pending']) {
        await createCsr(ctx, name, client);
      }
      for (const name of ['failed-old', 'expired']) await createCsr(ctx, name, other);
      await addCondition(ctx, 'issued-old', 'Approved', 2 * HOUR_MS);
      await addCondition(ctx, 'issued-new', 'Approved');
      await addCondition(ctx, 'denied-old', 'Denied', 2 * HOUR_MS);
      await addCondition(ctx, 'denied-new', 'Denied', 30 * 60_000);
      await addCondition(ctx, 'failed-old', 'Failed', 2 * HOUR_MS);
      await addCondition(ctx, 'expired', 'Approved');
      const certificate = await expiredCertificate();
      await writeStatus(ctx, 'expired', 'status', (status) => ({ ...status, certificate }));
      await issued(ctx, 'issued-old');
      await issued(ctx, 'issued-new');
      // Both cleaners pass over every CSR at start and then hourly: a restart is when they act.
      await ctx.checkpoint('before-restart');
      await ctx.restartControllerManager();
      await ctx.waitFor('old CSRs cleaned', async () => {
        const { json } = await ctx.admin('GET', CSRS);
        const left = json.items.filter((csr: any) => /-(old|expired)$/.test(csr.metadata.name));
        return left.some((csr: any) => csr.metadata.name.startsWith(ctx.prefix)) ? undefined : true;
      });
    },
  },
];

/** A certificate whose notAfter has passed, as base64 PEM for a CSR's status (the cleaner reads only its dates). */
async function expiredCertificate(): Promise<string> {
  const ca = await createSelfSignedCa({ commonName: 'diff-kcm-expired', now: new Date(Date.now() - 3 * HOUR_MS) });
  const cert = await issueKeyAndCertificate({
    ca,
    subject: { commonName: 'bob' },
    usages: ['client auth'],
    notBefore: new Date(Date.now() - 2 * HOUR_MS),
    notAfter: new Date(Date.now() - HOUR_MS),
  });
  return Buffer.from(cert.certPem).toString('base64');
}
