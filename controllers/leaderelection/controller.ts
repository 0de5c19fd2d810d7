/**
 * The coordinated leader election controller (`leader-election-controller`): assigns the holders of Leases that
 * LeaseCandidates contend for, one election step at a time (decisions in core.ts). Keys are Lease
 * `<namespace>/<name>`: Lease events queue their own key, candidate events the key of the Lease they name, except
 * while the candidate owes an answer to a ping (its answer will queue it). Every candidate is queued on start,
 * through the informer's initial adds.
 *
 * It runs under its own classic Lease (`leader-election-controller`), not the daemon's, since it is what gives
 * the daemon's Lease a holder in coordinated mode.
 */
import { splitKey } from '../../src/api/meta.ts';
import { group } from '../../src/api/naming.ts';
import type { Lease, LeaseCandidate, LeaseSpec } from '../../src/api/types/coordination.ts';
import { type DeletedFinalStateUnknown, isTombstone, type Lister } from '../../src/cache/informer.ts';
import { keyOf } from '../../src/cache/store.ts';
import { isAlreadyExists } from '../../src/client/errors.ts';
import type { ResourceClient } from '../../src/client/resource.ts';
import {
  type ControllerContext,
  type ControllerDefinition,
  done,
  type Enqueuer,
  type Reconciler,
  type Result,
  requeueAfter,
} from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import { microTime } from '../../src/leaderelection/candidate.ts';
import { rfc3339Micro } from '../../src/util/time.ts';
import { applyVote, type ElectionStep, electionStep, type Vote } from './core.ts';

export const ELECTION_CONTROLLER = 'leader-election-controller';

/** What both coordinated-election controllers share: on by default, API-server side, under the election's own Lease. */
export const COORDINATION_CONTROLLER = {
  aliases: [],
  enabledByDefault: true,
  servedByApiServer: true,
  lease: ELECTION_CONTROLLER,
  featureGate: 'CoordinatedLeaderElection',
  workers: 1,
} satisfies Partial<ControllerDefinition>;

export const electionController: ControllerDefinition = {
  ...COORDINATION_CONTROLLER,
  name: ELECTION_CONTROLLER,
  permissions: (n) => [
    rule([group(n, 'coordination')], ['leases'], [...READ, 'create', 'update']),
    rule([group(n, 'coordination')], ['leasecandidates'], [...READ, 'update']),
  ],
  setup: (ctx, enqueue) => new ElectionReconciler(ctx, enqueue),
};

function unwrap<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return isTombstone(obj) ? obj.obj : obj;
}

/** Pinged and not answered yet: its own answer will queue the Lease, so this event need not. */
function owesAnswer(c: LeaseCandidate): boolean {
  const ping = c.spec?.pingTime;
  return ping !== undefined && microTime(c.spec?.renewTime) < microTime(ping);
}

function leaseKeyOf(c: LeaseCandidate): string | undefined {
  return c.spec?.leaseName ? `${c.metadata.namespace}/${c.spec.leaseName}` : undefined;
}

export class ElectionReconciler implements Reconciler {
  private readonly leases: Lister<Lease>;
  private readonly candidates: Lister<LeaseCandidate>;
  private readonly leaseClient: ResourceClient<Lease>;
  private readonly candidateClient: ResourceClient<LeaseCandidate>;
  private readonly log: ControllerContext['logger'];
  /** Lease key → the problem last logged for it, so a lasting problem is logged once. */
  private readonly reported = new Map<string, string>();

