/**
 * Fencing under chaos: three `orch-controller-manager` replicas (lease 3 s, renew deadline 2 s, retry 0.5 s)
 * approve and sign node client CSRs that simulated node agents keep creating, while the leader is SIGKILLed
 * or SIGSTOPped (and SIGCONTed after another replica took over) again and again. The control plane's audit
 * log attributes every write to a replica (its identity is in the user agent); the Lease's history comes
 * from a watch. Checked: every write a replica made was accepted while the Lease named it as holder and had
 * not expired (placed by resourceVersion, or by time for writes that store nothing); every CSR was approved
 * once and signed once; every node agent got its certificate; a resumed leader exits 1 having written nothing.
 */
import { copyFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WatchEvent } from '../src/api/meta.ts';
import { DAEMON_NAME } from '../src/api/naming.ts';
import type { Lease } from '../src/api/types/coordination.ts';
import type { AuditEvent } from '../src/controlplane/audit.ts';
import { createBootstrapToken } from '../src/simulation/bootstrap-token.ts';
import { SimulatedNodeAgent } from '../src/simulation/node-agent.ts';
import { auditEvents, identityOf } from './support/audit-log.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { campaigning, type Daemon, killAll, logged, sleep, spawnDaemon, waitFor } from './support/daemons.ts';

/**
 * The guard lets a write through up to RENEW_DEADLINE_MS after the last renewal was sent; it reaches the server
 * inside the term unless it spends more than LEASE_MS − RENEW_DEADLINE_MS in flight. With a 1 s margin, one run of
 * the full suite (both cores busy) recorded a resumed leader's SubjectAccessReview outside its term; 2 s is kept.
 */
const LEASE_MS = 4_000;
const RENEW_DEADLINE_MS = 2_000;
const RETRY_MS = 500;
/** Leader faults: SIGKILL and SIGSTOP/SIGCONT alternately. */
const EPISODES = 6;
const AGENT_LOOPS = 2;
/** Between one agent's certificate and the next agent's request. */
const JOIN_INTERVAL_MS = 250;

let cluster: TestCluster;
const auditLogPath = join(tmpdir(), `orch-chaos-audit-${process.pid}-${Date.now()}.jsonl`);
const daemons: Daemon[] = [];
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  cluster = await startTestCluster({ auditLogPath });
});

afterAll(async () => {
  await killAll(daemons);
  await cluster?.stop();
  // For a failure's post-mortem: the audit log and every replica's log lines.
  const debugDir = process.env.CHAOS_DEBUG_DIR;
  if (debugDir) {
    await copyFile(auditLogPath, join(debugDir, 'chaos-audit.jsonl'));
    const lines = daemons.flatMap((d) => d.lines.map((l) => JSON.stringify({ replica: d.name, ...l })));
    await writeFile(join(debugDir, 'chaos-replicas.jsonl'), lines.join('\n'));
  }
  await rm(auditLogPath, { force: true });
  console.log(`HA chaos figures: ${JSON.stringify(figures)}`);
});

function replica(): Daemon {
  const { certFile, keyFile } = cluster.cp.caFiles;
  const d = spawnDaemon(`cm-${daemons.length + 1}`, {
    kubeconfig: cluster.kubeconfig,
    leaseMs: LEASE_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryMs: RETRY_MS,
    controllers: 'csrapproving,csrsigning',
    extraArgs: [`--cluster-signing-cert-file=${certFile}`, `--cluster-signing-key-file=${keyFile}`],
  });
  daemons.push(d);
  return d;
}

interface LeaseVersion {
  rv: number;
  holder: string;
  /** Wall ms after which the record is expired. */
  expires: number;
}

/** Every version of the controller-manager Lease, by resourceVersion, from a watch that resumes where it ended. */
function recordLeaseHistory(signal: AbortSignal): Map<number, LeaseVersion> {
  const n = cluster.cp.registry.naming;
  const leases = cluster.client.kind<Lease>('Lease');
  const versions = new Map<number, LeaseVersion>();
  let rv = '';
  const onEvent = (e: WatchEvent<Lease>) => {
    const lease = e.object;
    rv = lease.metadata.resourceVersion ?? rv;
    if (lease.metadata.name !== DAEMON_NAME || e.type === 'BOOKMARK') return;
    const spec = lease.spec ?? {};
    versions.set(Number(rv), {
      rv: Number(rv),
      holder: spec.holderIdentity ?? '',
      expires: Date.parse(spec.renewTime ?? '') + (spec.leaseDurationSeconds ?? 0) * 1000,
    });
  };
  void (async () => {
    rv = (await leases.list(n.systemNamespace)).metadata.resourceVersion ?? '';
    while (!signal.aborted) {
      await leases
        .watch(n.systemNamespace, { resourceVersion: rv, allowWatchBookmarks: true }, onEvent, signal)
        .catch(() => sleep(100));
    }
  })();
  return versions;
}

