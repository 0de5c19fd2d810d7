/**
 * `npm run bench -- certificates`, two figures, each against its floor measured in the same run, rounds
 * alternating between the figure and its floor; printed as the median and range of the per-round ratios.
 *
 * - Build and sign one certificate (`issue()`) against a bare signature of the same TBS bytes with the same CA
 *   key, RSA-2048 and ECDSA P-256: WebCrypto's (the issue's floor) and node:crypto's (what `issue()` uses).
 * - CSRs approved and issued end to end against the floor of the two bare writes of the same kind of CSR objects
 *   (create, PUT /approval) on the same server. The control plane runs in this process; the bench client (the
 *   floor's writes, or the end-to-end round's creates and the watch that sees every certificate) in a child
 *   process; the controller daemon (approver with its SubjectAccessReview, signer) in another, as
 *   kube-controller-manager runs apart from the API server. The daemon process lives through all rounds of a
 *   CA, warm as a long-running one is, and runs its controllers (a fresh cache and watch) in the end-to-end rounds
 *   only. Two end-to-end figures, both paired with each round's floor: the daemon with the reference's 5 + 5
 *   workers, and with as many workers as the bench client has requests in flight (what
 *   `--concurrent-<controller>-syncs` sets). Every round starts with no CSR stored; the clock starts once the
 *   client's watch is open. A third side, the ceiling, makes every request of the end-to-end path bare (create,
 *   SubjectAccessReview, approval, status with a certificate made beforehand) from the bench client alone: no
 *   controller, no watch, no signature. Its ratio to the floor shows how far any controller can get on this
 *   server, as the end-to-end path makes the same requests and more; each end-to-end figure is printed against it
 *   as well. Each process's CPU time over the timed window is printed per CSR (median of the rounds): the sum
 *   tells how far 2 cores can go. With `CERTS_BENCH_PROFILE=<dir>`, CPU profiles of the three processes over each
 *   round's timed window are written there.
 */
import 'reflect-metadata';
import { type ChildProcess, spawn } from 'node:child_process';
import { sign, webcrypto } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { approvingController } from '../controllers/certificates/approving/controller.ts';
import { subjectAccessReview } from '../controllers/certificates/approving/core.ts';
import { parseRequestPem } from '../controllers/certificates/csr.ts';
import { toSigningCa } from '../controllers/certificates/signing/ca.ts';
import { type CertificateRequestInput, issue } from '../controllers/certificates/signing/certificate.ts';
import { signingController } from '../controllers/certificates/signing/controller.ts';
import { runControllers } from '../controllers/certificates/testing.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import type { SubjectAccessReview } from '../src/api/types/authz.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { createSelfSignedCa } from '../src/pki/certs.ts';
import { signedPart } from '../src/pki/der.ts';
import type { KeyAlgorithm } from '../src/pki/keys.ts';
import { inParallel, median, type Paired, printPaired, type Round, rotatedRounds } from './run.ts';
import { nodeClientRequestPems } from './support/csr-pems.ts';
import { profiled } from './support/profile.ts';

/** `CERTS_BENCH_CAS=ECDSA-P256` (comma-separated) and `CERTS_BENCH_ROUNDS=3` narrow a run, e.g. to profile it. */
const CA_ALGS = (process.env.CERTS_BENCH_CAS?.split(',') ?? ['RSA-2048', 'ECDSA-P256']) as KeyAlgorithm[];
const ROUNDS = Number(process.env.CERTS_BENCH_ROUNDS ?? 5);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('CERTS_BENCH_ROUNDS must be a whole number ≥ 1');
/** Issue 29's goal: end to end, at least this fraction of the ceiling (the same four requests, bare). */
const GOAL_OF_CEILING = 0.9;
const CEILING = 'the ceiling';
/** In-flight requests of the bench client. */
const CONCURRENCY = 16;
/** Workers of the approver and of the signer by default, as in the reference. */
const REFERENCE_WORKERS = 5;
/** The client's rate limit: 0 is none, so that the server and the controllers are what is measured. */
const CLIENT_QPS = 0;
const CSRS_PER_ROUND = 500;
const SIGNATURES_PER_ROUND = 200;

async function msPerCall(n: number, fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - started) / n;
}

const signOnThreadPool = promisify(sign);

/** What `issue()` is given for a node client's request: a day's certificate for client auth. */
async function nodeClientInput(): Promise<CertificateRequestInput> {
  return {
    parsed: await parseRequestPem((await nodeClientRequestPems(1, 'sign'))[0]),
    usages: ['digital signature', 'client auth'],
    notBefore: new Date(Date.now() - 300_000),
    notAfter: new Date(Date.now() + 86400_000),
  };
}

