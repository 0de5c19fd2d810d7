/**
 * The decisions of coordinated leader election (reference §3.3–§3.6), pure: given a Lease, the
 * LeaseCandidates in its namespace and the time, what to do next. The reconcilers only read caches,
 * perform the step and requeue.
 *
 * Times are compared in microseconds, as MicroTime carries them; absent times are -Infinity.
 */
import semver, { type SemVer } from 'semver';
import { OLDEST_EMULATION_VERSION } from '../../src/api/lease-strategy.ts';
import type { Lease, LeaseCandidate, LeaseSpec } from '../../src/api/types/coordination.ts';
import { microTime } from '../../src/leaderelection/candidate.ts';
import { rfc3339Micro } from '../../src/util/time.ts';

/** How long a pinged candidate has to answer, and how recent a renewal counts as an answer. */
export const ELECTION_WINDOW_MS = 5_000;
export const REQUEUE_MS = 5_000;
/** The `leaseDurationSeconds` of a Lease the controller assigns; the holder's elector overwrites it with its own. */
export const ELECTED_LEASE_DURATION_SECONDS = 5;
/** A candidate not renewed for this long is out of the election, and the garbage collector deletes it. */
export const CANDIDATE_VALID_MS = 30 * 60_000;
/** Any candidate renewed longer ago than this forces an election, so every candidate is pinged now and then. */
export const REPING_AFTER_MS = CANDIDATE_VALID_MS / 2;
export const GC_INTERVAL_MS = 30 * 60_000;

const US_PER_MS = 1000;
const usOf = (now: Date) => now.getTime() * US_PER_MS;

/** Why an election runs. */
export type ElectionReason =
  | 'lease missing'
  | 'lease expired or unheld'
  | 'candidate due for a ping'
  | 'better candidate';

/** What the controller asks for in the end: a strategy and, for `OldestEmulationVersion`, a holder. */
export interface Vote {
  strategy: string;
  holder?: string;
}

/** The next step for one Lease. `problem` is bad input or a stalled election, to be logged (once). */
export type ElectionStep =
  | { action: 'none'; why: string; problem?: string; requeueAfterMs?: number }
  | { action: 'ping'; reason: ElectionReason; candidates: string[]; requeueAfterMs: number }
  | { action: 'wait'; reason: ElectionReason; requeueAfterMs: number }
  | { action: 'create'; reason: ElectionReason; vote: Vote; spec: LeaseSpec; problem?: string; requeueAfterMs: number }
  | { action: 'update'; why: string; vote?: Vote; spec: LeaseSpec; problem?: string; requeueAfterMs: number };

export interface ElectionInput {
  /** The Lease as cached, undefined when it does not exist. */
  lease: Lease | undefined;
  leaseName: string;
  /** LeaseCandidates of the Lease's namespace; those for other leases are ignored. */
  candidates: readonly LeaseCandidate[];
  now: Date;
}

/** Not renewed within 30 minutes (or never): out of the election, and garbage. */
export function candidateExpired(c: LeaseCandidate, now: Date): boolean {
  return microTime(c.spec?.renewTime) + CANDIDATE_VALID_MS * US_PER_MS < usOf(now);
}

/** Expired by the controller's clock: renewTime or leaseDurationSeconds missing, or renewTime + duration passed. */
export function leaseExpired(spec: LeaseSpec | undefined, nowUs: number): boolean {
  const seconds = spec?.leaseDurationSeconds;
  if (!spec?.renewTime || !seconds) return true;
  return microTime(spec.renewTime) + seconds * 1e6 < nowUs;
}

/**
 * The reference's tolerant semver: surrounding space and one leading `v` dropped, leading zeros trimmed, a missing
 * minor or patch read as 0. Undefined when the result is still not a semantic version.
 */
export function parseTolerant(text: string | undefined): SemVer | undefined {
  if (text === undefined) return undefined;
  // major, minor, and the rest (patch with any pre-release and build), as Go's SplitN(s, ".", 3).
  const [major, minor, ...rest] = text.trim().replace(/^v/, '').split('.');
  const fields = [major, minor, rest.length ? rest.join('.') : undefined].filter((f) => f !== undefined).map(trimZeros);
  if (fields.length < 3 && /[+-]/.test(fields[fields.length - 1])) return undefined;
  while (fields.length < 3) fields.push('0');
  return semver.parse(fields.join('.')) ?? undefined;
}

/** Leading zeros dropped (`007` → `7`), keeping one before a non-digit (`00-rc` → `0-rc`), as the reference does. */
function trimZeros(field: string): string {
  if (field.length <= 1) return field;
  const trimmed = field.replace(/^0+/, '');
  return /^\d/.test(trimmed) ? trimmed : `0${trimmed}`;
}

const ZERO = new semver.SemVer('0.0.0');

/**
 * The strategy of the candidates with the highest binaryVersion (unparsable counts as 0.0.0), which must all agree.
 * Order-independent, unlike the reference's single pass; disagreeing candidates are named in name order.
 */
