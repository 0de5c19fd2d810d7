import { describe, expect, it } from 'vitest';
import { coordinatedRenewal, coordinatedVerdict } from './coordinated.ts';
import type { LeaderElectionRecord } from './record.ts';

const ME = 'host-a_1';
const record = (r: Partial<LeaderElectionRecord>): LeaderElectionRecord => ({
  holderIdentity: ME,
  leaseDurationSeconds: 5,
  leaseTransitions: 2,
  strategy: 'OldestEmulationVersion',
  ...r,
});

describe('coordinatedVerdict (the elector in coordinated mode, reference §3.2)', () => {
  it.each([
    ['assigned to me and valid: renew', record({}), true, { renew: true }],
    [
      'expired by my observation: never taken, even if mine',
      record({}),
      false,
      { renew: false, why: 'the lease has expired; waiting for the election controller to assign it' },
    ],
    ['assigned to another', record({ holderIdentity: 'b' }), true, { renew: false, why: 'the lease is assigned to b' }],
    [
      'released (holder "")',
      record({ holderIdentity: '' }),
      true,
      { renew: false, why: 'the lease is assigned to nobody' },
    ],
    [
      'mine, but the controller prefers another: end of term',
      record({ preferredHolder: 'b' }),
      true,
      { renew: false, why: 'the election controller asks to hand the lease over to b' },
    ],
  ] as const)('%s', (_name, r, valid, expected) => {
    expect(coordinatedVerdict(r, ME, valid)).toEqual(expected);
  });
});

describe('coordinatedRenewal', () => {
  it('writes my own duration, keeps acquireTime, transitions and strategy, drops preferredHolder', () => {
    const old = record({ acquireTime: 'A', renewTime: 'R', preferredHolder: undefined });
    expect(coordinatedRenewal(old, ME, 15, 'NOW')).toEqual({
      holderIdentity: ME,
      leaseDurationSeconds: 15,
      acquireTime: 'A',
      renewTime: 'NOW',
      leaseTransitions: 2,
      strategy: 'OldestEmulationVersion',
    });
  });
  it('stamps acquireTime on the first renewal after the controller assigned the Lease (it writes none)', () => {
    expect(coordinatedRenewal(record({}), ME, 15, 'NOW').acquireTime).toBe('NOW');
  });
});
