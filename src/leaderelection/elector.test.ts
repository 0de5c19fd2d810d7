import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Lease, LeaseSpec } from '../api/types/coordination.ts';
import { StatusError } from '../client/errors.ts';
import { FakeClock } from '../util/clock.ts';
import { type LeaderElectionConfig, LeaderElector, type LeaseApi } from './elector.ts';
import { LeaderElectionHealth } from './health.ts';
import { leaderElectionMetrics } from './metrics.ts';

const NS = 'orch-system';
const NAME = 'orch-controller-manager';
const ME = 'host-a_1111';
const OTHER = 'host-b_2222';
const EPOCH = Date.UTC(2026, 0, 2, 3, 4, 5);
const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** The Lease endpoints in memory: resourceVersion checked on replace, copies in and out. */
class FakeLeases implements LeaseApi {
  readonly apiVersion = 'coordination.orch.io/v1';
  private stored: Lease | undefined;
  private rv = 0;
  calls: string[] = [];
  failWrites = false;
  /** Requests that never answer (until their signal aborts, if honoured). */
  hang = false;
  abortedAt: number[] = [];

  constructor(private readonly clock: FakeClock) {}

  get lease(): Lease | undefined {
    return this.stored && structuredClone(this.stored);
  }

  get spec(): LeaseSpec {
    return this.stored?.spec ?? {};
  }

  /** Stores a Lease as another writer would. */
  put(spec: LeaseSpec): void {
    this.stored = { metadata: { namespace: NS, name: NAME, resourceVersion: String(++this.rv) }, spec: { ...spec } };
  }

  async get(namespace: string, name: string, opts: { signal?: AbortSignal }): Promise<Lease> {
    await this.enter('get', opts.signal);
    if (!this.stored || namespace !== NS || name !== NAME) throw new StatusError(404, 'NotFound', 'not found');
    return structuredClone(this.stored);
  }

  async create(lease: Lease, opts: { signal?: AbortSignal }): Promise<Lease> {
    await this.enter('create', opts.signal);
    if (this.failWrites) throw new StatusError(500, 'InternalError', 'boom');
    if (this.stored) throw new StatusError(409, 'AlreadyExists', 'exists');
    this.stored = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.stored);
  }

  async replace(lease: Lease, opts: { signal?: AbortSignal }): Promise<Lease> {
    await this.enter('replace', opts.signal);
    if (this.failWrites) throw new StatusError(500, 'InternalError', 'boom');
    if (!this.stored) throw new StatusError(404, 'NotFound', 'not found');
    if (lease.metadata.resourceVersion !== this.stored.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', 'the object has been modified');
    }
    this.stored = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.stored);
  }

  private async enter(call: string, signal?: AbortSignal): Promise<void> {
    this.calls.push(call);
    if (!this.hang) return;
    await new Promise<void>((_, reject) => {
      signal?.addEventListener('abort', () => {
        this.abortedAt.push(this.clock.now());
        reject(signal.reason);
      });
    });
  }
}

/** Lets pending promise chains run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Moves the fake clock in small steps, letting async work run between them. */
async function advance(clock: FakeClock, ms: number, stepMs = 10): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    await flush();
    clock.step(Math.min(stepMs, ms - t));
  }
  await flush();
}

interface Harness {
  clock: FakeClock;
  leases: FakeLeases;
  elector: LeaderElector;
  log: string[];
  leading: AbortSignal | undefined;
  stoppedAt: number | undefined;
  /** The Lease's spec as onStoppedLeading saw it. */
  specAtStop: LeaseSpec | undefined;
  stop: AbortController;
  done: Promise<void>;
}

