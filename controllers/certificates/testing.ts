/**
 * Test and benchmark helpers for the certificate controllers: certificate signing requests made by WebCrypto
 * (@peculiar/x509), by node-forge (an independent encoder, RSA) and by the openssl CLI; CSR objects as the
 * API stores them; and a manager running chosen controllers against a cluster, leader election off.
 */
import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { pino } from 'pino';
import { group, naming } from '../../src/api/naming.ts';
import type { ResourceRegistry } from '../../src/api/registry.ts';
import type {
  CertificateSigningRequest,
  CertificateSigningRequestCondition,
} from '../../src/api/types/certificates.ts';
import type { KubeClient } from '../../src/client/client.ts';
import type { ControllerDefinition } from '../../src/controller/controller.ts';
import { ApiEventRecorder } from '../../src/controller/events.ts';
import { exportPrivateKeyPem, generateKeyPair, type KeyAlgorithm, signingAlgorithmFor } from '../../src/pki/keys.ts';
import { derToPem } from '../../src/pki/pem.ts';
import { realClock } from '../../src/util/clock.ts';
import { type RunningControllers, runControllers as runAll } from '../../test/support/controllers.ts';
import type { CertificatesConfig } from './config.ts';

export { eventually } from '../../test/support/eventually.ts';

x509.cryptoProvider.set(webcrypto);

export interface RequestSpec {
  commonName?: string;
  organizations?: string[];
  organizationalUnits?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  emails?: string[];
  uris?: string[];
}

export interface GeneratedRequest {
  pem: string;
  keyPem: string;
}

function subjectJson(spec: RequestSpec): x509.JsonNameParams {
  const rdns: x509.JsonNameParams = [];
  for (const o of spec.organizations ?? []) rdns.push({ O: [o] });
  for (const ou of spec.organizationalUnits ?? []) rdns.push({ OU: [ou] });
  if (spec.commonName !== undefined) rdns.push({ CN: [spec.commonName] });
  return rdns;
}

