/**
 * The two servers the corpus is replayed against: a fresh embedded control plane in the kubernetes flavor (in this
 * process, memory store) and a fresh real kube-apiserver with its etcd (no controllers, scheduler or nodes, so that
 * nothing but the corpus changes objects). Each gives the TLS options of every identity the corpus runs as.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ControlPlane } from '../../src/controlplane/control-plane.ts';
import { type CertificateWithKey, issueKeyAndCertificate, loadCa, type Subject } from '../../src/pki/certs.ts';
import { startLocalCluster } from '../../test/cluster/local-cluster.ts';

/** Who a request runs as: the cluster admin, a user holding only the corpus's Role, nobody, or a rejected token. */
export type Identity = 'admin' | 'limited' | 'anonymous' | 'badtoken';
export const IDENTITIES: readonly Identity[] = ['admin', 'limited', 'anonymous', 'badtoken'];

/** The corpus grants this user its rights (tools/conformance/corpus/00-setup.yaml). */
export const LIMITED_USER: Subject = { commonName: 'conform-user', organizations: ['conform-group'] };

export interface Credentials {
  ca: string;
  cert?: string;
  key?: string;
  headers?: Record<string, string>;
}

export interface Substrate {
  name: 'real' | 'embedded';
  server: string;
  credentials: Record<Identity, Credentials>;
  stop(): Promise<void>;
}

async function credentialsFrom(ca: CertificateWithKey, serverCa: string): Promise<Record<Identity, Credentials>> {
  const client = async (subject: Subject): Promise<Credentials> => {
    const pair = await issueKeyAndCertificate({
      ca,
      subject,
      usages: ['client auth'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 24 * 3600_000),
    });
    return { ca: serverCa, cert: pair.certPem, key: pair.keyPem };
  };
  return {
    admin: await client({ commonName: 'conform-admin', organizations: ['system:masters'] }),
    limited: await client(LIMITED_USER),
    anonymous: { ca: serverCa },
    badtoken: { ca: serverCa, headers: { authorization: 'Bearer not-a-known-token' } },
  };
}

export async function startEmbedded(dir: string): Promise<Substrate> {
  const cp = new ControlPlane({ flavor: 'kubernetes', storage: 'memory', port: 0, dataDir: dir });
  await cp.start();
  return {
    name: 'embedded',
    server: cp.url,
    credentials: await credentialsFrom(cp.clusterCa, cp.caPem),
    async stop() {
      await cp.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startReal(dir: string, log: (line: string) => void): Promise<Substrate> {
  const cluster = await startLocalCluster({ dir, apiServerOnly: true, log });
  try {
    const pki = join(dir, 'pki');
    const caPem = await readFile(join(pki, 'ca.crt'), 'utf8');
    const ca = await loadCa(caPem, await readFile(join(pki, 'ca.key'), 'utf8'));
    return {
      name: 'real',
      server: cluster.server,
      credentials: await credentialsFrom(ca, caPem),
      async stop() {
        await cluster.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
