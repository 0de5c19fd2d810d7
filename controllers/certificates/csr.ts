/**
 * What every certificate controller shares: reading a CertificateSigningRequest's conditions, parsing its
 * PKCS#10 request, the usage sets and the x509 predicates of the well-known signers (reference §2.2, §3.3),
 * and the CSR work queue's retry strategy. Everything here is pure.
 */
import type * as x509 from '@peculiar/x509';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../src/api/node-identity.ts';
import type {
  CertificateSigningRequest,
  CertificateSigningRequestCondition,
} from '../../src/api/types/certificates.ts';
import { splitPemBlocks } from '../../src/pki/pem.ts';
import {
  type AltNames,
  noAltNames,
  type RequestFields,
  readAltNames,
  readCertificationRequest,
} from '../../src/pki/request.ts';
import { verifyRequestSelfSignature } from '../../src/pki/request-signature.ts';
import { x509Library } from '../../src/pki/x509-library.ts';
import type { Clock } from '../../src/util/clock.ts';
import { itemExponential, maxOf, type RateLimiter, tokenBucket } from '../../src/workqueue/ratelimit.ts';

// ---------------------------------------------------------------------------------------------
// conditions (reference §1: the condition status is not looked at, except by has-true-condition)

const conditionsOf = (csr: CertificateSigningRequest): CertificateSigningRequestCondition[] =>
  csr.status?.conditions ?? [];

/** Whether any condition of type Approved, and any of type Denied, exists (whatever its status). */
export function approvalState(csr: CertificateSigningRequest): { approved: boolean; denied: boolean } {
  let approved = false;
  let denied = false;
  for (const c of conditionsOf(csr)) {
    if (c.type === 'Approved') approved = true;
    if (c.type === 'Denied') denied = true;
  }
  return { approved, denied };
}

/** Approved and not denied. */
export function isApproved(csr: CertificateSigningRequest): boolean {
  const { approved, denied } = approvalState(csr);
  return approved && !denied;
}

/** A condition of this type whose status is `True` or empty. */
export function hasTrueCondition(csr: CertificateSigningRequest, type: string): boolean {
  return conditionsOf(csr).some((c) => c.type === type && (c.status === 'True' || !c.status));
}

/** Whether the signer has already written a certificate. */
export function isIssued(csr: CertificateSigningRequest): boolean {
  return Boolean(csr.status?.certificate);
}

// ---------------------------------------------------------------------------------------------
// parsing the request

/** The largest request PEM the controllers will parse: real ones are a few KiB; anything this big is hostile. */
export const MAX_REQUEST_BYTES = 256 * 1024;

/** The subject attributes the signer keeps, in the order it re-encodes them (reference §3.5). */
export const SUBJECT_ATTRIBUTES = [
  { key: 'country', oid: '2.5.4.6' },
  { key: 'province', oid: '2.5.4.8' },
  { key: 'locality', oid: '2.5.4.7' },
  { key: 'streetAddress', oid: '2.5.4.9' },
  { key: 'postalCode', oid: '2.5.4.17' },
  { key: 'organization', oid: '2.5.4.10' },
  { key: 'organizationalUnit', oid: '2.5.4.11' },
  { key: 'commonName', oid: '2.5.4.3' },
  { key: 'serialNumber', oid: '2.5.4.5' },
] as const;

type SubjectKey = (typeof SUBJECT_ATTRIBUTES)[number]['key'];

/** The standard attributes of a subject: the last CN and serialNumber win; the others keep every value in order. */
export type Subject = { commonName: string; serialNumber: string } & Record<
  Exclude<SubjectKey, 'commonName' | 'serialNumber'>,
  string[]
>;

export interface ParsedRequest {
  /** The request's DER. */
  der: Uint8Array;
  /** Its SubjectPublicKeyInfo, as it is. */
  spki: Uint8Array;
  subject: Subject;
  /** Whether the subject has no attribute at all (the SAN extension is then critical). */
  subjectEmpty: boolean;
  dnsNames: string[];
  emailAddresses: string[];
  ipAddresses: string[];
  uris: string[];
  /** WebCrypto name of the request's key algorithm (`ECDSA`, `RSASSA-PKCS1-v1_5`, `Ed25519`, ...). */
  keyAlgorithm: string;
  /** The fields read straight from the DER, when the request is in the shape read so. */
  fields?: RequestFields;
}

export class RequestParseError extends Error {}

const SAN_OID = '2.5.29.17';
const OID_TO_KEY = new Map<string, SubjectKey>(SUBJECT_ATTRIBUTES.map((a) => [a.oid, a.key]));
const SHORT_NAMES: Record<string, string> = {
  CN: '2.5.4.3',
  L: '2.5.4.7',
  ST: '2.5.4.8',
  O: '2.5.4.10',
  OU: '2.5.4.11',
  C: '2.5.4.6',
};

/** `spec.request` as stored (base64 of the PEM text in JSON) to the PEM text. */
export function requestPem(csr: CertificateSigningRequest): string {
  return Buffer.from(csr.spec?.request ?? '', 'base64').toString('latin1');
}

