import { describe, expect, it } from 'vitest';
import { type BalanceInput, balance, type ShardLeaseView } from './balance.ts';

const LEASE_MS = 15_000;
const NOW = 100_000;

/** A Lease renewed just now by `holder` ('' = released). */
const held = (holder: string, observedAtMs = NOW): ShardLeaseView => ({ holder, durationMs: LEASE_MS, observedAtMs });

/** `spec` is one letter per shard: the holder's initial, `.` for a missing Lease, `_` for a released one. */
function leases(spec: string, observedAtMs = NOW): (ShardLeaseView | undefined)[] {
  return [...spec].map((c) => (c === '.' ? undefined : held(c === '_' ? '' : c, observedAtMs)));
}

function input(over: Partial<BalanceInput> & { self: string }): BalanceInput {
  const ls = over.leases ?? [];
  const mine = new Set(ls.flatMap((l, i) => (l?.holder === over.self ? [i] : [])));
  return {
    shards: ls.length,
    nowMs: NOW,
    livenessMs: 7_500,
    graceMs: 4_000,
    leases: ls,
    members: [],
    held: mine,
    campaigning: new Set(),
    ...over,
  };
}

const member = (identity: string, observedAtMs = NOW) => ({ identity, observedAtMs });

/** Runs every replica's plan, applies acquisitions and releases as if all won, until nothing changes. */
function settle(spec: string, replicas: string[], maxRounds = 10): { spec: string; moves: number; rounds: number } {
  let state = [...spec];
  let moves = 0;
  for (let round = 0; round < maxRounds; round++) {
    let changed = false;
    // Releases first (a surplus lets go), then acquisitions, each replica seeing the state before the round.
    const plans = replicas.map((self) =>
      balance(input({ self, leases: leases(state.join('')), members: replicas.map((r) => member(r)) })),
    );
    const next = [...state];
    plans.forEach((plan, k) => {
      for (const i of plan.release) {
        next[i] = '_';
        changed = true;
      }
      for (const i of plan.acquire) {
        if (next[i] === '_' || next[i] === '.' || !replicas.includes(next[i])) {
          next[i] = replicas[k];
          moves++;
          changed = true;
        }
      }
    });
    state = next;
    if (!changed) return { spec: state.join(''), moves, rounds: round };
  }
  throw new Error(`did not settle: ${state.join('')}`);
}

const count = (spec: string, who: string) => [...spec].filter((c) => c === who).length;

describe('balance: one replica', () => {
  it('a lone replica takes every shard, lowest first, none twice', () => {
    const plan = balance(input({ self: 'a', leases: leases('....') }));
    expect(plan).toEqual({ acquire: [0, 1, 2, 3], release: [], live: ['a'], target: 4 });
    const again = balance(input({ self: 'a', leases: leases('....'), campaigning: new Set([0, 1, 2, 3]) }));
    expect(again.acquire).toEqual([]);
    expect(again.release).toEqual([]);
  });
});

describe('balance: joins', () => {
  it('a holder of everything releases down to its target once a newcomer is seen, highest shards first', () => {
    const plan = balance(input({ self: 'a', leases: leases('aaaaaaaa'), members: [member('a'), member('b')] }));
    expect(plan.release).toEqual([4, 5, 6, 7]);
    expect(plan.target).toBe(4);
  });

  it('the newcomer takes the released shards; the holder does not take them back', () => {
    const state = leases('aaaa____');
    const members = [member('a'), member('b')];
    expect(balance(input({ self: 'b', leases: state, members })).acquire).toEqual([4, 5, 6, 7]);
    expect(balance(input({ self: 'a', leases: state, members })).acquire).toEqual([]);
  });

  it('a third replica joining two moves only the shards it must (16 shards: 8+8 → 6+5+5)', () => {
    const result = settle('aaaaaaaabbbbbbbb', ['a', 'b', 'c']);
    expect(result.moves).toBe(5);
    expect([count(result.spec, 'a'), count(result.spec, 'b'), count(result.spec, 'c')].sort()).toEqual([5, 5, 6]);
  });

  it('a fourth replica joining 6+5+5 takes exactly 4', () => {
    const start = 'aaaaaabbbbbccccc';
    const result = settle(start, ['a', 'b', 'c', 'd']);
    expect(result.moves).toBe(4);
    for (const r of 'abcd') expect(count(result.spec, r)).toBe(4);
  });

  it('a balanced set is stable: nobody moves anything', () => {
    expect(settle('aaaaaabbbbbccccc', ['a', 'b', 'c'])).toEqual({ spec: 'aaaaaabbbbbccccc', moves: 0, rounds: 0 });
  });

  it('three replicas starting together over missing Leases end 6+5+5 with nothing taken twice', () => {
    const result = settle('................', ['a', 'b', 'c']);
    expect([count(result.spec, 'a'), count(result.spec, 'b'), count(result.spec, 'c')].sort()).toEqual([5, 5, 6]);
    expect(result.moves).toBe(16);
  });
});

