/**
 * Sharded active-active replicas end to end: an embedded control plane serving `shardSelector` (gate
 * ShardedListAndWatch) with simulated nodes, and three real `orch-controller-manager --sharding` processes
 * (lease 10 s, renew deadline 5 s, retry 1 s) running the CSR approver and signer, the StatefulSet and the
 * disruption controllers. Checked:
 * - CSRs and namespaces each with a StatefulSet and a PDB all converge, and each replica's sharded caches
 *   (from its /debug/shards) hold a third of the objects, within ±25%;
 * - `kill -9` of one replica: its shards are held by the others within lease duration + 1 s, and new objects
 *   converge;
 * - SIGSTOP of one past its lease, then SIGCONT: from the audit log and the shard Leases' history, no replica
 *   wrote an object of a shard outside its own term of that shard (so none wrote one another replica held);
 * - a rolling restart of all three leaves no shard without a valid holder for longer than one lease duration.
 * The issue's full size (3,000 CSRs, 300 namespaces) runs with ORCH_SHARDING_E2E_FULL=1; the default is a tenth
 * of the CSRs and 45 namespaces, small enough for CI on a 2-core machine shared with other work. SHARDING_CSRS
 * and SHARDING_NAMESPACES set other counts. The figures printed at the end say, beside the timings, how much
 * each process waited for a CPU (Linux schedstat) around the takeover and around any write outside a term.
 */
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, WatchEvent } from '../src/api/meta.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import type { Lease } from '../src/api/types/coordination.ts';
import type { AuditEvent } from '../src/controlplane/audit.ts';
import { shardOf } from '../src/sharding/ranges.ts';
import { shardLeaseName } from '../src/sharding/shards.ts';
import { startSimulatedNodes } from '../src/simulation/nodes.ts';
import { auditEvents, identityOf } from './support/audit-log.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type Daemon, killAll, sleep, spawnDaemon, waitFor } from './support/daemons.ts';
import { freePort } from './support/free-port.ts';
import { type SchedSample, sampleScheduling, schedulingBetween } from './support/sched-sampler.ts';
import {
  createCsrs as createCsrsIn,
  createNamespaces as createNamespacesIn,
  diagnosticsGet,
  orchShards as orchShardsOf,
  orchShardsSteady,
  shardHolders,
  shardReport as shardReportOf,
  unconverged,
} from './support/sharding-workload.ts';

/**
 * Lease calls time out after renewDeadline / 2: 2.5 s, which a loaded 2-core machine needs at times. A write the
 * guard lets through reaches the server inside its term unless it spends more than lease − renewDeadline in
 * flight: with 3 s (lease 8 s), one run at load 17–20 had three writes of a struggling replica land 3+ s late.
 */
const LEASE_MS = 10_000;
const RENEW_DEADLINE_MS = 5_000;
const RETRY_MS = 1_000;
const SHARDS = 16;
const FULL = process.env.ORCH_SHARDING_E2E_FULL === '1';
const CSRS = Number(process.env.SHARDING_CSRS ?? (FULL ? 3_000 : 300));
const NAMESPACES = Number(process.env.SHARDING_NAMESPACES ?? (FULL ? 300 : 45));
const CONVERGE_MS = Number(process.env.SHARDING_CONVERGE_MS ?? (FULL ? 1_500_000 : 480_000));

let cluster: TestCluster;
const auditLogPath = join(tmpdir(), `orch-sharding-audit-${process.pid}-${Date.now()}.jsonl`);
const daemons: { d: Daemon; port: number }[] = [];
const figures: Record<string, unknown> = { csrs: CSRS, namespaces: NAMESPACES };
const stopHistory = new AbortController();
let history: Map<number, LeaseVersion>;
let sched: SchedSample[];

interface LeaseVersion {
  rv: number;
  shard: number;
  holder: string;
  /** Wall ms the record was written (its renewTime) and after which it is expired. */
  at: number;
  expires: number;
}

