/**
 * High availability on both substrates: three daemon replicas (their own ServiceAccount, the shipped RBAC) elect a
 * leader on a Lease of this suite's own (lease 4 s, renew deadline 3 s, retry 500 ms: longer than test/ha.test.ts's
 * so a loaded machine does not depose a leader that is merely slow), which runs the StatefulSet controller. SIGKILL of
 * the leader: a standby takes over once the lease could have expired, and a set keeps scaling. SIGSTOP of the next
 * leader past its lease: another takes over and works on; SIGCONT: the old leader exits 1, and the API server's audit
 * log shows no write of its accepted after its successor took the Lease. The Lease is written by the replicas alone:
 * without the CoordinatedLeaderElection gate they publish no LeaseCandidate, so a real API server's election
 * controller (gate on there) leaves the classic election alone.
 */
import { beforeAll, expect, it } from 'vitest';
import type { StatefulSet } from '../../src/api/types/apps.ts';
import type { Lease } from '../../src/api/types/coordination.ts';
import { logged, sleep, waitFor } from '../support/daemons.ts';
import { rolledOut, statefulSet, waitForSet } from '../support/statefulsets.ts';
import { describeOnSubstrate, type SubstrateDaemon } from '../support/substrate.ts';

const LEASE_MS = 4_000;
const RENEW_DEADLINE_MS = 3_000;
const RETRY_MS = 500;
/** Acquire retries wait retryPeriod · [1, 2.2) (the elector's jitter factor is 1.2). */
const MAX_RETRY_WAIT_MS = RETRY_MS * 2.2;
/** Time for a request or a log line in flight on a loaded machine. */
const SLACK_MS = 2_000;