  constructor(ctx: ControllerContext, enqueue: Enqueuer) {
    const rt = (kind: string) => {
      const found = ctx.registry.byKind(kind);
      if (!found) throw new Error(`${ELECTION_CONTROLLER}: the API has no ${kind}`);
      return found;
    };
    this.log = ctx.logger.child({ controller: ELECTION_CONTROLLER });
    this.leaseClient = ctx.client.resource<Lease>(rt('Lease'));
    this.candidateClient = ctx.client.resource<LeaseCandidate>(rt('LeaseCandidate'));
    const leaseInformer = ctx.informers.informerFor<Lease>(rt('Lease'));
    const candidateInformer = ctx.informers.informerFor<LeaseCandidate>(rt('LeaseCandidate'));
    this.leases = leaseInformer.lister();
    this.candidates = candidateInformer.lister();
    const queueLease = (lease: Lease) => enqueue.add(keyOf(lease));
    leaseInformer.addEventHandler({
      add: queueLease,
      update: (_old, lease) => queueLease(lease),
      delete: (obj) => queueLease(unwrap(obj)),
    });
    const queueCandidate = (c: LeaseCandidate, always: boolean) => {
      const key = leaseKeyOf(c);
      if (key && (always || !owesAnswer(c))) enqueue.add(key);
    };
    candidateInformer.addEventHandler({
      add: (c) => queueCandidate(c, true),
      update: (_old, c) => queueCandidate(c, false),
      delete: (obj) => queueCandidate(unwrap(obj), false),
    });
  }

  async reconcile(key: string, signal: AbortSignal): Promise<Result> {
    const { namespace = '', name } = splitKey(key);
    const lease = this.leases.get(namespace, name);
    const now = new Date();
    const step = electionStep({ lease, leaseName: name, candidates: this.candidates.list(namespace), now });
    this.report(key, step);
    if (step.action === 'ping') await this.ping(namespace, step.candidates, now, signal);
    else if (step.action === 'create') await this.create(namespace, name, step.vote, step.spec, now, signal);
    else if (step.action === 'update') await this.update(lease!, step.spec, step.why, signal);
    return step.requeueAfterMs ? requeueAfter(step.requeueAfterMs) : done;
  }

  /**
   * Logs a problem when it first appears for the Lease, not again while it lasts: pings and waits on the way to
   * the same verdict do not count as the problem ending.
   */
  private report(key: string, step: ElectionStep): void {
    if (step.action === 'ping' || step.action === 'wait') return;
    const problem = 'problem' in step ? step.problem : undefined;
    if (!problem) {
      this.reported.delete(key);
      return;
    }
    if (this.reported.get(key) === problem) return;
    this.reported.set(key, problem);
    this.log.warn({ lease: key, why: 'why' in step ? step.why : undefined }, `election of ${key}: ${problem}`);
  }

  /** Sets pingTime on each candidate; all are tried, and the first failure is thrown afterwards for a retry. */
  private async ping(namespace: string, names: string[], now: Date, signal: AbortSignal): Promise<void> {
    const pingTime = rfc3339Micro(now);
    const failures: unknown[] = [];
    for (const name of names) {
      const c = this.candidates.get(namespace, name);
      if (!c?.spec) continue;
      try {
        await this.candidateClient.replace({ ...c, spec: { ...c.spec, pingTime } }, { signal });
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length) throw failures[0];
  }

  private async create(
    namespace: string,
    name: string,
    vote: Vote,
    spec: LeaseSpec,
    now: Date,
    signal: AbortSignal,
  ): Promise<void> {
    const body: Lease = { apiVersion: this.leaseClient.apiVersion, kind: 'Lease', metadata: { namespace, name }, spec };
    try {
      await this.leaseClient.create(body, { signal });
      this.log.info(
        { lease: `${namespace}/${name}`, holder: spec.holderIdentity },
        'lease created for the elected candidate',
      );
      return;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    // Created meanwhile (the cache is behind): apply the vote to the live object.
    const live = await this.leaseClient.get(namespace, name, { signal });
    const next = applyVote(live.spec ?? {}, vote, now);
    if (next) await this.update(live, next, 'lease created meanwhile', signal);
  }

  private async update(lease: Lease, spec: LeaseSpec, why: string, signal: AbortSignal): Promise<void> {
    await this.leaseClient.replace({ ...lease, spec }, { signal });
    const before = lease.spec ?? {};
    const fields = {
      lease: keyOf(lease),
      why,
      holder: spec.holderIdentity,
      preferredHolder: spec.preferredHolder,
    };
    if (spec.holderIdentity !== before.holderIdentity) this.log.info(fields, 'lease given to the elected candidate');
    else if (spec.preferredHolder && spec.preferredHolder !== before.preferredHolder)
      this.log.info(fields, 'holder asked to hand the lease over');
    else this.log.info(fields, 'lease updated');
  }
}