describe('balance: leaves and crashes', () => {
  it('a replica that left released its shards: the others split them before its candidate ages out', () => {
    // c released everything; its candidate is still fresh, so it still counts and is designated a taker …
    const state = leases('aaaaaabbbbb_____');
    const members = [member('a'), member('b'), member('c')];
    expect(balance(input({ self: 'a', leases: state, members })).acquire).toEqual([]);
    // … until the grace period passes: then the replica holding fewest takes them one at a time.
    const later = { leases: state, members, nowMs: NOW + 4_000 };
    expect(balance(input({ self: 'b', ...later })).acquire).toEqual([11, 13, 15]);
    expect(balance(input({ self: 'a', ...later })).acquire).toEqual([12, 14]);
  });

  it('a shard its designated taker does not win within the grace goes to another, then to everyone', () => {
    // n joined and a released shards for it; n is too starved to take them.
    const members = [member('a'), member('b'), member('n')];
    const state = [...leases('aaaaabbbbbn'), ...leases('_____', NOW - 4_000)];
    // After the grace: the others holding fewest, one at a time (not n again though n holds fewest).
    expect(balance(input({ self: 'a', leases: state, members })).acquire).toEqual([11, 13, 15]);
    expect(balance(input({ self: 'b', leases: state, members })).acquire).toEqual([12, 14]);
    // n itself goes on campaigning for its share.
    expect(balance(input({ self: 'n', leases: state, members })).acquire).toEqual([11, 12, 13, 14]);
    // After twice the grace: every replica campaigns; the Lease picks one.
    const later = { leases: state, members, nowMs: NOW + 4_000 };
    expect(balance(input({ self: 'a', ...later })).acquire).toEqual([11, 12, 13, 14, 15]);
    expect(balance(input({ self: 'b', ...later })).acquire).toEqual([11, 12, 13, 14, 15]);
  });

  it('once the leaver’s candidate ages out, the survivors are its takers at once', () => {
    const state = leases('aaaaaabbbbb_____');
    const members = [member('a'), member('b'), member('c', NOW - 8_000)];
    const b = balance(input({ self: 'b', leases: state, members }));
    expect(b.live).toEqual(['a', 'b']);
    expect(b.acquire).toEqual([11, 13, 15]);
    expect(balance(input({ self: 'a', leases: state, members })).acquire).toEqual([12, 14]);
  });

  it('a crashed replica: its Leases expire and it is dead even while its candidate is fresh', () => {
    const ls = [...leases('aaaaaabbbbb'), ...leases('ccccc', NOW - LEASE_MS)];
    const members = [member('a'), member('b'), member('c')];
    const a = balance(input({ self: 'a', leases: ls, members }));
    expect(a.live).toEqual(['a', 'b']);
    expect(a.target).toBe(8);
    // Each free shard to the one furthest below its target, ties in identity order: interleaved.
    expect(a.acquire).toEqual([12, 14]);
    expect(balance(input({ self: 'b', leases: ls, members })).acquire).toEqual([11, 13, 15]);
  });

  it('a Lease one millisecond short of expiry is still its holder’s', () => {
    const ls = [...leases('aaaaaabbbbb'), ...leases('ccccc', NOW - LEASE_MS + 1)];
    const members = [member('a'), member('b'), member('c')];
    expect(balance(input({ self: 'a', leases: ls, members })).acquire).toEqual([]);
  });
});

