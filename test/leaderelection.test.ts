/** Leader election and LeaseCandidate against the embedded control plane, with short timings. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease, LeaseCandidate } from '../src/api/types/coordination.ts';
import { StatusError } from '../src/client/errors.ts';
import { LeaseCandidateClient } from '../src/leaderelection/candidate.ts';
import { LeaderElector, type LeaseApi } from '../src/leaderelection/elector.ts';
import { rfc3339Micro } from '../src/util/time.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';

const TIMING = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 };

let cluster: TestCluster;
let namespace: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  namespace = cluster.cp.registry.naming.systemNamespace;
});

afterAll(async () => {
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Lease client, with writes that can be made to fail for this member only. */
function breakableLeases(): LeaseApi & { broken: boolean } {
  const inner = cluster.client.kind<Lease>('Lease');
  const fail = () => Promise.reject(new StatusError(500, 'InternalError', 'injected write failure'));
  const api = {
    broken: false,
    apiVersion: inner.apiVersion,
    get: (ns: string, name: string, opts: { signal?: AbortSignal }) => inner.get(ns, name, opts),
    create: (lease: Lease, opts: { signal?: AbortSignal }) => (api.broken ? fail() : inner.create(lease, opts)),
    replace: (lease: Lease, opts: { signal?: AbortSignal }) => (api.broken ? fail() : inner.replace(lease, opts)),
  };
  return api;
}

interface Member {
  identity: string;
  elector: LeaderElector;
  leases: ReturnType<typeof breakableLeases>;
  stop: AbortController;
  done: Promise<void>;
  leading: boolean;
  startedAt?: number;
  stoppedAt?: number;
}

function member(lease: string, index: number, releaseOnCancel = false): Member {
  const leases = breakableLeases();
  const m = {
    identity: `member-${index}_${randomUUID()}`,
    leases,
    stop: new AbortController(),
    leading: false,
  } as Member;
  m.elector = new LeaderElector({
    lock: { namespace, name: lease },
    leases,
    identity: m.identity,
    releaseOnCancel,
    ...TIMING,
    callbacks: {
      onStartedLeading: (signal) => {
        m.leading = true;
        m.startedAt = performance.now();
        signal.addEventListener('abort', () => {
          m.leading = false;
        });
      },
      onStoppedLeading: () => {
        m.leading = false;
        m.stoppedAt = performance.now();
      },
    },
  });
  m.done = m.elector.run(m.stop.signal);
  return m;
}

async function stopAll(members: Member[]): Promise<void> {
  for (const m of members) m.stop.abort();
  await Promise.all(members.map((m) => m.done));
}

describe('leader election on the embedded control plane', () => {
  it('keeps exactly one leader among three members', async () => {
    const lease = `one-leader-${randomUUID().slice(0, 8)}`;
    const members = [0, 1, 2].map((i) => member(lease, i));
    try {
      await eventually(() => members.find((m) => m.leading));
      const counts: number[] = [];
      const end = performance.now() + 5_000;
      while (performance.now() < end) {
        counts.push(members.filter((m) => m.leading).length);
        await sleep(25);
      }
      expect(counts.length).toBeGreaterThan(100);
      expect(counts.filter((c) => c !== 1)).toEqual([]);
      const leader = members.find((m) => m.leading)!;
      const stored = await cluster.client.kind<Lease>('Lease').get(namespace, lease);
      expect(stored.spec).toMatchObject({
        holderIdentity: leader.identity,
        leaseDurationSeconds: 2,
        leaseTransitions: 0,
      });
      expect(stored.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    } finally {
      await stopAll(members);
    }
  });

  it('hands over within about one retry period when the leader releases on stop', async () => {
    const lease = `release-${randomUUID().slice(0, 8)}`;
    const members = [0, 1, 2].map((i) => member(lease, i, true));
    try {
      const first = await eventually(() => members.find((m) => m.leading));
      await sleep(500);
      first.stop.abort();
      await first.done;
      const released = first.stoppedAt!;
      const next = await eventually(() => members.find((m) => m.leading));
      expect(next).not.toBe(first);
      // Acquire retries wait 200–440 ms; without the release the others would wait the whole 2 s lease.
      expect(next.startedAt! - released).toBeLessThan(800);
      const stored = await cluster.client.kind<Lease>('Lease').get(namespace, lease);
      expect(stored.spec).toMatchObject({ holderIdentity: next.identity, leaseTransitions: 1 });
    } finally {
      await stopAll(members);
    }
  });

  it('a leader whose renewals fail stops leading before anyone else can take over', async () => {
    const lease = `broken-${randomUUID().slice(0, 8)}`;
    const members = [0, 1, 2].map((i) => member(lease, i));
    try {
      const leader = await eventually(() => members.find((m) => m.leading));
      await sleep(300);
      const brokenAt = performance.now();
      leader.leases.broken = true;
      await leader.done; // run ends on its own after the renew deadline
      expect(leader.stoppedAt! - brokenAt).toBeLessThan(TIMING.renewDeadlineMs + 2 * TIMING.retryPeriodMs + 300);
      const next = await eventually(() => members.find((m) => m.leading), 5_000);
      expect(next).not.toBe(leader);
      expect(next.startedAt!).toBeGreaterThan(leader.stoppedAt!);
      const stored = await cluster.client.kind<Lease>('Lease').get(namespace, lease);
      expect(stored.spec).toMatchObject({ holderIdentity: next.identity, leaseTransitions: 1 });
    } finally {
      await stopAll(members);
    }
  });
});

describe('LeaseCandidate on the embedded control plane', () => {
  it('creates the candidate and answers a ping by renewing', async () => {
    const candidates = cluster.client.kind<LeaseCandidate>('LeaseCandidate');
    const name = `member_${randomUUID()}`;
    const candidate = new LeaseCandidateClient({
      candidates,
      namespace,
      name,
      leaseName: cluster.cp.registry.naming.controllerManager,
      binaryVersion: '1.33.0',
      emulationVersion: '1.33.0',
      strategy: 'OldestEmulationVersion',
    });
    candidate.start();
    try {
      const created = await eventually(() => candidates.get(namespace, name).catch(() => undefined));
      expect(candidate.hasSynced()).toBe(true);
      expect(created.spec).toMatchObject({
        leaseName: cluster.cp.registry.naming.controllerManager,
        binaryVersion: '1.33.0',
        emulationVersion: '1.33.0',
        strategy: 'OldestEmulationVersion',
      });
      const renewedAt = Date.parse(created.spec!.renewTime!);

      await sleep(20);
      const pingTime = rfc3339Micro(new Date());
      await candidates.replace({ ...created, spec: { ...created.spec!, pingTime } });
      const acked = await eventually(async () => {
        const c = await candidates.get(namespace, name);
        return Date.parse(c.spec!.renewTime!) > renewedAt ? c : undefined;
      }, 3_000);
      expect(Date.parse(acked.spec!.renewTime!)).toBeGreaterThanOrEqual(Date.parse(pingTime));
      expect(acked.spec!.pingTime).toBe(pingTime);
    } finally {
      await candidate.stop();
    }
  });
});
