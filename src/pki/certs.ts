/** X.509 certificates on @peculiar/x509 and WebCrypto: self-signed CAs, and certificates they issue. */
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { readCaCertificate } from './ca-certificate.ts';
import {
  exportPrivateKeyPem,
  generateKeyPair,
  importSigningKey,
  type KeyAlgorithm,
  readPrivateKeyPem,
  signingAlgorithmFor,
} from './keys.ts';
import { derToPem, pemToDer } from './pem.ts';

export { derToPem, type PemBlock, pemToDer, splitPemBlocks } from './pem.ts';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto);

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_SERIAL = 2n ** 159n; // RFC 5280 §4.1.2.2: at most 20 octets, sign bit included.
const { digitalSignature, keyEncipherment, keyCertSign, cRLSign } = x509.KeyUsageFlags;

/** A certificate with its key pair, as both objects and PEM; the key PEM is PKCS#8 unless loaded otherwise. */
export interface CertificateWithKey {
  cert: x509.X509Certificate;
  certPem: string;
  keys: CryptoKeyPair;
  keyPem: string;
}

export interface SelfSignedCaOptions {
  commonName: string;
  /** Defaults to ECDSA-P256. */
  keyAlg?: KeyAlgorithm;
  /** Defaults to 3650. */
  validityDays?: number;
  /** The start of validity; defaults to the current time. */
  now?: Date;
}

/** Creates a CA: a new key pair and a self-signed certificate for it. */
export async function createSelfSignedCa(options: SelfSignedCaOptions): Promise<CertificateWithKey> {
  const { commonName, keyAlg = 'ECDSA-P256', validityDays = 3650, now = new Date() } = options;
  const keys = await generateKeyPair(keyAlg);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: distinguishedName({ commonName }),
    keys,
    serialNumber: serialToHex(randomSerial()),
    notBefore: now,
    notAfter: new Date(now.getTime() + validityDays * DAY_MS),
    signingAlgorithm: signingAlgorithmFor(keys.privateKey),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(keyCertSign | cRLSign | digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    cert,
    certPem: derToPem(cert.rawData, 'CERTIFICATE'),
    keys,
    keyPem: await exportPrivateKeyPem(keys.privateKey),
  };
}

export interface Subject {
  commonName: string;
  organizations?: string[];
}

export type ExtendedUsage = 'client auth' | 'server auth';

const EXTENDED_USAGES: Record<ExtendedUsage, x509.ExtendedKeyUsage> = {
  'client auth': x509.ExtendedKeyUsage.clientAuth,
  'server auth': x509.ExtendedKeyUsage.serverAuth,
};

export interface IssueCertificateOptions {
  ca: CertificateWithKey;
  subject: Subject;
  /** The subject's public key, as a CryptoKey or, say, the key of a certificate signing request. */
  publicKey: CryptoKey | x509.PublicKey;
  dnsNames?: string[];
  ipAddresses?: string[];
  usages: ExtendedUsage[];
  notBefore: Date;
  notAfter: Date;
  /** A positive serial number of at most 20 octets; defaults to a random 128-bit one. */
  serial?: bigint;
}

export interface IssuedCertificate {
  cert: x509.X509Certificate;
  certPem: string;
}

/** Issues an end-entity certificate for `publicKey`, signed by the CA's key. */
export async function issueCertificate(options: IssueCertificateOptions): Promise<IssuedCertificate> {
  const {
    ca,
    subject,
    dnsNames = [],
    ipAddresses = [],
    usages,
    notBefore,
    notAfter,
    serial = randomSerial(),
  } = options;
  if (usages.length === 0) throw new Error('a certificate needs at least one usage');
  if (notAfter <= notBefore) throw new Error('notAfter must be later than notBefore');
  if (serial <= 0n || serial >= MAX_SERIAL) throw new Error('the serial must be positive and at most 20 octets long');
  const badIp = ipAddresses.find((ip) => isIP(ip) === 0);
  if (badIp !== undefined) throw new Error(`invalid IP address "${badIp}"`);

  const publicKey =
    options.publicKey instanceof x509.PublicKey ? options.publicKey : await x509.PublicKey.create(options.publicKey);
  const rsa = publicKey.algorithm.name.startsWith('RSA');
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(digitalSignature | (rsa ? keyEncipherment : 0), true),
    new x509.ExtendedKeyUsageExtension(usages.map((usage) => EXTENDED_USAGES[usage])),
    await authorityKeyIdentifier(ca.cert),
  ];
  const names = [
    ...dnsNames.map((value) => ({ type: x509.DNS, value })),
    ...ipAddresses.map((value) => ({ type: x509.IP, value })),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));

  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialToHex(serial),
    subject: distinguishedName(subject),
    issuer: ca.cert.subjectName,
    publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: signingAlgorithmFor(ca.keys.privateKey),
    notBefore,
    notAfter,
    extensions,
  });
  return { cert, certPem: derToPem(cert.rawData, 'CERTIFICATE') };
}

