/**
 * `npm run bench -- kcm`: our daemon against kube-controller-manager (KCM) on one real cluster
 * (test/cluster/local-cluster.ts: etcd, kube-apiserver, kube-scheduler, kwok nodes, and a KCM running every
 * controller but ours). The peer is a second KCM with `--controllers` naming only the controllers we implement
 * (OUR_KCM_CONTROLLERS) and the signing CA's files; ours is `bin/orch-controller-manager.js --kubeconfig` with the
 * same controllers and CA. Both with `--use-service-account-credentials=true` (as kubeadm deploys KCM): each
 * controller authenticates with its own service account's token, not the admin certificate. Only one of the two
 * runs at a time. Each round runs the same session with each side, the side going first alternating by round;
 * every figure is printed as ours ÷ KCM, the median of the paired rounds' ratios with their range (never best-of).
 * Sessions run once per client QPS setting: the default 20/30 (`--kube-api-qps --kube-api-burst` on both), and
 * limits lifted (KCM `--kube-api-qps=-1`: client-go makes no rate limiter for a negative QPS; ours
 * `--kube-api-qps=0`, the same in our client).
 *
 * A session, per side, timed as the bench client sees it (a watch), the client unthrottled (`qps: 0`):
 * - start: spawn → a CSR created beforehand issued (the first reconcile), with the budgets' pods in the cache, and
 *   the process's CPU seconds by then (less moved by other load than the time);
 * - with the start, the CSRs and the full resync, kube-apiserver's CPU over the same span (from /proc): what the
 *   side's lists, watches and requests cost the server, which shares the machine's cores with the side;
 * - CSRs (node client, signer kube-apiserver-client-kubelet) created 16 in flight, approved and issued, per
 *   second, and the process's CPU per CSR from its start: with an RSA-2048 CA, then (the process restarted with
 *   the other CA) an ECDSA P-256 one;
 * - PDB status latency: readiness flips (status writes of pods that kwok never makes Ready itself) by WRITERS
 *   clients, one in flight each, from the write's acknowledgement to the watch event of the budget's
 *   `currentHealthy` showing it, p50 and p99, while other budgets' pods are deleted and created (churn);
 * - StatefulSets (Parallel, maxUnavailable 10%): one of BIG replicas from creation to all Ready, SETS sets of
 *   SET_SIZE, and the big one's rolling update to all Ready at the new revision. Pods are pinned to kwok nodes
 *   by the template's nodeName: the scheduler (its own 50 QPS) would otherwise cap both sides alike;
 * - full resync: the process restarted over everything at once (the budgets, the sets' pods), its CPU seconds
 *   from spawn to idle (< 2% of a core over 2 s) and its peak RSS (VmHWM) then; and the peak RSS of the process
 *   that ran the workloads. Both from /proc.
 * Leader failover, default QPS only: two replicas with the same lease timings, the first elected, then SIGKILLed;
 * the time to the Lease's new holder, and to a CSR created at the kill being issued.
 *
 * Knobs (environment): KCM_BENCH_ROUNDS (3), KCM_BENCH_QPS (`default,lifted`), KCM_BENCH_CSRS (500),
 * KCM_BENCH_BIG (1000), KCM_BENCH_SETS (100), KCM_BENCH_SET_SIZE (10), KCM_BENCH_PDBS (2000), KCM_BENCH_PODS_PER_PDB
 * (10: the 2k budgets over 20k pods), KCM_BENCH_PDB_NAMESPACES (1; more spreads the budgets and their pods
 * over that many), KCM_BENCH_FLIPS (per writer, 20), KCM_BENCH_FAILOVER (rounds, 3; 0 skips),
 * KCM_BENCH_PROFILE=<dir> (ours under `node --cpu-prof`, one profile per process, written at its exit; the sampler's
 * own ~5% of a core keeps a process from ever counting as idle, so a full session's resync times out),
 * KCM_BENCH_ONLY=start (each session only the starts, one per CA, each process stopped once its CSR is issued:
 * with KCM_BENCH_PROFILE, a profile of spawn → first CSR issued), KCM_BENCH_ONLY=csr (each session only starts and
 * rates CSRs: no budgets seeded, no flips, sets or resync), KCM_BENCH_ONLY=sets (each session only the start with
 * the first CA and the StatefulSet workloads, with the process's CPU seconds over them: no budgets, CSR rates, flips
 * or resync), KCM_BENCH_NODE_ARGS (more node flags for ours,
 * space-separated: e.g. `--heap-prof`, a `--require` of a probe).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runningStatus } from '../controllers/disruption/harness.ts';
import type { KubeObject } from '../src/api/meta.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import type { StatefulSet } from '../src/api/types/apps.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import type { Pod } from '../src/api/types/core.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import { KubeClient } from '../src/client/client.ts';
import { isNotFound } from '../src/client/errors.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { createSelfSignedCa } from '../src/pki/certs.ts';
import type { KeyAlgorithm } from '../src/pki/keys.ts';
import { type LocalCluster, OUR_KCM_CONTROLLERS, startLocalCluster } from '../test/cluster/local-cluster.ts';
import { ROOT } from '../test/support/daemons.ts';
import { parallelSet, rolledOut } from '../test/support/statefulsets.ts';
import { builtBinary } from '../tools/k8s/binaries.ts';
import { inParallel, machine, type Paired, printPaired, type Round, watchUntil } from './run.ts';
import { nodeClientRequestPems } from './support/csr-pems.ts';
import { type ProcSample, procSample } from './support/proc.ts';

const knob = (name: string, fallback: number) => Number(process.env[`KCM_BENCH_${name}`] ?? fallback);
const ROUNDS = knob('ROUNDS', 3);
const CSRS = knob('CSRS', 500);
const BIG = knob('BIG', 1000);
const SETS = knob('SETS', 100);
const SET_SIZE = knob('SET_SIZE', 10);
const PDBS = knob('PDBS', 2000);
const PODS_PER_PDB = knob('PODS_PER_PDB', 10);
const PDB_NAMESPACES = knob('PDB_NAMESPACES', 1);
const FLIPS = knob('FLIPS', 20);
const FAILOVER_ROUNDS = knob('FAILOVER', 3);
const PROFILE_DIR = process.env.KCM_BENCH_PROFILE;
const NODE_ARGS = (process.env.KCM_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const QPS_WANTED = (process.env.KCM_BENCH_QPS ?? 'default,lifted').split(',');
const ONLY = process.env.KCM_BENCH_ONLY;
if (ONLY !== undefined && ONLY !== 'start' && ONLY !== 'csr' && ONLY !== 'sets') {
  throw new Error(`KCM_BENCH_ONLY: unknown part ${ONLY} (start, csr, sets)`);
}

const NODES = 4;
const WRITERS = 5;
const CSR_IN_FLIGHT = 16;
/** Budgets whose pods are deleted and recreated while the flips are timed: the churn. */
const CHURN_PDBS = Math.max(1, Math.floor(PDBS / 10));
const CHURN_PER_SECOND = 10;
const TIMEOUT_MS = 600_000;
const STOP_TIMEOUT_MS = 15_000;
/** Idle: less than this share of a core over IDLE_WINDOW_MS. */
const IDLE_SHARE = 0.02;
const IDLE_WINDOW_MS = 2_000;
/** The same lease timings for both sides' failover (KCM's validation: lease > renew > 1.2 × retry). */
const LEASE = { duration: '4s', renew: '3s', retry: '1s' };
/**
 * Both sides' environment: the bench's without NODE_EXTRA_CA_CERTS, which a deployed daemon does not have (it trusts
 * its kubeconfig's CA) and KCM does not read. The dev machines set it to their system bundle of 144 CAs: node then
 * parses those and its own ~140 at every start, before any code of ours runs (56 ms there); without it, only its own,
 * at the first TLS connection (20–30 ms).
 */
