/**
 * Coordinated leader election in one process against the embedded control plane (gate on): the election
 * controller and the LeaseCandidate GC in a Manager, and members that are Managers in coordinated mode, each
 * publishing its LeaseCandidate. Short member timings (lease 2 s, renew deadline 1.5 s, retry 250 ms); the
 * controller's own constants (5 s ping window, 5 s requeue) are the reference's.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaderElectionControllers } from '../controllers/leaderelection/index.ts';
import { OLDEST_EMULATION_VERSION } from '../src/api/lease-strategy.ts';
import { naming } from '../src/api/naming.ts';
import type { Lease, LeaseCandidate } from '../src/api/types/coordination.ts';
import type { ControllerContext } from '../src/controller/controller.ts';
import { Manager, type RunOutcome } from '../src/controller/manager.ts';
import { objectValidation } from '../src/controlplane/object-validation.ts';
import { LeaseCandidateClient } from '../src/leaderelection/candidate.ts';
import { createLogger } from '../src/log/logger.ts';
import { realClock } from '../src/util/clock.ts';
import { rfc3339Micro } from '../src/util/time.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';

const TIMING = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 250 };
const GC_PERIOD_MS = 1_500;

let cluster: TestCluster;
let namespace: string;
const controllerLogs: LogLine[] = [];
const stops: (() => Promise<unknown>)[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type LogLine = { msg: string; [k: string]: unknown };

/** A JSON logger whose lines land in `lines`. */
function jsonLogger(lines: LogLine[]): ControllerContext['logger'] {
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      callback();
    },
  });
  return createLogger({ verbosity: 2, format: 'json', destination });
}

function context(logger: ControllerContext['logger']): Omit<ControllerContext, 'informers'> {
  return {
    client: cluster.client,
    registry: cluster.cp.registry,
    naming: cluster.cp.registry.naming,
    recorder: { event() {} },
    logger,
    clock: realClock,
    metrics: new Registry(),
    features: (gate) => gate === 'CoordinatedLeaderElection',
    config: { leaseCandidateGc: { periodMs: GC_PERIOD_MS } },
  };
}

function run(manager: Manager): Promise<RunOutcome> {
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  stops.push(() => {
    stop.abort();
    return done.catch(() => undefined);
  });
  return done;
}

beforeAll(async () => {
  const features = (gate: string) => gate === 'CoordinatedLeaderElection';
  const standard = objectValidation(naming(), features, () => new Date());
  cluster = await startTestCluster({
    featureGates: { CoordinatedLeaderElection: true },
    // Admits LeaseCandidates whatever their version strings (as a server of another release might), so the
    // controller's handling of unparsable versions shows; everything else is validated as usual.
    validation: {
      defaults: standard.defaults,
      validate: (op, rt, ...rest) =>
        rt.kind === 'LeaseCandidate' ? Promise.resolve([]) : standard.validate(op, rt, ...rest),
    },
  });
  namespace = cluster.cp.registry.naming.systemNamespace;
  const controllers = new Manager(context(jsonLogger(controllerLogs)), {
    controllers: leaderElectionControllers,
    workers: {},
    leaderElection: { enabled: false, namespace, name: '', identity: '', ...TIMING, releaseOnCancel: true },
    syncTimeoutMs: 10_000,
    shutdownTimeoutMs: 2_000,
  });
  void run(controllers);
});

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
  await cluster?.stop();
});

interface Member {
  identity: string;
  logs: LogLine[];
  manager: Manager;
  done: Promise<RunOutcome>;
}

/** A replica in coordinated mode contending for `lease`, with its LeaseCandidate at `version` unless told not to. */
function member(lease: string, version: string, publish = true): Member {
  const identity = `m-${version}_${randomUUID().slice(0, 8)}`;
  const [major, minor] = version.split('.');
  const logs: LogLine[] = [];
  const manager = new Manager(context(jsonLogger(logs)), {
    controllers: [],
    workers: {},
    leaderElection: {
      enabled: true,
      namespace,
      name: lease,
      identity,
      ...TIMING,
      releaseOnCancel: true,
      coordinated: true,
      candidate: publish
        ? { binaryVersion: version, emulationVersion: `${major}.${minor}.0`, strategy: OLDEST_EMULATION_VERSION }
        : undefined,
    },
    syncTimeoutMs: 10_000,
    shutdownTimeoutMs: 2_000,
  });
  return { identity, manager, logs, done: run(manager) };
}

