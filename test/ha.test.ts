/**
 * High availability of the daemon: one embedded control plane in this process, real
 * `orch-controller-manager` processes electing a leader on `<systemNamespace>/orch-controller-manager`
 * with short timings (lease 2 s, renew deadline 1.5 s, retry 250 ms). Checked: exactly one leader
 * at sampled moments; SIGTERM of the leader hands over within about one retry period and exits 0;
 * SIGKILL of the leader hands over within lease duration + retry period; a leader that cannot renew
 * stops before its lease could be taken and exits 1, and a new leader appears once writes work again.
 * Timings come from the daemons' JSON logs (`ts`, wall clock) and from polling the Lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_NAME } from '../src/api/naming.ts';
import type { Lease } from '../src/api/types/coordination.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import {
  campaigning as campaigningWithin,
  type Daemon,
  killAll,
  logged,
  sleep,
  spawnDaemon as spawnReplica,
  waitFor,
} from './support/daemons.ts';

const LEASE_MS = 2_000;
const RENEW_DEADLINE_MS = 1_500;
const RETRY_MS = 250;
/** Acquire retries wait retryPeriod · [1, 2.2) (the elector's jitter factor is 1.2). */
const MAX_RETRY_WAIT_MS = RETRY_MS * 2.2;
/** How long a replica may take to start: tens of seconds on a loaded machine. */
const STARTUP_MS = 90_000;

let cluster: TestCluster;
let leaseNamespace: string;
let leaseName: string;
const daemons: Daemon[] = [];
/** Measured timings, printed at the end for the record. */
const measured: Record<string, number> = {};

beforeAll(async () => {
  cluster = await startTestCluster();
  leaseNamespace = cluster.cp.registry.naming.systemNamespace;
  leaseName = DAEMON_NAME;
});

afterAll(async () => {
  await killAll(daemons);
  await cluster?.stop();
  console.log(`HA timings (ms): ${JSON.stringify(measured)}`);
});

function spawnDaemon(name: string): Daemon {
  const d = spawnReplica(name, {
    kubeconfig: cluster.kubeconfig,
    leaseMs: LEASE_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryMs: RETRY_MS,
  });
  daemons.push(d);
  return d;
}

async function readLease(): Promise<Lease | undefined> {
  try {
    return await cluster.client.kind<Lease>('Lease').get(leaseNamespace, leaseName);
  } catch {
    return undefined;
  }
}

async function holder(): Promise<string> {
  return (await readLease())?.spec?.holderIdentity ?? '';
}

const alive = () => daemons.filter((d) => !d.exit);
const byIdentity = (identity: string) => daemons.find((d) => d.identity === identity);

/** Daemons whose own logs say they lead now: became leader, not since failed to renew, still running. */
function believers(): Daemon[] {
  return alive().filter((d) => {
    const became = d.lines.findLastIndex((l) => l.msg === 'became leader; starting controllers');
    const lost = d.lines.findLastIndex((l) => l.msg?.startsWith('failed to renew lease') ?? false);
    return became >= 0 && lost < became;
  });
}

/** Samples the Lease and the daemons' logs `n` times: one holder, a live daemon, the only one that leads. */
async function assertSingleLeader(n: number): Promise<Daemon> {
  let leader: Daemon | undefined;
  for (let i = 0; i < n; i++) {
    const h = await holder();
    const d = byIdentity(h);
    expect(d, `holder ${h} is one of the daemons`).toBeDefined();
    expect(d!.exit).toBeUndefined();
    // No other daemon may think it leads; the holder's own "became leader" line can trail its Lease write a little.
    expect(believers().filter((b) => b !== d)).toEqual([]);
    await waitFor(`${d!.name} logging its leadership`, () => (believers().includes(d!) ? true : undefined), 2_000);
    if (leader) expect(d).toBe(leader);
    leader = d;
    await sleep(100);
  }
  return leader!;
}

