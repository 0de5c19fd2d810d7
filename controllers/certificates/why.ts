/**
 * `why csr/NAME`: the approver's and the signer's own cores run on the CSR as the API holds it now: which
 * recognizer matched or the x509 rule that kept it from matching, what the SubjectAccessReviews say, the
 * signer's policy, and what the signer did or refused.
 */
import type { SubjectAccessReview } from '../../src/api/types/authz.ts';
import type { CertificateSigningRequest } from '../../src/api/types/certificates.ts';
import type { Node } from '../../src/api/types/core.ts';
import { type WhyAnswer, type WhyAnswerer, WhyNotFound, type WhySources } from '../../src/controller/why.ts';
import {
  approvalTarget,
  clientRecognizers,
  compileDnsPatterns,
  servingNodeName,
  servingVerdict,
  subjectAccessReview,
} from './approving/core.ts';
import { certificatesConfig, signingPlan } from './config.ts';
import {
  approvalState,
  hasTrueCondition,
  isIssued,
  nodeAgentClientProblem,
  type ParsedRequest,
  parseRequest,
  RequestParseError,
  usageSet,
} from './csr.ts';
import { signerValidators, signingDecision } from './signing/policy.ts';

/** What the approver would do with a pending CSR, each review's answer already known. */
export interface ApprovalFacts {
  servingEnabled: boolean;
  /** SubjectAccessReview answers by recognizer subresource, in the order tried. */
  reviews: { subresource: string; allowed: boolean; reason?: string }[];
  /** The Node a serving request names, when it exists. */
  node?: Node;
  dnsPatterns: string[];
  signingDurationMs: number;
  /** The signers the daemon runs a signing loop for; undefined when unknown (every well-known signer assumed). */
  runningSigners?: ReadonlySet<string>;
}

function conditionLines(csr: CertificateSigningRequest): string[] {
  return (csr.status?.conditions ?? []).map(
    (c) =>
      `condition ${c.type}=${c.status ?? 'True'}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}`,
  );
}

function approvalLines(
  csr: CertificateSigningRequest,
  parsed: ParsedRequest,
  f: ApprovalFacts,
  src: Pick<WhySources, 'naming'>,
): { summary: string; details: string[] } {
  const n = src.naming;
  const target = approvalTarget(csr, n, f.servingEnabled);
  const signer = csr.spec?.signerName;
  if (target.action === 'skip') {
    return {
      summary: 'pending: no controller here approves this signer; a person or another approver must',
      details: [
        `signer ${signer} is not auto-approved by this daemon (only ${n.signers.apiServerClientNodeAgent}${f.servingEnabled ? ` and ${n.signers.nodeAgentServing}` : ''})`,
      ],
    };
  }
  if (target.action === 'serving') {
    const verdict = servingVerdict(
      {
        csr,
        parsed,
        node: f.node,
        config: { enabled: true, dnsPatterns: f.dnsPatterns },
        dnsPatterns: compileDnsPatterns(f.dnsPatterns),
        signingDurationMs: f.signingDurationMs,
      },
      n,
    );
    return verdict.approve
      ? { summary: 'pending: passes every serving rule; the approver has not acted yet', details: [verdict.message] }
      : { summary: `pending: the serving approval refuses it (rule ${verdict.rule})`, details: [verdict.message] };
  }
  const recognizers = clientRecognizers(csr, parsed, n);
  if (!recognizers.length) {
    return {
      summary: 'pending: not recognized as a node agent client request',
      details: [`x509 rule failed: ${nodeAgentClientProblem(parsed, usageSet(csr))}`],
    };
  }
  const details = [`recognized as ${recognizers.map((r) => r.subresource).join(', then ')}`];
  for (const r of f.reviews) {
    details.push(
      `SubjectAccessReview: may ${csr.spec.username} create certificatesigningrequests/${r.subresource}? ${r.allowed ? 'yes' : 'no'}${r.reason ? ` (${r.reason})` : ''}`,
    );
  }
  const allowed = f.reviews.find((r) => r.allowed);
  return allowed
    ? {
        summary: `pending: the approver will approve it through ${allowed.subresource} (is the daemon running?)`,
        details,
      }
    : {
        summary: `pending: ${csr.spec.username} may not create any of the recognized subresources, so it is not auto-approved`,
        details,
      };
}

