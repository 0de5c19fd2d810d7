import { describe, expect, it } from 'vitest';
import type { Lease, LeaseCandidate, LeaseSpec } from '../../src/api/types/coordination.ts';
import { rfc3339Micro } from '../../src/util/time.ts';
import {
  applyVote,
  candidateExpired,
  type ElectionStep,
  electionStep,
  parseTolerant,
  pickBestLeader,
  pickBestStrategy,
} from './core.ts';

const now = new Date('2026-06-01T12:00:00.000Z');
const S = 1000;
const M = 60 * S;
const ago = (ms: number) => rfc3339Micro(new Date(now.getTime() - ms));
const OEV = 'OldestEmulationVersion';
const LEASE = 'orch-controller-manager';

interface C {
  bin?: string;
  emu?: string;
  strategy?: string;
  /** How long ago it renewed; undefined: never. */
  renewed?: number;
  pinged?: number;
  created?: string;
  leaseName?: string;
}

function cand(name: string, c: C = {}): LeaseCandidate {
  const spec: LeaseCandidate['spec'] = {
    leaseName: c.leaseName ?? LEASE,
    binaryVersion: c.bin ?? '1.1.0',
    strategy: c.strategy ?? OEV,
  };
  const emu = 'emu' in c ? c.emu : (c.bin ?? '1.1.0');
  if (emu !== undefined) spec.emulationVersion = emu;
  if (c.renewed !== undefined) spec.renewTime = ago(c.renewed);
  if (c.pinged !== undefined) spec.pingTime = ago(c.pinged);
  return {
    apiVersion: 'coordination.orch.io/v1beta1',
    kind: 'LeaseCandidate',
    metadata: { namespace: 'orch-system', name, creationTimestamp: c.created ?? '2026-06-01T10:00:00Z' },
    spec,
  };
}

function lease(spec: LeaseSpec): Lease {
  return {
    apiVersion: 'coordination.orch.io/v1',
    kind: 'Lease',
    metadata: { namespace: 'orch-system', name: LEASE },
    spec,
  };
}

/** A live Lease held by `holder`, renewed 1 s ago for 15 s. */
const held = (holder: string, extra: LeaseSpec = {}) =>
  lease({ holderIdentity: holder, renewTime: ago(S), leaseDurationSeconds: 15, strategy: OEV, ...extra });

const step = (l: Lease | undefined, candidates: LeaseCandidate[]): ElectionStep =>
  electionStep({ lease: l, leaseName: LEASE, candidates, now });

/** Candidates that answered a ping 1 s ago. */
const answered = (name: string, c: C = {}) => cand(name, { renewed: S, pinged: 2 * S, ...c });

