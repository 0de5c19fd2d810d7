import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type CertificateWithKey, createSelfSignedCa, issueKeyAndCertificate } from '../pki/certs.ts';
import { type KubeconfigOptions, renderKubeconfig, writeKubeconfig } from './kubeconfig.ts';

const base64 = (text: string) => Buffer.from(text).toString('base64');

let dir: string;
let ca: CertificateWithKey;
let serving: CertificateWithKey;
let client: CertificateWithKey;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  ca = await createSelfSignedCa({ commonName: 'embedded-ca' });
  const notBefore = new Date();
  const validity = { notBefore, notAfter: new Date(notBefore.getTime() + 60 * 60 * 1000) };
  serving = await issueKeyAndCertificate({
    ca,
    ...validity,
    subject: { commonName: 'kube-apiserver' },
    ipAddresses: ['127.0.0.1'],
    usages: ['server auth'],
  });
  client = await issueKeyAndCertificate({
    ca,
    ...validity,
    subject: { commonName: 'admin', organizations: ['system:masters'] },
    usages: ['client auth'],
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function adminOptions(server = 'https://127.0.0.1:6443'): KubeconfigOptions {
  return {
    server,
    caPem: ca.certPem,
    user: { name: 'admin', clientCertPem: client.certPem, clientKeyPem: client.keyPem },
    clusterName: 'embedded',
    contextName: 'admin@embedded',
    namespace: 'kube-system',
  };
}

describe('renderKubeconfig', () => {
  it('renders one cluster, user and context with the PEMs embedded as base64', () => {
    expect(parse(renderKubeconfig(adminOptions()))).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'embedded',
          cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': base64(ca.certPem) },
        },
      ],
      users: [
        {
          name: 'admin',
          user: { 'client-certificate-data': base64(client.certPem), 'client-key-data': base64(client.keyPem) },
        },
      ],
      contexts: [{ name: 'admin@embedded', context: { cluster: 'embedded', user: 'admin', namespace: 'kube-system' } }],
      'current-context': 'admin@embedded',
      preferences: {},
    });
  });

  it('leaves out what is not given', () => {
    const options = { ...adminOptions(), user: { name: 'robot', token: 'abc.def' }, namespace: undefined };
    const config = parse(renderKubeconfig(options));
    expect(config.users).toEqual([{ name: 'robot', user: { token: 'abc.def' } }]);
    expect(config.contexts[0].context).toEqual({ cluster: 'embedded', user: 'robot' });
  });

  it('refuses a client certificate without its key', () => {
    const options = { ...adminOptions(), user: { name: 'admin', clientCertPem: client.certPem } };
    expect(() => renderKubeconfig(options)).toThrow('user "admin" needs both a client certificate and its key');
  });
});

describe('writeKubeconfig', () => {
  it('creates the directory and writes the file readable by its owner only', async () => {
    const path = join(dir, 'new', '.kube', 'config');
    await writeKubeconfig(path, adminOptions());

    expect(readFileSync(path, 'utf8')).toBe(renderKubeconfig(adminOptions()));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'new', '.kube')).mode & 0o777).toBe(0o700);
  });

  it('replaces an existing file, tightening its mode and leaving nothing else behind', async () => {
    const path = join(dir, 'replaced');
    writeFileSync(path, 'old', { mode: 0o644 });
    await writeKubeconfig(path, adminOptions());

    expect(readFileSync(path, 'utf8')).toBe(renderKubeconfig(adminOptions()));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.startsWith('replaced'))).toEqual(['replaced']);
  });
});

describe('a written kubeconfig, loaded by @kubernetes/client-node', () => {
  /** Requests the server with the TLS options and headers the kubeconfig's current context gives. */
  async function get(kubeconfig: KubeConfig, url: string): Promise<unknown> {
    const options = {};
    await kubeconfig.applyToHTTPSOptions(options);
    return new Promise((resolve, reject) => {
      request(url, options, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve(JSON.parse(body)));
      })
        .on('error', reject)
        .end();
    });
  }

  it.each([
    ['a client certificate', undefined, { subject: { CN: 'admin', O: 'system:masters' }, authorization: null }],
    ['a token', { name: 'robot', token: 'abc.def' }, { subject: null, authorization: 'Bearer abc.def' }],
  ])('authenticates to the server with %s', async (_credential, user, expected) => {
    // Like an API server: client certificates are optional, and the CA must have signed those that are sent.
    const server = createServer(
      { key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        const subject = socket.authorized ? { ...socket.getPeerCertificate().subject } : null;
        res.end(JSON.stringify({ subject, authorization: req.headers.authorization ?? null }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const path = join(dir, 'loaded', 'config');
      await writeKubeconfig(path, { ...adminOptions(url), user: user ?? adminOptions().user });

      const kubeconfig = new KubeConfig();
      kubeconfig.loadFromFile(path);
      expect(kubeconfig.getCurrentContext()).toBe('admin@embedded');
      expect(kubeconfig.getContextObject('admin@embedded')?.namespace).toBe('kube-system');
      expect(kubeconfig.getCurrentCluster()?.server).toBe(url);
      expect(await get(kubeconfig, `${url}/api`)).toEqual(expected);
    } finally {
      server.close();
    }
  });
});
