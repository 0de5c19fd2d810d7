import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { PublicKey } from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCaCertificate } from './ca-certificate.ts';
import {
  type CertificateWithKey,
  createSelfSignedCa,
  type IssueKeyAndCertificateOptions,
  issueCertificate,
  issueKeyAndCertificate,
  loadCa,
} from './certs.ts';
import { generateKeyPair, type KeyAlgorithm } from './keys.ts';
import { pemToDer } from './pem.ts';

const ALGORITHMS: KeyAlgorithm[] = ['RSA-2048', 'ECDSA-P256', 'ECDSA-P384', 'Ed25519'];
const HOUR_MS = 60 * 60 * 1000;
/** A CA validity start well before the fixed leaf validity windows below, whatever the clock says. */
const CA_START = new Date('2026-01-01T00:00:00Z');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pki-certs-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the openssl CLI on files written to the temp dir; returns its output, failing on a non-zero exit. */
function openssl(args: string[], files: Record<string, string> = {}): string {
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}${result.stdout}`);
  return result.stdout;
}

function opensslText(certPem: string): string {
  return openssl(['x509', '-in', 'cert.pem', '-noout', '-text'], { 'cert.pem': certPem });
}

/** An extension as `openssl x509 -text` shows it, e.g. `critical, Digital Signature` for `X509v3 Key Usage`. */
function extension(text: string, name: string): string | undefined {
  const match = new RegExp(`X509v3 ${name}:( critical)?\\s*\\n\\s*(.*)`).exec(text);
  return match?.[1] ? `critical, ${match[2]}` : match?.[2];
}

function leafOptions(ca: CertificateWithKey, notBefore = new Date()): IssueKeyAndCertificateOptions {
  return {
    ca,
    subject: { commonName: 'leaf', organizations: ['dev'] },
    dnsNames: ['localhost', 'api.example.test'],
    ipAddresses: ['127.0.0.1', '::1'],
    usages: ['server auth', 'client auth'],
    notBefore,
    notAfter: new Date(notBefore.getTime() + HOUR_MS),
  };
}

describe('createSelfSignedCa', () => {
  it.each(ALGORITHMS)('makes a self-signed %s CA certificate', async (keyAlg) => {
    const now = new Date('2030-01-02T03:04:05Z');
    const ca = await createSelfSignedCa({ commonName: 'test-ca', keyAlg, validityDays: 30, now });

    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=test-ca');
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(new Date(cert.validFrom)).toEqual(now);
    expect(new Date(cert.validTo)).toEqual(new Date('2030-02-01T03:04:05Z'));
    const text = opensslText(ca.certPem);
    expect(extension(text, 'Basic Constraints')).toBe('critical, CA:TRUE');
    expect(extension(text, 'Key Usage')).toBe('critical, Digital Signature, Certificate Sign, CRL Sign');
    expect(extension(text, 'Subject Key Identifier')).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
    expect(ca.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(openssl(['pkey', '-in', 'key.pem', '-pubout'], { 'key.pem': ca.keyPem })).toBe(
      cert.publicKey.export({ type: 'spki', format: 'pem' }),
    );
  });

  it('defaults to an ECDSA P-256 key valid for ten years from now', async () => {
    const before = Date.now();
    const ca = await createSelfSignedCa({ commonName: 'test-ca' });

    const cert = new X509Certificate(ca.certPem);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const validFrom = new Date(cert.validFrom).getTime();
    expect(validFrom).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(validFrom).toBeLessThanOrEqual(Date.now());
    expect(new Date(cert.validTo).getTime() - validFrom).toBe(3650 * 24 * HOUR_MS);
  });
});

describe('issueKeyAndCertificate', () => {
  const cas = new Map<KeyAlgorithm, CertificateWithKey>();
  beforeAll(async () => {
    for (const keyAlg of ALGORITHMS) {
      cas.set(keyAlg, await createSelfSignedCa({ commonName: `${keyAlg} CA`, keyAlg, now: CA_START }));
    }
  });

  const combinations = ALGORITHMS.flatMap((caAlg) =>
    ALGORITHMS.map((leafAlg): [KeyAlgorithm, KeyAlgorithm] => [caAlg, leafAlg]),
  );
  it.each(combinations)('a %s CA issues a %s certificate that verifies independently', async (caAlg, leafAlg) => {
    const ca = cas.get(caAlg)!;
    const notBefore = new Date('2026-05-06T07:08:09Z');
    const leaf = await issueKeyAndCertificate({ ...leafOptions(ca, notBefore), keyAlg: leafAlg });

    const cert = new X509Certificate(leaf.certPem);
    const caCert = new X509Certificate(ca.certPem);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(leaf.keyPem))).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.subject).toBe('O=dev\nCN=leaf');
    expect(cert.issuer).toBe(`CN=${caAlg} CA`);
    expect(cert.subjectAltName).toBe(
      'DNS:localhost, DNS:api.example.test, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(new Date(cert.validFrom)).toEqual(notBefore);
    expect(new Date(cert.validTo)).toEqual(new Date('2026-05-06T08:08:09Z'));
    const serial = BigInt(`0x${cert.serialNumber}`);
    expect(serial >= 2n ** 127n && serial < 2n ** 128n).toBe(true);

    const text = opensslText(leaf.certPem);
    expect(extension(text, 'Basic Constraints')).toBe('critical, CA:FALSE');
    const keyUsage = leafAlg === 'RSA-2048' ? 'Digital Signature, Key Encipherment' : 'Digital Signature';
    expect(extension(text, 'Key Usage')).toBe(`critical, ${keyUsage}`);
    expect(extension(text, 'Extended Key Usage')).toBe('TLS Web Server Authentication, TLS Web Client Authentication');
    expect(extension(text, 'Authority Key Identifier')).toBe(
      extension(opensslText(ca.certPem), 'Subject Key Identifier'),
    );

    const files = { 'ca.pem': ca.certPem, 'leaf.pem': leaf.certPem };
    const attime = String(notBefore.getTime() / 1000 + 60);
    expect(openssl(['verify', '-x509_strict', '-attime', attime, '-CAfile', 'ca.pem', 'leaf.pem'], files)).toBe(
      'leaf.pem: OK\n',
    );
  });

  it('is rejected by openssl outside its validity window', async () => {
    const ca = cas.get('ECDSA-P256')!;
    const notBefore = new Date('2026-05-06T07:08:09Z');
    const leaf = await issueKeyAndCertificate(leafOptions(ca, notBefore));
    const files = { 'ca.pem': ca.certPem, 'leaf.pem': leaf.certPem };
    for (const offset of [-60, HOUR_MS / 1000 + 60]) {
      const attime = String(notBefore.getTime() / 1000 + offset);
      expect(() => openssl(['verify', '-attime', attime, '-CAfile', 'ca.pem', 'leaf.pem'], files)).toThrow(
        offset < 0 ? /certificate is not yet valid/ : /certificate has expired/,
      );
    }
  });
});

describe('issueCertificate', () => {
  let ca: CertificateWithKey;
  beforeAll(async () => {
    ca = await createSelfSignedCa({ commonName: 'test-ca' });
  });

  it('certifies a public key given as a peculiar PublicKey, with the serial asked for', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    const { certPem } = await issueCertificate({
      ...leafOptions(ca),
      publicKey: new PublicKey(spki),
      dnsNames: [],
      ipAddresses: [],
      usages: ['client auth'],
      serial: 0xff01n,
    });

    const cert = new X509Certificate(certPem);
    expect(cert.publicKey.equals(publicKey)).toBe(true);
    expect(cert.serialNumber).toBe('FF01');
    expect(cert.subjectAltName).toBeUndefined();
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(extension(opensslText(certPem), 'Key Usage')).toBe('critical, Digital Signature, Key Encipherment');
  });

  it('encodes names with special characters exactly', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const subject = { commonName: 'système, "quoted" #1', organizations: ['system:masters', 'a+b\\c'] };
    const { certPem } = await issueCertificate({ ...leafOptions(ca), subject, publicKey: keys.publicKey });

    const nameopt = 'sep_multiline,utf8,lname,space_eq';
    const names = openssl(['x509', '-in', 'cert.pem', '-noout', '-subject', '-nameopt', nameopt], {
      'cert.pem': certPem,
    });
    expect(names).toBe(
      'subject=\n    organizationName = system:masters\n    organizationName = a+b\\c\n' +
        '    commonName = système, "quoted" #1\n',
    );
  });

  it('rejects invalid requests', async () => {
    const { publicKey } = await generateKeyPair('ECDSA-P256');
    const options = { ...leafOptions(ca), publicKey };
    await expect(issueCertificate({ ...options, usages: [] })).rejects.toThrow('at least one usage');
    await expect(issueCertificate({ ...options, notAfter: options.notBefore })).rejects.toThrow('notAfter');
    await expect(issueCertificate({ ...options, ipAddresses: ['localhost'] })).rejects.toThrow('invalid IP address');
    for (const serial of [0n, -1n, 2n ** 159n]) {
      await expect(issueCertificate({ ...options, serial })).rejects.toThrow('serial must be positive');
    }
  });
});

describe('loadCa', () => {
  /** Makes a CA with the openssl CLI, leaving ca.pem and key.pem (PKCS#8) in the temp dir. */
  function opensslCa(newkey: string, ...extensions: string[]): { certPem: string; keyPem: string } {
    const addext = extensions.map((value) => `-addext ${value}`).join(' ');
    const command = `req -x509 -newkey ${newkey} -nodes -subj /O=ext/CN=ext-ca -days 1 ${addext}`;
    openssl(`${command} -keyout key.pem -out ca.pem`.split(' '));
    return { certPem: openssl(['x509', '-in', 'ca.pem']), keyPem: openssl(['pkey', '-in', 'key.pem']) };
  }

  it('loads a CA it made and issues with it', async () => {
    const made = await createSelfSignedCa({ commonName: 'test-ca', keyAlg: 'Ed25519' });
    const ca = await loadCa(made.certPem, made.keyPem);
    const leaf = await issueKeyAndCertificate(leafOptions(ca));
    expect(new X509Certificate(leaf.certPem).verify(new X509Certificate(made.certPem).publicKey)).toBe(true);
  });

  it.each([
    ['ec -pkeyopt ec_paramgen_curve:P-384', 'EC PRIVATE KEY'],
    ['rsa:2048', 'RSA PRIVATE KEY'],
  ])('loads an openssl-made CA (%s) with a %s PEM, and issues certificates that chain to it', async (newkey, type) => {
    const { certPem } = opensslCa(newkey, 'keyUsage=critical,keyCertSign,cRLSign');
    const legacyKeyPem = openssl(['pkey', '-in', 'key.pem', '-traditional']);
    expect(legacyKeyPem).toMatch(new RegExp(`^-----BEGIN ${type}-----\n`));

    const ca = await loadCa(certPem, legacyKeyPem);
    const leaf = await issueKeyAndCertificate(leafOptions(ca));
    expect(new X509Certificate(leaf.certPem).issuer).toBe('O=ext\nCN=ext-ca');
    const files = { 'leaf.pem': leaf.certPem };
    expect(openssl(['verify', '-x509_strict', '-CAfile', 'ca.pem', 'leaf.pem'], files)).toBe('leaf.pem: OK\n');
  });

  it('identifies a CA without a subject key identifier by the SHA-1 of its key, as openssl does', async () => {
    const { certPem, keyPem } = opensslCa(
      'ec -pkeyopt ec_paramgen_curve:P-256',
      'keyUsage=critical,keyCertSign',
      'subjectKeyIdentifier=none',
      'authorityKeyIdentifier=none',
    );
    expect(extension(opensslText(certPem), 'Subject Key Identifier')).toBeUndefined();
    const leaf = await issueKeyAndCertificate(leafOptions(await loadCa(certPem, keyPem)));

    openssl('req -x509 -key key.pem -subj /CN=same-key -days 1 -out same-key.pem'.split(' '));
    const opensslKeyId = extension(opensslText(openssl(['x509', '-in', 'same-key.pem'])), 'Subject Key Identifier');
    expect(extension(opensslText(leaf.certPem), 'Authority Key Identifier')).toBe(opensslKeyId);
    // The daemon's signer reads the same identifier by hand.
    const { keyId } = readCaCertificate(pemToDer(certPem, 'CERTIFICATE'), createPrivateKey(keyPem));
    expect(Buffer.from(keyId).toString('hex').toUpperCase().match(/../g)?.join(':')).toBe(opensslKeyId);
    expect(openssl(['verify', '-CAfile', 'ca.pem', 'leaf.pem'], { 'leaf.pem': leaf.certPem })).toBe('leaf.pem: OK\n');
  });

  it('explains what is wrong', async () => {
    const ca = await createSelfSignedCa({ commonName: 'test-ca' });
    const other = await createSelfSignedCa({ commonName: 'other-ca' });
    const leaf = await issueKeyAndCertificate(leafOptions(ca));
    await expect(loadCa(leaf.certPem, leaf.keyPem)).rejects.toThrow('certificate "O=dev, CN=leaf" is not a CA');
    await expect(loadCa(ca.certPem, other.keyPem)).rejects.toThrow(
      'the private key does not belong to CA certificate "CN=test-ca"',
    );
    await expect(loadCa(ca.certPem + other.certPem, ca.keyPem)).rejects.toThrow(
      'expected exactly one CERTIFICATE block, found 2',
    );
    await expect(loadCa(ca.certPem, ca.certPem)).rejects.toThrow('PEM block, found 0');
    const noSigning = opensslCa('ec -pkeyopt ec_paramgen_curve:P-256', 'keyUsage=critical,digitalSignature');
    await expect(loadCa(noSigning.certPem, noSigning.keyPem)).rejects.toThrow('keyUsage lacks keyCertSign');
  });
});

describe('TLS with issued certificates', () => {
  /**
   * Serves HTTPS with `server`, requiring a client certificate, and sends it a request over `tls.connect` with `client`.
   * Returns what the client saw of the server, and what the server saw of the client: its certificate's subject,
   * which it responds with, or why it refused the client's certificate.
   */
  async function handshake(
    ca: CertificateWithKey,
    server: CertificateWithKey,
    client: CertificateWithKey,
    host: string,
  ) {
    let refusal: string | undefined; // a code such as UNABLE_TO_VERIFY_LEAF_SIGNATURE, typed as an Error by @types/node
    const https = createServer(
      { key: server.keyPem, cert: server.certPem, ca: ca.certPem, requestCert: true },
      (request, response) => response.end(JSON.stringify((request.socket as TLSSocket).getPeerCertificate().subject)),
    ).on('tlsClientError', (_error, socket) => {
      refusal = String(socket.authorizationError);
    });
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = https.address() as AddressInfo;
      const servername = host === '127.0.0.1' ? undefined : host;
      const { certPem: cert, keyPem: key } = client;
      const socket = connect({ host: '127.0.0.1', port, servername, ca: ca.certPem, cert, key });
      const serverSubject = await new Promise((resolve, reject) =>
        socket.once('secureConnect', () => resolve({ ...socket.getPeerCertificate().subject })).once('error', reject),
      );
      const authorized = socket.authorized;
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      const response = await new Promise<string>((resolve, reject) => {
        let text = '';
        socket.setEncoding('utf8');
        socket
          .on('data', (chunk) => (text += chunk))
          .once('end', () => resolve(text))
          .once('error', reject);
      });
      const body = response.split('\r\n\r\n')[1];
      return { authorized, serverSubject, clientSubject: body && JSON.parse(body), refusal };
    } finally {
      https.close();
    }
  }

  it.each(ALGORITHMS)('authenticates both sides with %s certificates', async (keyAlg) => {
    const ca = await createSelfSignedCa({ commonName: 'tls-ca', keyAlg });
    const server = await issueKeyAndCertificate({
      ...leafOptions(ca),
      keyAlg,
      subject: { commonName: 'api-server' },
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      usages: ['server auth'],
    });
    const client = await issueKeyAndCertificate({
      ...leafOptions(ca),
      keyAlg,
      subject: { commonName: 'alice', organizations: ['system:masters', 'dev'] },
      dnsNames: [],
      ipAddresses: [],
      usages: ['client auth'],
    });

    for (const host of ['127.0.0.1', 'localhost']) {
      const seen = await handshake(ca, server, client, host);
      expect(seen.authorized).toBe(true);
      expect(seen.serverSubject).toEqual({ CN: 'api-server' });
      expect(seen.clientSubject).toEqual({ CN: 'alice', O: ['system:masters', 'dev'] });
      expect(seen.refusal).toBeUndefined();
    }
  });

  it('refuses a client certificate from another CA and a server name the certificate lacks', async () => {
    const ca = await createSelfSignedCa({ commonName: 'tls-ca' });
    const other = await createSelfSignedCa({ commonName: 'other-ca' });
    const server = await issueKeyAndCertificate({ ...leafOptions(ca), usages: ['server auth'] });
    const stranger = await issueKeyAndCertificate({ ...leafOptions(other), usages: ['client auth'] });
    const client = await issueKeyAndCertificate({ ...leafOptions(ca), usages: ['client auth'] });

    const refused = await handshake(ca, server, stranger, 'localhost');
    expect(refused.clientSubject).toBeUndefined();
    expect(refused.refusal).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    await expect(handshake(ca, server, client, 'elsewhere.example.test')).rejects.toThrow(
      /Hostname\/IP does not match/,
    );
  });
});