function start(overrides: Partial<LeaderElectionConfig> = {}, setup?: (l: FakeLeases) => void): Harness {
  const clock = new FakeClock();
  const leases = new FakeLeases(clock);
  setup?.(leases);
  const h = { clock, leases, log: [] as string[], leading: undefined, stoppedAt: undefined } as unknown as Harness;
  h.elector = new LeaderElector({
    lock: { namespace: NS, name: NAME },
    leases,
    identity: ME,
    clock,
    wallClock: () => new Date(EPOCH + clock.now()),
    random: () => 0,
    callbacks: {
      onStartedLeading: (signal) => {
        h.leading = signal;
        h.log.push(`started@${clock.now()}`);
      },
      onStoppedLeading: () => {
        h.stoppedAt = clock.now();
        h.specAtStop = leases.lease?.spec;
        h.log.push(`stopped@${clock.now()}`);
      },
      onNewLeader: (id) => h.log.push(`leader:${id}`),
    },
    onEvent: (reason, message) => h.log.push(`${reason}: ${message}`),
    ...overrides,
  });
  h.stop = new AbortController();
  h.done = h.elector.run(h.stop.signal);
  return h;
}

const isLeading = (h: Harness) => h.leading !== undefined && !h.leading.aborted;

describe('LeaderElector constructor', () => {
  const base: LeaderElectionConfig = {
    lock: { namespace: NS, name: NAME },
    leases: new FakeLeases(new FakeClock()),
    identity: ME,
    callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
  };
  const make = (c: Partial<LeaderElectionConfig>) => () => new LeaderElector({ ...base, ...c });

  it('accepts the defaults and derives the request timeout', () => {
    const le = new LeaderElector(base);
    expect([le.leaseDurationMs, le.renewDeadlineMs, le.retryPeriodMs, le.requestTimeoutMs]).toEqual([
      15_000, 10_000, 2_000, 5_000,
    ]);
    expect(
      new LeaderElector({ ...base, leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 }).requestTimeoutMs,
    ).toBe(1000);
  });

  it('rejects inconsistent or missing settings with client-go messages', () => {
    expect(make({ leaseDurationMs: 10_000 })).toThrow('leaseDuration must be greater than renewDeadline');
    expect(make({ renewDeadlineMs: 2_400 })).toThrow('renewDeadline must be greater than retryPeriod*JitterFactor');
    expect(make({ leaseDurationMs: -1, renewDeadlineMs: -2, retryPeriodMs: -3 })).toThrow(
      'leaseDuration must be greater than zero',
    );
    expect(make({ retryPeriodMs: 0 })).toThrow('retryPeriod must be greater than zero');
    expect(make({ identity: '' })).toThrow('Lock identity is empty');
    expect(make({ callbacks: { onStoppedLeading() {} } as never })).toThrow(
      'OnStartedLeading callback must not be nil',
    );
    expect(make({ callbacks: { onStartedLeading() {} } as never })).toThrow(
      'OnStoppedLeading callback must not be nil',
    );
  });
});

