/**
 * The balancing core of sharded replicas: from what this replica sees (shard Leases, LeaseCandidates, the
 * shards its own electors hold or campaign for), which shards to start campaigning for and which to let go.
 * Pure and deterministic; every replica runs it for itself and the Leases arbitrate any disagreement.
 *
 * - Live replicas: this one, every holder of a valid shard Lease, and every LeaseCandidate seen renewed within
 *   `livenessMs`, except one that still names itself in a Lease it let expire (it stopped renewing: dead) and one
 *   seen releasing its last shard (it is stopping; its candidate is not seen renewed after that).
 * - Targets: `shards / live` each, the remainder (one more, `ceil`) going to the replicas that hold most now
 *   (ties: identity order), so that a joining or leaving replica moves only the shards it must.
 * - A replica above its target releases its surplus, highest shard numbers first.
 * - A free shard (no Lease, released, expired, or naming this replica with no elector of ours holding it) goes to
 *   the live replica furthest below its target (ties: identity order). One naming this replica whose release we
 *   wrote since that Lease was seen is free since then, not ours to take back. One left free for `graceMs` (its
 *   designated taker never came: a replica that left without its candidate aging out yet, or one too starved to
 *   win it) is taken by whichever other live replica holding shards now holds fewest; one free for twice that, by
 *   every replica at once (the Lease picks one; a surplus is released later).
 */

/** A shard Lease as last observed; `observedAtMs` is the local monotonic time its record last changed. */
export interface ShardLeaseView {
  /** `''` when released. */
  holder: string;
  durationMs: number;
  observedAtMs: number;
}

/** A LeaseCandidate: `observedAtMs` is when its renewTime last changed, by the local monotonic clock. */
export interface MemberView {
  identity: string;
  observedAtMs: number;
}

export interface BalanceInput {
  self: string;
  shards: number;
  nowMs: number;
  /** A candidate not renewed for this long is gone. */
  livenessMs: number;
  /** How long a free shard waits for its designated taker before anyone below the rest takes it. */
  graceMs: number;
  /** Index = shard; undefined when the Lease does not exist (yet). */
  leases: readonly (ShardLeaseView | undefined)[];
  members: readonly MemberView[];
  /** Shards this replica's electors hold now. */
  held: ReadonlySet<number>;
  /** Shards this replica's electors are campaigning for (not yet held). */
  campaigning: ReadonlySet<number>;
  /**
   * When this replica's last term of a shard ended (its elector then writes a release). A Lease naming this
   * replica observed no later than that is the record the release replaces, not yet seen replaced: free.
   */
  endedAtMs?: ReadonlyMap<number, number>;
  /**
   * When each other replica was seen releasing its last shard. None lets go of its last shard to balance, so one
   * that did is stopping: not live, unless its candidate is renewed more than `graceMs` later (it lives on).
   */
  departedAtMs?: ReadonlyMap<string, number>;
}

export interface BalancePlan {
  /** Shards to start campaigning for. */
  acquire: number[];
  /** Shards to stop campaigning for or release. */
  release: number[];
  /** The live replicas, sorted. */
  live: string[];
  /** This replica's target. */
  target: number;
}

const expiresAt = (l: ShardLeaseView) => l.observedAtMs + l.durationMs;

/** The holder of a shard whose Lease is still valid, else undefined. */
function validHolder(l: ShardLeaseView | undefined, nowMs: number): string | undefined {
  return l?.holder && expiresAt(l) > nowMs ? l.holder : undefined;
}

/** Since when a shard has been free; a missing Lease waits for its designated taker only (start-up). */
function freeSince(l: ShardLeaseView | undefined): number {
  if (!l) return Number.POSITIVE_INFINITY;
  return l.holder ? expiresAt(l) : l.observedAtMs;
}