const { NODE_EXTRA_CA_CERTS: machineCas, ...SIDE_ENV } = process.env;

const STS_NS = 'bench-sts';
const PDB_NS = 'bench-pdb';
/** Budget g's namespace (with its pods): `bench-pdb`, or with several, `bench-pdb-<g mod PDB_NAMESPACES>`. */
const pdbNamespace = (g: number) => (PDB_NAMESPACES === 1 ? PDB_NS : `${PDB_NS}-${g % PDB_NAMESPACES}`);
/** Where the budgets are listed and watched: their one namespace, or every namespace (then filtered). */
const PDB_SCOPE = PDB_NAMESPACES === 1 ? PDB_NS : undefined;
/** Whether an object is in one of the budgets' namespaces: a budget or one of their pods. */
const ofBudgets = (o: KubeObject) => o.metadata.namespace?.startsWith(PDB_NS) ?? false;
const SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

type Side = 'ours' | 'kcm';
interface QpsSetting {
  name: string;
  kcm: string[];
  ours: string[];
}
const QPS: Record<string, QpsSetting> = {
  default: {
    name: 'client QPS 20, burst 30 (the default; a limiter per controller on both sides)',
    kcm: ['--kube-api-qps=20', '--kube-api-burst=30'],
    ours: ['--kube-api-qps=20', '--kube-api-burst=30'],
  },
  lifted: {
    name: 'client rate limits lifted (KCM --kube-api-qps=-1, ours --kube-api-qps=0)',
    kcm: ['--kube-api-qps=-1', '--kube-api-burst=100000'],
    ours: ['--kube-api-qps=0', '--kube-api-burst=100000'],
  },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (since: number) => (performance.now() - since) / 1000;

interface Ca {
  alg: KeyAlgorithm;
  certFile: string;
  keyFile: string;
}

/** One controller-manager process of either side, its output in a log file. */
class Controller {
  readonly spawnedAt = performance.now();
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;

  constructor(
    readonly side: Side,
    binary: string,
    args: string[],
    logFile: string,
  ) {
    this.child = spawn(binary, args, { cwd: ROOT, env: SIDE_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = createWriteStream(logFile);
    this.child.stdout!.pipe(out);
    this.child.stderr!.pipe(out);
    this.exited = new Promise((resolve) => this.child.on('close', () => resolve()));
  }

  get pid(): number {
    return this.child.pid!;
  }

  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  sample(): ProcSample {
    const s = procSample(this.pid);
    if (!s || !this.alive()) throw new Error(`${this.side} (pid ${this.pid}) has exited: see its log`);
    return s;
  }

  /** SIGTERM (SIGKILL after a while); its last sample, taken just before. */
  async stop(): Promise<ProcSample | undefined> {
    const last = procSample(this.pid);
    if (this.alive()) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
    }
    return last;
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Resolves with the CPU seconds since spawn once the process has been idle for IDLE_WINDOW_MS. */
  async idle(): Promise<ProcSample> {
    const deadline = performance.now() + TIMEOUT_MS;
    const window: { at: number; sample: ProcSample }[] = [];
    while (performance.now() < deadline) {
      window.push({ at: performance.now(), sample: this.sample() });
      while (window.length > 1 && window[window.length - 1]!.at - window[1]!.at >= IDLE_WINDOW_MS) window.shift();
      const first = window[0]!;
      const last = window[window.length - 1]!;
      const span = last.at - first.at;
      if (span >= IDLE_WINDOW_MS && last.sample.cpuSeconds - first.sample.cpuSeconds < (IDLE_SHARE * span) / 1000)
        return first.sample;
      await sleep(100);
    }
    throw new Error(`${this.side} not idle within ${TIMEOUT_MS} ms`);
  }
}

/** Starts and stops the two sides' processes on the cluster, with a log file each. */
class Sides {
  private started = 0;
  private readonly running = new Set<Controller>();

  constructor(
    private readonly cluster: LocalCluster,
    private readonly logs: string,
  ) {}

  start(side: Side, ca: Ca, qps: QpsSetting, leader?: { name: string }): Controller {
    const leaderArgs = leader
      ? [
          '--leader-elect=true',
          `--leader-elect-lease-duration=${LEASE.duration}`,
          `--leader-elect-renew-deadline=${LEASE.renew}`,
          `--leader-elect-retry-period=${LEASE.retry}`,
          `--leader-elect-resource-name=${leader.name}`,
        ]
      : ['--leader-elect=false'];
    const common = [
      `--controllers=${OUR_KCM_CONTROLLERS.join(',')}`,
      `--cluster-signing-cert-file=${ca.certFile}`,
      `--cluster-signing-key-file=${ca.keyFile}`,
      '--secure-port=0',
      ...leaderArgs,
      ...qps[side],
    ];
    const log = join(this.logs, `${++this.started}-${side}.log`);
    let controller: Controller;
    if (side === 'kcm') {
      const kubeconfig = join(this.cluster.dir, 'kcm.kubeconfig');
      controller = new Controller(
        side,
        builtBinary('kube-controller-manager')!,
        [
          `--kubeconfig=${kubeconfig}`,
          `--authentication-kubeconfig=${kubeconfig}`,
          `--authorization-kubeconfig=${kubeconfig}`,
          '--bind-address=127.0.0.1',
          '--use-service-account-credentials=true',
          ...common,
        ],
        log,
      );
    } else {
      const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
      controller = new Controller(
        side,
        process.execPath,
        [
          ...profile,
          ...NODE_ARGS,
          join(ROOT, 'bin', 'orch-controller-manager.js'),
          `--kubeconfig=${this.cluster.kubeconfig}`,
          '--api-flavor=kubernetes',
          '--use-service-account-credentials=true',
          ...common,
        ],
        log,
      );
    }
    this.running.add(controller);
    void controller.exited.then(() => this.running.delete(controller));
    return controller;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.running].map((c) => c.stop()));
  }
}

function csr(name: string, pem: string): CertificateSigningRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      signerName: SIGNER,
      usages: ['digital signature', 'client auth'],
    },
  } as CertificateSigningRequest;
}

