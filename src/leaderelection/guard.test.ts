import { describe, expect, it } from 'vitest';
import { ResourceRegistry } from '../api/registry.ts';
import type { Lease } from '../api/types/coordination.ts';
import { KubeClient } from '../client/client.ts';
import { StatusError } from '../client/errors.ts';
import { KubeConfig } from '../client/kubeconfig.ts';
import { FakeClock } from '../util/clock.ts';
import { LeaderElector, type LeaseApi } from './elector.ts';
import { LeaseGuard, LeaseLostError } from './guard.ts';

const RENEW_DEADLINE = 2_000;

describe('LeaseGuard', () => {
  it('refuses writes before the first renewal', () => {
    const guard = new LeaseGuard(RENEW_DEADLINE, new FakeClock());
    expect(() => guard.check('POST /x')).toThrow(/refusing POST \/x: this replica does not hold the leader lease/);
  });

  it('allows writes only while the last renewal is younger than the renew deadline', () => {
    const clock = new FakeClock(10_000);
    const guard = new LeaseGuard(RENEW_DEADLINE, clock);
    guard.renewed(clock.now());
    clock.step(RENEW_DEADLINE - 1);
    expect(() => guard.check('PUT /a')).not.toThrow();
    clock.step(1);
    expect(() => guard.check('PUT /a')).toThrow(LeaseLostError);
    expect(() => guard.check('PUT /a')).toThrow(/does not hold/);
  });

  it('measures from when the renewal was sent, not when its answer came', () => {
    const clock = new FakeClock();
    const guard = new LeaseGuard(RENEW_DEADLINE, clock);
    const sentAt = clock.now();
    clock.step(1_500); // the answer took 1.5 s
    guard.renewed(sentAt);
    clock.step(499);
    expect(() => guard.check('PATCH /b')).not.toThrow();
    clock.step(1);
    expect(() => guard.check('PATCH /b')).toThrow(/last lease renewal was 2000 ms ago, not within the renew deadline/);
  });

  it('answers the time left in the term when it knows the lease duration', () => {
    const clock = new FakeClock(1_000);
    const sentAt = clock.now();
    const guard = new LeaseGuard(RENEW_DEADLINE, clock, 'a lease', 3 * RENEW_DEADLINE);
    guard.renewed(sentAt);
    clock.step(RENEW_DEADLINE - 1);
    expect(guard.check('PUT /a')).toBe(2 * RENEW_DEADLINE + 1);
    const unbounded = new LeaseGuard(RENEW_DEADLINE, clock);
    unbounded.renewed(clock.now());
    expect(unbounded.check('PUT /a')).toBeUndefined();
  });

  it('never moves back to an older renewal', () => {
    const clock = new FakeClock(5_000);
    const guard = new LeaseGuard(RENEW_DEADLINE, clock);
    guard.renewed(5_000);
    guard.renewed(3_000);
    clock.step(1_999);
    expect(() => guard.check('DELETE /c')).not.toThrow();
  });

  it('counts the writes it let out until each is settled, once, and says when none is left', async () => {
    const clock = new FakeClock();
    const guard = new LeaseGuard(RENEW_DEADLINE, clock);
    expect(await guard.drained(0)).toBe(true);
    guard.renewed(clock.now());
    const [a, b] = [guard.admit('PUT /a'), guard.admit('PUT /b')];
    const drained = guard.drained(1_000);
    a.settle();
    a.settle(); // settling twice counts once: b is still on its way
    clock.step(1_000);
    expect(await drained).toBe(false);
    const again = guard.drained(1_000);
    b.settle();
    expect(await again).toBe(true);
    expect(() => new LeaseGuard(RENEW_DEADLINE, clock).admit('PUT /c')).toThrow(LeaseLostError);
  });

  it('tells its listeners once when a write is refused for a stale renewal, and not on revoke', () => {
    const clock = new FakeClock();
    const guard = new LeaseGuard(RENEW_DEADLINE, clock);
    let expired = 0;
    guard.onExpired(() => expired++);
    guard.renewed(0);
    guard.revoke();
    expect(() => guard.check('POST /d')).toThrow(LeaseLostError);
    expect(expired).toBe(0);
    guard.renewed(clock.now());
    clock.step(5_000); // a paused process wakes up
    expect(() => guard.check('POST /d')).toThrow(/5000 ms ago/);
    expect(() => guard.check('POST /d')).toThrow(LeaseLostError);
    expect(expired).toBe(1);
  });
});