/**
 * `issue()` against two floors, each a bare signature of the same TBS bytes with the same CA key: WebCrypto's
 * (the issue's floor) and node:crypto's as `issue()` makes it (inline, RSA on the thread pool, DER ECDSA).
 */
async function signing(caAlg: KeyAlgorithm): Promise<Paired[]> {
  const made = await createSelfSignedCa({ commonName: `bench ${caAlg} CA`, keyAlg: caAlg });
  const ca = await toSigningCa({ certPem: made.certPem, keyPem: made.keyPem }, 'ca.crt');
  const input = await nodeClientInput();
  const tbs = signedPart((await issue(input, ca)).der);
  const { name, hash } = ca.signingAlgorithm;
  const algorithm = name === 'ECDSA' ? { name, hash } : { name };
  const key = { key: ca.privateKey, dsaEncoding: 'der' as const };
  const digest = hash ? hash.replace('-', '').toLowerCase() : null;
  const sides = {
    ours: () => issue(input, ca),
    webcrypto: () => webcrypto.subtle.sign(algorithm, made.keys.privateKey, tbs),
    node: async () => (name.startsWith('RSA') ? signOnThreadPool(digest, tbs, key) : sign(digest, tbs, key)),
  };
  for (const call of Object.values(sides)) await msPerCall(20, call); // warm-up
  const timed = (call: () => Promise<unknown>) => () => msPerCall(SIGNATURES_PER_ROUND, call);
  const ms = await rotatedRounds(ROUNDS, {
    ours: timed(sides.ours),
    webcrypto: timed(sides.webcrypto),
    node: timed(sides.node),
  });
  const webcryptoRounds = ms.map((m): Round => ({ ours: m.ours, floor: m.webcrypto }));
  const nodeRounds = ms.map((m): Round => ({ ours: m.ours, floor: m.node }));
  const figure = `build+sign one certificate, ${caAlg} CA`;
  return [
    { name: figure, unit: 'ms', floorName: 'bare WebCrypto sign of its TBS', rounds: webcryptoRounds },
    { name: figure, unit: 'ms', floorName: 'bare node:crypto sign of its TBS', rounds: nodeRounds },
  ];
}

// ---------------------------------------------------------------------------------------------
// End to end: the control plane in this process; the bench client and the controller daemon each in a
// process of their own, as kube-controller-manager runs apart from the API server it talks to.

/** What the parent asks the client child, and what the children answer. */
type Command =
  | { type: 'floor' | 'e2e'; tag: string; profile?: string }
  | { type: 'ceiling'; tag: string; certificate: string; profile?: string }
  | { type: 'go' }
  | { type: 'measure'; profile?: string }
  | { type: 'measured' }
  | { type: 'start'; workers: number }
  | { type: 'stop' };
type Reply =
  | { type: 'ready' }
  | { type: 'started' }
  | { type: 'stopped' }
  | { type: 'watching' }
  | { type: 'rate'; perSecond: number; cpuMs: number }
  | { type: 'cpu'; cpuMs: number }
  | { type: 'error'; message: string };

/** One round's rate, and the CPU time each process spent in its timed window per CSR (ms). */
interface Measured {
  perSecond: number;
  cpuPerCsr: { server: number; client: number; daemon: number };
}

/** CPU time (ms) used by this process since `since`. */
function cpuMsSince(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

const CHILD_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 10_000;

/** A bench child (this file, `--role=...`) and its replies, read one at a time. */
class Child {
  private readonly replies: Reply[] = [];
  private waiting?: () => void;
  private failure?: Error;
  readonly exited: Promise<void>;
  private readonly process: ChildProcess;

  constructor(role: 'client' | 'daemon', args: string[]) {
    this.process = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), `--role=${role}`, ...args],
      {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    this.process.on('message', (m: Reply) => {
      if (m.type === 'error') this.failure ??= new Error(`${role}: ${m.message}`);
      else this.replies.push(m);
      this.waiting?.();
    });
    this.exited = new Promise((resolve) =>
      this.process.on('exit', (code, signal) => {
        if (code !== 0) this.failure ??= new Error(`${role}: exited with ${signal ?? code}`);
        this.waiting?.();
        resolve();
      }),
    );
  }

  send(command: Command): void {
    this.process.send(command);
  }

  async next<T extends Reply['type']>(type: T): Promise<Extract<Reply, { type: T }>> {
    const deadline = setTimeout(() => {
      this.failure ??= new Error(`no ${type} from the child in ${CHILD_TIMEOUT_MS} ms`);
      this.waiting?.();
    }, CHILD_TIMEOUT_MS);
    try {
      for (;;) {
        if (this.failure) throw this.failure;
        const reply = this.replies.shift();
        if (reply) {
          if (reply.type !== type) throw new Error(`expected ${type} from the child, got ${reply.type}`);
          return reply as Extract<Reply, { type: T }>;
        }
        await new Promise<void>((resolve) => {
          this.waiting = resolve;
        });
      }
    } finally {
      clearTimeout(deadline);
    }
  }

  /** SIGTERM, and SIGKILL if the child has not exited after a while. */
  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return this.exited;
    this.process.kill('SIGTERM');
    const kill = setTimeout(() => this.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(kill);
  }
}