const issued = (c: CertificateSigningRequest | undefined) => Boolean(c?.status?.certificate);

class Bench {
  private csrCount = 0;
  readonly csrs;
  readonly pods;
  readonly sets;
  readonly pdbs;

  constructor(
    readonly client: KubeClient,
    /** kube-apiserver's CPU seconds so far: what a side's requests and watches cost the server too. */
    readonly apiServerCpu: () => number,
  ) {
    this.csrs = client.kind<CertificateSigningRequest>('CertificateSigningRequest');
    this.pods = client.kind<Pod>('Pod');
    this.sets = client.kind<StatefulSet>('StatefulSet');
    this.pdbs = client.kind<PodDisruptionBudget>('PodDisruptionBudget');
  }

  /** Creates one CSR now; resolves (in seconds after `since`) when a watch shows it issued. */
  async probe(pem: string, since?: () => number): Promise<() => Promise<number>> {
    const name = `probe-${++this.csrCount}`;
    await this.csrs.create(csr(name, pem));
    return async () => {
      await watchUntil(this.csrs, undefined, (objects) => issued(objects.get(name)), TIMEOUT_MS);
      return seconds(since?.() ?? 0);
    };
  }

  /** CSRs per second, created CSR_IN_FLIGHT at a time, until a watch shows every one issued. */
  async csrRate(pems: string[]): Promise<number> {
    const tag = `csr-${++this.csrCount}`;
    const started = performance.now();
    const done = watchUntil(
      this.csrs,
      undefined,
      (objects) => {
        let n = 0;
        for (const [name, c] of objects) if (name.startsWith(tag) && issued(c)) n++;
        return n === pems.length;
      },
      TIMEOUT_MS,
    );
    await Promise.all([
      done,
      inParallel(pems.length, (i) => this.csrs.create(csr(`${tag}-${i}`, pems[i]!)), CSR_IN_FLIGHT),
    ]);
    return pems.length / seconds(started);
  }