describe('LeaderElector acquire', () => {
  it('creates an absent Lease and leads', async () => {
    const h = start();
    await advance(h.clock, 10);
    expect(isLeading(h)).toBe(true);
    const spec = h.leases.spec;
    expect(spec).toMatchObject({ holderIdentity: ME, leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(spec.renewTime).toBe('2026-01-02T03:04:05.000000Z');
    expect(spec.acquireTime).toBe(spec.renewTime);
    expect(h.log).toContain(`LeaderElection: ${ME} became leader`);
    expect(h.log).toContain(`leader:${ME}`);
    expect(h.elector.isLeader()).toBe(true);
    h.stop.abort();
    await h.done;
  });

  it('takes a released Lease at once and counts the transition', async () => {
    const h = start({}, (l) =>
      l.put({
        holderIdentity: '',
        leaseDurationSeconds: 1,
        leaseTransitions: 4,
        renewTime: '2026-01-02T03:04:00.000000Z',
      }),
    );
    await advance(h.clock, 10);
    expect(isLeading(h)).toBe(true);
    expect(h.leases.spec).toMatchObject({ holderIdentity: ME, leaseTransitions: 5, leaseDurationSeconds: 15 });
    expect(h.leases.spec.acquireTime).toMatch(MICRO);
    h.stop.abort();
    await h.done;
  });

  it('never takes a foreign Lease that keeps being renewed', async () => {
    const h = start({}, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15, leaseTransitions: 2 }));
    for (let i = 0; i < 30; i++) {
      h.leases.put({ ...h.leases.spec, renewTime: `2026-01-02T03:05:${String(i).padStart(2, '0')}.000000Z` });
      await advance(h.clock, 2_000, 50);
    }
    expect(isLeading(h)).toBe(false);
    expect(h.leases.spec.holderIdentity).toBe(OTHER);
    expect(h.log).toContain(`leader:${OTHER}`);
    h.stop.abort();
    await h.done;
    expect(h.log.at(-1)).toBe(`stopped@${h.clock.now()}`);
  });

  it('judges expiry from when the record was observed, not from its renewTime (clock skew)', async () => {
    // Written "long ago" by another member's clock, but new to this process: still valid for 15 s.
    const stale = {
      holderIdentity: OTHER,
      leaseDurationSeconds: 15,
      leaseTransitions: 7,
      renewTime: '2001-01-01T00:00:00.000000Z',
    };
    const h = start({}, (l) => l.put({ ...stale, acquireTime: stale.renewTime }));
    await advance(h.clock, 14_900, 50);
    expect(isLeading(h)).toBe(false);
    await advance(h.clock, 1_200, 50); // the attempt at 16 s finds it expired
    expect(isLeading(h)).toBe(true);
    const acquiredAt = Number(h.log.find((l) => l.startsWith('started@'))!.slice(8));
    expect(acquiredAt).toBeGreaterThanOrEqual(15_000);
    expect(h.leases.spec).toMatchObject({ holderIdentity: ME, leaseTransitions: 8 });
    expect(h.leases.spec.acquireTime).not.toBe(stale.renewTime);
    expect(h.leases.spec.acquireTime).toBe(h.leases.spec.renewTime);
    h.stop.abort();
    await h.done;
  });

  it('starts from an observation the caller made: a Lease it saw expire is taken at once', async () => {
    const foreign = { holderIdentity: OTHER, leaseDurationSeconds: 15, leaseTransitions: 3 };
    // Without a seed the elector waits 15 s from its own first read (the test above). The clock starts at 0:
    // an observation made 15 s before has just expired, one made at 0 is valid for 15 s.
    const h = start({}, (l) => l.put(foreign));
    const lease = h.leases.lease!;
    h.stop.abort();
    await h.done;
    const expired = start({ observed: { lease, atMs: -15_000 } }, (l) => l.put(foreign));
    await advance(expired.clock, 10);
    expect(isLeading(expired)).toBe(true);
    expect(expired.leases.calls[0]).toBe('replace'); // no read first
    expect(expired.leases.spec).toMatchObject({ holderIdentity: ME, leaseTransitions: 4 });
    expired.stop.abort();
    await expired.done;
    const fresh = start({ observed: { lease, atMs: 0 } }, (l) => l.put(foreign));
    await advance(fresh.clock, 14_900, 50);
    expect(isLeading(fresh)).toBe(false);
    fresh.stop.abort();
    await fresh.done;
  });

  it('a stale observation costs a conflict, never a takeover of a renewed Lease', async () => {
    const foreign = { holderIdentity: OTHER, leaseDurationSeconds: 15, leaseTransitions: 3 };
    const h = start({}, (l) => l.put(foreign));
    const stale = h.leases.lease!;
    h.stop.abort();
    await h.done;
    // Seen expired by the caller, but renewed since (a newer resourceVersion).
    const renewed = start({ observed: { lease: stale, atMs: -15_000 } }, (l) => {
      l.put(foreign);
      l.put({ ...foreign, renewTime: '2026-01-02T03:04:05.000000Z' });
    });
    await advance(renewed.clock, 5_000, 50);
    expect(renewed.leases.calls.slice(0, 2)).toEqual(['replace', 'get']);
    expect(isLeading(renewed)).toBe(false);
    expect(renewed.leases.spec.holderIdentity).toBe(OTHER);
    renewed.stop.abort();
    await renewed.done;
  });

  it('counts the holder’s own leaseDurationSeconds', async () => {
    const h = start({}, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 40 }));
    await advance(h.clock, 39_000, 100);
    expect(isLeading(h)).toBe(false);
    await advance(h.clock, 5_000, 100);
    expect(isLeading(h)).toBe(true);
    h.stop.abort();
    await h.done;
  });

  it('waits a jittered retry period between attempts', async () => {
    const h = start({ random: () => 0.5 }, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15 }));
    await advance(h.clock, 10_000, 10);
    // Attempts at 0, 3200, 6400, 9600: retryPeriod · (1 + 0.5 · 1.2).
    expect(h.leases.calls.filter((c) => c === 'get')).toHaveLength(4);
    h.stop.abort();
    await h.done;
  });
});

