/**
 * What a node agent does to join a cluster in embedded mode (TLS bootstrap): with a bootstrap token it asks
 * for a client certificate through a CertificateSigningRequest with a key of its own, waits for approval and
 * the certificate, and from then on calls the API with that certificate as `system:node:<name>`. It renews
 * the same way with its current certificate (the `selfnodeclient` path), registers its Node with addresses,
 * and may ask for a serving certificate for those addresses.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { group } from '../api/naming.ts';
import { NODE_USER_PREFIX, NODES_GROUP } from '../api/node-identity.ts';
import type { ResourceRegistry } from '../api/registry.ts';
import type { CertificateSigningRequest, KeyUsage } from '../api/types/certificates.ts';
import type { Node, NodeAddress } from '../api/types/core.ts';
import { KubeClient } from '../client/client.ts';
import { isNotFound } from '../client/errors.ts';
import { KubeConfig } from '../client/kubeconfig.ts';
import { exportPrivateKeyPem, generateKeyPair, type KeyAlgorithm, signingAlgorithmFor } from '../pki/keys.ts';
import { derToPem } from '../pki/pem.ts';

x509.cryptoProvider.set(webcrypto);

export interface NodeAgentOptions {
  server: string;
  /** The cluster CA the agent trusts the API server with. */
  caPem: string;
  registry: ResourceRegistry;
  nodeName: string;
  /** `<id>.<secret>`: the credential for the first certificate. */
  bootstrapToken?: string;
  /** Key of each new certificate; ECDSA P-256 by default, like the reference's node agent. */
  keyAlg?: KeyAlgorithm;
  /** Requested lifetime of the certificates. */
  expirationSeconds?: number;
  /** The addresses the Node reports, and the SANs of its serving certificate. */
  addresses?: NodeAddress[];
  /** How long to wait for a certificate. */
  timeoutMs?: number;
}

export interface Credentials {
  certPem: string;
  keyPem: string;
  /** The CSR that produced the certificate. */
  csrName: string;
}

export type CertificateOutcome =
  | { issued: true; credentials: Credentials }
  | { issued: false; csrName: string; reason: 'denied' | 'failed' | 'timeout'; message?: string };

export class SimulatedNodeAgent {
  credentials?: Credentials;
  serving?: Credentials;

  constructor(readonly opts: NodeAgentOptions) {}

  get username(): string {
    return `${NODE_USER_PREFIX}${this.opts.nodeName}`;
  }

  /** A client authenticating with the bootstrap token. */
  bootstrapClient(): KubeClient {
    if (!this.opts.bootstrapToken) throw new Error('no bootstrap token');
    return this.client({ name: 'bootstrap', token: this.opts.bootstrapToken });
  }

  /** A client authenticating with the current client certificate. */
  nodeClient(): KubeClient {
    const c = this.credentials;
    if (!c) throw new Error(`node ${this.opts.nodeName} has no client certificate yet`);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    return this.client({ name: this.username, certData: b64(c.certPem), keyData: b64(c.keyPem) });
  }

  /** First join: a client certificate asked for with the bootstrap token. */
  async bootstrap(): Promise<CertificateOutcome> {
    const outcome = await this.requestClientCertificate(this.bootstrapClient());
    if (outcome.issued) this.credentials = outcome.credentials;
    return outcome;
  }

  /** Renewal: a new key and certificate asked for with the current certificate. */
  async renew(): Promise<CertificateOutcome> {
    const outcome = await this.requestClientCertificate(this.nodeClient());
    if (outcome.issued) this.credentials = outcome.credentials;
    return outcome;
  }

  /** Who the API server sees (a SelfSubjectReview) with the current certificate. */
  async whoAmI(client = this.nodeClient()): Promise<{ username: string; groups: string[] }> {
    const n = this.opts.registry.naming;
    const res = await client.request<{ status?: { userInfo?: { username: string; groups?: string[] } } }>(
      'POST',
      `/apis/${group(n, 'authentication')}/v1/selfsubjectreviews`,
      { body: { apiVersion: `${group(n, 'authentication')}/v1`, kind: 'SelfSubjectReview', metadata: {} } },
    );
    const info = res.body.status?.userInfo;
    return { username: info?.username ?? '', groups: info?.groups ?? [] };
  }