describe('electionStep: when an election is needed (step 1)', () => {
  const rows: [string, Lease | undefined, LeaseCandidate[], string][] = [
    ['no candidates at all', undefined, [], 'none'],
    ['only candidates of another lease', undefined, [cand('a', { renewed: M, leaseName: 'other' })], 'none'],
    ['only expired candidates (renewed 31 min ago)', undefined, [cand('a', { renewed: 31 * M })], 'none'],
    ['a candidate that never renewed is not admissible', undefined, [cand('a')], 'none'],
    ['lease missing', undefined, [cand('a', { renewed: M })], 'lease missing'],
    ['lease expired', held('a', { renewTime: ago(16 * S) }), [cand('a', { renewed: M })], 'lease expired or unheld'],
    [
      'lease without renewTime',
      held('a', { renewTime: undefined }),
      [cand('a', { renewed: M })],
      'lease expired or unheld',
    ],
    [
      'lease without duration',
      held('a', { leaseDurationSeconds: undefined }),
      [cand('a', { renewed: M })],
      'lease expired or unheld',
    ],
    ['holder empty', held(''), [cand('a', { renewed: M })], 'lease expired or unheld'],
    ['holder absent', held('a', { holderIdentity: undefined }), [cand('a', { renewed: M })], 'lease expired or unheld'],
    [
      'a candidate renewed 16 min ago',
      held('a'),
      [cand('a', { renewed: M }), cand('b', { renewed: 16 * M })],
      'candidate due for a ping',
    ],
    [
      'a better candidate than the holder',
      held('b'),
      [cand('a', { renewed: M, bin: '1.0.0' }), cand('b', { renewed: M })],
      'better candidate',
    ],
  ];
  it.each(rows)('%s', (_name, l, candidates, expected) => {
    const s = step(l, candidates);
    expect(s.action === 'none' ? 'none' : 'reason' in s ? s.reason : s.why).toBe(expected);
  });

  it('no election while the holder is the best candidate: look again in 5 s', () => {
    expect(step(held('a'), [cand('a', { renewed: M, bin: '1.0.0' }), cand('b', { renewed: M })])).toEqual({
      action: 'none',
      why: 'holder a is the best candidate',
      requeueAfterMs: 5000,
    });
  });

  it('no candidates: nothing, and no requeue (candidate events retrigger)', () => {
    expect(step(undefined, [])).toEqual({ action: 'none', why: 'no candidates' });
  });

  it('a third-party strategy is left alone', () => {
    const s = step(held('a'), [cand('a', { renewed: M, strategy: 'example.com/mine' })]);
    expect(s).toEqual({
      action: 'none',
      why: 'strategy example.com/mine is left to other controllers',
      requeueAfterMs: 5000,
    });
  });
});

describe('electionStep: pings, acks and waits (steps 2-3)', () => {
  it('pings every candidate without a fresh renewal, and looks again in 5 s', () => {
    const s = step(undefined, [
      cand('never-pinged', { renewed: M }),
      cand('acked-old', { renewed: 10 * S, pinged: 11 * S }),
    ]);
    expect(s).toEqual({
      action: 'ping',
      reason: 'lease missing',
      candidates: ['never-pinged', 'acked-old'],
      requeueAfterMs: 5000,
    });
  });

  it('a candidate renewed within 5 s is fresh: not pinged, and counts as an answer', () => {
    const s = step(undefined, [cand('fresh', { renewed: 4 * S })]);
    expect(s).toMatchObject({ action: 'create', vote: { holder: 'fresh' } });
  });

  it('waits while a ping younger than 5 s is unanswered', () => {
    const s = step(undefined, [cand('slow', { renewed: M, pinged: 2 * S }), answered('quick')]);
    expect(s).toEqual({ action: 'wait', reason: 'lease missing', requeueAfterMs: 5000 });
  });

  it('a candidate that ignored its ping is not pinged again and drops out of the vote', () => {
    const ignored = cand('ignored', { bin: '1.0.0', renewed: M, pinged: 6 * S });
    const s = step(undefined, [ignored, answered('quick')]);
    expect(s).toMatchObject({ action: 'create', vote: { holder: 'quick' } });
  });

  it('everybody ignored the ping: no available candidates, no requeue', () => {
    const s = step(undefined, [cand('a', { renewed: M, pinged: 6 * S }), cand('b', { renewed: M, pinged: 7 * S })]);
    expect(s).toEqual({ action: 'none', why: 'lease missing', problem: 'no available candidates' });
  });

  it('an answered ping older than 5 s is repeated', () => {
    const s = step(undefined, [cand('a', { renewed: 8 * S, pinged: 9 * S })]);
    expect(s).toMatchObject({ action: 'ping', candidates: ['a'] });
  });
});