describe('LeaderElector acquire at expiry', () => {
  /** A standby before a 15 s Lease held by another, its jittered attempts 4,376 ms apart (2 s · (1 + 0.99 · 1.2)). */
  const standby = () =>
    start({ random: () => 0.99 }, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15 }));
  const startedAt = (h: Harness) => h.log.find((l) => l.startsWith('started@'));
  /** Not leading 20 ms before `atMs` (the clock's 10 ms steps), leading from then on; then stopped. */
  async function expectTakenAt(h: Harness, atMs: number): Promise<void> {
    await advance(h.clock, atMs - 20 - h.clock.now(), 10);
    expect(isLeading(h)).toBe(false);
    await advance(h.clock, 30, 10);
    expect(startedAt(h)).toBe(`started@${atMs}`);
    h.stop.abort();
    await h.done;
  }

  it('tries again as the Lease seen held expires, not at its next jittered attempt', async () => {
    // Attempts at 0, 4376, 8752 and 13128, then 17504: 2.5 s after the Lease (15 s from the first read, its holder
    // gone) expired. The reference takes it then.
    const h = standby();
    await expectTakenAt(h, 15_010);
    // The four attempts before the expiry and the one at it, each reading the Lease first.
    expect(h.leases.calls.filter((c) => c === 'get')).toHaveLength(5);
  });

  it('watching the Lease, tries a lease duration after the last renewal, not after the read that saw it', async () => {
    const h = standby();
    // The holder renews every 2 s until 10 s, each renewal delivered by the watch as it is written.
    for (let t = 2_000; t <= 10_000; t += 2_000) {
      await advance(h.clock, 2_000, 10);
      h.leases.put({
        ...h.leases.spec,
        renewTime: `2026-01-02T03:04:${String(5 + t / 1000).padStart(2, '0')}.000000Z`,
      });
      h.elector.observe(h.leases.lease!);
    }
    // Read at 13,128 ms, the last renewal would count from then: 28,128 ms. Seen at 10,000 ms, it expires at 25,000.
    await expectTakenAt(h, 25_010);
  });

  it('watching the Lease, takes a release at once', async () => {
    const h = standby();
    await advance(h.clock, 3_000, 10);
    h.leases.put({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 1 });
    h.elector.observe(h.leases.lease!);
    await advance(h.clock, 10, 10);
    // The next jittered attempt would have been at 4,376 ms.
    expect(startedAt(h)).toBe('started@3000');
    h.stop.abort();
    await h.done;
  });

  it('leading, ignores what the watch delivers: a late event must not unseat it', async () => {
    const h = start({}, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15 }));
    const before = h.leases.lease!;
    await advance(h.clock, 15_100, 10);
    expect(isLeading(h)).toBe(true);
    h.elector.observe(before);
    expect(h.elector.getLeader()).toBe(ME);
    h.leases.calls = [];
    await advance(h.clock, 2_100, 10);
    expect(h.leases.calls).toEqual(['replace']); // the fast path: no read
    h.stop.abort();
    await h.done;
  });

  it('waits the jittered period after an attempt on an expired Lease fails', async () => {
    const h = start({}, (l) => {
      l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15 });
      l.failWrites = true;
    });
    await advance(h.clock, 25_000, 10);
    // Takeovers from 15,001 ms on, each failing and followed by 2 s (2 s · (1 + 0 · 1.2)), not by a millisecond.
    expect(isLeading(h)).toBe(false);
    expect(h.leases.calls.filter((c) => c === 'replace')).toHaveLength(5);
    h.stop.abort();
    await h.done;
  });
});

