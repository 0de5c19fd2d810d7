/**
 * The CSR approving controller (`certificatesigningrequest-approving-controller`, `csrapproving`): approves
 * node agent client CSRs whose requester a SubjectAccessReview allows (reference §2), and, only when enabled,
 * node agent serving CSRs that pass the serving rules (see core.ts). It never writes Denied.
 *
 * A recognized client CSR whose reviews all say no is looked at again with the reference's backoff (200 ms
 * doubling to 1000 s), as an expected state rather than an error: it is logged at debug level only.
 */
import { CONTROLLER_ACCOUNTS } from '../../../src/api/controller-accounts.ts';
import { group } from '../../../src/api/naming.ts';
import { NODE_USER_PREFIX } from '../../../src/api/node-identity.ts';
import type { ResourceType } from '../../../src/api/registry.ts';
import type { SubjectAccessReview } from '../../../src/api/types/authz.ts';
import type { CertificateSigningRequest } from '../../../src/api/types/certificates.ts';
import type { Node } from '../../../src/api/types/core.ts';
import type { Lister } from '../../../src/cache/informer.ts';
import type { ResourceClient } from '../../../src/client/resource.ts';
import {
  type ControllerContext,
  type ControllerDefinition,
  done,
  type Reconciler,
  type Result,
  requeueAfter,
  TerminalError,
} from '../../../src/controller/controller.ts';
import { READ, rule } from '../../../src/controller/permissions.ts';
import { itemExponential } from '../../../src/workqueue/ratelimit.ts';
import { type CertificatesConfig, certificatesConfig } from '../config.ts';
import { csrRateLimiter, type ParsedRequest, parseRequest, RequestParseError } from '../csr.ts';
import { type CertificateMetrics, certificateMetrics } from '../metrics.ts';
import { CSR_WORKERS, csrResource, nowStamp, recordEvent, watchCsrs } from '../shared.ts';
import {
  approvalTarget,
  type ClientSubresource,
  clientRecognizers,
  compileDnsPatterns,
  notApprovedMessage,
  servingNodeName,
  servingVerdict,
  subjectAccessReview,
  withApproval,
} from './core.ts';

export const APPROVING_CONTROLLER = 'certificatesigningrequest-approving-controller';

const ACTION = 'Approve';
export const APPROVING_EVENT = {
  invalidRequest: 'InvalidRequest',
  servingRefused: 'ServingCertificateNotApproved',
} as const;

const REQUESTER_INDEX = 'requester';

class ApprovingReconciler implements Reconciler {
  /** Backoff of recognized requests not (yet) allowed, kept here so the retry is not logged as a failure. */
  private readonly waiting = itemExponential<string>(200, 1_000_000);
  private readonly csrs: ResourceClient<CertificateSigningRequest>;
  private readonly reviews: ResourceClient<SubjectAccessReview>;
  private readonly metrics: CertificateMetrics;
  private readonly dnsPatterns: RegExp[];

  constructor(
    private readonly ctx: ControllerContext,
    private readonly rt: ResourceType,
    private readonly lister: Lister<CertificateSigningRequest>,
    private readonly nodes: Lister<Node> | undefined,
    private readonly cfg: CertificatesConfig,
  ) {
    this.csrs = ctx.client.resource<CertificateSigningRequest>(rt);
    this.reviews = ctx.client.kind<SubjectAccessReview>('SubjectAccessReview');
    this.metrics = certificateMetrics(ctx.metrics);
    this.dnsPatterns = cfg.servingApproval.enabled ? compileDnsPatterns(cfg.servingApproval.dnsPatterns) : [];
  }

  async reconcile(key: string, signal: AbortSignal): Promise<Result> {
    const csr = this.lister.get(undefined, key);
    const target = csr ? approvalTarget(csr, this.ctx.naming, this.nodes !== undefined) : undefined;
    if (!csr || !target || target.action === 'skip') {
      this.waiting.forget(key);
      return done;
    }
    let parsed: ParsedRequest;
    try {
      parsed = await parseRequest(csr);
    } catch (err) {
      if (!(err instanceof RequestParseError)) throw err;
      // The spec never changes, so neither will this: say so once, and do not retry.
      const message = `unable to parse csr "${key}": ${err.message}`;
      recordEvent(this.ctx, this.rt, csr, 'Warning', APPROVING_EVENT.invalidRequest, ACTION, message);
      throw new TerminalError(message);
    }
    return target.action === 'client' ? this.client(csr, parsed, signal) : this.serving(csr, parsed, signal);
  }