function signingLines(
  csr: CertificateSigningRequest,
  parsed: ParsedRequest,
  f: ApprovalFacts,
  src: Pick<WhySources, 'naming'>,
): { summary: string; details: string[] } {
  const n = src.naming;
  const validators = signerValidators(n);
  const running = f.runningSigners ?? new Set(validators.keys());
  const decision = signingDecision(csr, running, n);
  if (decision.action === 'skip') {
    return { summary: `approved, not issued: no signer of this daemon handles ${csr.spec.signerName}`, details: [] };
  }
  if (decision.action === 'unhandled') {
    return {
      summary: `approved, not issued: no signing loop runs for ${decision.signer} (no CA is configured for it)`,
      details: [],
    };
  }
  const problem = validators.get(decision.signer)?.(parsed, csr);
  return problem
    ? { summary: `approved, but the signer refuses it: ${problem}`, details: [`signer policy of ${decision.signer}`] }
    : { summary: `approved and valid for ${decision.signer}: the signer will issue it`, details: [] };
}

/** The answer for one CSR, from the cores, given what only the API can tell (pure: table-tested). */
export async function explainCsr(
  csr: CertificateSigningRequest,
  facts: ApprovalFacts,
  src: Pick<WhySources, 'naming'>,
): Promise<WhyAnswer> {
  const subject = `certificatesigningrequest/${csr.metadata.name}`;
  const details = conditionLines(csr);
  const answer = (summary: string, more: string[] = []) => ({ subject, summary, details: [...more, ...details] });
  if (isIssued(csr)) return answer('issued: status.certificate holds the certificate');
  const { approved, denied } = approvalState(csr);
  if (denied) return answer('denied: no signer issues a denied request');
  if (hasTrueCondition(csr, 'Failed')) return answer('failed: the signer refused it (see the Failed condition)');
  let parsed: ParsedRequest;
  try {
    parsed = await parseRequest(csr);
  } catch (err) {
    if (!(err instanceof RequestParseError)) throw err;
    return answer(`the request cannot be parsed, so nothing will approve or sign it: ${err.message}`);
  }
  const part = approved ? signingLines(csr, parsed, facts, src) : approvalLines(csr, parsed, facts, src);
  return answer(part.summary, part.details);
}

async function gatherFacts(src: WhySources, csr: CertificateSigningRequest): Promise<ApprovalFacts> {
  const cfg = certificatesConfig(src.config ?? {});
  const n = src.naming;
  const facts: ApprovalFacts = {
    servingEnabled: cfg.servingApproval.enabled,
    reviews: [],
    dnsPatterns: cfg.servingApproval.dnsPatterns,
    signingDurationMs: cfg.signing.durationMs,
    runningSigners: src.config ? new Set(signingPlan(cfg.signing, n).loops.map((l) => l.signer)) : undefined,
  };
  let parsed: ParsedRequest;
  try {
    parsed = await parseRequest(csr);
  } catch {
    return facts;
  }
  const nodeName = servingNodeName(parsed);
  if (nodeName) facts.node = await src.get<Node>('Node', undefined, nodeName);
  if (approvalState(csr).approved || approvalState(csr).denied) return facts;
  const reviews = src.client.kind<SubjectAccessReview>('SubjectAccessReview');
  for (const r of clientRecognizers(csr, parsed, n)) {
    const review = await reviews.create(subjectAccessReview(csr, r.subresource, n));
    facts.reviews.push({
      subresource: r.subresource,
      allowed: Boolean(review.status?.allowed),
      reason: review.status?.reason,
    });
    if (review.status?.allowed) break;
  }
  return facts;
}

export const csrWhy: WhyAnswerer = {
  names: ['certificatesigningrequests', 'certificatesigningrequest', 'csr'],
  namespaced: false,
  async answer(src, _namespace, name) {
    const csr = await src.get<CertificateSigningRequest>('CertificateSigningRequest', undefined, name);
    if (!csr) throw new WhyNotFound(`certificatesigningrequests "${name}" not found`);
    return explainCsr(csr, await gatherFacts(src, csr), src);
  },
};