describe('a client with a write guard', () => {
  // Nothing listens on port 1: a request that gets past the guard fails to connect.
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const registry = new ResourceRegistry('orch');
  const guard = new LeaseGuard(RENEW_DEADLINE, new FakeClock());
  const client = new KubeClient(kc, registry, { qps: 0, writeGuard: guard, timeoutMs: 5_000 });
  const configMaps = client.kind('ConfigMap');

  it('keeps every kind of write in the process', async () => {
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'a' } };
    const writes = [
      () => configMaps.create(obj),
      () => configMaps.replace(obj),
      () => configMaps.replaceStatus(obj),
      () => configMaps.patch('default', 'a', {}, 'merge'),
      () => configMaps.apply(obj, 'me'),
      () => configMaps.delete('default', 'a'),
      () => configMaps.deleteCollection('default'),
    ];
    for (const write of writes) await expect(write()).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('lets reads through', async () => {
    const read = configMaps.get('default', 'a').then(
      () => 'answered',
      (err) => err,
    );
    expect(await read).not.toBeInstanceOf(LeaseLostError);
  });

  it('derives an unguarded client for the election itself', async () => {
    const election = client.derive({ writeGuard: undefined });
    const write = election.kind('ConfigMap').delete('default', 'a');
    await expect(write).rejects.not.toBeInstanceOf(LeaseLostError);
  });
});

/** A Lease store in memory, optimistic on replace, that another holder can take over. */
class MemoryLeases implements LeaseApi {
  readonly apiVersion = 'coordination.orch.io/v1';
  lease: Lease | undefined;
  private rv = 0;

  takeOver(holderIdentity: string): void {
    this.store({ metadata: { namespace: 'ns', name: 'lock' }, spec: { holderIdentity, leaseDurationSeconds: 3 } });
  }

  async get(): Promise<Lease> {
    if (!this.lease) throw new StatusError(404, 'NotFound', 'not found');
    return structuredClone(this.lease);
  }

  async create(lease: Lease): Promise<Lease> {
    if (this.lease) throw new StatusError(409, 'AlreadyExists', 'exists');
    return this.store(lease);
  }

  async replace(lease: Lease): Promise<Lease> {
    if (lease.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', 'the object has been modified');
    }
    return this.store(lease);
  }

  private store(lease: Lease): Lease {
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 10) {
    await flush();
    clock.step(10);
  }
  await flush();
}

describe('the elector feeding a guard', () => {
  function elect(releaseOnCancel = false) {
    const clock = new FakeClock();
    const leases = new MemoryLeases();
    const guard = new LeaseGuard(RENEW_DEADLINE, clock);
    const stop = new AbortController();
    let leading: AbortSignal | undefined;
    const elector = new LeaderElector({
      lock: { namespace: 'ns', name: 'lock' },
      leases,
      identity: 'me',
      leaseDurationMs: 3_000,
      renewDeadlineMs: RENEW_DEADLINE,
      retryPeriodMs: 500,
      releaseOnCancel,
      clock,
      random: () => 0,
      guard,
      callbacks: {
        onStartedLeading: (signal) => {
          leading = signal;
        },
        onStoppedLeading: () => {},
      },
    });
    const done = elector.run(stop.signal);
    return { clock, leases, guard, stop, done, leading: () => leading };
  }

  it('allows writes from acquisition on and keeps allowing them while renewals succeed', async () => {
    const h = elect();
    await advance(h.clock, 10);
    expect(h.leading()?.aborted).toBe(false);
    expect(() => h.guard.check('POST /x')).not.toThrow();
    await advance(h.clock, 5_000);
    expect(() => h.guard.check('POST /x')).not.toThrow();
  });

  it('stops at once when the Lease names another holder, without waiting for the renew deadline', async () => {
    const h = elect();
    await advance(h.clock, 10);
    h.leases.takeOver('other');
    const seenAt = h.clock.now();
    await advance(h.clock, 600); // one retry period: the next renewal reads the Lease
    await h.done;
    expect(h.leading()?.aborted).toBe(true);
    expect(h.clock.now() - seenAt).toBeLessThan(RENEW_DEADLINE);
    expect(() => h.guard.check('POST /x')).toThrow(/does not hold/);
  });

  it('writes its release only once the writes of the term on their way are over', async () => {
    const h = elect(true);
    await advance(h.clock, 10);
    const write = h.guard.admit('PUT /approval');
    h.stop.abort();
    await advance(h.clock, 1_000);
    expect(h.leases.lease?.spec?.holderIdentity).toBe('me');
    write.settle();
    await advance(h.clock, 10);
    await h.done;
    expect(h.leases.lease?.spec?.holderIdentity).toBe('');
  });

  it('refuses the first write of a process that resumes after a pause longer than the renew deadline', async () => {
    const h = elect();
    await advance(h.clock, 10);
    // A SIGSTOP: time moves on; the timers that fall due only settle promises, whose callbacks have not run
    // yet when the resumed process makes its first write.
    h.clock.step(4_000);
    expect(() => h.guard.check('PUT /approval')).toThrow(LeaseLostError);
  });
});
