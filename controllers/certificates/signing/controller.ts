/**
 * The CSR signing controller (`certificatesigningrequest-signing-controller`, `csrsigning`): one signing loop
 * per well-known signer that has a CA (reference §3.1), all fed by one CSR informer and one work queue keyed by
 * CSR name; a CSR goes to the loop of its (immutable) signer. Policy failures write `Failed`; every other
 * failure is an Event on the CSR and a metric as well as a log line, and is retried unless retrying cannot
 * help (the request itself is bad: its spec never changes).
 */

import type { Logger } from 'pino';
import { CONTROLLER_ACCOUNTS } from '../../../src/api/controller-accounts.ts';
import { group } from '../../../src/api/naming.ts';
import type { ResourceType } from '../../../src/api/registry.ts';
import type { CertificateSigningRequest } from '../../../src/api/types/certificates.ts';
import type { Lister } from '../../../src/cache/informer.ts';
import { isConflict } from '../../../src/client/errors.ts';
import type { ResourceClient } from '../../../src/client/resource.ts';
import {
  type ControllerContext,
  type ControllerDefinition,
  done,
  type Enqueuer,
  type Reconciler,
  type Result,
  TerminalError,
} from '../../../src/controller/controller.ts';
import { READ, rule } from '../../../src/controller/permissions.ts';
import { certificatesConfig, type SigningPlan, signingPlan } from '../config.ts';
import {
  csrRateLimiter,
  isApproved,
  isIssued,
  type ParsedRequest,
  parseRequest,
  RequestParseError,
  verifyRequestSignature,
} from '../csr.ts';
import { type CertificateMetrics, certificateMetrics } from '../metrics.ts';
import { CSR_WORKERS, csrResource, nowStamp, recordEvent, watchCsrs } from '../shared.ts';
import { CaFileWatcher } from './ca.ts';
import { issue, type SigningCa } from './certificate.ts';
import {
  certificateTtlMs,
  FAILED_REASON,
  mapUsages,
  type SignerValidator,
  signerValidators,
  signingDecision,
  validityWindow,
} from './policy.ts';

export const SIGNING_CONTROLLER = 'certificatesigningrequest-signing-controller';

const ACTION = 'Sign';

/** Event reasons of signing problems that are not policy failures (also the metric's `reason`). */
export const SIGNING_EVENT = {
  invalidRequest: 'InvalidRequest',
  unknownUsage: 'UnrecognizedUsage',
  caUnavailable: 'SignerCAUnavailable',
  caExpired: 'SignerCAExpired',
  signing: 'SigningFailed',
  write: 'StatusWriteFailed',
  notRunning: 'SignerNotRunning',
} as const;

interface LoopDeps {
  ctx: ControllerContext;
  rt: ResourceType;
  csrs: ResourceClient<CertificateSigningRequest>;
  metrics: CertificateMetrics;
  durationMs: number;
  logger: Logger;
}

/** One signer's loop: its CA, its validation, and what it does with a CSR it owns. */
export class SigningLoop {
  private cache?: { generation: number; ca: Promise<SigningCa> };
  private caError?: string;

  constructor(
    readonly signer: string,
    private readonly validate: SignerValidator,
    private readonly ca: CaFileWatcher,
    private readonly deps: LoopDeps,
  ) {}

  /** The CA for the current files, parsed once per change; a failed parse is kept until the files change. */
  signingCa(): Promise<SigningCa> {
    const { generation } = this.ca.current();
    if (this.cache?.generation !== generation) {
      const ca = this.ca.signingCa();
      ca.then(
        () => {
          this.caError = undefined;
        },
        (err: Error) => {
          this.caError = err.message;
        },
      );
      this.cache = { generation, ca };
    }
    return this.cache.ca;
  }

  health(): string | undefined {
    return this.caError && `${this.signer}: ${this.caError}`;
  }