/** A node agent joining with the bootstrap token, again and again, until `signal` aborts. */
async function agentLoop(id: number, token: string, signal: AbortSignal, outcomes: boolean[]): Promise<void> {
  for (let k = 0; !signal.aborted; k++) {
    const agent = new SimulatedNodeAgent({
      server: cluster.cp.url,
      caPem: cluster.cp.caPem,
      registry: cluster.cp.registry,
      nodeName: `chaos-${id}-${k}`,
      bootstrapToken: token,
      expirationSeconds: 3600,
      timeoutMs: 90_000,
    });
    outcomes.push((await agent.bootstrap()).issued);
    await sleep(JOIN_INTERVAL_MS);
  }
}

const succeeded = (e: AuditEvent) => e.responseStatus.code < 300;

const readAudit = () => auditEvents(cluster, auditLogPath);

/**
 * The writes accepted outside their author's term. A write that produced a resourceVersion is placed after
 * the last Lease version below it; one that stored nothing (an access review) after the last Lease write
 * the server had finished when it finished. Either way the Lease must name the author and not be expired
 * when the server accepted the write.
 */
function outsideTerm(writes: AuditEvent[], leaseWrites: AuditEvent[], history: Map<number, LeaseVersion>) {
  const versions = [...history.values()].sort((a, b) => a.rv - b.rv);
  const byTime = leaseWrites.map((e) => ({
    at: Date.parse(e.stageTimestamp),
    v: history.get(Number(e.objectRef.resourceVersion)),
  }));
  return writes.filter((w) => {
    const at = Date.parse(w.stageTimestamp);
    const rv = Number(w.objectRef.resourceVersion ?? Number.NaN);
    const lease = Number.isNaN(rv)
      ? byTime.filter((l) => l.at <= at).at(-1)?.v
      : versions.filter((v) => v.rv < rv).at(-1);
    return !lease || lease.holder !== identityOf(w) || at >= lease.expires;
  });
}

/** How many of `events` touch each object name. */
function perName(events: AuditEvent[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.objectRef.name ?? '', (counts.get(e.objectRef.name ?? '') ?? 0) + 1);
  return counts;
}

/** Live replicas other than `leader` that are campaigning. */
function standbys(leader: Daemon): Daemon[] {
  return daemons.filter((d) => d !== leader && !d.exit && logged(d, 'attempting to acquire leader lease'));
}

async function holder(): Promise<Daemon | undefined> {
  const n = cluster.cp.registry.naming;
  const lease = await cluster.client
    .kind<Lease>('Lease')
    .get(n.systemNamespace, DAEMON_NAME)
    .catch(() => undefined);
  const id = lease?.spec?.holderIdentity;
  return daemons.find((d) => d.identity === id && !d.exit);
}

/** The live replica the Lease names, once it has been leading (its controllers started) for `ms`. */
async function settledLeader(except: Daemon | undefined, ms: number): Promise<Daemon> {
  const leader = await waitFor(
    'a new leader',
    async () => {
      const h = await holder();
      return h && h !== except && h.lines.some((l) => l.msg === 'controllers started') ? h : undefined;
    },
    30_000,
  );
  await sleep(ms);
  return leader;
}

