/**
 * `kubectl orch describe csr NAME`: kubectl's describe layout, plus what it leaves out: the request's key
 * type and usages, every condition, and the issued certificate's subject, issuer and validity.
 */
import { createPublicKey, X509Certificate } from 'node:crypto';
import {
  type ParsedRequest,
  parseRequest,
  RequestParseError,
  type Subject,
} from '../../../controllers/certificates/csr.ts';
import type { CertificateSigningRequest } from '../../api/types/certificates.ts';

const field = (label: string, value: string, indent = '') =>
  `${indent}${`${label}:`.padEnd(20 - indent.length)}${value}`;

/** WebCrypto's names of OpenSSL's curves. */
const CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** The request's key as WebCrypto names it: `RSASSA-PKCS1-v1_5 2048 bits`, `ECDSA P-256`, `Ed25519`. */
function keyDescription(parsed: ParsedRequest): string {
  let details: { modulusLength?: number; namedCurve?: string } = {};
  try {
    details =
      createPublicKey({ key: Buffer.from(parsed.spki), format: 'der', type: 'spki' }).asymmetricKeyDetails ?? {};
  } catch {} // a key OpenSSL does not read: its algorithm's name alone
  if (details.modulusLength) return `${parsed.keyAlgorithm} ${details.modulusLength} bits`;
  if (details.namedCurve) return `${parsed.keyAlgorithm} ${CURVES[details.namedCurve] ?? details.namedCurve}`;
  return parsed.keyAlgorithm;
}

function subjectLines(subject: Subject): string[] {
  const lines = [field('Common Name', subject.commonName, '  ')];
  if (subject.serialNumber) lines.push(field('Serial Number', subject.serialNumber, '  '));
  for (const [label, key] of [
    ['Organization', 'organization'],
    ['Organizational Unit', 'organizationalUnit'],
    ['Country', 'country'],
    ['Province', 'province'],
    ['Locality', 'locality'],
  ] as const) {
    if (subject[key].length) lines.push(field(label, subject[key].join(', '), '  '));
  }
  return lines;
}

function statusWord(csr: CertificateSigningRequest): string {
  const types = (csr.status?.conditions ?? []).map((c) => c.type);
  if (csr.status?.certificate) types.push('Issued');
  return types.length ? types.join(',') : 'Pending';
}

export async function describeCsr(csr: CertificateSigningRequest): Promise<string> {
  const m = csr.metadata;
  const spec = csr.spec;
  const labels = Object.entries(m.labels ?? {}).map(([k, v]) => `${k}=${v}`);
  const lines = [
    field('Name', m.name ?? ''),
    field('Labels', labels.length ? labels.join('\n                    ') : '<none>'),
    field(
      'CreationTimestamp',
      m.creationTimestamp ? new Date(m.creationTimestamp).toUTCString().replace('GMT', '+0000') : '<unknown>',
    ),
    field('Requesting User', spec.username ?? ''),
    field('Signer', spec.signerName ?? ''),
  ];
  if (spec.expirationSeconds) lines.push(field('Requested Duration', `${spec.expirationSeconds}s`));
  lines.push(field('Usages', (spec.usages ?? []).join(', ') || '<none>'), field('Status', statusWord(csr)));
  try {
    const parsed = await parseRequest(csr);
    lines.push(field('Key', keyDescription(parsed)), 'Subject:', ...subjectLines(parsed.subject));
    const sans: [string, string[]][] = [
      ['DNS Names', parsed.dnsNames],
      ['IP Addresses', parsed.ipAddresses],
      ['Email Addresses', parsed.emailAddresses],
      ['URIs', parsed.uris],
    ];
    if (sans.some(([, v]) => v.length)) {
      lines.push('Subject Alternative Names:');
      for (const [label, values] of sans) if (values.length) lines.push(field(label, values.join(', '), '  '));
    }
  } catch (err) {
    if (!(err instanceof RequestParseError)) throw err;
    lines.push(field('Request', `cannot be parsed: ${err.message}`));
  }
  const conditions = csr.status?.conditions ?? [];
  lines.push(conditions.length ? 'Conditions:' : field('Conditions', '<none>'));
  for (const c of conditions) {
    lines.push(`  ${c.type}=${c.status ?? 'True'}  ${c.reason ?? ''}  ${c.lastUpdateTime ?? ''}`.trimEnd());
    if (c.message) lines.push(`    ${c.message}`);
  }
  if (csr.status?.certificate) {
    const pem = Buffer.from(csr.status.certificate, 'base64').toString('latin1');
    try {
      const cert = new X509Certificate(pem);
      lines.push(
        'Certificate:',
        field('Subject', cert.subject.replaceAll('\n', ', '), '  '),
        field('Issuer', cert.issuer.replaceAll('\n', ', '), '  '),
        field('Not Before', cert.validFrom, '  '),
        field('Not After', cert.validTo, '  '),
        field('Serial', cert.serialNumber, '  '),
      );
    } catch (err) {
      lines.push(field('Certificate', `cannot be parsed: ${(err as Error).message}`));
    }
  }
  return `${lines.join('\n')}\n`;
}