/**
 * Parses the first PEM block of a request, which must be a `CERTIFICATE REQUEST`, as the reference does.
 * Rejects with {@link RequestParseError} with a message fit for an Event. The self-signature is not checked here.
 */
export async function parseRequestPem(pem: string): Promise<ParsedRequest> {
  if (pem.length > MAX_REQUEST_BYTES) {
    throw new RequestParseError(`request is ${pem.length} bytes, more than the ${MAX_REQUEST_BYTES} accepted`);
  }
  let first: { type: string; der: Uint8Array } | undefined;
  try {
    first = splitPemBlocks(pem)[0];
  } catch {
    first = undefined;
  }
  if (first?.type !== 'CERTIFICATE REQUEST') {
    throw new RequestParseError('PEM block type must be CERTIFICATE REQUEST');
  }
  try {
    return readFast(first.der) ?? (await parseRequestByLibrary(first.der));
  } catch (err) {
    throw new RequestParseError(`x509: malformed certificate request: ${(err as Error).message}`);
  }
}

/** The request as {@link readCertificationRequest} reads it, or undefined when that leaves it to the library. */
function readFast(der: Uint8Array): ParsedRequest | undefined {
  const fields = readCertificationRequest(der);
  if (!fields) return undefined;
  const names = noAltNames();
  // The library parses the value of every extension it knows: any but the SAN is left to it, for the same verdict.
  for (const ext of fields.extensions) {
    if (ext.oid !== SAN_OID || !readAltNames(ext.value, names)) return undefined;
  }
  const subject = emptySubject();
  for (const { oid, value } of fields.subject) addSubjectValue(subject, OID_TO_KEY.get(oid), value);
  return {
    der,
    spki: fields.spki,
    fields,
    subject,
    subjectEmpty: fields.subject.length === 0,
    ...names,
    keyAlgorithm: fields.keyAlgorithm,
  };
}

/** The request as @peculiar/x509 parses it: for the requests {@link readCertificationRequest} leaves to it. */
export async function parseRequestByLibrary(der: Uint8Array): Promise<ParsedRequest> {
  const { Pkcs10CertificateRequest, SubjectAlternativeNameExtension } = await x509Library();
  const csr = new Pkcs10CertificateRequest(der);
  const { subject, empty } = readSubject(csr.subjectName);
  const names = readSans(csr, SubjectAlternativeNameExtension);
  const spki = new Uint8Array(csr.publicKey.rawData);
  return { der, spki, subject, subjectEmpty: empty, ...names, keyAlgorithm: csr.publicKey.algorithm.name };
}

/** Parsed requests kept (least recently used dropped first), and the longest `spec.request` text kept. */
const PARSED_CACHE_SIZE = 1024;
const MAX_CACHED_REQUEST_CHARS = 16 * 1024;
const parsedByRequest = new Map<string, ParsedRequest>();

/**
 * The CSR's request, parsed once per process for the same `spec.request` text (the approver, the signer and
 * every later reconcile of the CSR share it): a request is immutable, and its parse depends on its bytes only.
 * Callers must not change what it returns. Requests that do not parse are not kept.
 */
export async function parseRequest(csr: CertificateSigningRequest): Promise<ParsedRequest> {
  const request = csr.spec?.request ?? '';
  const cached = parsedByRequest.get(request);
  if (cached) {
    parsedByRequest.delete(request); // re-inserted below as the most recently used
    parsedByRequest.set(request, cached);
    return cached;
  }
  const parsed = await parseRequestPem(requestPem(csr));
  if (request.length <= MAX_CACHED_REQUEST_CHARS) {
    if (parsedByRequest.size >= PARSED_CACHE_SIZE) parsedByRequest.delete(parsedByRequest.keys().next().value!);
    parsedByRequest.set(request, parsed);
  }
  return parsed;
}

const emptySubject = (): Subject => ({
  country: [],
  province: [],
  locality: [],
  streetAddress: [],
  postalCode: [],
  organization: [],
  organizationalUnit: [],
  commonName: '',
  serialNumber: '',
});

function addSubjectValue(subject: Subject, key: SubjectKey | undefined, value: string): void {
  // A value in a string type the library does not know comes back as `#<hex>`: not a string, skipped.
  if (!key || value.startsWith('#')) return;
  if (key === 'commonName' || key === 'serialNumber') subject[key] = value;
  else subject[key].push(value);
}

function readSubject(name: x509.Name): { subject: Subject; empty: boolean } {
  const subject = emptySubject();
  let empty = true;
  for (const rdn of name.toJSON()) {
    for (const [type, values] of Object.entries(rdn)) {
      empty = false;
      const key = OID_TO_KEY.get(SHORT_NAMES[type] ?? type);
      for (const value of values) addSubjectValue(subject, key, value);
    }
  }
  return { subject, empty };
}

