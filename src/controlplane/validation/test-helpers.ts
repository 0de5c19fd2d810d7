/** Fixtures for the validation tests: a naming context, generated CSRs and certificates, base64. */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import {
  BasicConstraintsExtension,
  type Extension,
  Pkcs10CertificateRequestGenerator,
  X509CertificateGenerator,
} from '@peculiar/x509';
import type { FieldError } from '../../api/field-errors.ts';
import { naming } from '../../api/naming.ts';
import type { ValidationContext } from './context.ts';

export const n = naming('orch');
export const ctx: ValidationContext = { naming: n };

export function ctxWithGates(gates: Record<string, boolean>): ValidationContext {
  return { naming: n, featureGates: (name) => gates[name] ?? false };
}

export const b64 = (s: string): string => Buffer.from(s, 'latin1').toString('base64');

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

async function keys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

/** A PEM `CERTIFICATE REQUEST` for `CN=<cn>`, signed by a fresh P-256 key. */
export async function csrPem(cn = 'system:node:worker-1'): Promise<string> {
  const csr = await Pkcs10CertificateRequestGenerator.create({
    name: `CN=${cn}, O=system:nodes`,
    keys: await keys(),
    signingAlgorithm: ALG,
  });
  return withNewline(csr.toString('pem'));
}

/** The same request with one byte of its signature flipped: it parses but does not verify. */
export async function tamperedCsrPem(): Promise<string> {
  const csr = await Pkcs10CertificateRequestGenerator.create({
    name: 'CN=tampered',
    keys: await keys(),
    signingAlgorithm: ALG,
  });
  const der = new Uint8Array(csr.rawData).slice();
  der[der.length - 5] ^= 0xff;
  return toPem('CERTIFICATE REQUEST', der);
}

const withNewline = (pem: string): string => (pem.endsWith('\n') ? pem : `${pem}\n`);

export function toPem(type: string, der: Uint8Array, headers = ''): string {
  const body = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${type}-----\n${headers}${body}\n-----END ${type}-----\n`;
}

/** A self-signed certificate; `ca` picks the basic constraints (`'none'` leaves the extension out). */
export async function certPem(ca: boolean | 'none' = true, cn = 'test-ca'): Promise<string> {
  const extensions: Extension[] = ca === 'none' ? [] : [new BasicConstraintsExtension(ca, undefined, true)];
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${cn}`,
    notBefore: new Date('2025-01-01T00:00:00Z'),
    notAfter: new Date('2035-01-01T00:00:00Z'),
    keys: await keys(),
    signingAlgorithm: ALG,
    extensions,
  });
  return withNewline(cert.toString('pem'));
}

/** A loosely typed JSON object, for building test inputs. */
export type Loose = Record<string, any>;

/** Only the errors at one field, for focused assertions. */
export const at = (errs: FieldError[], field: string): FieldError[] => errs.filter((e) => e.field === field);

/** The FieldError a validator should produce: `body` is the text after `<field>: `. */
export const fieldError = (type: FieldError['type'], field: string, body: string): FieldError => ({
  type,
  field,
  message: `${field}: ${body}`,
});

/** A copy of `valid()` with `change` applied. */
export function variant(valid: () => Loose, change: (o: Loose) => void): Loose {
  const o = structuredClone(valid());
  change(o);
  return o;
}