/** A side's CPU time per CSR in each process. */
type CpuRow = { ca: KeyAlgorithm; side: 'floor' | 'ceiling' | 'reference' | 'matched' } & Measured['cpuPerCsr'];

/** Per process, the median over rounds of its CPU time per CSR (ms). */
function medianCpu(rounds: Measured[]): Measured['cpuPerCsr'] {
  const of = (p: keyof Measured['cpuPerCsr']) => median(rounds.map((r) => r.cpuPerCsr[p]));
  return { server: of('server'), client: of('client'), daemon: of('daemon') };
}

async function endToEnd(caAlg: KeyAlgorithm, cpuTable: CpuRow[], profileDir: string | undefined): Promise<Paired[]> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-certs-'));
  const ca = await createSelfSignedCa({ commonName: `bench ${caAlg} CA`, keyAlg: caAlg });
  await writeFile(join(dir, 'ca.crt'), ca.certPem);
  await writeFile(join(dir, 'ca.key'), ca.keyPem);
  const cp = new ControlPlane({
    port: 0,
    dataDir: dir,
    storage: 'memory',
    caCertFile: join(dir, 'ca.crt'),
    caKeyFile: join(dir, 'ca.key'),
  });
  // The ceiling's status writes all carry one certificate, issued by this CA as the signer would issue it.
  const signingCa = await toSigningCa({ certPem: ca.certPem, keyPem: ca.keyPem }, 'ca.crt');
  const certificate = (await issue(await nodeClientInput(), signingCa)).pem;
  await cp.start();
  const rt = cp.registry.byKind('CertificateSigningRequest')!;
  /** Each round's CSRs are removed after it, out of the timed window, so that every round starts alike. */
  const clear = () => {
    for (const csr of cp.storage.list(rt)) cp.storage.remove(rt, csr.metadata.name!);
  };
  const profile = (name: string) => profileDir && join(profileDir, `${name}.cpuprofile`);
  /** A round of bare writes from the client alone: the floor's two per CSR, or the ceiling's four. */
  const bareRound = async (tag: string, ceiling: boolean): Promise<Measured> => {
    const cpu = process.cpuUsage();
    const { perSecond, cpuMs } = await profiled(profile(`server-${tag}`), async () => {
      const command: Command = ceiling
        ? { type: 'ceiling', tag, certificate, profile: profile(`client-${tag}`) }
        : { type: 'floor', tag, profile: profile(`client-${tag}`) };
      client.send(command);
      return client.next('rate');
    });
    const server = cpuMsSince(cpu);
    clear();
    return { perSecond, cpuPerCsr: { server: server / CSRS_PER_ROUND, client: cpuMs / CSRS_PER_ROUND, daemon: 0 } };
  };
  /** Polls until the server counts `count` CSR watchers or fewer (`atMost`) or more (`above`). */
  const watchers = async (count: number, side: 'atMost' | 'above') => {
    const deadline = Date.now() + CHILD_TIMEOUT_MS;
    while (side === 'above' ? cp.storage.watcherCount(rt) <= count : cp.storage.watcherCount(rt) > count) {
      if (Date.now() > deadline) throw new Error(`the server's CSR watchers stayed at ${cp.storage.watcherCount(rt)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  // The daemon's controllers run for the end-to-end rounds only: the floor and the ceiling open no watch.
  const endToEndRound = async (tag: string, workers: number): Promise<Measured> => {
    const before = cp.storage.watcherCount(rt);
    daemon.send({ type: 'start', workers });
    try {
      await daemon.next('started');
      const withDaemon = cp.storage.watcherCount(rt);
      client.send({ type: 'e2e', tag, profile: profile(`client-${tag}`) });
      await client.next('watching');
      // The client's watch is open once the server counts it: only then does the clock start.
      await watchers(withDaemon, 'above');
      daemon.send({ type: 'measure', profile: profile(`daemon-${tag}`) });
      const cpu = process.cpuUsage();
      const { perSecond, cpuMs } = await profiled(profile(`server-${tag}`), async () => {
        client.send({ type: 'go' });
        return client.next('rate');
      });
      const server = cpuMsSince(cpu);
      daemon.send({ type: 'measured' });
      const daemonMs = (await daemon.next('cpu')).cpuMs;
      const perCsr = (ms: number) => ms / CSRS_PER_ROUND;
      return { perSecond, cpuPerCsr: { server: perCsr(server), client: perCsr(cpuMs), daemon: perCsr(daemonMs) } };
    } finally {
      daemon.send({ type: 'stop' });
      await daemon.next('stopped');
      // The next round's count starts once the server has let go of this round's watches.
      await watchers(before, 'atMost');
      clear();
    }
  };
  // Rates per second, so that "ours / floor" is the fraction reached.
  const sides = {
    floor: (tag: string) => bareRound(`bare-${tag}`, false),
    ceiling: (tag: string) => bareRound(`ceiling-${tag}`, true),
    reference: (tag: string) => endToEndRound(`e2e-${tag}`, REFERENCE_WORKERS),
    matched: (tag: string) => endToEndRound(`e2e-matched-${tag}`, CONCURRENCY),
  };
  // The bench client, and one daemon process for all rounds, warm as a long-running kube-controller-manager is.
  const client = new Child('client', [`--kubeconfig=${cp.kubeconfigPath}`]);
  const daemon = new Child('daemon', [`--kubeconfig=${cp.kubeconfigPath}`, `--ca-dir=${dir}`]);
  try {
    await Promise.all([client.next('ready'), daemon.next('ready')]);
    for (const side of Object.values(sides)) await side(`warm-${caAlg}`.toLowerCase());
    const tagged = (side: (tag: string) => Promise<Measured>) => (r: number) => side(`${caAlg.toLowerCase()}-${r}`);
    const rounds = await rotatedRounds(ROUNDS, {
      floor: tagged(sides.floor),
      ceiling: tagged(sides.ceiling),
      reference: tagged(sides.reference),
      matched: tagged(sides.matched),
    });
    cpuTable.push(
      ...(['floor', 'ceiling', 'reference', 'matched'] as const).map((side) => ({
        ca: caAlg,
        side,
        ...medianCpu(rounds.map((r) => r[side])),
      })),
    );
    type Side = keyof (typeof rounds)[number];
    const paired = (name: string, side: Side, against: Side, floorName: string): Paired => ({
      name,
      unit: 'CSR/s',
      floorName,
      rounds: rounds.map((r): Round => ({ ours: r[side].perSecond, floor: r[against].perSecond })),
    });
    const bareFloor = 'bare create+approval';
    const endToEndFigures = (side: Side, workers: number) => {
      const name = `CSRs approved+issued, ${caAlg} CA, ${workers}+${workers} workers`;
      return [paired(name, side, 'floor', bareFloor), paired(name, side, 'ceiling', CEILING)];
    };
    return [
      paired(`ceiling: bare create+review+approval+status, ${caAlg} CA`, 'ceiling', 'floor', bareFloor),
      ...endToEndFigures('reference', REFERENCE_WORKERS),
      ...endToEndFigures('matched', CONCURRENCY),
    ];
  } finally {
    await Promise.all([client.stop(), daemon.stop()]);
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The client child: the floor's two writes per CSR, or the creates of an end-to-end round and its watch. */
async function clientChild(kubeconfig: string, reply: (r: Reply) => void): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const registry = new ResourceRegistry('orch');
  const client = new KubeClient(kc, registry, { qps: CLIENT_QPS });
  const csrs = client.kind<CertificateSigningRequest>('CertificateSigningRequest');
  const spec = (pem: string, signerName: string) => ({
    request: Buffer.from(pem).toString('base64'),
    signerName,
    usages: ['digital signature' as const, 'client auth' as const],
  });
  const commands: Command[] = [];
  let wake = () => {};
  process.on('message', (c: Command) => {
    commands.push(c);
    wake();
  });
  const next = async (): Promise<Command> => {
    while (!commands.length) await new Promise<void>((r) => (wake = r));
    return commands.shift()!;
  };

  /** Runs a round's timed part, profiled to `profile` if given; its rate and this process's CPU time. */
  const timed = async (profile: string | undefined, fn: () => Promise<void>) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await profiled(profile, fn);
    const seconds = (performance.now() - started) / 1000;
    return { type: 'rate' as const, perSecond: CSRS_PER_ROUND / seconds, cpuMs: cpuMsSince(cpu) };
  };
  const reviews = client.kind<SubjectAccessReview>('SubjectAccessReview');
  /**
   * The floor: the same two writes (create, approval) per CSR, bare, for a signer nobody handles. Given a
   * certificate, the ceiling: the approver's review between them, and a status write with the certificate after.
   */
  const bare = async (tag: string, certificate: string | undefined, profile?: string) => {
    const pems = await nodeClientRequestPems(CSRS_PER_ROUND, tag);
    const issued = certificate && Buffer.from(certificate).toString('base64');
    return timed(profile, async () => {
      await inParallel(
        CSRS_PER_ROUND,
        async (i) => {
          const created = await csrs.create({
            metadata: { name: `${tag}-${i}` },
            spec: spec(pems[i], 'example.com/bench'),
          });
          if (issued) await reviews.create(subjectAccessReview(created, 'nodeclient', registry.naming));
          const conditions = [{ type: 'Approved', status: 'True' as const, reason: 'Bench', message: 'bare write' }];
          const approved = await csrs.replaceApproval({ ...created, status: { conditions } });
          if (!issued) return;
          const status = { ...approved.status, certificate: issued };
          await csrs.replaceStatus({ ...approved, status });
        },
        CONCURRENCY,
      );
    });
  };
  const endToEnd = async (tag: string, profile?: string) => {
    const pems = await nodeClientRequestPems(CSRS_PER_ROUND, tag);
    const waitingFor = new Set(pems.map((_, i) => `${tag}-${i}`));
    let allIssued = () => {};
    const issued = new Promise<void>((r) => (allIssued = r));
    const watching = new AbortController();
    const watch = csrs.watch(
      undefined,
      {},
      (e) => {
        if (e.object.status?.certificate && waitingFor.delete(e.object.metadata.name!) && !waitingFor.size) allIssued();
      },
      watching.signal,
    );
    reply({ type: 'watching' });
    if ((await next()).type !== 'go') throw new Error('expected go');
    const rate = await timed(profile, async () => {
      await inParallel(
        CSRS_PER_ROUND,
        (i) =>
          csrs.create({
            metadata: { name: `${tag}-${i}` },
            spec: spec(pems[i], registry.naming.signers.apiServerClientNodeAgent),
          }),
        CONCURRENCY,
      );
      const ended = watch.then(() => Promise.reject(new Error('the watch ended before all were issued')));
      await Promise.race([issued, ended]);
    });
    watching.abort();
    await watch.catch(() => undefined);
    return rate;
  };

  reply({ type: 'ready' });
  for (;;) {
    const c = await next();
    if (c.type === 'floor') reply(await bare(c.tag, undefined, c.profile));
    else if (c.type === 'ceiling') reply(await bare(c.tag, c.certificate, c.profile));
    else if (c.type === 'e2e') reply(await endToEnd(c.tag, c.profile));
    else throw new Error(`${c.type} outside a round`);
  }
}

/**
 * The daemon child: between the parent's `start` and `stop`, the approver and the signer with the workers asked
 * for, started afresh (an empty cache, a new watch) in this process, which lives until SIGTERM.
 */
async function daemonChild(kubeconfig: string, caDir: string, reply: (r: Reply) => void): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const registry = new ResourceRegistry('orch');
  const client = new KubeClient(kc, registry, { qps: CLIENT_QPS });
  const signing = {
    certFile: join(caDir, 'ca.crt'),
    keyFile: join(caDir, 'ca.key'),
    perSigner: {},
    durationMs: 86400_000,
  };
  let running: Awaited<ReturnType<typeof runControllers>> | undefined;
  // Start and stop one after the other; measure and measured (this process's CPU time, and its profile if asked,
  // between them) as they come.
  let lifecycle = Promise.resolve();
  const inTurn = (step: () => Promise<void>) => {
    lifecycle = lifecycle
      .then(step)
      .catch((err: unknown) => reply({ type: 'error', message: (err as Error)?.stack ?? String(err) }));
  };
  let measuring: (() => void) | undefined;
  process.on('message', (c: Command) => {
    if (c.type === 'start') {
      // As `--concurrent-<controller>-syncs` would set them.
      const controllers = [approvingController, signingController].map((d) => ({ ...d, workers: c.workers }));
      inTurn(async () => {
        running = await runControllers(client, registry, controllers, { signing });
        reply({ type: 'started' });
      });
    } else if (c.type === 'stop') {
      inTurn(async () => {
        await running?.stop();
        running = undefined;
        reply({ type: 'stopped' });
      });
    } else if (c.type === 'measured') {
      measuring?.();
    } else if (c.type === 'measure') {
      const cpu = process.cpuUsage();
      const done = new Promise<void>((resolve) => (measuring = resolve));
      void profiled(c.profile, () => done).then(() => reply({ type: 'cpu', cpuMs: cpuMsSince(cpu) }));
    }
  });
  reply({ type: 'ready' });
  await new Promise<void>((resolve) => process.once('SIGTERM', resolve));
  await lifecycle;
  await running?.stop();
}

export async function run(): Promise<void> {
  const signatures: Paired[] = [];
  for (const alg of CA_ALGS) signatures.push(...(await signing(alg)));
  printPaired(
    `certificate build+sign (${ROUNDS} paired rounds of ${SIGNATURES_PER_ROUND} sequential calls)`,
    signatures,
  );
  const e2e: Paired[] = [];
  const cpuTable: CpuRow[] = [];
  const profileDir = process.env.CERTS_BENCH_PROFILE;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  for (const alg of CA_ALGS) e2e.push(...(await endToEnd(alg, cpuTable, profileDir)));
  printPaired(
    `CSRs end to end (${ROUNDS} rounds of ${CSRS_PER_ROUND} CSRs, each figure paired with the round's floor; ` +
      `${CONCURRENCY} in flight from the bench client; control plane, bench client and controller daemon in 3 ` +
      `processes; daemon with the reference's ${REFERENCE_WORKERS} approver + ${REFERENCE_WORKERS} signer workers, ` +
      `and with ${CONCURRENCY} + ${CONCURRENCY} (the client's in-flight count); client QPS ` +
      `${CLIENT_QPS || 'unlimited'} for the bench client and the daemon; 1-min load average ${loadavg()[0].toFixed(1)})`,
    e2e,
  );
  printGoal(e2e);
  console.log(
    '\nCPU per CSR in the timed window, ms (median of the rounds): server, bench client, daemon, all three; ' +
      "and the ceiling's all ÷ this all: the ratio to the ceiling when the cores are what limits both",
  );
  const all = (row: CpuRow) => row.server + row.client + row.daemon;
  for (const row of cpuTable) {
    const ms = [row.server, row.client, row.daemon, all(row)].map((x) => x.toFixed(2).padStart(6)).join(' ');
    const ceiling = cpuTable.find((r) => r.ca === row.ca && r.side === 'ceiling');
    const bound = row.daemon > 0 && ceiling ? `  ${(all(ceiling) / all(row)).toFixed(3)}×` : '';
    console.log(`${`${row.ca} ${row.side}`.padEnd(24)} ${ms}${bound}`);
  }
}

/** One line per end-to-end figure: its median ratio to the ceiling and range, and whether the goal is met. */
function printGoal(figures: Paired[]): void {
  console.log(
    `\ngoal: CSRs approved+issued end to end ≥ ${GOAL_OF_CEILING}× the ceiling (median of the paired rounds)`,
  );
  for (const f of figures.filter((f) => f.floorName === CEILING)) {
    const ratios = f.rounds.map((r) => r.ours / r.floor);
    const m = median(ratios);
    const range = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
    const verdict = m >= GOAL_OF_CEILING ? 'met' : 'NOT met';
    console.log(`${f.name.padEnd(48)} ${m.toFixed(3)}× (range ${range}): ${verdict}`);
  }
}

function arg(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && arg('role')) {
  const kubeconfig = arg('kubeconfig');
  const caDir = arg('ca-dir');
  const reply = (r: Reply) => process.send!(r);
  const role = arg('role');
  const child =
    role === 'client' && kubeconfig
      ? clientChild(kubeconfig, reply)
      : role === 'daemon' && kubeconfig && caDir
        ? daemonChild(kubeconfig, caDir, reply)
        : Promise.reject(
            new Error('usage (from the parent bench only): --role=client|daemon --kubeconfig=PATH [--ca-dir=DIR]'),
          );
  child.then(
    () => process.exit(0),
    (err) => {
      process.send?.({ type: 'error', message: (err as Error)?.stack ?? String(err) }, () => process.exit(1));
    },
  );
}