  async clearCsrs(): Promise<void> {
    await this.csrs.deleteCollection(undefined, {});
  }

  // --- StatefulSets -------------------------------------------------------------------------------------------

  statefulSet(name: string, replicas: number, node: number, image = 'registry.example/app:1'): StatefulSet {
    return parallelSet(STS_NS, name, replicas, { image, nodeName: `kwok-node-${(node % NODES) + 1}` });
  }

  /** Resolves when every named set has all its replicas Ready at its update revision, as a watch shows them. */
  allReady(names: string[], replicas: number, image: string): Promise<void> {
    const ready = (set: StatefulSet | undefined) =>
      set?.spec.template.spec?.containers[0]?.image === image && rolledOut(replicas)(set);
    return watchUntil(this.sets, STS_NS, (o) => names.every((n) => ready(o.get(`${STS_NS}/${n}`))), TIMEOUT_MS);
  }

  /** The three StatefulSet workloads, in seconds each; the sets and their pods are left for the resync. */
  async statefulSets(): Promise<{ big: number; small: number; update: number }> {
    let t = performance.now();
    await this.sets.create(this.statefulSet('big', BIG, 0));
    await this.allReady(['big'], BIG, 'registry.example/app:1');
    const big = seconds(t);

    const names = Array.from({ length: SETS }, (_, i) => `small-${i}`);
    t = performance.now();
    await inParallel(SETS, (i) => this.sets.create(this.statefulSet(names[i]!, SET_SIZE, i)), 16);
    await this.allReady(names, SET_SIZE, 'registry.example/app:1');
    const small = seconds(t);

    t = performance.now();
    await this.sets.patch(
      STS_NS,
      'big',
      { spec: { template: { spec: { containers: [{ name: 'app', image: 'registry.example/app:2' }] } } } },
      'strategic',
    );
    await this.allReady(['big'], BIG, 'registry.example/app:2');
    return { big, small, update: seconds(t) };
  }

  /** Removes the sets, their pods and revisions (the sets orphan them; the pods go at once). */
  async clearStatefulSets(): Promise<void> {
    await this.sets.deleteCollection(STS_NS, { propagationPolicy: 'Orphan' });
    await this.pods.deleteCollection(STS_NS, { gracePeriodSeconds: 0 });
    await this.client.kind('ControllerRevision').deleteCollection(STS_NS, {});
    await watchUntil(this.pods, STS_NS, (o) => o.size === 0, TIMEOUT_MS);
    // Orphaning is the garbage collector's to finish: the next session's sets reuse the names.
    await watchUntil(this.sets, STS_NS, (o) => o.size === 0, TIMEOUT_MS);
  }

  // --- Budgets ------------------------------------------------------------------------------------------------