describe('electionStep: votes and writes (steps 4-5)', () => {
  it('creates a missing Lease for the best answered candidate, with a 5 s duration', () => {
    const s = step(undefined, [answered('new', { bin: '1.1.0' }), answered('old', { bin: '1.0.0' })]);
    expect(s).toEqual({
      action: 'create',
      reason: 'lease missing',
      vote: { strategy: OEV, holder: 'old' },
      spec: { strategy: OEV, holderIdentity: 'old', leaseDurationSeconds: 5, renewTime: rfc3339Micro(now) },
      requeueAfterMs: 5000,
    });
  });

  it('takes an expired Lease over directly', () => {
    const l = held('gone', { renewTime: ago(20 * S), acquireTime: ago(M), preferredHolder: 'b' });
    const s = step(l, [answered('b')]);
    expect(s).toMatchObject({ action: 'update', why: 'lease expired or unheld' });
    expect((s as { spec: LeaseSpec }).spec).toEqual({
      holderIdentity: 'b',
      strategy: OEV,
      renewTime: rfc3339Micro(now),
      leaseDurationSeconds: 5,
    });
  });

  it('asks a live holder to hand over to a better candidate through preferredHolder', () => {
    const s = step(held('new', { acquireTime: ago(M) }), [
      answered('new', { bin: '1.1.0' }),
      answered('old', { bin: '1.0.0' }),
    ]);
    expect(s).toMatchObject({ action: 'update', why: 'better candidate' });
    expect((s as { spec: LeaseSpec }).spec).toEqual({
      ...held('new', { acquireTime: ago(M) }).spec,
      preferredHolder: 'old',
    });
  });

  it('the better candidate did not answer: the live holder stays, nothing written', () => {
    const s = step(held('new'), [answered('new'), cand('old', { bin: '1.0.0', renewed: M, pinged: 6 * S })]);
    expect(s).toEqual({ action: 'none', why: 'lease already as voted (better candidate)', requeueAfterMs: 5000 });
  });

  it('a strategy conflict among answered candidates at the top binary version stops the election', () => {
    const s = step(undefined, [
      answered('a', { bin: '1.2.0' }),
      answered('b', { bin: '1.2.0', strategy: 'example.com/x' }),
    ]);
    expect(s).toEqual({
      action: 'none',
      why: 'lease missing',
      problem:
        'candidates "a", "b" at same binary version but received differing strategies OldestEmulationVersion, example.com/x',
    });
  });

  it('a strategy conflict in step 1 is reported and looked at again in 5 s', () => {
    const s = step(held('a'), [cand('a', { renewed: M }), cand('b', { renewed: M, strategy: 'example.com/x' })]);
    expect(s).toMatchObject({ action: 'none', why: 'strategy unresolved', requeueAfterMs: 5000 });
    expect((s as { problem: string }).problem).toMatch(/differing strategies/);
  });

  it('unparsable versions: such candidates are skipped', () => {
    const s = step(undefined, [answered('bad', { bin: 'banana', emu: '0.1.0' }), answered('good', { bin: '1.3.0' })]);
    expect(s).toMatchObject({ action: 'create', vote: { holder: 'good' } });
  });

  it('unparsable versions are named as the problem of a step that reaches a verdict', () => {
    const bad = answered('bad', { bin: 'banana', emu: '0.1.0' });
    expect(step(undefined, [bad, answered('good')])).toMatchObject({
      action: 'create',
      problem: 'candidates skipped for unparsable versions: "bad" (binaryVersion "banana")',
    });
    const held2 = step(held('good'), [cand('good', { renewed: M }), cand('worse', { renewed: M, emu: '1.x' })]);
    expect(held2).toMatchObject({
      action: 'none',
      why: 'holder good is the best candidate',
      problem: 'candidates skipped for unparsable versions: "worse" (emulationVersion "1.x")',
    });
    // Pings and waits carry no verdict, so nothing to report yet.
    expect(step(undefined, [cand('bad', { bin: 'banana', renewed: M })])).not.toHaveProperty('problem');
  });

  it('only unparsable versions: reported, nothing written, no requeue', () => {
    const s = step(undefined, [answered('bad', { bin: 'banana' }), answered('worse', { bin: '1.2.0', emu: 'x.y' })]);
    expect(s).toEqual({
      action: 'none',
      why: 'lease missing',
      problem: 'no candidate has a parsable emulationVersion and binaryVersion ("bad", "worse")',
    });
  });

  it('a third-party strategy winning the vote writes the strategy and no holder', () => {
    const s = step(undefined, [answered('a', { strategy: 'example.com/mine' })]);
    expect(s).toMatchObject({ action: 'create', spec: { strategy: 'example.com/mine' } });
    expect((s as { spec: LeaseSpec }).spec.holderIdentity).toBeUndefined();
  });
});