  async handle(csr: CertificateSigningRequest, signal: AbortSignal): Promise<Result> {
    const { ctx, rt, metrics } = this.deps;
    const name = csr.metadata.name!;
    const started = performance.now();
    const fail = (reason: string, message: string, permanent: boolean): never => {
      metrics.failed.inc({ signer: this.signer, reason });
      recordEvent(ctx, rt, csr, 'Warning', reason, ACTION, message);
      throw permanent ? new TerminalError(message) : new Error(message);
    };

    let parsed: ParsedRequest;
    try {
      parsed = await parseRequest(csr);
    } catch (err) {
      if (!(err instanceof RequestParseError)) throw err;
      return fail(SIGNING_EVENT.invalidRequest, `unable to parse csr "${name}": ${err.message}`, true);
    }
    const problem = this.validate(parsed, csr);
    if (problem) return this.writeFailed(csr, problem, signal);

    const badSignature = await verifyRequestSignature(parsed);
    if (badSignature) return fail(SIGNING_EVENT.invalidRequest, `error auto signing csr: ${badSignature}`, true);
    const usages = csr.spec.usages ?? [];
    const mapped = mapUsages(usages);
    if ('error' in mapped) return fail(SIGNING_EVENT.unknownUsage, `error auto signing csr: ${mapped.error}`, true);
    let ca: SigningCa;
    try {
      ca = await this.signingCa();
    } catch (err) {
      return fail(SIGNING_EVENT.caUnavailable, `error auto signing csr: ${(err as Error).message}`, false);
    }
    const ttlMs = certificateTtlMs(csr.spec.expirationSeconds, this.deps.durationMs);
    const validity = validityWindow(new Date(), ttlMs, ca.notAfter);
    if ('error' in validity) {
      this.caError = validity.error; // until the files change (see signingCa)
      return fail(SIGNING_EVENT.caExpired, `error auto signing csr: ${validity.error}`, false);
    }
    let pem: string;
    try {
      ({ pem } = await issue({ parsed, usages, ...validity }, ca));
    } catch (err) {
      return fail(SIGNING_EVENT.signing, `error auto signing csr: ${(err as Error).message}`, false);
    }
    metrics.signingDuration.observe({ signer: this.signer }, (performance.now() - started) / 1000);

    const updated: CertificateSigningRequest = {
      ...csr,
      status: { ...csr.status, certificate: Buffer.from(pem).toString('base64') },
    };
    try {
      await this.deps.csrs.replaceStatus(updated, { signal });
    } catch (err) {
      const message = `error updating signature for csr: ${(err as Error).message}`;
      // A conflict is routine (the CSR changed meanwhile): retried without an Event.
      if (isConflict(err)) throw new Error(message, { cause: err });
      return fail(SIGNING_EVENT.write, message, false);
    }
    metrics.signed.inc({ signer: this.signer });
    metrics.lifetime.observe(
      { signer: this.signer },
      (validity.notAfter.getTime() - validity.notBefore.getTime()) / 1000,
    );
    return done;
  }

  private async writeFailed(csr: CertificateSigningRequest, message: string, signal: AbortSignal): Promise<Result> {
    const { ctx, rt, metrics } = this.deps;
    const conditions = [
      ...(csr.status?.conditions ?? []),
      { type: 'Failed', status: 'True' as const, reason: FAILED_REASON, message, lastUpdateTime: nowStamp() },
    ];
    try {
      await this.deps.csrs.replaceStatus({ ...csr, status: { ...csr.status, conditions } }, { signal });
    } catch (err) {
      const note = `error updating status for csr: ${(err as Error).message}`;
      if (isConflict(err)) throw new Error(note, { cause: err });
      metrics.failed.inc({ signer: this.signer, reason: SIGNING_EVENT.write });
      recordEvent(ctx, rt, csr, 'Warning', SIGNING_EVENT.write, ACTION, note);
      throw new Error(note);
    }
    metrics.failed.inc({ signer: this.signer, reason: FAILED_REASON });
    recordEvent(ctx, rt, csr, 'Warning', FAILED_REASON, ACTION, message);
    return done;
  }
}

class SigningReconciler implements Reconciler {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly lister: Lister<CertificateSigningRequest>,
    private readonly loops: Map<string, SigningLoop>,
    private readonly watchers: CaFileWatcher[],
    private readonly rt: ResourceType,
  ) {}

  async reconcile(key: string, signal: AbortSignal): Promise<Result> {
    const csr = this.lister.get(undefined, key);
    if (!csr) return done;
    const decision = signingDecision(csr, new Set(this.loops.keys()), this.ctx.naming);
    if (decision.action === 'skip') return done;
    if (decision.action === 'unhandled') {
      const note = `no signing loop runs for signer "${decision.signer}": it is not a built-in signer, or no CA is configured for it`;
      recordEvent(this.ctx, this.rt, csr, 'Warning', SIGNING_EVENT.notRunning, ACTION, note);
      return done;
    }
    // The cached object as it is: handle() writes new objects, never into the one it is given.
    return this.loops.get(decision.signer)!.handle(csr, signal);
  }

  healthy(): { ok: boolean; message?: string } {
    const problems = [...this.loops.values()].map((l) => l.health()).filter(Boolean);
    return problems.length ? { ok: false, message: problems.join('; ') } : { ok: true };
  }

  stop(): void {
    for (const w of this.watchers) w.stop();
  }
}

