/**
 * The approving controller's pure core. Client CSRs of the node agent (reference §2): which recognizers match,
 * the SubjectAccessReview each asks, and the Approved condition. Serving CSRs of the node agent (our opt-in
 * extension, no reference controller does it): the rules a request must pass, each with the reason it refuses.
 */
import { isIP } from 'node:net';
import { group, type Naming } from '../../../src/api/naming.ts';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../../src/api/node-identity.ts';
import type { SubjectAccessReview } from '../../../src/api/types/authz.ts';
import type {
  CertificateSigningRequest,
  CertificateSigningRequestCondition,
} from '../../../src/api/types/certificates.ts';
import type { Node } from '../../../src/api/types/core.ts';
import type { ServingApprovalConfig } from '../config.ts';
import {
  approvalState,
  isIssued,
  nodeAgentClientProblem,
  nodeAgentServingProblem,
  type ParsedRequest,
  usageSet,
} from '../csr.ts';
import { certificateTtlMs } from '../signing/policy.ts';

export type ApprovalTarget = { action: 'skip'; why: string } | { action: 'client' } | { action: 'serving' };

/** What kind of approval a CSR is up for, before its request is parsed. */
export function approvalTarget(csr: CertificateSigningRequest, n: Naming, servingEnabled: boolean): ApprovalTarget {
  if (isIssued(csr)) return { action: 'skip', why: 'issued' };
  const { approved, denied } = approvalState(csr);
  if (approved || denied) return { action: 'skip', why: 'decided' };
  const signer = csr.spec?.signerName;
  if (signer === n.signers.apiServerClientNodeAgent) return { action: 'client' };
  if (signer === n.signers.nodeAgentServing && servingEnabled) return { action: 'serving' };
  return { action: 'skip', why: 'not a signer this controller approves' };
}

// ---------------------------------------------------------------------------------------------
// node agent client certificates

export type ClientSubresource = 'selfnodeclient' | 'nodeclient';

export interface Recognizer {
  subresource: ClientSubresource;
  message: string;
}

/**
 * The recognizers that match, in the order their reviews are tried: `selfnodeclient` when the requester is
 * the certificate's subject (a node renewing), then `nodeclient`. None when the request is not a node agent
 * client request.
 */
export function clientRecognizers(csr: CertificateSigningRequest, parsed: ParsedRequest, n: Naming): Recognizer[] {
  if (csr.spec?.signerName !== n.signers.apiServerClientNodeAgent) return [];
  if (nodeAgentClientProblem(parsed, usageSet(csr)) !== undefined) return [];
  const out: Recognizer[] = [];
  if (csr.spec.username === parsed.subject.commonName) {
    out.push({
      subresource: 'selfnodeclient',
      message: `Auto approving self ${n.nodeAgent} client certificate after SubjectAccessReview.`,
    });
  }
  out.push({
    subresource: 'nodeclient',
    message: `Auto approving ${n.nodeAgent} client certificate after SubjectAccessReview.`,
  });
  return out;
}

/** The review asking whether the requester may `create` the recognizer's CSR subresource. */
export function subjectAccessReview(
  csr: CertificateSigningRequest,
  subresource: ClientSubresource,
  n: Naming,
): SubjectAccessReview {
  const spec = csr.spec;
  const review: SubjectAccessReview = {
    apiVersion: `${group(n, 'authorization')}/v1`,
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      user: spec.username,
      groups: spec.groups,
      resourceAttributes: {
        group: group(n, 'certificates'),
        resource: 'certificatesigningrequests',
        subresource,
        verb: 'create',
      },
    },
  };
  if (spec.uid) review.spec.uid = spec.uid;
  if (spec.extra) review.spec.extra = Object.fromEntries(Object.entries(spec.extra).map(([k, v]) => [k, [...v]]));
  return review;
}

/** The error that requeues a recognized request whose reviews all said no. */
export function notApprovedMessage(name: string, tried: ClientSubresource[]): string {
  return `recognized csr "${name}" as [${tried.join(' ')}] but subject access review was not approved`;
}

export const APPROVED_REASON = 'AutoApproved';

export function approvedCondition(message: string, now: string): CertificateSigningRequestCondition {
  return { type: 'Approved', status: 'True', reason: APPROVED_REASON, message, lastUpdateTime: now };
}

/** The CSR with an Approved condition appended, as PUT to `/approval`. */
export function withApproval(csr: CertificateSigningRequest, message: string, now: string): CertificateSigningRequest {
  const conditions = [...(csr.status?.conditions ?? []), approvedCondition(message, now)];
  return { ...csr, status: { ...csr.status, conditions } };
}