describe('fencing of a deposed leader', () => {
  it('lets no replica write outside its term while leaders are killed and paused under CSR load', {
    timeout: 240_000,
  }, async () => {
    const startedAt = performance.now();
    const stopHistory = new AbortController();
    const history = recordLeaseHistory(stopHistory.signal);
    const first = [replica(), replica(), replica()];
    await Promise.all(first.map((d) => campaigning(d, 60_000)));
    const { token } = await createBootstrapToken(cluster.client, { ttlMs: 3600_000 });
    const stopLoad = new AbortController();
    const outcomes: boolean[] = [];
    const load = Promise.all(
      Array.from({ length: AGENT_LOOPS }, (_, i) => agentLoop(i, token, stopLoad.signal, outcomes)),
    );

    const handovers: number[] = [];
    const paused: Daemon[] = [];
    let leader = await settledLeader(undefined, 1_000);
    for (let episode = 0; episode < EPISODES; episode++) {
      // A standby ready, so a handover is measured, not a replacement's start-up (which takes tens of
      // seconds on a loaded machine: replacements join when they are up).
      await waitFor('a standby', () => (standbys(leader).length > 0 ? true : undefined), 90_000);
      const faultAt = performance.now();
      if (episode % 2 === 0) {
        leader.child.kill('SIGKILL');
        replica();
        const next = await settledLeader(leader, 0);
        handovers.push(Math.round(performance.now() - faultAt));
        leader = next;
      } else {
        // Paused past its lease: another replica takes over, then the old leader resumes with stale state.
        leader.child.kill('SIGSTOP');
        paused.push(leader);
        const next = await settledLeader(leader, 0);
        handovers.push(Math.round(performance.now() - faultAt));
        await sleep(1_000); // the new leader at work while the old one is still stopped
        leader.child.kill('SIGCONT');
        replica();
        await Promise.race([leader.exited, sleep(15_000)]);
        leader = next;
      }
      await sleep(1_000);
    }
    stopLoad.abort();
    await load;

    // Every resumed leader stepped down with exit 1.
    for (const d of paused) expect(d.exit, `${d.name} after SIGCONT`).toMatchObject({ code: 1, signal: null });

    const events = await readAudit();
    const identities = new Set(daemons.map((d) => d.identity).filter((id) => id !== undefined));
    const electionResources = new Set(['leases', 'leasecandidates']);
    const byReplicas = events.filter((e) => identities.has(identityOf(e) ?? '') && succeeded(e));
    const leaseWrites = byReplicas.filter((e) => e.objectRef.resource === 'leases');
    const writes = byReplicas.filter((e) => !electionResources.has(e.objectRef.resource));
    // The watch sees every Lease version a replica wrote, so the history is complete.
    const unseen = () => leaseWrites.filter((e) => !history.has(Number(e.objectRef.resourceVersion)));
    await waitFor('the Lease history', () => (unseen().length === 0 ? true : undefined), 10_000).catch(() => {});
    stopHistory.abort();
    const violations = outsideTerm(writes, leaseWrites, history);
    const csrWrites = (sub: string) =>
      byReplicas.filter(
        (e) => e.objectRef.resource === 'certificatesigningrequests' && e.objectRef.subresource === sub,
      );
    const created = events.filter(
      (e) => e.objectRef.resource === 'certificatesigningrequests' && e.verb === 'create' && succeeded(e),
    );
    const createdNames = created.map((e) => e.objectRef.name).sort();
    const approvals = perName(csrWrites('approval'));
    const signings = perName(csrWrites('status'));
    const twice = (counts: Map<string, number>) => [...counts.values()].filter((n) => n > 1).length;
    const refused = (d: Daemon) => d.lines.filter((l) => JSON.stringify(l).includes('refusing ')).length;
    Object.assign(figures, {
      episodes: EPISODES,
      chaosSeconds: Math.round((performance.now() - startedAt) / 1000),
      handoverMs: handovers,
      csrs: created.length,
      issuedToAgents: outcomes.filter(Boolean).length,
      replicaWrites: writes.length,
      leaseVersions: history.size,
      writesOutsideTerm: violations.length,
      approvedTwice: twice(approvals),
      signedTwice: twice(signings),
      refusedByResumedLeaders: paused.map(refused),
    });

    expect(unseen()).toEqual([]);
    expect(
      violations.map(
        (e) => `${e.stageTimestamp} ${identityOf(e)} ${e.verb} ${e.requestURI} rv=${e.objectRef.resourceVersion}`,
      ),
    ).toEqual([]);
    // Each CSR the agents created was approved once and signed once, and every agent got its certificate.
    expect(createdNames.length).toBe(outcomes.length);
    expect([...approvals.keys()].sort()).toEqual(createdNames);
    expect([...signings.keys()].sort()).toEqual(createdNames);
    expect(twice(approvals) + twice(signings)).toBe(0);
    expect(outcomes.every(Boolean)).toBe(true);
  });
});