describe('LeaderElector renew', () => {
  it('renews on the fast path (no GET) and keeps acquireTime and transitions', async () => {
    const registry = new Registry();
    const h = start({ metrics: leaderElectionMetrics(NAME, registry) }, (l) =>
      l.put({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 3 }),
    );
    await advance(h.clock, 10);
    const acquired = h.leases.spec.acquireTime;
    h.leases.calls = [];
    await advance(h.clock, 6_100, 10); // steps land on 2, 4 and 6 s: the renews stamp those times
    expect(h.leases.calls).toEqual(['replace', 'replace', 'replace']);
    expect(h.leases.spec).toMatchObject({ holderIdentity: ME, leaseTransitions: 4, acquireTime: acquired });
    expect(h.leases.spec.renewTime).toBe('2026-01-02T03:04:11.000000Z');
    const slow = await registry.getSingleMetric('leader_election_slowpath_total')!.get();
    expect(slow.values).toEqual([]);
    h.stop.abort();
    await h.done;
  });

  it('falls back to the slow path after a conflict and counts it', async () => {
    const registry = new Registry();
    const h = start({ metrics: leaderElectionMetrics(NAME, registry) });
    await advance(h.clock, 10);
    h.leases.put({ ...h.leases.spec }); // same record, new resourceVersion: the fast path conflicts
    h.leases.calls = [];
    await advance(h.clock, 2_000);
    expect(h.leases.calls).toEqual(['replace', 'get', 'replace']);
    expect(isLeading(h)).toBe(true);
    const slow = await registry.getSingleMetric('leader_election_slowpath_total')!.get();
    expect(slow.values).toEqual([expect.objectContaining({ labels: { name: NAME }, value: 1 })]);
    h.stop.abort();
    await h.done;
  });

  it('stops leading once renewDeadline passes without a successful renew', async () => {
    const registry = new Registry();
    const h = start({ metrics: leaderElectionMetrics(NAME, registry) });
    await advance(h.clock, 10);
    const status = () => registry.getSingleMetric('leader_election_master_status')!.get();
    expect((await status()).values[0].value).toBe(1);
    h.leases.failWrites = true;
    // The last renew was at 0; the next round starts at 2 s and gives up at 12 s.
    await advance(h.clock, 11_900, 50);
    expect(isLeading(h)).toBe(true);
    await advance(h.clock, 200, 50);
    await h.done;
    expect(h.leading?.aborted).toBe(true);
    expect(h.stoppedAt).toBeGreaterThanOrEqual(12_000);
    expect(h.stoppedAt).toBeLessThan(12_100);
    expect(h.log).toContain(`LeaderElection: ${ME} stopped leading`);
    expect((await status()).values[0].value).toBe(0);
    // Without releaseOnCancel the record is left as it was: others wait for it to expire.
    expect(h.leases.spec.holderIdentity).toBe(ME);
  });

  it('aborts a Lease call that hangs after max(1 s, renewDeadline / 2)', async () => {
    const h = start();
    await advance(h.clock, 10);
    h.leases.hang = true;
    await advance(h.clock, 2_000 + 5_000 + 10, 10);
    expect(h.leases.abortedAt).toEqual([7_000]);
    h.stop.abort();
    await h.done;
  });

  it('writes the release record on stop with releaseOnCancel, before onStoppedLeading', async () => {
    const h = start({ releaseOnCancel: true }, (l) =>
      l.put({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 6 }),
    );
    await advance(h.clock, 3_000);
    h.stop.abort();
    await h.done;
    const stamp = '2026-01-02T03:04:08.000000Z';
    expect(h.specAtStop).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 7,
      acquireTime: stamp,
      renewTime: stamp,
    });
    expect(h.elector.isLeader()).toBe(false);
  });

  it('does not release a Lease someone else holds by now', async () => {
    const h = start({ releaseOnCancel: true });
    await advance(h.clock, 10);
    h.leases.put({ holderIdentity: OTHER, leaseDurationSeconds: 15, leaseTransitions: 1 });
    h.stop.abort();
    await h.done;
    expect(h.leases.spec.holderIdentity).toBe(OTHER);
  });

  it('reports every new holder asynchronously', async () => {
    const h = start({}, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15 }));
    await advance(h.clock, 20_000, 50);
    expect(h.log.filter((l) => l.startsWith('leader:'))).toEqual([`leader:${OTHER}`, `leader:${ME}`]);
    h.stop.abort();
    await h.done;
  });

  it('calls onStoppedLeading when stopped before ever leading, and leaves no timers', async () => {
    const h = start({}, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15 }));
    await advance(h.clock, 1_000);
    h.stop.abort();
    await h.done;
    expect(h.log.filter((l) => l.startsWith('started'))).toEqual([]);
    expect(h.stoppedAt).toBe(1_000);
    expect(h.clock.pendingTimers).toBe(0);
    await expect(h.elector.run(new AbortController().signal)).rejects.toThrow('only be called once');
  });
});

