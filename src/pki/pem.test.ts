import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derToPem, pemToDer, splitPemBlocks } from './pem.ts';

const bytes = (...values: number[]) => new Uint8Array(values);

describe('derToPem', () => {
  it('wraps base64 at 64 characters between BEGIN and END lines', () => {
    const der = new Uint8Array(60).map((_, i) => i);
    const base64 = Buffer.from(der).toString('base64');
    expect(base64).toHaveLength(80);
    expect(derToPem(der, 'TEST DATA')).toBe(
      `-----BEGIN TEST DATA-----\n${base64.slice(0, 64)}\n${base64.slice(64)}\n-----END TEST DATA-----\n`,
    );
    expect(derToPem(der.buffer, 'TEST DATA')).toBe(derToPem(der, 'TEST DATA'));
  });

  it('writes what node:crypto reads', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    expect(derToPem(der, 'PRIVATE KEY')).toBe(privateKey.export({ type: 'pkcs8', format: 'pem' }));
  });
});

describe('splitPemBlocks', () => {
  it('returns each block in order, skipping the text around them', () => {
    const text = [
      'Subject: CN=one',
      derToPem(bytes(1, 2, 3), 'CERTIFICATE'),
      'between',
      derToPem(bytes(4), 'X509 CRL'),
      'trailing text',
    ].join('\n');
    expect(splitPemBlocks(text)).toEqual([
      { type: 'CERTIFICATE', headers: {}, der: Buffer.from([1, 2, 3]) },
      { type: 'X509 CRL', headers: {}, der: Buffer.from([4]) },
    ]);
  });

  it('accepts CRLF line ends, surrounding whitespace and unwrapped base64', () => {
    const text = '  -----BEGIN DATA-----  \r\nAQID\r\nBA==\r\n-----END DATA-----\r\n';
    expect(splitPemBlocks(text)).toEqual([{ type: 'DATA', headers: {}, der: Buffer.from([1, 2, 3, 4]) }]);
  });

  it('reads headers up to the blank line', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const options = { type: 'sec1', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'secret' } as const;
    const [block] = splitPemBlocks(privateKey.export(options).toString());
    expect(block.type).toBe('EC PRIVATE KEY');
    expect(block.headers['Proc-Type']).toBe('4,ENCRYPTED');
    expect(block.headers['DEK-Info']).toMatch(/^AES-128-CBC,[0-9A-F]{32}$/);
    expect(block.der.length % 16).toBe(0);
  });

  it('returns nothing for text without blocks', () => {
    expect(splitPemBlocks('')).toEqual([]);
    expect(splitPemBlocks('-----BEGIN-----\nno label separator\n')).toEqual([]);
  });

  it('rejects malformed blocks', () => {
    expect(() => splitPemBlocks('-----BEGIN DATA-----\nAQID\n')).toThrow('PEM block "DATA" has no END line');
    expect(() => splitPemBlocks('-----BEGIN DATA-----\nAQID\n-----END OTHER-----\n')).toThrow('no END line');
    expect(() => splitPemBlocks('-----BEGIN DATA-----\nAQ!D\n-----END DATA-----')).toThrow('invalid base64');
    expect(() => splitPemBlocks('-----BEGIN DATA-----\nAQI\n-----END DATA-----')).toThrow('invalid base64');
    expect(() => splitPemBlocks('-----BEGIN DATA-----\nKey: value\nAQID\n-----END DATA-----')).toThrow(
      'headers are not followed by a blank line',
    );
    expect(() => splitPemBlocks('-----BEGIN DATA-----\nKey: value\nnot a header\n\nAQID\n-----END DATA-----')).toThrow(
      'invalid header line "not a header"',
    );
  });
});

describe('pemToDer', () => {
  it('returns the only block, or the only block of a type', () => {
    const args = ['req', '-x509', '-newkey', 'ed25519', '-nodes', '-keyout', '-', '-subj', '/CN=pem-test'];
    const keyAndCertificate = execFileSync('openssl', args, { encoding: 'utf8' });
    expect(new X509Certificate(pemToDer(keyAndCertificate, 'CERTIFICATE')).subject).toBe('CN=pem-test');
    expect(pemToDer(derToPem(bytes(7, 8), 'ANYTHING'))).toEqual(Buffer.from([7, 8]));
  });

  it('throws unless there is exactly one block', () => {
    const two = derToPem(bytes(1), 'CERTIFICATE') + derToPem(bytes(2), 'CERTIFICATE');
    expect(() => pemToDer(two)).toThrow('expected exactly one PEM block, found 2');
    expect(() => pemToDer(two, 'CERTIFICATE')).toThrow('expected exactly one CERTIFICATE block, found 2');
    expect(() => pemToDer(two, 'PRIVATE KEY')).toThrow('expected exactly one PRIVATE KEY block, found 0');
  });
});