function readSans(
  csr: x509.Pkcs10CertificateRequest,
  SanExtension: typeof x509.SubjectAlternativeNameExtension,
): AltNames {
  const out = noAltNames();
  for (const ext of csr.extensions) {
    if (ext.type !== SAN_OID) continue;
    const san = ext instanceof SanExtension ? ext : new SanExtension(ext.rawData);
    for (const n of san.names.items) {
      if (n.type === 'dns') out.dnsNames.push(n.value);
      else if (n.type === 'email') out.emailAddresses.push(n.value);
      else if (n.type === 'ip') out.ipAddresses.push(n.value);
      else if (n.type === 'url') out.uris.push(n.value);
    }
  }
  return out;
}

const verified = new WeakMap<ParsedRequest, Promise<string | undefined>>();

/**
 * Checks the request's self-signature; the reference's message when it does not verify. Checked once per parsed
 * request (see {@link parseRequest}): the answer depends on the request's bytes only.
 */
export function verifyRequestSignature(parsed: ParsedRequest): Promise<string | undefined> {
  let answer = verified.get(parsed);
  if (!answer) {
    answer = checkRequestSignature(parsed);
    verified.set(parsed, answer);
  }
  return answer;
}

async function checkRequestSignature(parsed: ParsedRequest): Promise<string | undefined> {
  try {
    if (await verifyRequestSelfSignature(parsed.der, parsed.fields)) return undefined;
    return 'unable to verify certificate request signature: x509: signature verification failure';
  } catch (err) {
    return `unable to verify certificate request signature: ${(err as Error).message}`;
  }
}

// ---------------------------------------------------------------------------------------------
// usages and the signers' x509 predicates

const sameSet = (a: ReadonlySet<string>, b: readonly string[]) => a.size === b.length && b.every((u) => a.has(u));

const CLIENT_USAGES = [
  ['digital signature', 'key encipherment', 'client auth'],
  ['digital signature', 'client auth'],
];
const SERVING_USAGES = [
  ['digital signature', 'key encipherment', 'server auth'],
  ['digital signature', 'server auth'],
];

/** The usage list of a CSR as a set (duplicates are rejected by the API server; a set is what the checks compare). */
export const usageSet = (csr: CertificateSigningRequest): Set<string> => new Set(csr.spec?.usages ?? []);

const orgIsNodes = (p: ParsedRequest) =>
  p.subject.organization.length === 1 && p.subject.organization[0] === NODES_GROUP;

/**
 * The node agent client predicate (reference §2.2), in its order. Returns the first failure text, or undefined.
 * The approver and the node agent client signer both use it.
 */
export function nodeAgentClientProblem(p: ParsedRequest, usages: ReadonlySet<string>): string | undefined {
  if (!orgIsNodes(p)) return `subject organization is not ${NODES_GROUP}`;
  if (p.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (p.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (p.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (p.uris.length) return 'URI subjectAltNames are not allowed';
  if (!p.subject.commonName.startsWith(NODE_USER_PREFIX)) {
    return `subject common name does not begin with ${NODE_USER_PREFIX}`;
  }
  if (!CLIENT_USAGES.some((set) => sameSet(usages, set))) {
    return 'usages did not match [client auth digital signature key encipherment]';
  }
  return undefined;
}

/** The node agent serving predicate (reference §3.3), in its order. */
export function nodeAgentServingProblem(p: ParsedRequest, usages: ReadonlySet<string>): string | undefined {
  if (!orgIsNodes(p)) return `subject organization is not ${NODES_GROUP}`;
  if (!p.dnsNames.length && !p.ipAddresses.length) return 'DNS or IP subjectAltName is required';
  if (p.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (p.uris.length) return 'URI subjectAltNames are not allowed';
  if (!SERVING_USAGES.some((set) => sameSet(usages, set))) {
    return 'usages did not match [digital signature key encipherment server auth]';
  }
  if (!p.subject.commonName.startsWith(NODE_USER_PREFIX)) {
    return `subject common name does not begin with ${NODE_USER_PREFIX}`;
  }
  return undefined;
}

const API_CLIENT_OPTIONAL = new Set(['digital signature', 'key encipherment']);

/** The API-server client signer's usage rules (reference §3.3): only usages are checked, in list order. */
export function apiServerClientProblem(_p: ParsedRequest, usages: readonly string[]): string | undefined {
  let client = false;
  for (const u of usages) {
    if (u === 'client auth') client = true;
    else if (!API_CLIENT_OPTIONAL.has(u)) return `invalid usage for client certificate: ${u}`;
  }
  return client ? undefined : 'missing required usage for client certificate: client auth';
}

// ---------------------------------------------------------------------------------------------
// the work queue

/** The CSR controllers' retries: per CSR 200 ms doubling up to 1000 s, and 10/s overall after a burst of 100. */
export function csrRateLimiter(clock?: Clock): RateLimiter<string> {
  return maxOf<string>(itemExponential<string>(200, 1_000_000), tokenBucket(10, 100, clock));
}

/** Go's default `time.Time` text for a whole-second UTC instant: `2026-01-01 00:00:00 +0000 UTC`. */
export function goTime(d: Date): string {
  return `${d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} +0000 UTC`;
}
