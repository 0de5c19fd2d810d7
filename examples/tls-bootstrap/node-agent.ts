/**
 * TLS bootstrap of a simulated node agent against a running cluster (e.g. `npm start`):
 *
 *   node --import tsx examples/tls-bootstrap/node-agent.ts [--kubeconfig FILE] [--node worker-1]
 *
 * The kubeconfig is `$KUBECONFIG` or `.orch/kubeconfig` unless given; the naming flavor is the server's.
 *
 * As the administrator it creates a bootstrap token (a Secret in the system namespace). As the node agent it
 * then authenticates with that token, asks for a client certificate through a CertificateSigningRequest with a
 * key of its own, waits for the approving and signing controllers, calls the API with the certificate, and
 * renews it with the certificate itself.
 */
import { X509Certificate } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ResourceRegistry } from '../../src/api/registry.ts';
import { KubeClient } from '../../src/client/client.ts';
import { detectFlavor } from '../../src/client/flavor.ts';
import { KubeConfig } from '../../src/client/kubeconfig.ts';
import { createBootstrapToken } from '../../src/simulation/bootstrap-token.ts';
import { type CertificateOutcome, SimulatedNodeAgent } from '../../src/simulation/node-agent.ts';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string', default: process.env.KUBECONFIG || '.orch/kubeconfig' },
    node: { type: 'string', default: 'worker-1' },
  },
});

function show(step: string, outcome: CertificateOutcome): void {
  if (!outcome.issued) {
    console.log(
      `${step}: CSR ${outcome.csrName} not issued (${outcome.reason}${outcome.message ? `: ${outcome.message}` : ''})`,
    );
    process.exit(1);
  }
  const cert = new X509Certificate(outcome.credentials.certPem);
  console.log(
    `${step}: CSR ${outcome.credentials.csrName} issued: ${cert.subject.replace('\n', ', ')}, valid to ${cert.validTo}`,
  );
}

async function main(): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(values.kubeconfig!);
  const cluster = kc.getCurrentCluster();
  if (!cluster?.caData) throw new Error(`${values.kubeconfig}: the current cluster has no embedded CA data`);
  const registry = new ResourceRegistry(await detectFlavor(kc));
  const admin = new KubeClient(kc, registry, { qps: 0 });

  const token = await createBootstrapToken(admin, { ttlMs: 3600_000, description: 'examples/tls-bootstrap' });
  console.log(`bootstrap token created: Secret ${token.object.metadata.namespace}/${token.object.metadata.name}`);

  const agent = new SimulatedNodeAgent({
    server: cluster.server,
    caPem: Buffer.from(cluster.caData, 'base64').toString('utf8'),
    registry,
    nodeName: values.node!,
    bootstrapToken: token.token,
    expirationSeconds: 3600,
  });
  const before = await agent.whoAmI(agent.bootstrapClient());
  console.log(`with the token, the API sees: ${before.username} in [${before.groups.join(', ')}]`);

  show('bootstrap', await agent.bootstrap());
  const after = await agent.whoAmI();
  console.log(`with the certificate, the API sees: ${after.username} in [${after.groups.join(', ')}]`);

  show('renewal', await agent.renew());
  console.log(`kubectl get csr shows both requests as Approved,Issued`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