describe('stale preferredHolder (the fix of 2026)', () => {
  it('a preferredHolder naming nobody is cleared before anything else', () => {
    const s = step(held('a', { preferredHolder: 'deleted' }), [cand('a', { renewed: M })]);
    expect(s).toEqual({
      action: 'update',
      why: 'stale preferredHolder cleared',
      problem: 'preferredHolder "deleted" names no live candidate; cleared',
      spec: held('a').spec,
      requeueAfterMs: 5000,
    });
  });

  it('a preferredHolder naming an expired candidate is cleared too', () => {
    const s = step(held('a', { preferredHolder: 'b' }), [cand('a', { renewed: M }), cand('b', { renewed: 31 * M })]);
    expect(s).toMatchObject({ action: 'update', why: 'stale preferredHolder cleared', spec: held('a').spec });
  });

  it('a preferredHolder that did not answer gives way to the latest vote', () => {
    const l = held('a', { preferredHolder: 'b' });
    const s = step(l, [answered('a'), cand('b', { bin: '1.0.0', renewed: M, pinged: 6 * S })]);
    expect(s).toMatchObject({ action: 'update', spec: held('a').spec });
  });
});

describe('applyVote', () => {
  const vote = { strategy: OEV, holder: 'b' };
  it('no holder at all and no holder voted: only the strategy is set, no crash (the reference dereferences nil here)', () => {
    expect(applyVote({}, { strategy: 'example.com/x' }, now)).toEqual({ strategy: 'example.com/x' });
    expect(applyVote({ strategy: 'example.com/x' }, { strategy: 'example.com/x' }, now)).toBeUndefined();
  });
  it('a released Lease (holder "") is taken over', () => {
    expect(applyVote({ holderIdentity: '', strategy: OEV, leaseTransitions: 3 }, vote, now)).toEqual({
      holderIdentity: 'b',
      strategy: OEV,
      leaseTransitions: 3,
      renewTime: rfc3339Micro(now),
      leaseDurationSeconds: 5,
    });
  });
  it('sets a missing strategy', () => {
    expect(applyVote({ ...held('b').spec, strategy: undefined }, vote, now)).toEqual(held('b').spec);
  });
  it('already agreeing: undefined', () => {
    expect(applyVote(held('b').spec!, vote, now)).toBeUndefined();
    expect(applyVote(held('a', { preferredHolder: 'b' }).spec!, vote, now)).toBeUndefined();
  });
  it('the holder won again: an outdated preferredHolder is cleared', () => {
    expect(applyVote(held('b', { preferredHolder: 'c' }).spec!, vote, now)).toEqual(held('b').spec);
  });
});

describe('pickBestStrategy (deterministic: highest binaryVersion first, then agreement)', () => {
  const c = (name: string, bin: string, strategy: string) => cand(name, { bin, strategy });
  it.each([
    ['empty', [], { error: 'no candidates' }],
    ['one', [c('a', '1.0.0', 's1')], { strategy: 's1' }],
    [
      'the newest binary wins a conflict',
      [c('a', '1.31.0', 's1'), c('b', '1.31.0', 's2'), c('c', '1.32.0', 's1')],
      { strategy: 's1' },
    ],
    ['in any order', [c('c', '1.32.0', 's1'), c('a', '1.31.0', 's1'), c('b', '1.31.0', 's2')], { strategy: 's1' }],
    [
      'a conflict at the top version',
      [c('z', '1.32.0', 's2'), c('a', '1.31.0', 's1'), c('b', '1.32.0', 's1')],
      { error: 'candidates "b", "z" at same binary version but received differing strategies s1, s2' },
    ],
    ['unparsable counts as 0.0.0', [c('a', 'garbage', 's2'), c('b', '0.0.1', 's1')], { strategy: 's1' }],
    ['v-prefixed versions compare as versions', [c('a', 'v1.10', 's2'), c('b', '1.9.0', 's1')], { strategy: 's2' }],
  ] as [string, LeaseCandidate[], object][])('%s', (_n, candidates, expected) => {
    expect(pickBestStrategy(candidates)).toEqual(expected);
  });
});