function logPlan(logger: Logger, plan: SigningPlan): void {
  for (const s of plan.skipped) logger.info({ signer: s.signer, why: s.why }, 'skipping signing loop');
  if (!plan.loops.length) logger.info('no signer has a CA configured: the signing controller issues nothing');
}

/** Builds the loops of a plan; a CA that cannot be read fails start-up, as in the reference. */
function buildLoops(
  ctx: ControllerContext,
  plan: SigningPlan,
  deps: LoopDeps,
  enqueue: Enqueuer,
  lister: () => Lister<CertificateSigningRequest>,
) {
  const validators = signerValidators(ctx.naming);
  const watchers = new Map<string, CaFileWatcher>();
  const loops = new Map<string, SigningLoop>();
  for (const l of plan.loops) {
    const id = `${l.certFile}\n${l.keyFile}`;
    let watcher = watchers.get(id);
    if (!watcher) {
      try {
        watcher = new CaFileWatcher(
          { certFile: l.certFile, keyFile: l.keyFile },
          {
            clock: ctx.clock,
            logger: deps.logger,
            // A new CA may unblock CSRs waiting in backoff: look at the approved, unissued ones again.
            onChange: () => requeueWaiting(lister(), enqueue),
          },
        );
      } catch (err) {
        throw new Error(`failed to start ${l.signer} certificate controller: ${(err as Error).message}`);
      }
      watchers.set(id, watcher);
    }
    loops.set(l.signer, new SigningLoop(l.signer, validators.get(l.signer)!, watcher, deps));
  }
  return { loops, watchers: [...watchers.values()] };
}

function requeueWaiting(lister: Lister<CertificateSigningRequest>, enqueue: Enqueuer): void {
  for (const csr of lister.list()) if (isApproved(csr) && !isIssued(csr)) enqueue.add(csr.metadata.name!);
}

export const signingController: ControllerDefinition = {
  name: SIGNING_CONTROLLER,
  aliases: ['csrsigning'],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.certificates,
  shardBy: { key: 'uid', kind: 'CertificateSigningRequest' },
  workers: CSR_WORKERS,
  permissions: (n) => {
    const certificates = group(n, 'certificates');
    const s = n.signers;
    return [
      rule([certificates], ['certificatesigningrequests'], READ),
      rule([certificates], ['certificatesigningrequests/status'], ['update']),
      rule(
        [certificates],
        ['signers'],
        ['sign'],
        [s.apiServerClient, s.apiServerClientNodeAgent, s.nodeAgentServing, s.legacyUnknown],
      ),
    ];
  },
  rateLimiter: () => csrRateLimiter(),
  setup(ctx, enqueue) {
    const logger = ctx.logger.child({ controller: SIGNING_CONTROLLER });
    const cfg = certificatesConfig(ctx.config);
    const plan = signingPlan(cfg.signing, ctx.naming);
    logPlan(logger, plan);
    if (!plan.loops.length) return { reconcile: async () => done };
    const rt = csrResource(ctx);
    const deps: LoopDeps = {
      ctx,
      rt,
      csrs: ctx.client.resource<CertificateSigningRequest>(rt),
      metrics: certificateMetrics(ctx.metrics),
      durationMs: cfg.signing.durationMs,
      logger,
    };
    let lister: Lister<CertificateSigningRequest> | undefined;
    const { loops, watchers } = buildLoops(ctx, plan, deps, enqueue, () => lister!);
    lister = watchCsrs(ctx, enqueue).lister();
    for (const w of watchers) w.start();
    // The CA is read at start, as the reference's signer does, rather than by the first request's sync; a CA
    // that does not load shows in health() (and each request's Event) as before.
    for (const loop of loops.values()) void loop.signingCa();
    logger.info({ signers: [...loops.keys()], durationMs: cfg.signing.durationMs }, 'signing loops ready');
    return new SigningReconciler(ctx, lister, loops, watchers, rt);
  },
};