describe('leader election health', () => {
  it('passes unattached, fails when the observed leader has not renewed for leaseDuration + tolerance', async () => {
    const health = new LeaderElectionHealth();
    expect(health.check()).toEqual({ ok: true });
    const h = start();
    health.attach(h.elector);
    await advance(h.clock, 10);
    h.leases.failWrites = true; // last successful renew at 0
    await advance(h.clock, 13_000, 50);
    await h.done; // gave up at 12 s, but the process still is the observed holder
    expect(h.elector.isLeader()).toBe(true);
    h.clock.step(35_000 - h.clock.now());
    expect(health.check()).toEqual({ ok: true });
    h.clock.step(1);
    expect(health.check()).toEqual({ ok: false, message: `failed election to renew leadership on lease ${NAME}` });
  });

  it('passes when another process leads', async () => {
    const health = new LeaderElectionHealth(0);
    const h = start({}, (l) => l.put({ holderIdentity: OTHER, leaseDurationSeconds: 15 }));
    health.attach(h.elector);
    await advance(h.clock, 10);
    h.clock.step(100_000);
    expect(health.check()).toEqual({ ok: true });
    h.stop.abort();
    await h.done;
  });
});

describe('leader election metrics', () => {
  it('can be made twice on one registry; the gauge starts at 0 and follows leadership', async () => {
    const registry = new Registry();
    leaderElectionMetrics('a', registry);
    const metrics = leaderElectionMetrics('b', registry);
    const text = () => registry.metrics();
    expect(await text()).toContain('leader_election_master_status{name="a"} 0');
    metrics.leaderOn();
    metrics.slowpathExercised();
    metrics.slowpathExercised();
    expect(await text()).toContain('leader_election_master_status{name="b"} 1');
    expect(await text()).toContain('leader_election_slowpath_total{name="b"} 2');
    metrics.leaderOff();
    expect(await text()).toContain('leader_election_master_status{name="b"} 0');
  });
});