  private async client(csr: CertificateSigningRequest, parsed: ParsedRequest, signal: AbortSignal): Promise<Result> {
    const n = this.ctx.naming;
    const name = csr.metadata.name!;
    const recognizers = clientRecognizers(csr, parsed, n);
    if (!recognizers.length) return done;
    const tried: ClientSubresource[] = [];
    for (const r of recognizers) {
      const review = await this.reviews.create(subjectAccessReview(csr, r.subresource, n), { signal });
      if (review.status?.allowed) {
        await this.approve(csr, r.message, signal);
        this.waiting.forget(name);
        return done;
      }
      tried.push(r.subresource);
    }
    const wait = this.waiting.when(name);
    this.ctx.logger.debug({ csr: name, retryInMs: wait }, notApprovedMessage(name, tried));
    return requeueAfter(wait);
  }

  private async serving(csr: CertificateSigningRequest, parsed: ParsedRequest, signal: AbortSignal): Promise<Result> {
    const nodeName = servingNodeName(parsed);
    const node = nodeName ? this.nodes!.get(undefined, nodeName) : undefined;
    const verdict = servingVerdict(
      {
        csr,
        parsed,
        node,
        config: this.cfg.servingApproval,
        dnsPatterns: this.dnsPatterns,
        signingDurationMs: this.cfg.signing.durationMs,
      },
      this.ctx.naming,
    );
    if (verdict.approve) {
      await this.approve(csr, verdict.message, signal);
      return done;
    }
    // Left pending: a change of the CSR or of the node's Node object brings it back here.
    const note = `left pending: rule ${verdict.rule}: ${verdict.message}`;
    recordEvent(this.ctx, this.rt, csr, 'Warning', APPROVING_EVENT.servingRefused, ACTION, note);
    return done;
  }

  private async approve(csr: CertificateSigningRequest, message: string, signal: AbortSignal): Promise<void> {
    try {
      // withApproval copies what it changes: the cached object is left as it is, with no deep copy.
      await this.csrs.replaceApproval(withApproval(csr, message, nowStamp()), { signal });
    } catch (err) {
      throw new Error(`error updating approval for csr: ${(err as Error).message}`);
    }
    this.metrics.approved.inc({ signer: csr.spec.signerName });
  }
}

export const approvingController: ControllerDefinition = {
  name: APPROVING_CONTROLLER,
  aliases: ['csrapproving'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.certificates,
  shardBy: { key: 'uid', kind: 'CertificateSigningRequest' },
  workers: CSR_WORKERS,
  permissions: (n, config) => {
    const certificates = group(n, 'certificates');
    const serving = certificatesConfig(config).servingApproval.enabled;
    return [
      rule([certificates], ['certificatesigningrequests'], READ),
      rule([certificates], ['certificatesigningrequests/approval'], ['update']),
      rule(
        [certificates],
        ['signers'],
        ['approve'],
        [n.signers.apiServerClientNodeAgent, ...(serving ? [n.signers.nodeAgentServing] : [])],
      ),
      rule([group(n, 'authorization')], ['subjectaccessreviews'], ['create']),
      ...(serving ? [rule([''], ['nodes'], READ)] : []),
    ];
  },
  rateLimiter: () => csrRateLimiter(),
  setup(ctx, enqueue) {
    const cfg = certificatesConfig(ctx.config);
    const rt = csrResource(ctx);
    const csrInformer = watchCsrs(ctx, enqueue);
    let nodes: Lister<Node> | undefined;
    if (cfg.servingApproval.enabled) {
      const nodeRt = ctx.registry.byKind('Node');
      if (!nodeRt) throw new Error('serving approval needs Nodes, which the registry does not have');
      csrInformer.addIndexer(REQUESTER_INDEX, (csr) => (csr.spec?.username ? [csr.spec.username] : []));
      const nodeInformer = ctx.informers.informerFor<Node>(nodeRt);
      // A Node that appears or changes its addresses may now satisfy its pending serving requests.
      const wake = (node: Node) => {
        for (const csr of csrInformer.lister().byIndex(REQUESTER_INDEX, `${NODE_USER_PREFIX}${node.metadata.name}`)) {
          if (csr.spec.signerName === ctx.naming.signers.nodeAgentServing) enqueue.add(csr.metadata.name!);
        }
      };
      nodeInformer.addEventHandler({ add: wake, update: (_old, node) => wake(node) });
      nodes = nodeInformer.lister();
      ctx.logger.info(
        { controller: APPROVING_CONTROLLER, dnsPatterns: cfg.servingApproval.dnsPatterns },
        `approving ${ctx.naming.signers.nodeAgentServing} requests that pass the serving rules`,
      );
    }
    return new ApprovingReconciler(ctx, rt, csrInformer.lister(), nodes, cfg);
  },
};
