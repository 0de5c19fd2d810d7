/**
 * Aggregated API backends for tests and the benchmark: real HTTPS servers on 127.0.0.1 with a
 * certificate from a test CA for the service's DNS name, answering discovery of one group version.
 * Not shipped with the daemon's controllers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import type { APIService } from '../../src/api/types/misc.ts';
import { type CertificateWithKey, createSelfSignedCa, issueKeyAndCertificate } from '../../src/pki/certs.ts';

export interface Backend {
  port: number;
  /** Requests seen, by path. */
  requests: string[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export const testCa = (): Promise<CertificateWithKey> => createSelfSignedCa({ commonName: 'apiservice-test-ca' });

/** A serving certificate for `<service>.<namespace>.svc`, the name the probe and the proxy check. */
export function servingCertificate(ca: CertificateWithKey, dnsName: string): Promise<CertificateWithKey> {
  const now = Date.now();
  return issueKeyAndCertificate({
    ca,
    subject: { commonName: dnsName },
    dnsNames: [dnsName],
    usages: ['server auth'],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 24 * 3600_000),
  });
}

/** Answers `/apis/<group>/<version>` with an APIResourceList and every other path with a small JSON document. */
export function discoveryHandler(group: string, version: string): Handler {
  return (req, res) => {
    const body =
      req.url === `/apis/${group}/${version}`
        ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources: [] }
        : { kind: 'Echo', path: req.url, user: req.headers['x-remote-user'] ?? null };
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };
}

export async function startBackend(serving: CertificateWithKey, handler: Handler, port = 0): Promise<Backend> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    requests.push(req.url ?? '');
    handler(req, res);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** A remote APIService for `<version>.<group>` behind `<namespace>/<service>`. */
export function remoteAPIService(
  apiVersion: string,
  group: string,
  version: string,
  ref: { namespace: string; name: string; port?: number },
  extra: Partial<NonNullable<APIService['spec']>> = {},
): APIService {
  return {
    apiVersion,
    kind: 'APIService',
    metadata: { name: `${version}.${group}` },
    spec: { group, version, groupPriorityMinimum: 1000, versionPriority: 15, service: ref, ...extra },
  };
}