export type IssueKeyAndCertificateOptions = Omit<IssueCertificateOptions, 'publicKey'> & {
  /** Defaults to ECDSA-P256. */
  keyAlg?: KeyAlgorithm;
};

/** Generates a key pair and issues a certificate for it. */
export async function issueKeyAndCertificate(options: IssueKeyAndCertificateOptions): Promise<CertificateWithKey> {
  const { keyAlg = 'ECDSA-P256', ...rest } = options;
  const keys = await generateKeyPair(keyAlg);
  const { cert, certPem } = await issueCertificate({ ...rest, publicKey: keys.publicKey });
  return { cert, certPem, keys, keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

/**
 * Loads a CA from its certificate (one CERTIFICATE block) and private key PEM, checking that the certificate is a CA
 * that may sign certificates and that the key is the certificate's.
 */
export async function loadCa(certPem: string, keyPem: string): Promise<CertificateWithKey> {
  const der = pemToDer(certPem, 'CERTIFICATE');
  const key = readPrivateKeyPem(keyPem);
  readCaCertificate(der, key);
  const cert = new x509.X509Certificate(der);
  const privateKey = await importSigningKey(key);
  const spki = Buffer.from(cert.publicKey.rawData);
  const publicKey = await webcrypto.subtle.importKey('spki', spki, privateKey.algorithm, true, ['verify']);
  return { cert, certPem, keys: { privateKey, publicKey }, keyPem };
}

/** A name of the organizations and the common name, each its own RDN, as UTF8String (RFC 5280 §4.1.2.6). */
function distinguishedName({ commonName, organizations = [] }: Subject): x509.Name {
  return new x509.Name([
    ...organizations.map((organization) => ({ O: [{ utf8String: organization }] })),
    { CN: [{ utf8String: commonName }] },
  ]);
}

/** Identifies the CA's key as the CA certificate does, so that chains build even for CAs made elsewhere. */
async function authorityKeyIdentifier(caCert: x509.X509Certificate): Promise<x509.AuthorityKeyIdentifierExtension> {
  const subjectKeyId = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  if (subjectKeyId) return new x509.AuthorityKeyIdentifierExtension(subjectKeyId.keyId);
  return x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey);
}

/** A random serial of exactly 128 bits: the top bit is set, so it is positive and never shorter. */
function randomSerial(): bigint {
  const bytes = randomBytes(16);
  bytes[0] |= 0x80;
  return BigInt(`0x${bytes.toString('hex')}`);
}

function serialToHex(serial: bigint): string {
  const hex = serial.toString(16);
  return hex.length % 2 === 0 ? hex : `0${hex}`;
}

/**
 * The subject common name of a PEM certificate signing request, the last CN as Go's crypto/x509 reads it ('' when
 * there is none); undefined when it does not parse.
 */
export function csrCommonName(pem: string): string | undefined {
  try {
    return new x509.Pkcs10CertificateRequest(pem).subjectName.getField('CN').at(-1) ?? '';
  } catch {
    return undefined;
  }
}

/** The subject organizations (O) of a PEM certificate signing request; empty when it does not parse. */
export function csrOrganizations(pem: string): string[] {
  try {
    return new x509.Pkcs10CertificateRequest(pem).subjectName.getField('O');
  } catch {
    return [];
  }
}