async function readLease(name: string): Promise<Lease | undefined> {
  return cluster.client
    .kind<Lease>('Lease')
    .get(namespace, name)
    .catch(() => undefined);
}

const candidates = () => cluster.client.kind<LeaseCandidate>('LeaseCandidate');

/** Samples who leads every 20 ms until stopped; the most seen leading at once. */
function sampleLeaders(members: Member[]): { stop(): Promise<number> } {
  let most = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      most = Math.max(most, members.filter((m) => m.manager.isLeader()).length);
      await sleep(20);
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
      return most;
    },
  };
}

async function leads(m: Member, lease: string, timeoutMs = 20_000): Promise<void> {
  await eventually(
    async () => m.manager.isLeader() && (await readLease(lease))?.spec?.holderIdentity === m.identity,
    timeoutMs,
    `${m.identity} leading ${lease}`,
  );
}

/** A candidate object with no process behind it: it never answers a ping. */
async function silentCandidate(
  lease: string,
  version: string,
  renewedAgoMs: number,
  strategy = OLDEST_EMULATION_VERSION,
) {
  const name = `silent-${randomUUID().slice(0, 8)}`;
  return candidates().create({
    apiVersion: candidates().apiVersion,
    kind: 'LeaseCandidate',
    metadata: { namespace, name },
    spec: {
      leaseName: lease,
      binaryVersion: version,
      emulationVersion: version,
      strategy,
      renewTime: rfc3339Micro(new Date(Date.now() - renewedAgoMs)),
    },
  });
}

/** A candidate with no elector behind it that answers pings (the candidate side alone). */
function answeringCandidate(lease: string, binaryVersion: string, emulationVersion: string, strategy: string): void {
  const c = new LeaseCandidateClient({
    candidates: candidates() as never,
    namespace,
    name: `answering-${randomUUID().slice(0, 8)}`,
    leaseName: lease,
    binaryVersion,
    emulationVersion,
    strategy,
  });
  c.start();
  stops.push(() => c.stop());
}