describe('balance: a replica that never renews', () => {
  it('is not counted by its stale candidate, and its expired Lease is taken', () => {
    const ls = [...leases('aaa'), held('z', NOW - 60_000)];
    const members = [member('a'), member('z', NOW - 60_000)];
    const plan = balance(input({ self: 'a', leases: ls, members }));
    expect(plan.live).toEqual(['a']);
    expect(plan.acquire).toEqual([3]);
  });

  it('a newcomer whose candidate is fresh but holds nothing is still counted (it is joining)', () => {
    const plan = balance(input({ self: 'a', leases: leases('aaaa'), members: [member('a'), member('n')] }));
    expect(plan.live).toEqual(['a', 'n']);
    expect(plan.release).toEqual([2, 3]);
  });
});

describe('balance: ties and campaigns', () => {
  it('equal loads: the extra shard goes to the first identity, the same answer in every replica', () => {
    const members = [member('a'), member('b')];
    const state = leases('aaaabbbb_');
    const a = balance(input({ self: 'a', leases: state, members }));
    const b = balance(input({ self: 'b', leases: state, members }));
    expect(a.acquire).toEqual([8]);
    expect(b.acquire).toEqual([]);
    expect(a.target + b.target).toBe(9);
  });

  it('a campaign for a shard another replica took meanwhile is stopped', () => {
    const plan = balance(
      input({ self: 'a', leases: leases('aab'), members: [member('a'), member('b')], campaigning: new Set([2]) }),
    );
    expect(plan.release).toEqual([2]);
  });

  it('a campaign for a free shard goes on even when the plan gives it to another (no request is cut short)', () => {
    const members = [member('a'), member('b')];
    const plan = balance(input({ self: 'b', leases: leases('aaaabbbb_'), members, campaigning: new Set([8]) }));
    expect(plan.release).toEqual([]);
    expect(plan.acquire).toEqual([]);
  });

  it('a Lease naming this replica that no elector of its holds (an answer lost) is taken back at once', () => {
    const members = [member('a'), member('b')];
    const plan = balance(input({ self: 'b', leases: leases('aaaabbbbb'), members, held: new Set([4, 5, 6, 7]) }));
    expect(plan.acquire).toEqual([8]);
  });

  it('a shard this replica just released, the Lease not yet seen released, is free for its taker, not taken back', () => {
    const members = [member('a'), member('b')];
    // b's term of shard 8 ended (its release written) after the Lease naming b was seen: b does not take it back.
    const endedAtMs = new Map([[8, NOW]]);
    const view = { self: 'b', leases: leases('aaaabbbbb'), members, held: new Set([4, 5, 6, 7]), endedAtMs };
    expect(balance(input(view)).acquire).toEqual([]);
    // A Lease naming b seen after its term ended is a later write of b's (an answer lost): taken back.
    expect(balance(input({ ...view, endedAtMs: new Map([[8, NOW - 1]]) })).acquire).toEqual([8]);
  });

  it('a replica seen releasing its last shard is stopping: nobody releases for it while its candidate is fresh', () => {
    const members = [member('a'), member('b'), member('c')];
    const view = { self: 'a', leases: leases('aaaaaaaabbbbbbbb'), members };
    expect(balance(input(view)).release).toEqual([6, 7]);
    const stopping = balance(input({ ...view, departedAtMs: new Map([['c', NOW]]) }));
    expect(stopping).toMatchObject({ release: [], live: ['a', 'b'], target: 8 });
    // Its candidate renewed well after that: it lives on (it had lost its shards), and gets its share again.
    const livesOn = balance(input({ ...view, departedAtMs: new Map([['c', NOW - 5_000]]) }));
    expect(livesOn.release).toEqual([6, 7]);
  });

  it('its own electors are trusted over a stale Lease view', () => {
    // The Lease still names b (not seen renewed by a yet) but a's elector holds it: a keeps it.
    const plan = balance(
      input({ self: 'a', leases: leases('ab'), members: [member('a'), member('b')], held: new Set([0, 1]) }),
    );
    expect(plan.release).toEqual([1]);
    expect(plan.target).toBe(1);
  });
});
