/**
 * Coordinated leader election on both substrates (gate CoordinatedLeaderElection on in the daemons; the real
 * kube-apiserver has it on too): three replicas at binary versions 1.2.0, 1.1.0 and 1.3.0 publish their
 * LeaseCandidates for a Lease of this suite's own, and an election controller gives the Lease to the oldest emulation
 * version. On the real cluster that controller is kube-apiserver's own: our daemon leaves it (and the LeaseCandidate
 * GC) to the API server by default, and its replicas follow the API server's choice. The embedded plane runs no
 * election controller, so there the replicas are told to run ours. Then SIGKILL of the leader: its candidate stops
 * answering pings, and the next oldest is elected; SIGTERM of that one: it releases, and the last is elected. A
 * replica that exits 1 meanwhile (a leader asked to hand over to a better candidate that joined later, or one too slow
 * to renew on a loaded machine) is started again at its version, as its supervisor would.
 */
import { beforeAll, expect, it } from 'vitest';
import type { Lease, LeaseCandidate } from '../../src/api/types/coordination.ts';
import { type LogLine, sleep, waitFor } from '../support/daemons.ts';
import { describeOnSubstrate, type SubstrateDaemon } from '../support/substrate.ts';

const LEASE_MS = 4_000;
const RENEW_DEADLINE_MS = 3_000;
const RETRY_MS = 500;
/** An election: the lease expires, the candidates are pinged and have 5 s to answer; slack for a loaded machine. */
const ELECTION_MS = 60_000;
const ELECTION_CONTROLLERS = ['leader-election-controller', 'leasecandidate-gc'];