/** Waits until `d` has started and is campaigning (it logged its first acquire attempt). */
async function campaigning(d: Daemon, ms: number): Promise<void> {
  await campaigningWithin(d, ms);
  expect(d.identity).toBeDefined();
}

describe('orch-controller-manager leader election across processes', () => {
  it('keeps exactly one leader and hands over on SIGTERM, SIGKILL and failed renewal', {
    timeout: 240_000,
  }, async () => {
    // Three replicas.
    const spawnedAt = performance.now();
    const first = [spawnDaemon('cm-1'), spawnDaemon('cm-2'), spawnDaemon('cm-3')];
    await Promise.all(first.map((d) => campaigning(d, STARTUP_MS)));
    measured.startThree = Math.round(performance.now() - spawnedAt);
    await waitFor('a first leader', async () => (byIdentity(await holder()) ? true : undefined), 10_000);
    // Let every standby see the lease at least once.
    await sleep(3 * MAX_RETRY_WAIT_MS);
    const leader1 = await assertSingleLeader(10);
    expect(first.every((d) => !d.exit)).toBe(true);

    // --- SIGTERM: the leader releases the lease, a standby takes it at its next retry; exit 0.
    const transitionsBefore = (await readLease())?.spec?.leaseTransitions ?? 0;
    const termWall = Date.now();
    const termAt = performance.now();
    leader1.child.kill('SIGTERM');
    const leader2Id = await waitFor(
      'a new holder after SIGTERM',
      async () => {
        const h = await holder();
        return h !== '' && h !== leader1.identity ? h : undefined;
      },
      5_000,
    );
    measured.sigtermToNewHolderPolled = Math.round(performance.now() - termAt);
    await Promise.race([leader1.exited, sleep(10_000)]);
    expect(leader1.exit).toEqual(expect.objectContaining({ code: 0, signal: null }));
    const leader2 = byIdentity(leader2Id)!;
    // The old leader released the lease (holder "") rather than letting it expire...
    expect(logged(leader1, 'released lease', termWall)).toBeDefined();
    const acquired2 = await waitFor(
      'acquire log',
      () => logged(leader2, 'successfully acquired lease', termWall),
      2_000,
    );
    measured.sigtermToAcquireLog = Math.round(acquired2 - termWall);
    measured.sigtermToExit = Math.round(leader1.exit!.wall - termWall);
    // ...so a standby held it at its next jittered attempt, far sooner than the 2 s lease expiry.
    expect(acquired2 - termWall).toBeLessThan(MAX_RETRY_WAIT_MS + 750);
    expect((await readLease())?.spec?.leaseTransitions).toBe(transitionsBefore + 1);
    expect(await assertSingleLeader(5)).toBe(leader2);

    // A replacement, so there are three replicas again.
    const replacementAt = performance.now();
    const cm4 = spawnDaemon('cm-4');
    await campaigning(cm4, STARTUP_MS);
    measured.startReplacement = Math.round(performance.now() - replacementAt);
    await sleep(3 * MAX_RETRY_WAIT_MS);
    expect(await assertSingleLeader(5)).toBe(leader2);
    expect(alive()).toHaveLength(3);

    // --- SIGKILL: no release; a standby takes over once the lease expires by its own observation.
    const killWall = Date.now();
    const killAt = performance.now();
    leader2.child.kill('SIGKILL');
    const leader3Id = await waitFor(
      'a new holder after SIGKILL',
      async () => {
        const h = await holder();
        return h !== '' && h !== leader2.identity ? h : undefined;
      },
      LEASE_MS + MAX_RETRY_WAIT_MS + 3_000,
    );
    measured.sigkillToNewHolderPolled = Math.round(performance.now() - killAt);
    const leader3 = byIdentity(leader3Id)!;
    const acquired3 = await waitFor(
      'acquire log',
      () => logged(leader3, 'successfully acquired lease', killWall),
      2_000,
    );
    measured.sigkillToAcquireLog = Math.round(acquired3 - killWall);
    await Promise.race([leader2.exited, sleep(5_000)]);
    expect(leader2.exit?.signal).toBe('SIGKILL');
    // Not before the lease could have expired, and within lease duration + one retry (+ margin).
    expect(acquired3 - killWall).toBeGreaterThanOrEqual(LEASE_MS - 2 * RETRY_MS);
    expect(acquired3 - killWall).toBeLessThan(LEASE_MS + MAX_RETRY_WAIT_MS + 1_000);
    expect(await assertSingleLeader(5)).toBe(leader3);
    const standby = alive().find((d) => d !== leader3)!;
    expect(alive()).toHaveLength(2);

    // --- The leader cannot renew (every Lease PUT fails): it stops leading within renewDeadline of its
    // last renewal, before anyone could take the lease over, and exits 1.
    const renewedBefore = (await readLease())!;
    cluster.cp.faults.failRequests({
      code: 500,
      count: Number.POSITIVE_INFINITY,
      match: (m, p) => m === 'PUT' && p.includes('/leases/'),
    });
    const blockWall = Date.now();
    await Promise.race([leader3.exited, sleep(RENEW_DEADLINE_MS + 8_000)]);
    expect(leader3.exit).toEqual(expect.objectContaining({ code: 1, signal: null }));
    const lastRenew = (await readLease())!;
    // Nobody could write meanwhile: the record still names the old leader.
    expect(lastRenew.spec?.holderIdentity).toBe(leader3.identity);
    expect(lastRenew.spec?.leaseTransitions).toBe(renewedBefore.spec?.leaseTransitions);
    const lastRenewWall = Date.parse(lastRenew.spec!.renewTime!);
    const gaveUp = logged(leader3, 'failed to renew lease', blockWall);
    expect(gaveUp).toBeDefined();
    expect(leader3.lines.some((l) => l.msg === 'leaderelection lost')).toBe(true);
    measured.lastRenewToGaveUpLog = Math.round(gaveUp! - lastRenewWall);
    measured.blockToGaveUpLog = Math.round(gaveUp! - blockWall);
    measured.blockToExit = Math.round(leader3.exit!.wall - blockWall);
    measured.lastRenewToExit = Math.round(leader3.exit!.wall - lastRenewWall);
    // Gave up one retry period plus the renew deadline after its last renewal at the latest...
    expect(gaveUp! - lastRenewWall).toBeLessThanOrEqual(RETRY_MS + RENEW_DEADLINE_MS + 200);
    // ...which is before the lease could have been taken over (leaseDuration after that renewal).
    expect(gaveUp! - lastRenewWall).toBeLessThan(LEASE_MS);
    expect(believers().map((d) => d.name)).toEqual([]);

    // Writes work again: the standby takes the (long expired) lease at its next attempt.
    cluster.cp.faults.clear();
    const clearWall = Date.now();
    const leader4Id = await waitFor(
      'a leader after the faults clear',
      async () => {
        const h = await holder();
        return h !== '' && h !== leader3.identity ? h : undefined;
      },
      5_000,
    );
    expect(leader4Id).toBe(standby.identity);
    const acquired4 = await waitFor(
      'acquire log',
      () => logged(standby, 'successfully acquired lease', clearWall),
      2_000,
    );
    measured.clearToAcquireLog = Math.round(acquired4 - clearWall);
    expect(acquired4 - clearWall).toBeLessThan(MAX_RETRY_WAIT_MS + 1_000);
    expect(await assertSingleLeader(5)).toBe(standby);

    // Finally a graceful stop of the last replica: exit 0 and the lease released.
    standby.child.kill('SIGTERM');
    await Promise.race([standby.exited, sleep(10_000)]);
    expect(standby.exit).toEqual(expect.objectContaining({ code: 0, signal: null }));
    expect(await holder()).toBe('');
    // Every line the daemons wrote was a structured log line: no stack trace, no stray output.
    for (const d of daemons) expect(d.lines.filter((l) => l.level === undefined)).toEqual([]);
  });
});