export function pickBestStrategy(candidates: readonly LeaseCandidate[]): { strategy: string } | { error: string } {
  if (candidates.length === 0) return { error: 'no candidates' };
  const version = (c: LeaseCandidate) => parseTolerant(c.spec?.binaryVersion) ?? ZERO;
  const top = candidates.map(version).reduce((a, b) => (semver.gt(b, a) ? b : a));
  const atTop = candidates.filter((c) => semver.eq(version(c), top)).sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  const first = atTop[0];
  const other = atTop.find((c) => c.spec?.strategy !== first.spec?.strategy);
  if (other) {
    return {
      error: `candidates "${nameOf(first)}", "${nameOf(other)}" at same binary version but received differing strategies ${first.spec?.strategy}, ${other.spec?.strategy}`,
    };
  }
  return { strategy: first.spec?.strategy ?? '' };
}

const nameOf = (c: LeaseCandidate) => c.metadata.name ?? '';

/** Negative when `a` should lead rather than `b`: older emulationVersion, then older binaryVersion, then older object. */
function compareCandidates(a: Eligible, b: Eligible): number {
  const byVersion = semver.compare(a.emulation, b.emulation) || semver.compare(a.binary, b.binary);
  if (byVersion) return byVersion;
  const created = (e: Eligible) => Date.parse(e.candidate.metadata.creationTimestamp ?? '');
  return created(a) < created(b) ? -1 : 0;
}

interface Eligible {
  candidate: LeaseCandidate;
  emulation: SemVer;
  binary: SemVer;
}

/**
 * The `OldestEmulationVersion` pick among candidates whose both versions parse. Ties keep the earlier candidate,
 * and the current holder comes first, so an equally good candidate never displaces it. Name is no tie-breaker.
 */
export function pickBestLeader(candidates: readonly LeaseCandidate[], holder?: string): LeaseCandidate | undefined {
  const ordered = [
    ...candidates.filter((c) => nameOf(c) === holder),
    ...candidates.filter((c) => nameOf(c) !== holder),
  ];
  let best: Eligible | undefined;
  for (const candidate of ordered) {
    const emulation = parseTolerant(candidate.spec?.emulationVersion);
    const binary = parseTolerant(candidate.spec?.binaryVersion);
    if (!emulation || !binary) continue;
    const e = { candidate, emulation, binary };
    if (!best || compareCandidates(e, best) < 0) best = e;
  }
  return best?.candidate;
}

/** Step 1: why an election is needed, or why not (with bad input as `problem`). */
function electionNeeded(
  lease: Lease | undefined,
  candidates: readonly LeaseCandidate[],
  nowUs: number,
): { reason: ElectionReason } | { why: string; problem?: string } {
  if (!lease) return { reason: 'lease missing' };
  const holder = lease.spec?.holderIdentity;
  if (leaseExpired(lease.spec, nowUs) || !holder) return { reason: 'lease expired or unheld' };
  if (candidates.some((c) => microTime(c.spec?.renewTime) + REPING_AFTER_MS * US_PER_MS < nowUs)) {
    return { reason: 'candidate due for a ping' };
  }
  const strategy = pickBestStrategy(candidates);
  if ('error' in strategy) return { why: 'strategy unresolved', problem: strategy.error };
  if (strategy.strategy !== OLDEST_EMULATION_VERSION) {
    return { why: `strategy ${strategy.strategy} is left to other controllers` };
  }
  const best = pickBestLeader(candidates, holder);
  if (!best) return { why: 'no candidate has parsable versions', problem: noParsableVersions(candidates) };
  if (nameOf(best) === holder) return { why: `holder ${holder} is the best candidate` };
  return { reason: 'better candidate' };
}

function noParsableVersions(candidates: readonly LeaseCandidate[]): string {
  const names = candidates.map((c) => `"${nameOf(c)}"`).join(', ');
  return `no candidate has a parsable emulationVersion and binaryVersion (${names})`;
}

/**
 * One election step for the Lease (reference §3.3, with the stale-preferredHolder fix and no nil-holder crash).
 * Candidates with unparsable versions are skipped by the pick; a step that reaches a verdict names them as its
 * problem unless it has a graver one.
 */
export function electionStep(input: ElectionInput): ElectionStep {
  const candidates = input.candidates.filter(
    (c) => c.spec?.leaseName === input.leaseName && !candidateExpired(c, input.now),
  );
  const step = decide(input, candidates);
  const skipped = unparsableVersions(candidates);
  if (!skipped || step.action === 'ping' || step.action === 'wait' || step.problem) return step;
  return { ...step, problem: skipped };
}

/** `candidates skipped for unparsable versions: "a" (binaryVersion "x")`, or undefined when all parse. */
function unparsableVersions(candidates: readonly LeaseCandidate[]): string | undefined {
  const bad = candidates.flatMap((c) => {
    const { binaryVersion, emulationVersion } = c.spec ?? {};
    const fields = [
      parseTolerant(binaryVersion) ? undefined : `binaryVersion ${JSON.stringify(binaryVersion ?? '')}`,
      emulationVersion === undefined || parseTolerant(emulationVersion)
        ? undefined
        : `emulationVersion ${JSON.stringify(emulationVersion)}`,
    ].filter(Boolean);
    return fields.length ? [`"${nameOf(c)}" (${fields.join(', ')})`] : [];
  });
  return bad.length ? `candidates skipped for unparsable versions: ${bad.join(', ')}` : undefined;
}