  /** Registers (or refreshes) the Node object with the configured addresses, as the node itself. */
  async registerNode(): Promise<Node> {
    const nodes = this.nodeClient().kind<Node>('Node');
    let node: Node;
    try {
      node = await nodes.get(undefined, this.opts.nodeName);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      node = await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: this.opts.nodeName } });
    }
    const status = { ...node.status, addresses: this.opts.addresses ?? [] };
    return nodes.replaceStatus({ ...node, status });
  }

  /** A serving certificate for the node's addresses (pending until someone approves it). */
  async requestServingCertificate(timeoutMs = this.opts.timeoutMs): Promise<CertificateOutcome> {
    const addresses = this.opts.addresses ?? [];
    const ips = addresses.filter((a) => a.type.endsWith('IP')).map((a) => a.address);
    const dns = addresses.filter((a) => !a.type.endsWith('IP')).map((a) => a.address);
    const outcome = await this.requestCertificate(this.nodeClient(), {
      signerName: this.opts.registry.naming.signers.nodeAgentServing,
      usages: ['digital signature', 'server auth'],
      dnsNames: dns,
      ipAddresses: ips,
      timeoutMs,
    });
    if (outcome.issued) this.serving = outcome.credentials;
    return outcome;
  }

  private requestClientCertificate(client: KubeClient): Promise<CertificateOutcome> {
    return this.requestCertificate(client, {
      signerName: this.opts.registry.naming.signers.apiServerClientNodeAgent,
      // ECDSA and Ed25519 keys cannot encipher keys: the reference's node agent then leaves that usage out.
      usages: (this.opts.keyAlg ?? 'ECDSA-P256').startsWith('RSA')
        ? ['digital signature', 'key encipherment', 'client auth']
        : ['digital signature', 'client auth'],
      dnsNames: [],
      ipAddresses: [],
      timeoutMs: this.opts.timeoutMs,
    });
  }

  private async requestCertificate(
    client: KubeClient,
    req: { signerName: string; usages: KeyUsage[]; dnsNames: string[]; ipAddresses: string[]; timeoutMs?: number },
  ): Promise<CertificateOutcome> {
    const keys = await generateKeyPair(this.opts.keyAlg ?? 'ECDSA-P256');
    const names = [
      ...req.dnsNames.map((value) => ({ type: 'dns' as const, value })),
      ...req.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ];
    const request = await x509.Pkcs10CertificateRequestGenerator.create({
      name: new x509.Name([{ O: [NODES_GROUP] }, { CN: [this.username] }]),
      keys,
      signingAlgorithm: signingAlgorithmFor(keys.privateKey),
      extensions: names.length ? [new x509.SubjectAlternativeNameExtension(names)] : [],
    });
    const csrs = client.kind<CertificateSigningRequest>('CertificateSigningRequest');
    const created = await csrs.create({
      metadata: { generateName: 'node-csr-' },
      spec: {
        request: Buffer.from(derToPem(request.rawData, 'CERTIFICATE REQUEST')).toString('base64'),
        signerName: req.signerName,
        usages: req.usages,
        expirationSeconds: this.opts.expirationSeconds,
      },
    });
    const name = created.metadata.name!;
    const deadline = Date.now() + (req.timeoutMs ?? 30_000);
    for (let wait = 25; ; wait = Math.min(wait * 2, 500)) {
      const csr = await csrs.get(undefined, name);
      const certificate = csr.status?.certificate;
      if (certificate) {
        const certPem = Buffer.from(certificate, 'base64').toString('utf8');
        return {
          issued: true,
          credentials: { certPem, keyPem: await exportPrivateKeyPem(keys.privateKey), csrName: name },
        };
      }
      const decided = (csr.status?.conditions ?? []).find((c) => c.type === 'Denied' || c.type === 'Failed');
      if (decided) {
        return {
          issued: false,
          csrName: name,
          reason: decided.type === 'Denied' ? 'denied' : 'failed',
          message: decided.message,
        };
      }
      if (Date.now() > deadline) return { issued: false, csrName: name, reason: 'timeout' };
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  private client(user: { name: string; token?: string; certData?: string; keyData?: string }): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'cluster', server: this.opts.server, caData: Buffer.from(this.opts.caPem).toString('base64') },
      ],
      users: [user],
      contexts: [{ name: 'node', cluster: 'cluster', user: user.name }],
      currentContext: 'node',
    });
    return new KubeClient(kc, this.opts.registry, { qps: 0, userAgent: `node-agent/${this.opts.nodeName}` });
  }
}