// ---------------------------------------------------------------------------------------------
// node agent serving certificates (opt-in)

export type ServingRule = 'signer-policy' | 'requester' | 'node-exists' | 'ip-sans' | 'dns-sans' | 'lifetime';

export type ServingVerdict =
  | { approve: true; message: string }
  | { approve: false; rule: ServingRule; message: string };

export interface ServingInputs {
  csr: CertificateSigningRequest;
  parsed: ParsedRequest;
  /** The Node named by the request's CN, when it exists. */
  node: Node | undefined;
  config: ServingApprovalConfig;
  /** The configured DNS patterns, compiled by {@link compileDnsPatterns}. */
  dnsPatterns: RegExp[];
  /** The cluster signing duration: the lifetime issued when the CSR asks for none, and the ceiling. */
  signingDurationMs: number;
}

/** The node a serving request names (`system:node:<name>`), or undefined. */
export function servingNodeName(parsed: ParsedRequest): string | undefined {
  const cn = parsed.subject.commonName;
  return cn.startsWith(NODE_USER_PREFIX) && cn.length > NODE_USER_PREFIX.length
    ? cn.slice(NODE_USER_PREFIX.length)
    : undefined;
}

/** Canonical text of an IP address, so that `::1` and `0:0:0:0:0:0:0:1` compare equal. */
export function canonicalIp(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 4) return ip;
  if (family === 6) return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  return undefined;
}

/** Each pattern must match a whole DNS name, case-insensitively; a pattern that does not compile is an error. */
export function compileDnsPatterns(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => {
    try {
      return new RegExp(`^(?:${p})$`, 'i');
    } catch (err) {
      throw new Error(`invalid DNS name pattern for serving approval ${JSON.stringify(p)}: ${(err as Error).message}`);
    }
  });
}

const hours = (ms: number) => `${Math.round((ms / 3_600_000) * 100) / 100}h`;

/**
 * The rules, in order: the serving signer's own x509 policy; the requester is the node itself (username = CN =
 * `system:node:<node>`, in `system:nodes`); the Node exists; every IP SAN is one of its addresses; every DNS
 * SAN is its Hostname address or fully matches a configured pattern; the lifetime that would be issued is
 * within the configured maximum.
 */
export function servingVerdict(input: ServingInputs, n: Naming): ServingVerdict {
  const { csr, parsed, node, config } = input;
  const refuse = (rule: ServingRule, message: string): ServingVerdict => ({ approve: false, rule, message });
  const policy = nodeAgentServingProblem(parsed, usageSet(csr));
  if (policy) return refuse('signer-policy', policy);
  const cn = parsed.subject.commonName;
  const username = csr.spec.username ?? '';
  if (username !== cn) return refuse('requester', `requester "${username}" is not the subject "${cn}" of the request`);
  if (!(csr.spec.groups ?? []).includes(NODES_GROUP)) {
    return refuse('requester', `requester "${username}" is not in group ${NODES_GROUP}`);
  }
  const nodeName = servingNodeName(parsed);
  if (!nodeName) return refuse('requester', `subject "${cn}" names no node`);
  if (!node) return refuse('node-exists', `Node "${nodeName}" does not exist`);
  const addresses = node.status?.addresses ?? [];
  const nodeIps = new Set(addresses.map((a) => canonicalIp(a.address)).filter(Boolean));
  for (const ip of parsed.ipAddresses) {
    if (!nodeIps.has(canonicalIp(ip))) return refuse('ip-sans', `IP SAN ${ip} is not an address of Node "${nodeName}"`);
  }
  const hostnames = new Set(addresses.filter((a) => a.type === 'Hostname').map((a) => a.address.toLowerCase()));
  for (const dns of parsed.dnsNames) {
    if (hostnames.has(dns.toLowerCase()) || input.dnsPatterns.some((re) => re.test(dns))) continue;
    return refuse(
      'dns-sans',
      `DNS SAN ${dns} is neither the Hostname address of Node "${nodeName}" nor matches a configured pattern`,
    );
  }
  const ttl = certificateTtlMs(csr.spec.expirationSeconds, input.signingDurationMs);
  const max = config.maxDurationMs ?? input.signingDurationMs;
  if (ttl > max) return refuse('lifetime', `requested lifetime ${hours(ttl)} exceeds the maximum ${hours(max)}`);
  return {
    approve: true,
    message: `Auto approving self ${n.nodeAgent} serving certificate: requester, Node addresses and lifetime checked.`,
  };
}