/** Steps 1-5 over the admissible candidates (for this Lease, not expired). */
function decide({ lease, now }: ElectionInput, candidates: LeaseCandidate[]): ElectionStep {
  const nowUs = usOf(now);
  if (candidates.length === 0) return { action: 'none', why: 'no candidates' };

  // A preferredHolder naming no live candidate would make the holder step down for nobody: clear it first.
  const preferred = lease?.spec?.preferredHolder;
  if (lease && preferred && !candidates.some((c) => nameOf(c) === preferred)) {
    const { preferredHolder: _stale, ...spec } = lease.spec!;
    return {
      action: 'update',
      why: 'stale preferredHolder cleared',
      problem: `preferredHolder "${preferred}" names no live candidate; cleared`,
      spec,
      requeueAfterMs: REQUEUE_MS,
    };
  }

  const need = electionNeeded(lease, candidates, nowUs);
  if (!('reason' in need)) return { action: 'none', requeueAfterMs: REQUEUE_MS, ...need };
  const { reason } = need;

  // Step 2: ping whoever has neither a pending ping nor a fresh renewal; a candidate that ignored its ping is not
  // pinged again, it just drops out of the vote.
  const window = ELECTION_WINDOW_MS * US_PER_MS;
  const toPing: string[] = [];
  let waiting = false;
  for (const c of candidates) {
    const ping = microTime(c.spec?.pingTime);
    const renew = microTime(c.spec?.renewTime);
    if (ping + window > nowUs && renew < ping) waiting = true;
    else if (renew + window > nowUs) continue;
    else if (c.spec?.pingTime === undefined || (ping + window < nowUs && ping < renew)) toPing.push(nameOf(c));
  }
  if (toPing.length) return { action: 'ping', reason, candidates: toPing, requeueAfterMs: REQUEUE_MS };
  if (waiting) return { action: 'wait', reason, requeueAfterMs: REQUEUE_MS };

  // Step 4: vote among those that answered.
  const acked = candidates.filter((c) => microTime(c.spec?.renewTime) + window > nowUs);
  if (acked.length === 0) return { action: 'none', why: reason, problem: 'no available candidates' };
  const strategy = pickBestStrategy(acked);
  if ('error' in strategy) return { action: 'none', why: reason, problem: strategy.error };
  const vote: Vote = { strategy: strategy.strategy };
  if (vote.strategy === OLDEST_EMULATION_VERSION) {
    const best = pickBestLeader(acked, lease?.spec?.holderIdentity);
    if (!best) return { action: 'none', why: reason, problem: noParsableVersions(acked) };
    vote.holder = nameOf(best);
  }

  // Step 5: write.
  if (!lease) {
    const spec: LeaseSpec = {
      strategy: vote.strategy,
      leaseDurationSeconds: ELECTED_LEASE_DURATION_SECONDS,
      renewTime: rfc3339Micro(now),
    };
    if (vote.holder) spec.holderIdentity = vote.holder;
    return { action: 'create', reason, vote, spec, requeueAfterMs: REQUEUE_MS };
  }
  const spec = applyVote(lease.spec ?? {}, vote, now);
  if (!spec) return { action: 'none', requeueAfterMs: REQUEUE_MS, why: `lease already as voted (${reason})` };
  return { action: 'update', why: reason, vote, spec, requeueAfterMs: REQUEUE_MS };
}

/**
 * The Lease spec after a vote, or undefined when it already agrees. An unheld or expired Lease is taken over
 * directly; a live holder other than the winner is asked to step down through `preferredHolder`, which always
 * names the latest winner (and is cleared once the holder is the winner again).
 */
export function applyVote(existing: LeaseSpec, vote: Vote, now: Date): LeaseSpec | undefined {
  const next: LeaseSpec = { ...existing };
  let changed = false;
  if (existing.strategy !== vote.strategy) {
    next.strategy = vote.strategy;
    changed = true;
  }
  const holder = existing.holderIdentity;
  const takeOver =
    (vote.holder !== undefined && holder === undefined) ||
    holder === '' ||
    (vote.holder !== undefined && vote.holder !== holder && leaseExpired(existing, usOf(now)));
  if (takeOver) {
    delete next.preferredHolder;
    delete next.acquireTime;
    if (vote.holder === undefined) delete next.holderIdentity;
    else next.holderIdentity = vote.holder;
    next.renewTime = rfc3339Micro(now);
    next.leaseDurationSeconds = ELECTED_LEASE_DURATION_SECONDS;
    return next;
  }
  if (vote.holder !== undefined) {
    const wanted = vote.holder !== holder ? vote.holder : undefined;
    if (existing.preferredHolder !== wanted) {
      if (wanted === undefined) delete next.preferredHolder;
      else next.preferredHolder = wanted;
      changed = true;
    }
  }
  return changed ? next : undefined;
}