describe('coordinated leader election on the embedded control plane', () => {
  it('members never create the Lease; the controller elects the oldest emulation version', async () => {
    const lease = 'le-pick';
    const ms = [member(lease, '1.1.0'), member(lease, '1.1.0'), member(lease, '1.0.0')];
    const sampler = sampleLeaders(ms);
    await leads(ms[2], lease);
    const l = (await readLease(lease))!;
    expect(l.spec).toMatchObject({ strategy: OLDEST_EMULATION_VERSION, holderIdentity: ms[2].identity });
    // The holder renewed it with its own duration, replacing the controller's 5 s.
    await eventually(async () => (await readLease(lease))?.spec?.leaseDurationSeconds === 2, 5_000, 'own duration');
    await sleep(1_000);
    expect(ms.filter((m) => m.manager.isLeader())).toEqual([ms[2]]);
    expect(await sampler.stop()).toBeLessThanOrEqual(1);
  });

  it('a coordinated member never creates a missing Lease itself', async () => {
    // Without a candidate the controller has nobody to elect, so the Lease stays missing: the member only waits.
    const lease = 'le-orphan';
    const m = member(lease, '1.1.0', false);
    await sleep(8 * TIMING.retryPeriodMs);
    expect(await readLease(lease)).toBeUndefined();
    expect(m.manager.isLeader()).toBe(false);
  });

  it('a better candidate joining takes over through preferredHolder, never with two leaders', async () => {
    const lease = 'le-handover';
    const newer = member(lease, '1.1.0');
    await leads(newer, lease);
    const older = member(lease, '1.0.0');
    const sampler = sampleLeaders([newer, older]);
    let preferred: string | undefined;
    await eventually(
      async () => {
        preferred ??= (await readLease(lease))?.spec?.preferredHolder;
        return older.manager.isLeader();
      },
      25_000,
      'the older member leading',
    );
    expect(preferred).toBe(older.identity);
    // Asked to step down, the newer member lost its leadership: its run ends as when a lease is lost.
    expect(await newer.done).toBe('lostLeadership');
    expect(await sampler.stop()).toBeLessThanOrEqual(1);
    expect((await readLease(lease))?.spec?.preferredHolder).toBeUndefined();
  });

  it('a candidate that does not answer pings is never elected', async () => {
    const lease = 'le-silent';
    const m = member(lease, '1.1.0');
    await leads(m, lease);
    const silent = await silentCandidate(lease, '1.0.0', 60_000);
    const pinged = await eventually(async () => {
      const c = await candidates().get(namespace, silent.metadata.name!);
      return c.spec?.pingTime ? c : undefined;
    }, 15_000);
    // Well past the 5 s answer window: still the member, and the silent one never renewed.
    await sleep(6_000);
    expect((await readLease(lease))?.spec?.holderIdentity).toBe(m.identity);
    expect(m.manager.isLeader()).toBe(true);
    const after = await candidates().get(namespace, silent.metadata.name!);
    expect(after.spec?.renewTime).toBe(silent.spec?.renewTime);
    expect(after.spec?.pingTime).toBe(pinged.spec?.pingTime);
  });

  it('a preferredHolder naming nobody is cleared and logged once; the holder keeps leading', async () => {
    const lease = 'le-nobody';
    const m = member(lease, '1.1.0');
    await leads(m, lease);
    const l = (await readLease(lease))!;
    await cluster.client.kind<Lease>('Lease').replace({ ...l, spec: { ...l.spec, preferredHolder: 'nobody' } });
    await eventually(async () => (await readLease(lease))?.spec?.preferredHolder === undefined, 5_000, 'cleared');
    await sleep(2 * TIMING.leaseDurationMs);
    expect(m.manager.isLeader()).toBe(true);
    const lines = controllerLogs.filter((x) => x.msg.includes('preferredHolder "nobody" names no live candidate'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', lease: `${namespace}/${lease}` });
  });

  it('a strategy conflict at one binary version stops coordination, logged once, without a hot loop', async () => {
    const lease = 'le-conflict';
    const m = member(lease, '1.1.0');
    await leads(m, lease);
    // Another candidate at the same binary version wants another strategy: unresolvable, so no election runs.
    answeringCandidate(lease, '1.1.0', '1.1.0', 'example.com/other');
    const conflict = () => controllerLogs.filter((x) => x.msg.includes(`${lease}: candidates`));
    await eventually(() => conflict().length > 0, 15_000, 'the conflict logged');
    expect(conflict()[0].msg).toMatch(/at same binary version but received differing strategies/);
    const pings = async () =>
      (await candidates().list(namespace)).items
        .filter((c) => c.spec?.leaseName === lease)
        .map((c) => c.spec?.pingTime)
        .join();
    const before = await pings();
    await sleep(6_000); // more than one requeue interval, and many Lease renewals (each an event)
    expect(conflict()).toHaveLength(1);
    expect(await pings()).toBe(before);
    expect((await readLease(lease))?.spec?.holderIdentity).toBe(m.identity);
    expect(m.manager.isLeader()).toBe(true);
  });

  it('a candidate with unparsable versions is skipped and logged once; the others are elected', async () => {
    const lease = 'le-badversion';
    // Its emulationVersion would win, but its binaryVersion does not parse.
    answeringCandidate(lease, 'banana', '0.1', OLDEST_EMULATION_VERSION);
    const m = member(lease, '1.1.0');
    await leads(m, lease);
    await sleep(6_000); // more than one requeue interval of the controller
    expect((await readLease(lease))?.spec?.holderIdentity).toBe(m.identity);
    const lines = controllerLogs.filter((x) => x.msg.includes(`${lease}: candidates skipped for unparsable versions`));
    expect(lines).toHaveLength(1);
    expect(lines[0].msg).toMatch(/\(binaryVersion "banana"\)/);
  });

  it('the garbage collector deletes candidates not renewed for 30 minutes, and only those', async () => {
    const stale = await silentCandidate('le-gc', '1.0.0', 31 * 60_000);
    const fresh = await silentCandidate('le-gc-fresh', '1.0.0', 29 * 60_000);
    await eventually(
      async () => !(await candidates().list(namespace)).items.some((c) => c.metadata.name === stale.metadata.name),
      3 * GC_PERIOD_MS + 5_000,
      'the stale candidate deleted',
    );
    expect((await candidates().get(namespace, fresh.metadata.name!)).metadata.uid).toBe(fresh.metadata.uid);
    expect(
      controllerLogs.some(
        (x) => x.msg === 'expired LeaseCandidate deleted' && x.candidate === `${namespace}/${stale.metadata.name}`,
      ),
    ).toBe(true);
  });
});
