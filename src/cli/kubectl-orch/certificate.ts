/**
 * `kubectl orch certificate approve|deny NAME... [--force]`: kubectl's own semantics for either flavor's
 * certificates group. A CSR that already carries the opposite decision is an error; one that already
 * carries this decision is left alone unless `--force`; conflicts are retried up to ten times.
 */
import type { CertificateSigningRequest, CertificateSigningRequestCondition } from '../../api/types/certificates.ts';
import { isConflict } from '../../client/errors.ts';
import { errorLine, type OutputFormat, printObject, UsageError } from './output.ts';
import type { Session } from './session.ts';

export type Decision = 'approve' | 'deny';

const DECISIONS = {
  approve: { type: 'Approved', opposite: 'Denied', reason: 'KubectlApprove', verb: 'approved' },
  deny: { type: 'Denied', opposite: 'Approved', reason: 'KubectlDeny', verb: 'denied' },
} as const;

/** The CSR with the decision added, or `unchanged` when it already has it; throws when it has the opposite one. */
export function withDecision(
  csr: CertificateSigningRequest,
  decision: Decision,
  now: string,
): CertificateSigningRequest | 'unchanged' {
  const d = DECISIONS[decision];
  const conditions = csr.status?.conditions ?? [];
  const opposite = conditions.find((c) => c.type === d.opposite);
  if (opposite) throw new Error(`certificate signing request "${csr.metadata.name}" is already ${opposite.type}`);
  if (conditions.some((c) => c.type === d.type)) return 'unchanged';
  const condition: CertificateSigningRequestCondition = {
    type: d.type,
    status: 'True',
    reason: d.reason,
    message: `This CSR was ${d.verb} by kubectl certificate ${decision}.`,
    lastUpdateTime: now,
  };
  return { ...csr, status: { ...csr.status, conditions: [...conditions, condition] } };
}

const MAX_CONFLICT_RETRIES = 10;

export async function decide(
  s: Session,
  decision: Decision,
  names: string[],
  o: { force: boolean; output: OutputFormat },
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  if (!names.length) throw new UsageError('one or more CSRs must be specified as <name> or -f <filename>');
  const rt = s.registry.byKind('CertificateSigningRequest')!;
  const csrs = s.client.resource<CertificateSigningRequest>(rt);
  let failed = 0;
  for (const name of names) {
    try {
      let csr = await csrs.get(undefined, name);
      for (let attempt = 0; ; attempt++) {
        const next = withDecision(csr, decision, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
        if (next === 'unchanged' && !o.force) break;
        try {
          csr = await csrs.replaceApproval(next === 'unchanged' ? csr : next);
          break;
        } catch (e) {
          if (!isConflict(e) || attempt >= MAX_CONFLICT_RETRIES) throw e;
          csr = await csrs.get(undefined, name);
        }
      }
      out(printObject(rt, csr, o.output, DECISIONS[decision].verb));
    } catch (e) {
      failed++;
      err(errorLine(e));
    }
  }
  return failed ? 1 : 0;
}