export function balance(input: BalanceInput): BalancePlan {
  const { self, shards, nowMs } = input;
  // Our own release, not seen in the Lease yet, already happened: the shard is free since it.
  const leases = input.leases.map((l, i) => {
    const ended = input.endedAtMs?.get(i);
    const releasedSince = l?.holder === self && !input.held.has(i) && ended !== undefined && ended >= l.observedAtMs;
    return releasedSince ? { holder: '', durationMs: l.durationMs, observedAtMs: ended } : l;
  });
  // Who holds what: our electors know our own shards better than the last Lease seen.
  // A Lease naming this replica without an elector of ours holding it is a write of ours whose answer was lost
  // (a timeout): free, and ours to take at once, before it expires with nobody renewing it.
  const owner: (string | undefined)[] = [];
  const ours = new Set<number>();
  for (let i = 0; i < shards; i++) {
    const holder = input.held.has(i) ? self : validHolder(leases[i], nowMs);
    if (holder === self && !input.held.has(i)) ours.add(i);
    owner.push(holder === self && !input.held.has(i) ? undefined : holder);
  }
  const expiredHolders = new Set<string>();
  leases.forEach((l, i) => {
    if (l?.holder && owner[i] === undefined) expiredHolders.add(l.holder);
  });
  const liveSet = new Set<string>([self]);
  for (const o of owner) if (o) liveSet.add(o);
  const departed = (m: MemberView) => {
    const at = input.departedAtMs?.get(m.identity);
    return at !== undefined && m.observedAtMs <= at + input.graceMs;
  };
  for (const m of input.members) {
    if (nowMs - m.observedAtMs < input.livenessMs && !expiredHolders.has(m.identity) && !departed(m)) {
      liveSet.add(m.identity);
    }
  }
  const live = [...liveSet].sort();

  const load = new Map<string, number>(live.map((id) => [id, 0]));
  for (const o of owner) if (o) load.set(o, (load.get(o) ?? 0) + 1);
  const target = targets(live, load, shards);

  const release: number[] = [];
  const mine = owner.flatMap((o, i) => (o === self ? [i] : []));
  const surplus = mine.length - (target.get(self) ?? 0);
  if (surplus > 0) release.push(...mine.slice(-surplus));

  // Free shards, lowest first, each to the live replica furthest below its target.
  const acquire: number[] = [];
  const holders = live.filter((id) => id === self || (load.get(id) ?? 0) > 0);
  for (let i = 0; i < shards; i++) {
    if (owner[i] !== undefined) continue;
    let taker = ours.has(i) ? self : pick(live, (id) => (target.get(id) ?? 0) - (load.get(id) ?? 0));
    const freeFor = nowMs - freeSince(leases[i]);
    if (taker !== self && freeFor >= 2 * input.graceMs) taker = self;
    else if (taker !== self && freeFor >= input.graceMs) {
      const designated = taker;
      taker = pick(
        holders.filter((id) => id !== designated),
        (id) => -(load.get(id) ?? 0),
        true,
      );
    }
    if (!taker) continue;
    load.set(taker, (load.get(taker) ?? 0) + 1);
    if (taker === self) acquire.push(i);
  }

  // A campaign ends only once another replica holds the shard: aborting one mid-request could leave the Lease
  // naming us with nobody renewing it. One won against the plan is released as surplus later.
  for (const i of input.campaigning) {
    if (owner[i] !== undefined) release.push(i);
  }
  return {
    acquire: acquire.filter((i) => !input.campaigning.has(i)),
    release: release.sort((a, b) => a - b),
    live,
    target: target.get(self) ?? 0,
  };
}

/** `shards / live` each; the remainder to those holding most now, ties in identity order. */
function targets(live: readonly string[], load: ReadonlyMap<string, number>, shards: number): Map<string, number> {
  const base = Math.floor(shards / live.length);
  const extra = shards % live.length;
  const byLoad = [...live].sort((a, b) => (load.get(b) ?? 0) - (load.get(a) ?? 0) || (a < b ? -1 : 1));
  return new Map(byLoad.map((id, rank) => [id, base + (rank < extra ? 1 : 0)]));
}

/**
 * The id with the greatest positive `score` (ties: identity order, `ids` being sorted); with `any`, the
 * greatest score even if not positive.
 */
function pick(ids: readonly string[], score: (id: string) => number, any = false): string | undefined {
  let best: string | undefined;
  let bestScore = 0;
  for (const id of ids) {
    const s = score(id);
    if ((best === undefined && (any || s > 0)) || (best !== undefined && s > bestScore)) {
      best = id;
      bestScore = s;
    }
  }
  return best;
}