describeOnSubstrate('coordinated', (s) => {
  const versionOf = new Map<SubstrateDaemon, string>();
  const replicas: SubstrateDaemon[] = [];
  /** Replicas the test stopped on purpose: the supervisor below does not restart them. */
  const retired = new Set<SubstrateDaemon>();
  const leaseName = () => s().name('lease');
  const lease = () => s().admin.kind<Lease>('Lease').get(s().naming.systemNamespace, leaseName());
  const candidates = () => s().admin.kind<LeaseCandidate>('LeaseCandidate');

  async function replica(binaryVersion: string): Promise<SubstrateDaemon> {
    const d = await s().startDaemon({
      name: `replica-${binaryVersion}`,
      controllers: s().kind === 'embedded' ? ['*', ...ELECTION_CONTROLLERS].join(',') : undefined,
      waitStarted: false,
      args: [
        '--feature-gates=CoordinatedLeaderElection=true',
        `--binary-version=${binaryVersion}`,
        `--leader-elect-resource-name=${leaseName()}`,
        `--leader-elect-lease-duration=${LEASE_MS}ms`,
        `--leader-elect-renew-deadline=${RENEW_DEADLINE_MS}ms`,
        `--leader-elect-retry-period=${RETRY_MS}ms`,
        '--v=2',
      ],
    });
    versionOf.set(d, binaryVersion);
    replicas.push(d);
    return d;
  }

  const alive = () => replicas.filter((d) => !d.proc.exit);
  /** Replicas whose log says they lead the suite's Lease now (lines about the election controller's own carry `lease`). */
  const believers = () =>
    alive().filter((d) => {
      const own = (l: LogLine) => l.lease === undefined;
      const became = d.proc.lines.findLastIndex((l) => own(l) && l.msg === 'became leader; starting controllers');
      const lost = d.proc.lines.findLastIndex((l) => own(l) && (l.msg?.startsWith('failed to renew lease') ?? false));
      return became >= 0 && lost < became;
    });

  /**
   * A supervisor's part: a replica that exited 1 (it was asked to hand the Lease over to a better candidate, or lost
   * it on a slow machine) is started again at its version, as a Deployment would.
   */
  async function restartExited(): Promise<void> {
    for (const d of replicas.filter((r) => r.proc.exit?.code === 1 && !retired.has(r))) {
      retired.add(d);
      await replica(versionOf.get(d)!);
    }
  }

  /** The live replica at `version` (the last started). */
  const at = (version: string) => alive().findLast((d) => versionOf.get(d) === version);

  /**
   * Waits until the replica at `version` holds the Lease, runs its controllers and alone believes it leads (restarting
   * replicas that exit meanwhile); then samples that 5 times.
   */
  async function leads(version: string): Promise<SubstrateDaemon> {
    const d = await waitFor(
      `the replica at ${version} leading`,
      async () => {
        await restartExited();
        const holder = (await lease().catch(() => undefined))?.spec?.holderIdentity;
        const d = at(version);
        const started = d?.proc.lines.some((l) => l.lease === undefined && l.msg === 'controllers started');
        return d && holder === d.proc.identity && started && believers().length === 1 ? d : undefined;
      },
      ELECTION_MS,
    );
    for (let i = 0; i < 5; i++) {
      expect((await lease()).spec?.holderIdentity).toBe(d.proc.identity);
      expect(believers().map((b) => b.proc.name)).toEqual([d.proc.name]);
      await sleep(100);
    }
    return d;
  }

  beforeAll(async () => {
    // One after the other: the first start applies the RBAC manifest and makes the ServiceAccount's token.
    for (const version of ['1.2.0', '1.1.0', '1.3.0']) await replica(version);
  });

  it('each replica publishes its LeaseCandidate; the election controller runs in the API server on the real one', async () => {
    for (const d of replicas) {
      await waitFor(`${d.proc.name} starting`, () => (d.proc.identity ? true : undefined), 60_000);
      const started = d.proc.lines.find((l) => l.msg === 'starting') as { controllers?: string[] };
      const ours = ELECTION_CONTROLLERS.filter((c) => started.controllers?.includes(c));
      expect(ours).toEqual(s().kind === 'embedded' ? ELECTION_CONTROLLERS : []);
      const candidate = await waitFor(
        `${d.proc.name}'s LeaseCandidate`,
        () =>
          candidates()
            .get(s().naming.systemNamespace, d.proc.identity!)
            .catch(() => undefined),
        60_000,
      );
      const version = versionOf.get(d)!;
      expect(candidate.spec).toMatchObject({
        leaseName: leaseName(),
        binaryVersion: version,
        emulationVersion: version.replace(/\.\d+$/, '.0'),
        strategy: 'OldestEmulationVersion',
      });
    }
  }, 120_000);

  it('the oldest emulation version is elected, by the API server on the real cluster, and the replicas follow', async () => {
    await leads('1.1.0');
    expect((await lease()).spec?.strategy).toBe('OldestEmulationVersion');
    // Who wrote the Lease's holder: kube-apiserver itself on the real cluster, a replica's election controller here.
    const identities = replicas.map((d) => `(${d.proc.identity})`);
    const assigners = new Set(
      (await s().writes())
        .filter((e) => e.objectRef.resource === 'leases' && e.objectRef.name === leaseName() && e.verb === 'create')
        .filter((e) => e.responseStatus.code < 300)
        .map((e) => (identities.some((id) => e.userAgent?.includes(id)) ? 'a replica' : e.user.username)),
    );
    expect([...assigners]).toEqual([s().kind === 'real' ? 'system:apiserver' : 'a replica']);
  }, 90_000);

  it('SIGKILL of the leader: its candidate goes silent and the next oldest (1.2.0) is elected', async () => {
    const oldest = at('1.1.0')!;
    retired.add(oldest);
    oldest.proc.child.kill('SIGKILL');
    await leads('1.2.0');
    expect(oldest.proc.exit?.signal).toBe('SIGKILL');
  }, 90_000);

  it('SIGTERM of the leader: it releases and exits 0, and the last candidate (1.3.0) is elected', async () => {
    const stopping = at('1.2.0')!;
    retired.add(stopping);
    stopping.proc.child.kill('SIGTERM');
    await Promise.race([stopping.proc.exited, sleep(15_000)]);
    expect(stopping.proc.exit).toMatchObject({ code: 0, signal: null });
    await leads('1.3.0');
    expect(alive().map((d) => versionOf.get(d))).toEqual(['1.3.0']);
  }, 90_000);
});