beforeAll(async () => {
  cluster = await startTestCluster({ auditLogPath, featureGates: { ShardedListAndWatch: true } });
  cluster.cp.attach(await startSimulatedNodes(cluster.cp, 3));
  history = recordShardHistory(stopHistory.signal);
  sched = sampleScheduling(
    () => [
      { name: 'plane', pid: process.pid },
      ...live().flatMap(({ d }) => (d.child.pid ? [{ name: d.name, pid: d.child.pid }] : [])),
    ],
    stopHistory.signal,
  );
}, 60_000);

afterAll(async () => {
  stopHistory.abort();
  await killAll(daemons.map((r) => r.d));
  // For a failure's post-mortem: every replica's log lines.
  const debugDir = process.env.SHARDING_DEBUG_DIR;
  if (debugDir) {
    const lines = daemons.flatMap(({ d }) => [
      ...d.lines.map((l) => JSON.stringify({ replica: d.name, ...l })),
      JSON.stringify({ replica: d.name, exit: d.exit }),
    ]);
    await writeFile(join(debugDir, 'sharding-replicas.jsonl'), lines.join('\n'));
    await writeFile(join(debugDir, 'sharding-sched.jsonl'), sched.map((s) => JSON.stringify(s)).join('\n'));
  }
  await cluster?.stop();
  await rm(auditLogPath, { force: true });
  console.log(`sharding figures: ${JSON.stringify(figures)}`);
});

const n = () => cluster.cp.registry.naming;