describe('pickBestLeader (OldestEmulationVersion)', () => {
  const names = (cs: LeaseCandidate[], holder?: string) => pickBestLeader(cs, holder)?.metadata.name;
  it.each([
    [
      'oldest emulation wins',
      [cand('a', { bin: '1.2.0', emu: '1.2.0' }), cand('b', { bin: '1.2.0', emu: '1.1.0' })],
      'b',
    ],
    ['then oldest binary', [cand('a', { bin: '1.3.0', emu: '1.1.0' }), cand('b', { bin: '1.2.0', emu: '1.1.0' })], 'b'],
    [
      'then oldest object',
      [cand('a', { created: '2026-06-01T10:00:01Z' }), cand('b', { created: '2026-06-01T10:00:00Z' })],
      'b',
    ],
    ['equal timestamps: the earlier in order, not the name', [cand('z'), cand('a')], 'z'],
    [
      'a pre-release sorts below its release',
      [cand('a', { bin: '1.2.0', emu: '1.2.0' }), cand('b', { bin: '1.2.0', emu: '1.2.0-rc.1' })],
      'b',
    ],
    ['with and without v', [cand('a', { bin: 'v1.2', emu: 'v1.1' }), cand('b', { bin: '1.2.0', emu: '1.1.1' })], 'a'],
    [
      'numeric, not lexical',
      [cand('a', { bin: '1.10.0', emu: '1.10.0' }), cand('b', { bin: '1.9.0', emu: '1.9.0' })],
      'b',
    ],
    [
      'no emulationVersion: not eligible',
      [cand('a', { bin: '1.0.0', emu: undefined }), cand('b', { bin: '1.5.0' })],
      'b',
    ],
    ['nobody eligible', [cand('a', { bin: 'x' })], undefined],
  ] as [string, LeaseCandidate[], string | undefined][])('%s', (_n, cs, expected) => {
    expect(names(cs)).toBe(expected);
  });
  it('the current holder keeps the lease against an equally good candidate', () => {
    expect(names([cand('a'), cand('b')], 'b')).toBe('b');
    expect(names([cand('a'), cand('b', { bin: '1.2.0' })], 'b')).toBe('a');
  });
});

describe('parseTolerant', () => {
  it.each([
    ['1.2.3', '1.2.3'],
    ['v1.2.3', '1.2.3'],
    [' v1.2 ', '1.2.0'],
    ['1', '1.0.0'],
    ['01.002.03', '1.2.3'],
    ['1.2.3-rc.1', '1.2.3-rc.1'],
    ['1.2.0-alpha.0+build.7', '1.2.0-alpha.0'],
    ['1.2-rc.1', undefined],
    ['vv1.2.3', undefined],
    ['banana', undefined],
    ['', undefined],
  ])('%j → %j', (text, expected) => {
    expect(parseTolerant(text)?.version).toBe(expected);
  });
});

describe('candidateExpired (garbage collection)', () => {
  it.each([
    ['renewed 5 min ago', 5 * M, false],
    ['renewed exactly 30 min ago', 30 * M, false],
    ['renewed 30 min and 1 ms ago', 30 * M + 1, true],
    ['never renewed', undefined, true],
  ] as [string, number | undefined, boolean][])('%s', (_n, renewed, expected) => {
    expect(candidateExpired(cand('a', { renewed }), now)).toBe(expected);
  });
});