  budgetPod(g: number, i: number, suffix = ''): Pod {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: pdbNamespace(g), name: `pod-${g}-${i}${suffix}`, labels: { app: `g-${g}` } },
      // kwok runs a `:broken` image but never makes it Ready: readiness is the bench's to write.
      spec: {
        nodeName: `kwok-node-${(g % NODES) + 1}`,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'app', image: 'registry.example/app:broken' }],
      },
    } as Pod;
  }

  /** The budgets' pods as they are now. */
  async budgetPods(): Promise<Pod[]> {
    return (await this.pods.listAll(PDB_SCOPE)).items.filter(ofBudgets);
  }

  /** The budgets and their pods, every pod Running and Ready (set once, kept through every session). */
  async seedBudgets(): Promise<void> {
    const modes: Record<string, unknown>[] = [
      { minAvailable: PODS_PER_PDB - 2 },
      { minAvailable: '80%' },
      { maxUnavailable: 2 },
      { maxUnavailable: '20%' },
    ];
    await inParallel(PDBS, (g) =>
      this.pdbs.create({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { namespace: pdbNamespace(g), name: `pdb-${g}` },
        spec: { ...modes[g % modes.length], selector: { matchLabels: { app: `g-${g}` } } },
      } as PodDisruptionBudget),
    );
    await inParallel(PDBS * PODS_PER_PDB, (n) => this.pods.create(this.budgetPod(n % PDBS, Math.floor(n / PDBS))));
    // kwok marks them Running (not Ready) first; then each is made Ready.
    await watchUntil(
      this.pods,
      PDB_SCOPE,
      (o) => {
        const pods = [...o.values()].filter(ofBudgets);
        return pods.length === PDBS * PODS_PER_PDB && pods.every((p) => p.status?.phase === 'Running');
      },
      TIMEOUT_MS,
    );
    const pods = await this.budgetPods();
    await inParallel(pods.length, (i) =>
      this.pods.replaceStatus({ ...pods[i]!, status: { ...pods[i]!.status, ...runningStatus(true) } } as Pod),
    );
  }

  /**
   * Every budget's first status, written by KCM with its limits lifted before any timed session. Else the side
   * that goes first writes all of them within its session (2,000 statuses: 100 s at QPS 20).
   */
  async settleBudgets(sides: Sides, ca: Ca): Promise<void> {
    const kcm = sides.start('kcm', ca, QPS.lifted!);
    try {
      await watchUntil(
        this.pdbs,
        PDB_SCOPE,
        (o) => {
          const pdbs = [...o.values()].filter(ofBudgets);
          return pdbs.length === PDBS && pdbs.every((p) => p.status?.observedGeneration === p.metadata.generation);
        },
        TIMEOUT_MS,
      );
    } finally {
      await kcm.stop();
    }
  }

  /**
   * Readiness flips of pods of the budgets not churned, WRITERS at a time (writer w owns the budgets g with
   * g % WRITERS = w), each from its write's acknowledgement to a budget event showing its `currentHealthy`;
   * meanwhile the churned budgets' pods are deleted and created again, CHURN_PER_SECOND a second.
   */
  async flips(perWriter: number): Promise<number[]> {
    const pods = new Map<string, Pod>();
    for (const pod of await this.budgetPods()) pods.set(pod.metadata.name!, pod);
    const waiters = new Map<string, { healthy: number; resolve: (at: number) => void }>();
    const stop = new AbortController();
    // Watched from before the first write; a watch that ends early resumes where it was (listed again on an error).
    let { resourceVersion } = (await this.pdbs.list(PDB_SCOPE, { limit: 1 })).metadata;
    const watching = (async () => {
      while (!stop.signal.aborted) {
        await this.pdbs
          .watch(
            PDB_SCOPE,
            { resourceVersion },
            (e) => {
              resourceVersion = e.object.metadata.resourceVersion;
              const waiter = waiters.get(e.object.metadata.name ?? '');
              if (e.type === 'MODIFIED' && waiter && e.object.status?.currentHealthy === waiter.healthy) {
                waiters.delete(e.object.metadata.name!);
                waiter.resolve(performance.now());
              }
            },
            stop.signal,
          )
          .catch(async () => {
            if (!stop.signal.aborted) ({ resourceVersion } = (await this.pdbs.list(PDB_SCOPE, { limit: 1 })).metadata);
          });
      }
    })();
    let churning = true;
    const churn = (async () => {
      for (let n = 0; churning; n++) {
        const g = PDBS - 1 - (n % CHURN_PDBS);
        const i = Math.floor(n / CHURN_PDBS) % PODS_PER_PDB;
        const t = performance.now();
        // kwok deletes a terminating pod by name as well, and may have deleted this one (or its replacement).
        await this.pods.delete(pdbNamespace(g), `pod-${g}-${i}`, { gracePeriodSeconds: 0 }).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
        await this.pods.create(this.budgetPod(g, i));
        await sleep(Math.max(0, 1000 / CHURN_PER_SECOND - (performance.now() - t)));
      }
    })();
    const flipping = PDBS - CHURN_PDBS;
    const ms: number[] = [];
    try {
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          const owned = Array.from({ length: Math.ceil(flipping / WRITERS) }, (_, k) => k * WRITERS + w).filter(
            (g) => g < flipping,
          );
          for (let f = 0; f < perWriter; f++) {
            const pair = f >> 1;
            const g = owned[pair % owned.length]!;
            const name = `pod-${g}-${Math.floor(pair / owned.length) % PODS_PER_PDB}`;
            const pod = pods.get(name)!;
            const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True';
            const seen = new Promise<number>((resolve, reject) => {
              const timer = setTimeout(() => reject(new Error(`pdb-${g}: no status in ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
              waiters.set(`pdb-${g}`, {
                healthy: ready ? PODS_PER_PDB : PODS_PER_PDB - 1,
                resolve: (at) => {
                  clearTimeout(timer);
                  resolve(at);
                },
              });
            });
            const written = await this.pods.replaceStatus({
              ...pod,
              status: { ...pod.status, ...runningStatus(ready) },
            } as Pod);
            const acked = performance.now();
            pods.set(name, written);
            ms.push(Math.max(0, (await seen) - acked));
          }
        }),
      );
    } finally {
      churning = false;
      await churn;
      stop.abort();
      await watching;
    }
    return ms;
  }
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One side's figures from one session. */
type Session = Record<string, number>;

/** One session of one side: see the header. Leaves the cluster as it found it. */
async function session(bench: Bench, sides: Sides, side: Side, cas: Ca[], qps: QpsSetting): Promise<Session> {
  const out: Session = {};
  const rated = ONLY === 'sets' ? 0 : CSRS * cas.length;
  const [probePem, ...pems] = await nodeClientRequestPems(rated + cas.length, `${side}-${Date.now()}`);
  let controller: Controller | undefined;
  let serverCpuAtSpawn = 0;
  const peaks: number[] = [];
  const restart = async (ca: Ca) => {
    if (controller) peaks.push((await controller.stop())?.peakRssMiB ?? Number.NaN);
    const issuedProbe = await bench.probe(probePem!, () => controller!.spawnedAt);
    serverCpuAtSpawn = bench.apiServerCpu();
    controller = sides.start(side, ca, qps);
    return issuedProbe();
  };
  const serverCpuSinceSpawn = () => bench.apiServerCpu() - serverCpuAtSpawn;
  try {
    if (ONLY === 'sets') {
      out['start RSA-2048'] = await restart(cas[0]!);
      out['start cpu RSA-2048'] = controller!.sample().cpuSeconds;
      out['start server cpu RSA-2048'] = serverCpuSinceSpawn();
      Object.assign(out, await bench.statefulSets());
      out.setsCpu = controller!.sample().cpuSeconds - out['start cpu RSA-2048'];
      return out;
    }
    for (const [k, ca] of cas.entries()) {
      out[`start ${ca.alg}`] = await restart(ca);
      out[`start cpu ${ca.alg}`] = controller!.sample().cpuSeconds;
      out[`start server cpu ${ca.alg}`] = serverCpuSinceSpawn();
      if (ONLY === 'start') continue;
      const serverCpu = bench.apiServerCpu();
      out[`csr ${ca.alg}`] = await bench.csrRate(pems.slice(k * CSRS, (k + 1) * CSRS));
      out[`csr cpu ${ca.alg}`] = ((controller!.sample().cpuSeconds - out[`start cpu ${ca.alg}`]!) * 1000) / CSRS;
      out[`csr server cpu ${ca.alg}`] = ((bench.apiServerCpu() - serverCpu) * 1000) / CSRS;
      await bench.clearCsrs();
    }
    if (ONLY) return out;
    const flips = await bench.flips(FLIPS);
    out.p50 = percentile(flips, 50);
    out.p99 = percentile(flips, 99);
    Object.assign(out, await bench.statefulSets());
    // The full resync: a fresh process over everything there is now, until it has nothing left to do. Idle is
    // looked for once it has issued a CSR (else the wait before its controllers start could pass for it).
    await restart(cas[0]!);
    out.workRss = Math.max(...peaks);
    out.resyncFirstCpu = controller!.sample().cpuSeconds;
    const idle = await controller!.idle();
    out.resyncCpu = idle.cpuSeconds;
    out.resyncServerCpu = serverCpuSinceSpawn();
    out.resyncRss = controller!.sample().peakRssMiB;
    return out;
  } finally {
    await controller?.stop();
    await bench.clearCsrs();
    await bench.clearStatefulSets();
  }
}

/** Leader failover of one side: seconds from the leader's SIGKILL to the new holder, and to a CSR issued. */
async function failover(bench: Bench, sides: Sides, side: Side, ca: Ca, round: number): Promise<Session> {
  const [first, second] = await nodeClientRequestPems(2, `failover-${side}-${round}`);
  // KCM's own identity may hold only the Lease named after it; each round starts with none.
  const name = side === 'kcm' ? 'kube-controller-manager' : 'orch-bench-failover';
  const leases = bench.client.kind('Lease');
  await leases.delete('kube-system', name).catch(() => undefined);
  const leader = sides.start(side, ca, QPS.default!, { name });
  let standby: Controller | undefined;
  try {
    await (await bench.probe(first!))();
    const holder = (await leases.get('kube-system', name)) as { spec?: { holderIdentity?: string } };
    standby = sides.start(side, ca, QPS.default!, { name });
    await sleep(3_000); // the standby has started and is retrying the Lease
    await leader.kill();
    const killed = performance.now();
    const issuedAgain = await bench.probe(second!, () => killed);
    const newHolder = watchUntil(
      leases,
      'kube-system',
      (o) => {
        const h = (o.get(`kube-system/${name}`) as { spec?: { holderIdentity?: string } })?.spec?.holderIdentity;
        return Boolean(h && h !== holder.spec?.holderIdentity);
      },
      TIMEOUT_MS,
    ).then(() => seconds(killed));
    const [lease, reconciled] = await Promise.all([newHolder, issuedAgain()]);
    return { lease, reconciled };
  } finally {
    await standby?.stop();
    await leader.stop();
    await bench.clearCsrs();
  }
}

async function makeCa(dir: string, alg: KeyAlgorithm): Promise<Ca> {
  const ca = await createSelfSignedCa({ commonName: `bench ${alg} signer`, keyAlg: alg });
  const certFile = join(dir, `${alg}.crt`);
  const keyFile = join(dir, `${alg}.key`);
  await writeFile(certFile, ca.certPem);
  await writeFile(keyFile, ca.keyPem, { mode: 0o600 });
  return { alg, certFile, keyFile };
}

/** Per-round pairs of a figure: ours and KCM's. */
function pairs(rounds: Record<Side, Session>[], key: string): Round[] {
  return rounds.map((r) => ({ ours: r.ours[key]!, floor: r.kcm[key]! }));
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-kcm-'));
  const logs = join(dir, 'logs');
  await mkdir(logs, { recursive: true });
  if (PROFILE_DIR) await mkdir(PROFILE_DIR, { recursive: true });
  console.log(`cluster and process logs in ${dir}`);
  if (machineCas) console.log(`both sides run without NODE_EXTRA_CA_CERTS (${machineCas})`);
  // Our daemon runs from a bundle built at its first start after a source change (bin/launch.js): built here,
  // not inside the first timed start.
  await new Promise<void>((resolve, reject) =>
    spawn(process.execPath, [join(ROOT, 'bin', 'orch-controller-manager.js'), '--help'], { stdio: 'ignore' })
      .on('error', reject)
      .on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`--help exited with ${code}`)))),
  );
  const cluster = await startLocalCluster({ dir: join(dir, 'cluster'), nodes: NODES });
  const sides = new Sides(cluster, logs);
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    const apiServerCpu = () => procSample(cluster.pidOf('kube-apiserver') ?? 0)?.cpuSeconds ?? Number.NaN;
    const bench = new Bench(new KubeClient(kc, new ResourceRegistry('kubernetes'), { qps: 0 }), apiServerCpu);
    for (const ns of [STS_NS, ...Array.from({ length: PDB_NAMESPACES }, (_, g) => pdbNamespace(g))]) {
      await bench.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      // Pods are admitted once the cluster's KCM has made the namespace's default ServiceAccount.
      await watchUntil(bench.client.kind('ServiceAccount'), ns, (o) => o.has(`${ns}/default`), TIMEOUT_MS);
    }
    const cas = [await makeCa(dir, 'RSA-2048'), await makeCa(dir, 'ECDSA-P256')];
    const seeded = performance.now();
    if (!ONLY || ONLY === 'start') {
      await bench.seedBudgets();
      await bench.settleBudgets(sides, cas[0]!);
    }
    console.log(
      `sizes: ${CSRS} CSRs per CA; StatefulSets 1 × ${BIG} and ${SETS} × ${SET_SIZE} on ${NODES} kwok nodes; ` +
        `${PDBS} budgets × ${PODS_PER_PDB} pods in ${PDB_NAMESPACES} namespace(s) ` +
        `(${CHURN_PDBS} of them churned, ${CHURN_PER_SECOND} pods/s), ` +
        `${WRITERS} writers × ${FLIPS} flips; seeded in ${seconds(seeded).toFixed(1)} s; ${machine()}`,
    );

    for (const wanted of QPS_WANTED) {
      const qps = QPS[wanted];
      if (!qps) throw new Error(`KCM_BENCH_QPS: unknown setting ${wanted} (default, lifted)`);
      const rounds: Record<Side, Session>[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const order: Side[] = r % 2 === 0 ? ['kcm', 'ours'] : ['ours', 'kcm'];
        const round = {} as Record<Side, Session>;
        for (const side of order) round[side] = await session(bench, sides, side, cas, qps);
        console.log(`round ${r + 1} (${machine()}): ${JSON.stringify(round)}`);
        rounds.push(round);
      }
      const figure = (name: string, unit: string, key: string): Paired => ({
        name,
        unit,
        floorName: 'KCM',
        rounds: pairs(rounds, key),
      });
      const rates = cas.map((ca) => figure(`CSRs approved+issued, ${ca.alg} CA`, 'CSR/s', `csr ${ca.alg}`));
      const csrCpu = cas.flatMap((ca) => [
        figure(`CPU of the process per CSR approved+issued, ${ca.alg} CA`, 'ms', `csr cpu ${ca.alg}`),
        figure('  kube-apiserver CPU per CSR meanwhile', 'ms', `csr server cpu ${ca.alg}`),
      ]);
      const starts = cas.flatMap((ca) => [
        figure(`start → first CSR issued (${ca.alg} CA)`, 's', `start ${ca.alg}`),
        figure('  CPU seconds of the process by then', 's', `start cpu ${ca.alg}`),
        figure('  kube-apiserver CPU seconds from the spawn', 's', `start server cpu ${ca.alg}`),
      ]);
      const sets = [
        figure(`1 × ${BIG} Parallel, create → all Ready`, 's', 'big'),
        figure(`${SETS} × ${SET_SIZE}, create → all Ready`, 's', 'small'),
        figure(`rolling update of ${BIG} (maxUnavailable 10%)`, 's', 'update'),
      ];
      if (ONLY) {
        const cpu = figure('CPU seconds of the process over the three StatefulSet workloads', 's', 'setsCpu');
        const part =
          ONLY === 'csr'
            ? [...rates, ...csrCpu, ...starts]
            : ONLY === 'sets'
              ? [...sets, cpu, ...starts.slice(0, 3)]
              : starts;
        printPaired(`ours ÷ KCM, ${qps.name}; ${ROUNDS} paired rounds, ${ONLY} only (${machine()})`, part);
        continue;
      }
      printPaired(`ours ÷ KCM, ${qps.name}; ${ROUNDS} paired rounds (${machine()})`, [
        ...rates,
        ...csrCpu,
        ...sets,
        figure('PDB status after a readiness flip, p50', 'ms', 'p50'),
        figure('PDB status after a readiness flip, p99', 'ms', 'p99'),
        ...starts,
        figure('full resync: spawn → idle, CPU', 's', 'resyncCpu'),
        figure('  of which spawn → first CSR issued', 's', 'resyncFirstCpu'),
        figure('  kube-apiserver CPU from the spawn to idle', 's', 'resyncServerCpu'),
        figure('peak RSS after the full resync', 'MiB', 'resyncRss'),
        figure('peak RSS over the workloads', 'MiB', 'workRss'),
      ]);
    }

    if (FAILOVER_ROUNDS > 0) {
      const rounds: Record<Side, Session>[] = [];
      for (let r = 0; r < FAILOVER_ROUNDS; r++) {
        const order: Side[] = r % 2 === 0 ? ['kcm', 'ours'] : ['ours', 'kcm'];
        const round = {} as Record<Side, Session>;
        for (const side of order) round[side] = await failover(bench, sides, side, cas[1]!, r);
        console.log(`failover round ${r + 1}: ${JSON.stringify(round)}`);
        rounds.push(round);
      }
      const lease = `lease ${LEASE.duration}, renew ${LEASE.renew}, retry ${LEASE.retry}`;
      printPaired(`ours ÷ KCM, leader failover after SIGKILL (${lease}; ${QPS.default!.name})`, [
        { name: 'SIGKILL → new Lease holder', unit: 's', floorName: 'KCM', rounds: pairs(rounds, 'lease') },
        { name: 'SIGKILL → a CSR issued', unit: 's', floorName: 'KCM', rounds: pairs(rounds, 'reconciled') },
      ]);
    }
  } finally {
    await sides.stopAll();
    await cluster.stop();
    if (!process.env.KCM_BENCH_KEEP) await rm(dir, { recursive: true, force: true });
  }
}