async function replica(): Promise<{ d: Daemon; port: number }> {
  const { certFile, keyFile } = cluster.cp.caFiles;
  const port = await freePort();
  const d = spawnDaemon(`cm-${daemons.length + 1}`, {
    kubeconfig: cluster.kubeconfig,
    leaseMs: LEASE_MS,
    renewDeadlineMs: RENEW_DEADLINE_MS,
    retryMs: RETRY_MS,
    controllers: 'csrapproving,csrsigning,statefulset,disruption',
    extraArgs: [
      '--sharding',
      `--shards=${SHARDS}`,
      `--cluster-signing-cert-file=${certFile}`,
      `--cluster-signing-key-file=${keyFile}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      `--client-ca-file=${certFile}`,
      ...(process.env.SHARDING_V ? [`--v=${process.env.SHARDING_V}`] : []),
    ],
  });
  const r = { d, port };
  daemons.push(r);
  return r;
}

/** Every version of every shard Lease, by resourceVersion, from a watch that resumes where it ended. */
function recordShardHistory(signal: AbortSignal): Map<number, LeaseVersion> {
  const leases = cluster.client.kind<Lease>('Lease');
  const names = new Map(Array.from({ length: SHARDS }, (_, i) => [shardLeaseName(n().shardLeasePrefix, i), i]));
  const versions = new Map<number, LeaseVersion>();
  let rv = '';
  const onEvent = (e: WatchEvent<Lease>) => {
    rv = e.object.metadata.resourceVersion ?? rv;
    const shard = names.get(e.object.metadata.name ?? '');
    if (shard === undefined || e.type === 'BOOKMARK') return;
    const spec = e.object.spec ?? {};
    const at = Date.parse(spec.renewTime ?? '');
    versions.set(Number(rv), {
      rv: Number(rv),
      shard,
      holder: spec.holderIdentity ?? '',
      at,
      expires: at + (spec.leaseDurationSeconds ?? 0) * 1000,
    });
  };
  void (async () => {
    rv = (await leases.list(n().systemNamespace)).metadata.resourceVersion ?? '';
    while (!signal.aborted) {
      await leases
        .watch(n().systemNamespace, { resourceVersion: rv, allowWatchBookmarks: true }, onEvent, signal)
        .catch(() => sleep(100));
    }
  })();
  return versions;
}

/** Each shard's holder while its Lease is valid, else `''`. */
const holders = () => shardHolders(cluster.client, n(), SHARDS);
const orchShards = (args: string[]) => orchShardsOf(cluster.dir, cluster.kubeconfig, args);

/** The replicas running now. */
const live = () => daemons.filter((r) => !r.d.exit);
/** Replicas the test stopped itself: the supervisor does not replace them. */
const killed = new Set<Daemon>();

/**
 * What systemd or a Deployment does: a replica that exits on its own (losing the leader Lease ends the process,
 * as in the reference; on a loaded machine a renewal can time out) is replaced.
 */
function supervise(): void {
  const replaced = new Set<Daemon>();
  const timer = setInterval(() => {
    for (const { d } of daemons) {
      if (!d.exit || killed.has(d) || replaced.has(d)) continue;
      replaced.add(d);
      figures.supervisorRestarts = ((figures.supervisorRestarts as number) ?? 0) + 1;
      void replica();
    }
  }, 500);
  stopHistory.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}

async function holding(r: { d: Daemon }): Promise<void> {
  await waitFor(
    `${r.d.name} to hold shards`,
    async () => ((await holders()).includes(r.d.identity ?? '-') ? true : undefined),
    120_000,
  );
}

/** GET on a replica's diagnostics server, as the admin or anonymously. */
const diagnostics = (r: { port: number }, path: string, asAdmin = true) =>
  diagnosticsGet(cluster.kc, r.port, path, { anonymous: !asAdmin });
const shardReport = (r: { port: number }) => shardReportOf(cluster.kc, r.port);

// ---------------------------------------------------------------------------------------------
// The workload

const createCsrs = (tag: string, count: number) => createCsrsIn(cluster.client, n(), tag, count);
const createNamespaces = (tag: string, count: number) => createNamespacesIn(cluster.client, tag, count);

async function converge(what: string): Promise<number> {
  const started = performance.now();
  let left: string[] = [];
  await waitFor(
    what,
    async () => {
      left = await unconverged(cluster.client);
      if (left.length) await sleep(500);
      return left.length ? undefined : true;
    },
    CONVERGE_MS,
  ).catch((err) => {
    throw new Error(`${err.message}; ${left.length} left, e.g. ${left.slice(0, 5).join(', ')}`);
  });
  return Math.round(performance.now() - started);
}

// ---------------------------------------------------------------------------------------------
// The audit

const readAudit = () => auditEvents(cluster, auditLogPath);

/**
 * The replicas' writes of sharded objects accepted outside the writer's term of the object's shard: the last
 * version of that shard's Lease below the write's resourceVersion must name the writer and not be expired when
 * the server accepted the write. CSR writes find their shard by the CSR's uid, the rest by namespace.
 */
async function writesOutsideTerm(uids: Map<string, string>): Promise<AuditEvent[]> {
  const versions = [...history.values()].sort((a, b) => a.rv - b.rv);
  const sharded = new Set(['certificatesigningrequests', 'pods', 'statefulsets', 'poddisruptionbudgets']);
  const writes = (await readAudit()).filter(
    (e) =>
      identityOf(e) &&
      !e.userAgent?.includes('/leader-election') &&
      sharded.has(e.objectRef.resource) &&
      e.responseStatus.code < 300 &&
      e.objectRef.resourceVersion,
  );
  figures.auditedWrites = writes.length;
  const details: Record<string, unknown>[] = [];
  const outside = writes.filter((w) => {
    const key =
      w.objectRef.resource === 'certificatesigningrequests' ? uids.get(w.objectRef.name ?? '') : w.objectRef.namespace;
    if (key === undefined) return true;
    const shard = shardOf(key, SHARDS);
    const rv = Number(w.objectRef.resourceVersion);
    const lease = versions.filter((v) => v.shard === shard && v.rv < rv).at(-1);
    const bad = !lease || lease.holder !== identityOf(w) || Date.parse(w.stageTimestamp) >= lease.expires;
    if (bad && lease) details.push(lateWrite(w, lease));
    return bad;
  });
  figures.outsideDetails = details;
  return outside;
}

/**
 * Where a late write's time went: from the writer's last renewal (renewTime) to the server receiving the write
 * (the guard let it go at most renewDeadline after the renewal was sent), and from there to its commit.
 */
function lateWrite(w: AuditEvent, lease: LeaseVersion): Record<string, unknown> {
  const received = Date.parse(w.requestReceivedTimestamp);
  const staged = Date.parse(w.stageTimestamp);
  const writer = daemons.find((r) => r.d.identity === identityOf(w))?.d.name;
  const cpu = schedulingBetween(sched, lease.at, staged);
  return {
    writer,
    write: `${w.verb} ${w.requestURI}`,
    leaseHolder: daemons.find((r) => r.d.identity === lease.holder)?.d.name ?? lease.holder,
    receivedAfterRenewMs: received - lease.at,
    committedAfterReceivedMs: staged - received,
    lateMs: staged - lease.expires,
    cpu: Object.fromEntries(Object.entries(cpu).filter(([name]) => name === writer || name === 'plane')),
  };
}

/**
 * Where a takeover's time went, from the Leases' history: per shard the victim's last renewal (its renewTime)
 * and the new holder's acquisition, relative to the kill; and how much each process waited for a CPU meanwhile.
 */
function takeoverDetail(victim: string, shards: number[], killedWall: number): Record<string, unknown> {
  const perShard = shards.map((shard) => {
    const vs = [...history.values()].filter((v) => v.shard === shard).sort((a, b) => a.rv - b.rv);
    const last = vs.filter((v) => v.holder === victim && v.at <= killedWall).at(-1);
    const next = vs.find((v) => last && v.rv > last.rv && v.holder && v.holder !== victim);
    return {
      shard,
      lastRenewBeforeKillMs: last ? killedWall - last.at : undefined,
      acquiredAfterKillMs: next ? next.at - killedWall : undefined,
      acquiredAfterLastRenewMs: last && next ? next.at - last.at : undefined,
    };
  });
  const worst = Math.max(...perShard.map((p) => p.acquiredAfterLastRenewMs ?? Number.POSITIVE_INFINITY));
  return {
    worstAfterLastRenewMs: worst,
    perShard,
    cpu: schedulingBetween(sched, killedWall - 2_000, killedWall + LEASE_MS + 2_000),
  };
}

/** The longest time any shard went without a valid holder between `fromWall` and `toWall`, from the history. */
function longestGap(fromWall: number, toWall: number): { ms: number; shard: number; from: number } {
  let worst = { ms: 0, shard: -1, from: 0 };
  for (let shard = 0; shard < SHARDS; shard++) {
    // Walk the versions: a holder's term runs until its expiry, or until it releases the Lease (holder '').
    let coveredUntil = fromWall;
    for (const v of versionsOf(shard)) {
      if (v.at > toWall) break;
      if (!v.holder) coveredUntil = Math.max(fromWall, Math.min(coveredUntil, v.at));
      else if (v.expires > fromWall) {
        if (v.at - coveredUntil > worst.ms) worst = { ms: Math.round(v.at - coveredUntil), shard, from: coveredUntil };
        coveredUntil = Math.max(coveredUntil, v.expires);
      }
    }
  }
  return worst;
}

const versionsOf = (shard: number) =>
  [...history.values()].filter((v) => v.shard === shard).sort((a, b) => a.rv - b.rv);

/**
 * For a post-mortem of a gap: its shard's Lease versions and the replicas' writes of that Lease from 5 s before it
 * to its end (replicas by name, times relative to the gap's start), and how long each process waited for a CPU.
 */
async function gapDetail(gap: { ms: number; shard: number; from: number }): Promise<Record<string, unknown>> {
  const name = (identity = '') => daemons.find((r) => r.d.identity === identity)?.d.name ?? identity;
  const within = (wall: number) => wall >= gap.from - 5_000 && wall <= gap.from + gap.ms;
  const lease = shardLeaseName(n().shardLeasePrefix, gap.shard);
  const writes = (await readAudit()).filter(
    (e) => e.objectRef.name === lease && e.verb !== 'get' && within(Date.parse(e.stageTimestamp)),
  );
  return {
    shard: gap.shard,
    versions: versionsOf(gap.shard)
      .filter((v) => within(v.at))
      .map((v) => ({ holder: name(v.holder), atMs: v.at - gap.from, seconds: (v.expires - v.at) / 1000 })),
    writes: writes.map((e) => ({
      by: name(identityOf(e)),
      verb: e.verb,
      code: e.responseStatus.code,
      receivedMs: Date.parse(e.requestReceivedTimestamp) - gap.from,
      committedMs: Date.parse(e.stageTimestamp) - gap.from,
      // Whether the history's watch saw the version this write made.
      seen: history.has(Number(e.objectRef.resourceVersion)),
    })),
    cpu: schedulingBetween(sched, gap.from - 2_000, gap.from + gap.ms),
  };
}

describe('sharded replicas', () => {
  // The measured limits (shares, takeover, rolling gap) are soft: a long run goes on to report every figure.
  it('split the work, fail over within a lease, fence paused replicas, and survive a rolling restart', {
    timeout: FULL ? 3_600_000 : 900_000,
  }, async () => {
    supervise();
    await Promise.all([createCsrs('csr', CSRS), createNamespaces('ns', NAMESPACES)]);
    const startedAt = performance.now();
    await Promise.all([replica(), replica(), replica()]);
    figures.convergeMs = await converge('the first workload to converge');
    figures.startToConvergeMs = Math.round(performance.now() - startedAt);

    // Each replica holds a share of the shards and a third of the objects, within ±25%.
    await waitFor(
      'the shards to balance',
      async () => {
        const h = await holders();
        const counts = live().map((r) => h.filter((x) => x === r.d.identity).length);
        return counts.length === 3 && counts.every((c) => c >= 5 && c <= 6) && h.every(Boolean) ? true : undefined;
      },
      90_000,
    );
    await sleep(2_000); // the last rebuild's caches
    const balanced = live();
    const reports = await Promise.all(balanced.map(shardReport));
    // Every sharded cache: the CSRs by uid, and each namespaced kind (sets, budgets, pods, revisions).
    const shares: Record<string, number[]> = {};
    for (const name of new Set(reports.flatMap((r) => Object.keys(r.cached)))) {
      shares[name.split('.')[0]] = reports.map((r) => r.cached[name] ?? 0);
    }
    const totals: Record<string, number> = {
      certificatesigningrequests: CSRS,
      statefulsets: NAMESPACES,
      poddisruptionbudgets: NAMESPACES,
    };
    figures.cacheShares = shares;
    // The same shards in statusz; /debug/shards is authorized as the other debug paths.
    const statusz = await diagnostics(balanced[0], '/statusz');
    const held = reports[0].held.map((h) => `${h.shard} (since ${h.since})`).join(', ');
    expect(statusz.body).toContain(`Shards held: ${held} of ${SHARDS}`);
    expect((await diagnostics(balanced[0], '/debug/shards', false)).status).toBe(401);
    // The caches' JSON size only when asked: it serializes every cached object.
    expect(reports[0].cachedBytes).toBeUndefined();
    const sized = await shardReportOf(cluster.kc, balanced[0].port, true);
    expect(Object.keys(sized.cachedBytes ?? {}).sort()).toEqual(Object.keys(sized.cached).sort());
    figures.shardsHeld = reports.map((r) => r.held.length);
    for (const kind of Object.keys(totals)) expect(shares[kind], `${kind} cached`).toBeDefined();
    for (const [kind, counts] of Object.entries(shares)) {
      const sum = counts.reduce((a, b) => a + b, 0);
      if (kind in totals) expect(sum, `${kind} cached once in all`).toBe(totals[kind]);
      if (sum === 0) continue;
      // ±25% of a third at the full size. Below it two things widen it: a replica's share of whole shards
      // (6 of 16 is a third + 12.5%) and a third's own sampling spread (3σ) over the keys hashed: each CSR by its
      // uid, but every namespaced kind by namespace, however many objects a namespace holds.
      const keys = kind === 'certificatesigningrequests' ? CSRS : NAMESPACES;
      const quantized = (Math.ceil(SHARDS / 3) / SHARDS) * 3 - 1;
      const tolerance = FULL ? 0.25 : Math.max(0.25, quantized + 3 * Math.sqrt(2 / keys));
      for (const c of counts) {
        expect.soft(Math.abs(c / sum - 1 / 3) * 3, `${kind} shares ${counts}`).toBeLessThanOrEqual(tolerance);
      }
    }

    // `kubectl orch shards`: the same map from the Leases, one row per shard; --no-headers drops the header.
    const { lines, holders: recorded } = await orchShardsSteady(cluster.client, n(), SHARDS, cluster, []);
    expect(lines[0].split(/\s+/)).toEqual(['SHARD', 'RANGE', 'HOLDER', 'RENEWED']);
    expect(lines).toHaveLength(SHARDS + 1);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[2])).toEqual(recorded);
    expect((await orchShards(['--no-headers'])).trimEnd().split('\n')).toHaveLength(SHARDS);

    // kill -9: its shards are held by the others within lease duration + 1 s.
    const victim = balanced[0].d;
    killed.add(victim);
    const its = (await holders()).flatMap((h, i) => (h === victim.identity ? [i] : []));
    const killedAt = performance.now();
    const killedWall = Date.now();
    victim.child.kill('SIGKILL');
    await waitFor(
      'the killed replica’s shards taken over',
      async () => {
        const h = await holders();
        return its.every((i) => h[i] && h[i] !== victim.identity) ? true : undefined;
      },
      LEASE_MS * 4,
    );
    figures.takeoverMs = Math.round(performance.now() - killedAt);
    expect.soft(figures.takeoverMs).toBeLessThanOrEqual(LEASE_MS + 1_000);
    // The survivors count the takeovers and the shards they hold in their metrics.
    const metric = (text: string, name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    const others = live();
    const survivors = await Promise.all(others.map((r) => diagnostics(r, '/metrics')));
    const p = n().metricPrefix;
    const takeovers = survivors.map((m) => metric(m.body, `${p}_shard_handovers_total\\{reason="takeover"\\}`));
    expect(takeovers.reduce((a, b) => a + (b || 0), 0)).toBeGreaterThanOrEqual(its.length);
    const heldNow = await holders();
    others.forEach((r, k) => {
      const count = heldNow.filter((h) => h === r.d.identity).length;
      expect(metric(survivors[k].body, `${p}_shards_held`), `${r.d.name} shards held`).toBe(count);
    });
    await Promise.all([createCsrs('after-kill', 30), createNamespaces('after-kill', 3)]);
    figures.convergeAfterKillMs = await converge('the workload to converge after a kill -9');

    // SIGSTOP past the lease, then SIGCONT: it must write nothing for the shards it lost.
    const second = await replica();
    await holding(second);
    const paused = live()[0].d;
    paused.child.kill('SIGSTOP');
    await sleep(LEASE_MS + 2_000);
    await Promise.all([createCsrs('while-paused', 30), createNamespaces('while-paused', 3)]);
    paused.child.kill('SIGCONT');
    figures.convergeAfterPauseMs = await converge('the workload to converge after a pause');
    await sleep(2 * LEASE_MS);

    // A rolling restart: SIGTERM one at a time, its replacement started once it has gone.
    const rollFrom = Date.now();
    for (const r of live()) {
      killed.add(r.d);
      r.d.child.kill('SIGTERM');
      await r.d.exited;
      await holding(await replica());
    }
    await sleep(LEASE_MS);
    const gap = longestGap(rollFrom, Date.now());
    figures.rollingLongestGapMs = gap.ms;
    if (gap.shard >= 0) figures.rollingGap = await gapDetail(gap);
    expect.soft(figures.rollingLongestGapMs).toBeLessThanOrEqual(LEASE_MS);
    await Promise.all([createCsrs('after-roll', 30), createNamespaces('after-roll', 3)]);
    figures.convergeAfterRollMs = await converge('the workload to converge after the rolling restart');

    // The takeover's detail from the Leases' history, complete by now.
    figures.takeover = takeoverDetail(victim.identity ?? '', its, killedWall);
    // No replica wrote an object of a shard outside its own term of that shard.
    const csrs = await cluster.client.kind<CertificateSigningRequest>('CertificateSigningRequest').listAll();
    const uids = new Map(csrs.items.map((c: KubeObject) => [c.metadata.name ?? '', c.metadata.uid ?? '']));
    const outside = await writesOutsideTerm(uids);
    expect(
      outside.map((w) => `${identityOf(w)} ${w.verb} ${w.requestURI} @${w.stageTimestamp}`),
      'writes outside the writer’s shard term',
    ).toEqual([]);
  });
});
