import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import * as x509 from '@peculiar/x509';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CertificateWithKey, createSelfSignedCa } from '../../../src/pki/certs.ts';
import { exportPrivateKeyPem, generateKeyPair } from '../../../src/pki/keys.ts';
import { realClock } from '../../../src/util/clock.ts';
import { eventually, tempFiles } from '../testing.ts';
import { CaFileWatcher, readCaFiles, toSigningCa } from './ca.ts';

const quiet = { info() {}, warn() {}, error() {} };

let first: CertificateWithKey;
let second: CertificateWithKey;
beforeAll(async () => {
  first = await createSelfSignedCa({ commonName: 'first CA' });
  second = await createSelfSignedCa({ commonName: 'second CA', keyAlg: 'RSA-2048' });
});

const dirs: string[] = [];
const watchers: CaFileWatcher[] = [];
afterEach(() => {
  for (const w of watchers.splice(0)) w.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function files(content: Record<string, string>) {
  const t = tempFiles(content);
  dirs.push(t.dir);
  return { ...t, pair: { certFile: t.path('ca.crt'), keyFile: t.path('ca.key') } };
}

describe('reading the CA files', () => {
  it('accepts a matching pair', () => {
    const f = files({ 'ca.crt': first.certPem, 'ca.key': first.keyPem });
    expect(readCaFiles(f.pair)).toEqual({ certPem: first.certPem, keyPem: first.keyPem });
  });

  it.each([
    ['a missing file', { 'ca.crt': 'x' }, /ENOENT/],
    ['an empty certificate', { 'ca.crt': '', 'ca.key': 'k' }, /missing content for CA cert file/],
    ['an empty key', { 'ca.crt': 'c', 'ca.key': '\n' }, /missing content for CA key file/],
    ['a certificate that does not parse', { 'ca.crt': 'not pem', 'ca.key': 'k' }, /error reading CA cert file/],
  ])('refuses %s', (_name, content, message) => {
    const f = files(content as Record<string, string>);
    expect(() => readCaFiles(f.pair)).toThrow(message);
  });

  it("refuses a key that is not the certificate's", () => {
    const f = files({ 'ca.crt': first.certPem, 'ca.key': second.keyPem });
    expect(() => readCaFiles(f.pair)).toThrow('tls: private key does not match public key');
  });

  it('refuses to sign with a bundle of two certificates', async () => {
    await expect(
      toSigningCa({ certPem: first.certPem + second.certPem, keyPem: first.keyPem }, '/etc/ca.crt'),
    ).rejects.toThrow('error reading CA cert file "/etc/ca.crt": expected 1 certificate, found 2');
  });

  it("takes the issuer, the validity's end and the authority key identifier from the CA certificate", async () => {
    const ca = await toSigningCa({ certPem: first.certPem, keyPem: first.keyPem }, 'ca.crt');
    expect(ca.signingAlgorithm).toEqual({ name: 'ECDSA', hash: 'SHA-256', namedCurve: 'P-256' });
    expect(Buffer.from(ca.subject)).toEqual(Buffer.from(first.cert.subjectName.toArrayBuffer()));
    expect(ca.notAfter).toEqual(first.cert.notAfter);
    const ski = first.cert.getExtension(x509.SubjectKeyIdentifierExtension);
    expect(Buffer.from(ca.authorityKeyId).toString('hex')).toBe(ski?.keyId);
  });

  it('refuses a key it cannot sign with', async () => {
    const keys = await generateKeyPair('ECDSA-P256');
    const p521 = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-521' }, true, [
      'sign',
      'verify',
    ])) as webcrypto.CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=P-521 CA',
      keys: p521,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-512' },
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    });
    const keyPem = await exportPrivateKeyPem(p521.privateKey);
    await expect(toSigningCa({ certPem: cert.toString('pem'), keyPem }, 'ca.crt')).rejects.toThrow(
      'unsupported EC curve "secp521r1": expected P-256 or P-384',
    );
    await expect(
      toSigningCa({ certPem: cert.toString('pem'), keyPem: await exportPrivateKeyPem(keys.privateKey) }, 'ca.crt'),
    ).rejects.toThrow('the private key does not belong to CA certificate "CN=P-521 CA"');
  });
});

describe('watching the CA files', () => {
  it('picks up a swap (rename over the old files) without a restart, and ignores a broken one', async () => {
    const f = files({ 'ca.crt': first.certPem, 'ca.key': first.keyPem });
    let changes = 0;
    const w = new CaFileWatcher(f.pair, { clock: realClock, logger: quiet, onChange: () => changes++ });
    watchers.push(w);
    w.start();
    const g1 = w.current().generation;

    // A half-done swap: the new certificate with the old key. Rejected; the old pair stays.
    writeFileSync(f.path('new.crt'), second.certPem);
    renameSync(f.path('new.crt'), f.path('ca.crt'));
    await new Promise((r) => setTimeout(r, 300));
    expect(w.current().content.certPem).toBe(first.certPem);
    expect(w.current().generation).toBe(g1);

    // The key arrives: the new pair is taken.
    writeFileSync(f.path('new.key'), second.keyPem);
    renameSync(f.path('new.key'), f.path('ca.key'));
    await eventually(() => (w.current().content.certPem === second.certPem ? true : undefined), 5000);
    expect(w.current().generation).toBeGreaterThan(g1);
    expect(changes).toBe(1);
  });

  it('parses the pair for signing once per change, whichever signers ask', async () => {
    const f = files({ 'ca.crt': first.certPem, 'ca.key': first.keyPem });
    const w = new CaFileWatcher(f.pair, { clock: realClock, logger: quiet });
    const parsed = w.signingCa();
    expect(w.signingCa()).toBe(parsed);
    expect(Buffer.from((await parsed).subject).toString('latin1')).toContain('first CA');
    writeFileSync(f.path('ca.crt'), second.certPem);
    writeFileSync(f.path('ca.key'), second.keyPem);
    expect(w.reload()).toBe(true);
    expect(w.signingCa()).not.toBe(parsed);
    expect(Buffer.from((await w.signingCa()).subject).toString('latin1')).toContain('second CA');
  });

  it('retries a failed reload with backoff until the files are right', async () => {
    const f = files({ 'ca.crt': first.certPem, 'ca.key': first.keyPem });
    const w = new CaFileWatcher(f.pair, { clock: realClock, logger: quiet });
    watchers.push(w);
    w.start();
    rmSync(f.path('ca.key'));
    await new Promise((r) => setTimeout(r, 200));
    expect(w.current().content.keyPem).toBe(first.keyPem);
    expect(() => w.reload()).toThrow(/ENOENT/);
    writeFileSync(f.path('ca.crt'), second.certPem);
    writeFileSync(f.path('ca.key'), second.keyPem);
    await eventually(() => (w.current().content.keyPem === second.keyPem ? true : undefined), 5000);
  });
});
