/**
 * The scenarios' client: requests to the real cluster as an identity of their own (a client certificate of the
 * cluster CA or a bearer token), JSON both ways.
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { issueKeyAndCertificate, loadCa, type Subject } from '../../src/pki/certs.ts';
import type { LocalCluster } from '../cluster/local-cluster.ts';

const REQUEST_TIMEOUT_MS = 10_000;

export interface Reply {
  status: number;
  json: any;
}

export type Call = (method: string, path: string, body?: unknown, contentType?: string) => Promise<Reply>;

/** The body as JSON; a body that is not JSON (a proxy's or a plain-text error) as `{ message }`. */
function parse(text: string): any {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 200) };
  }
}

type Credentials = { cert: string; key: string } | { token: string };

function caller(server: string, ca: string, credentials: Credentials): Call {
  return (method, path, body, contentType = 'application/json') =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { 'content-type': contentType, accept: 'application/json' };
      if ('token' in credentials) headers.authorization = `Bearer ${credentials.token}`;
      const tls = 'cert' in credentials ? credentials : {};
      const req = request(`${server}${path}`, { ca, ...tls, method, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: parse(text) });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
}

/** Callers for the admin, for a user of the cluster CA, and for a bearer token. */
export interface Identities {
  admin: Call;
  user(subject: Subject): Promise<Call>;
  token(token: string): Call;
}

export async function identities(cluster: LocalCluster): Promise<Identities> {
  const caPem = await readFile(cluster.caFiles.certFile, 'utf8');
  const ca = await loadCa(caPem, await readFile(cluster.caFiles.keyFile, 'utf8'));
  const user = async (subject: Subject) => {
    const cert = await issueKeyAndCertificate({
      ca,
      subject,
      usages: ['client auth'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
    });
    return caller(cluster.server, caPem, { cert: cert.certPem, key: cert.keyPem });
  };
  return {
    admin: await user({ commonName: 'diff-kcm-admin', organizations: ['system:masters'] }),
    user,
    token: (token) => caller(cluster.server, caPem, { token }),
  };
}

/** Throws unless the reply's status is one of `ok`, naming the request. */
export function expectStatus(reply: Reply, what: string, ...ok: number[]): any {
  if (!ok.includes(reply.status)) throw new Error(`${what}: ${reply.status} ${reply.json?.message ?? ''}`);
  return reply.json;
}