function sanEntries(spec: RequestSpec): x509.JsonGeneralName[] {
  return [
    ...(spec.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(spec.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(spec.emails ?? []).map((value) => ({ type: 'email' as const, value })),
    ...(spec.uris ?? []).map((value) => ({ type: 'url' as const, value })),
  ];
}

/** A request made with WebCrypto keys through @peculiar/x509. */
export async function webcryptoRequest(keyAlg: KeyAlgorithm, spec: RequestSpec): Promise<GeneratedRequest> {
  const keys = await generateKeyPair(keyAlg);
  return webcryptoRequestWithKeys(keys, spec);
}

export async function webcryptoRequestWithKeys(
  keys: webcrypto.CryptoKeyPair,
  spec: RequestSpec,
): Promise<GeneratedRequest> {
  const names = sanEntries(spec);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: new x509.Name(subjectJson(spec)),
    keys,
    signingAlgorithm: signingAlgorithmFor(keys.privateKey),
    extensions: names.length ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  });
  return { pem: derToPem(csr.rawData, 'CERTIFICATE REQUEST'), keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

/** A request encoded by node-forge (RSA only), with a key pair made by node:crypto. */
export async function forgeRequest(spec: RequestSpec, rsaKeyPem?: string): Promise<GeneratedRequest> {
  const { default: forge } = await import('node-forge');
  const keyPem = rsaKeyPem ?? rsaKeyPkcs1();
  const key = forge.pki.privateKeyFromPem(keyPem);
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.rsa.setPublicKey(key.n, key.e);
  const attrs: { shortName?: string; name?: string; value: string; valueTagClass?: number }[] = [];
  // UTF8String, as Go and most tools write these names.
  const utf8 = forge.asn1.Type.UTF8;
  for (const o of spec.organizations ?? []) attrs.push({ shortName: 'O', value: o, valueTagClass: utf8 });
  for (const ou of spec.organizationalUnits ?? []) attrs.push({ shortName: 'OU', value: ou, valueTagClass: utf8 });
  if (spec.commonName !== undefined) attrs.push({ shortName: 'CN', value: spec.commonName, valueTagClass: utf8 });
  csr.setSubject(attrs as never);
  const altNames = [
    ...(spec.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(spec.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
    ...(spec.emails ?? []).map((value) => ({ type: 1, value })),
    ...(spec.uris ?? []).map((value) => ({ type: 6, value })),
  ];
  if (altNames.length) {
    csr.setAttributes([{ name: 'extensionRequest', extensions: [{ name: 'subjectAltName', altNames }] }] as never);
  }
  csr.sign(key, forge.md.sha256.create());
  return { pem: forge.pki.certificationRequestToPem(csr).replace(/\r\n/g, '\n'), keyPem };
}

/** A fresh RSA-2048 private key as a PKCS#1 PEM (node:crypto, not forge's slow JS generator). */
export function rsaKeyPkcs1(modulusLength = 2048): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength });
  return privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
}

/** A request made by the openssl CLI (`-subj` and `-addext subjectAltName=...`). */
export function opensslRequest(keyArgs: string[], subject: string, san?: string): GeneratedRequest {
  const dir = mkdtempSync(join(tmpdir(), 'csr-openssl-'));
  try {
    const args = ['req', '-new', ...keyArgs, '-nodes', '-keyout', 'key.pem', '-out', 'csr.pem', '-subj', subject];
    if (san) args.push('-addext', `subjectAltName=${san}`);
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl req failed: ${r.stderr}`);
    return { pem: readFileSync(join(dir, 'csr.pem'), 'utf8'), keyPem: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes files to a fresh temporary directory. */
export function tempFiles(files: Record<string, string>): { dir: string; path: (name: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'certs-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return { dir, path: (name) => join(dir, name) };
}

export interface CsrFields {
  name?: string;
  signerName: string;
  usages: string[];
  username?: string;
  groups?: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  expirationSeconds?: number;
  conditions?: CertificateSigningRequestCondition[];
  certificatePem?: string;
  creationTimestamp?: string;
}

/** A CSR as the API stores it: `spec.request` and `status.certificate` base64 of their PEM. */
export function csrObject(requestPem: string, f: CsrFields): CertificateSigningRequest {
  const csr: CertificateSigningRequest = {
    apiVersion: `${group(naming(), 'certificates')}/v1`,
    kind: 'CertificateSigningRequest',
    metadata: { name: f.name ?? 'csr-1', uid: 'uid-1', resourceVersion: '1', creationTimestamp: f.creationTimestamp },
    spec: {
      request: Buffer.from(requestPem).toString('base64'),
      signerName: f.signerName,
      usages: f.usages as CertificateSigningRequest['spec']['usages'],
      username: f.username,
      groups: f.groups,
      uid: f.uid,
      extra: f.extra,
      expirationSeconds: f.expirationSeconds,
    },
  };
  if (f.conditions || f.certificatePem) {
    csr.status = {
      conditions: f.conditions,
      certificate: f.certificatePem ? Buffer.from(f.certificatePem).toString('base64') : undefined,
    };
  }
  return csr;
}

export type { RunningControllers } from '../../test/support/controllers.ts';

/** Runs controllers in-process against a cluster, as the daemon would with leader election off, recording events through the API. */
export function runControllers(
  client: KubeClient,
  registry: ResourceRegistry,
  controllers: ControllerDefinition[],
  certificates: Partial<CertificatesConfig> = {},
  options: { features?: Record<string, boolean>; logLevel?: string } = {},
): Promise<RunningControllers> {
  const logger = pino({ level: options.logLevel ?? process.env.CERT_TEST_LOG ?? 'silent' });
  const eventsRt = registry.resource(group(registry.naming, 'events'), 'v1', 'events')!;
  const recorder = new ApiEventRecorder(client.resource(eventsRt), 'certificates-test', 'test-0', realClock, logger);
  return runAll(client, registry, controllers, {
    config: { certificates },
    features: options.features,
    logger,
    recorder,
  });
}