describeOnSubstrate('ha', (s) => {
  let ns = '';
  const replicas: SubstrateDaemon[] = [];
  const sets = () => s().admin.kind<StatefulSet>('StatefulSet');
  const leaseName = () => s().name('lease');

  beforeAll(async () => {
    ns = await s().namespace('work');
  });

  async function replica(): Promise<SubstrateDaemon> {
    const d = await s().startDaemon({
      name: `replica-${replicas.length + 1}`,
      controllers: 'statefulset',
      waitStarted: false,
      args: [
        `--leader-elect-resource-name=${leaseName()}`,
        `--leader-elect-lease-duration=${LEASE_MS}ms`,
        `--leader-elect-renew-deadline=${RENEW_DEADLINE_MS}ms`,
        `--leader-elect-retry-period=${RETRY_MS}ms`,
        '--v=2',
      ],
    });
    replicas.push(d);
    return d;
  }

  const lease = () => s().admin.kind<Lease>('Lease').get(s().naming.systemNamespace, leaseName());
  const alive = () => replicas.filter((d) => !d.proc.exit);
  /** Replicas whose own log says they lead now: became leader, not since failed to renew, still running. */
  const believers = () =>
    alive().filter((d) => {
      const became = d.proc.lines.findLastIndex((l) => l.msg === 'became leader; starting controllers');
      const lost = d.proc.lines.findLastIndex((l) => l.msg?.startsWith('failed to renew lease') ?? false);
      return became >= 0 && lost < became;
    });

  /** The live replica the Lease names, once it runs its controllers (not `not`). */
  async function leader(ms: number, not?: SubstrateDaemon): Promise<SubstrateDaemon> {
    return waitFor(
      'a leader running its controllers',
      async () => {
        const holder = (await lease().catch(() => undefined))?.spec?.holderIdentity;
        const d = alive().find((r) => r.proc.identity === holder);
        return d && d !== not && d.proc.lines.some((l) => l.msg === 'controllers started') ? d : undefined;
      },
      ms,
    );
  }

  /** Samples `n` times, 100 ms apart: the Lease names `d`, and no other replica believes it leads. */
  async function onlyLeader(d: SubstrateDaemon, n = 5): Promise<void> {
    for (let i = 0; i < n; i++) {
      expect((await lease()).spec?.holderIdentity).toBe(d.proc.identity);
      expect(believers().map((b) => b.proc.name)).toEqual([d.proc.name]);
      await sleep(100);
    }
  }

  const scaled = async (n: number) => {
    await sets().patchScale(ns, 'web', n);
    return waitForSet(sets(), ns, 'web', rolledOut(n), `${n} Ready`, 60_000);
  };

  let first: SubstrateDaemon;

  it('three replicas elect one leader, which runs the controllers', async () => {
    // One after the other: the first start applies the RBAC manifest and makes the ServiceAccount's token.
    for (let i = 0; i < 3; i++) await replica();
    first = await leader(60_000);
    await waitFor(
      'every replica campaigning',
      () => (alive().every((d) => d.proc.identity) ? true : undefined),
      60_000,
    );
    await onlyLeader(first, 10);
    await sets().create(statefulSet(ns, 'web', 2));
    await waitForSet(sets(), ns, 'web', rolledOut(2), 'two Ready', 60_000);
  }, 120_000);

  let second: SubstrateDaemon;

  it('SIGKILL of the leader: a standby takes over once the lease could have expired, and the work goes on', async () => {
    const killWall = Date.now();
    first.proc.child.kill('SIGKILL');
    second = await leader(LEASE_MS + MAX_RETRY_WAIT_MS + 3 * SLACK_MS, first);
    const acquired = logged(second.proc, 'successfully acquired lease', killWall)!;
    expect(acquired - killWall).toBeGreaterThanOrEqual(LEASE_MS - 2 * RETRY_MS);
    expect(acquired - killWall).toBeLessThan(LEASE_MS + MAX_RETRY_WAIT_MS + SLACK_MS);
    expect(first.proc.exit?.signal).toBe('SIGKILL');
    await onlyLeader(second);
    await scaled(3);
  }, 60_000);

  it('SIGSTOP of the leader past its lease: another leads; after SIGCONT the old one exits 1 and wrote nothing', async () => {
    second.proc.child.kill('SIGSTOP');
    const third = await leader(LEASE_MS + MAX_RETRY_WAIT_MS + 3 * SLACK_MS, second);
    const takenOver = Date.parse((await lease()).spec!.acquireTime!);
    // The new leader works while the old one, its caches stale, is stopped.
    await scaled(4);
    second.proc.child.kill('SIGCONT');
    await Promise.race([second.proc.exited, sleep(RENEW_DEADLINE_MS + 3 * SLACK_MS)]);
    expect(second.proc.exit).toMatchObject({ code: 1, signal: null });
    expect(second.proc.lines.some((l) => l.msg === 'leaderelection lost')).toBe(true);
    await onlyLeader(third);
    // Fencing: the API server accepted no write of the old leader once its successor held the Lease.
    const mine = `(${second.proc.identity})`;
    const late = (await s().writes()).filter(
      (e) => e.userAgent?.includes(mine) && e.responseStatus.code < 300 && Date.parse(e.stageTimestamp) >= takenOver,
    );
    expect(late.map((e) => `${e.stageTimestamp} ${e.verb} ${e.requestURI}`)).toEqual([]);
    // ...while the audit log does attribute writes to replicas: the successor's scaling of the set.
    const successor = `(${third.proc.identity})`;
    expect((await s().writes()).some((e) => e.userAgent?.includes(successor) && e.objectRef.resource === 'pods')).toBe(
      true,
    );
    await scaled(5);
  }, 90_000);

  it('the Lease is written by the replicas alone: a classic election draws in no election controller', async () => {
    const identities = replicas.map((d) => `(${d.proc.identity})`);
    const writers = (await s().writes())
      .filter(
        (e) => e.objectRef.resource === 'leases' && e.objectRef.name === leaseName() && e.responseStatus.code < 300,
      )
      .filter((e) => !identities.some((id) => e.userAgent?.includes(id)));
    expect(writers.map((e) => `${e.user.username} ${e.verb} (${e.userAgent})`)).toEqual([]);
    const candidates = await s().admin.kind('LeaseCandidate').list(s().naming.systemNamespace);
    expect(candidates.items.filter((c) => (c.spec as { leaseName?: string }).leaseName === leaseName())).toEqual([]);
  });
});
