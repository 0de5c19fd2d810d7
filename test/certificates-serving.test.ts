/**
 * Node agent serving CSRs: pending unless the opt-in approval is on; with it on, approved only for the node
 * itself asking for its own addresses, with an Event naming the rule that refused anything else.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateControllers } from '../controllers/certificates/index.ts';
import {
  eventually,
  type RunningControllers,
  runControllers,
  webcryptoRequest,
} from '../controllers/certificates/testing.ts';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import type { NodeAddress } from '../src/api/types/core.ts';
import { createBootstrapToken } from '../src/simulation/bootstrap-token.ts';
import { SimulatedNodeAgent } from '../src/simulation/node-agent.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let c: TestCluster;
let running: RunningControllers | undefined;

beforeAll(async () => {
  c = await startTestCluster();
});
afterAll(async () => {
  await running?.stop();
  await c?.stop();
});

const addressesOf = (i: number): NodeAddress[] => [
  { type: 'InternalIP', address: `10.0.0.${i}` },
  { type: 'InternalIP', address: `fd00::${i}` },
  { type: 'Hostname', address: `worker-${i}` },
];

async function joinedAgent(i: number, addresses = addressesOf(i)): Promise<SimulatedNodeAgent> {
  const { token } = await createBootstrapToken(c.client);
  const agent = new SimulatedNodeAgent({
    server: c.cp.url,
    caPem: c.cp.caPem,
    registry: c.cp.registry,
    nodeName: `worker-${i}`,
    bootstrapToken: token,
    addresses,
    expirationSeconds: 86400,
    timeoutMs: 15_000,
  });
  const outcome = await agent.bootstrap();
  if (!outcome.issued) throw new Error(`worker-${i} did not get a client certificate: ${JSON.stringify(outcome)}`);
  return agent;
}

function eventsAbout(name: string): KubeObject[] {
  const n = c.cp.registry.naming;
  const rt = c.cp.registry.resource(group(n, 'events'), 'v1', 'events')!;
  return c.cp.storage.list(rt).filter((e) => (e.regarding as { name?: string }).name === name);
}

const start = (servingApproval: { enabled: boolean; dnsPatterns?: string[]; maxDurationMs?: number }) =>
  runControllers(c.client, c.cp.registry, certificateControllers, {
    signing: { ...c.cp.caFiles, perSigner: {}, durationMs: 8760 * 3600_000 },
    servingApproval: { dnsPatterns: [], ...servingApproval },
  });

describe('serving approval off (the default)', () => {
  it('leaves a serving CSR pending, even from the node itself', async () => {
    running = await start({ enabled: false });
    const agent = await joinedAgent(1);
    await agent.registerNode();
    const outcome = await agent.requestServingCertificate(1500);
    expect(outcome).toMatchObject({ issued: false, reason: 'timeout' });
    await running.stop();
    running = undefined;
  });
});

describe('serving approval on', () => {
  beforeAll(async () => {
    running = await start({
      enabled: true,
      dnsPatterns: ['[a-z0-9-]+\\.nodes\\.example\\.test'],
      maxDurationMs: 30 * 86400_000,
    });
  });

  it("approves the node's own addresses; the certificate serves TLS for them", async () => {
    const agent = await joinedAgent(2, [
      ...addressesOf(2),
      { type: 'InternalDNS', address: 'worker-2.nodes.example.test' },
    ]);
    await agent.registerNode();
    const outcome = await agent.requestServingCertificate();
    expect(outcome.issued).toBe(true);
    if (!outcome.issued) return;
    const cert = new X509Certificate(outcome.credentials.certPem);
    expect(cert.subjectAltName).toBe(
      'DNS:worker-2, DNS:worker-2.nodes.example.test, IP Address:10.0.0.2, IP Address:FD00:0:0:0:0:0:0:2',
    );
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(cert.checkHost('worker-2')).toBe('worker-2');
    expect(cert.checkIP('10.0.0.2')).toBe('10.0.0.2');
    writeFileSync(join(c.dir, 'ca.pem'), c.cp.caPem);
    writeFileSync(join(c.dir, 'serving.pem'), outcome.credentials.certPem);
    const verify = spawnSync('openssl', ['verify', '-purpose', 'sslserver', '-CAfile', 'ca.pem', 'serving.pem'], {
      cwd: c.dir,
      encoding: 'utf8',
    });
    expect(verify.stdout.trim()).toBe('serving.pem: OK');
  });

  it('leaves pending an IP the Node does not have, with an Event naming the rule', async () => {
    const agent = await joinedAgent(3);
    await agent.registerNode();
    agent.opts.addresses = [...addressesOf(3), { type: 'ExternalIP', address: '192.0.2.99' }];
    const outcome = await agent.requestServingCertificate(1500);
    expect(outcome).toMatchObject({ issued: false, reason: 'timeout' });
    const event = await eventually(() => eventsAbout(outcome.issued ? '' : outcome.csrName)[0]);
    expect(event).toMatchObject({
      type: 'Warning',
      reason: 'ServingCertificateNotApproved',
      note: 'left pending: rule ip-sans: IP SAN 192.0.2.99 is not an address of Node "worker-3"',
    });
  });

  it('approves once the Node appears with the addresses', async () => {
    const agent = await joinedAgent(4);
    const pending = agent.requestServingCertificate(20_000);
    await new Promise((r) => setTimeout(r, 800));
    // Pending: no Node yet, said in an Event; registering the Node brings the CSR back.
    const name = await eventually(
      () =>
        c.cp.storage
          .list(c.cp.registry.byKind('CertificateSigningRequest')!)
          .find((x) => (x.spec as { username?: string }).username === 'system:node:worker-4')?.metadata.name,
    );
    const event = await eventually(() => eventsAbout(name)[0]);
    expect(event.note).toBe('left pending: rule node-exists: Node "worker-4" does not exist');
    await agent.registerNode();
    expect((await pending).issued).toBe(true);
  });

  it('leaves pending a serving CSR from someone else than the node', async () => {
    const agent = await joinedAgent(5);
    await agent.registerNode();
    // The bootstrap identity asks for the node's serving certificate.
    const client = agent.bootstrapClient();
    const { pem } = await webcryptoRequest('ECDSA-P256', {
      organizations: ['system:nodes'],
      commonName: 'system:node:worker-5',
      ipAddresses: ['10.0.0.5'],
    });
    const created = await client.kind('CertificateSigningRequest').create({
      metadata: { generateName: 'serving-' },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName: c.cp.registry.naming.signers.nodeAgentServing,
        usages: ['digital signature', 'server auth'],
      },
    });
    const event = await eventually(() => eventsAbout(created.metadata.name!)[0]);
    expect(event.note).toMatch(
      /^left pending: rule requester: requester "system:bootstrap:[a-z0-9]{6}" is not the subject/,
    );
  });

  it('leaves pending a lifetime over the maximum', async () => {
    const agent = await joinedAgent(6);
    await agent.registerNode();
    agent.opts.expirationSeconds = 60 * 86400;
    const outcome = await agent.requestServingCertificate(1500);
    expect(outcome.issued).toBe(false);
    const event = await eventually(() => eventsAbout(outcome.issued ? '' : outcome.csrName)[0]);
    expect(event.note).toBe('left pending: rule lifetime: requested lifetime 1440h exceeds the maximum 720h');
  });
});
