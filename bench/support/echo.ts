/** The floor of API writes: a bare node HTTPS server that parses each JSON body and answers it back with 201. */
import { createServer } from 'node:https';
import { type CertificateWithKey, issueKeyAndCertificate } from '../../src/pki/certs.ts';

export interface EchoServer {
  port: number;
  close(): void;
}

/** Listens on a free port of 127.0.0.1 with a serving certificate from `ca`. */
export async function startEchoServer(ca: CertificateWithKey): Promise<EchoServer> {
  const serving = await issueKeyAndCertificate({
    ca,
    subject: { commonName: 'echo' },
    ipAddresses: ['127.0.0.1'],
    usages: ['server auth'],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3600_000),
  });
  const server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    close() {
      server.close();
      server.closeAllConnections();
    },
  };
}
