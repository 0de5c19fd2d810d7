/**
 * One end-to-end suite, two substrates: the same test file runs against the embedded control plane (in this
 * process, kubernetes flavor, three simulated nodes) and against a real kube-apiserver with kwok nodes (one cluster
 * shared by every suite of the vitest run, started by `test/cluster/global-setup.ts`), with the same assertions.
 *
 * Which substrate a run uses is the vitest project's (`vitest.config.ts`): project `embedded` provides
 * `substrate: 'embedded'`, project `real` provides `substrate: 'real'` and the shared cluster (`realCluster`, null
 * with the reason printed once when the binaries are not built). Files under `test/e2e/` belong to both projects;
 * `npm run test:cluster` runs the real project only; `npx vitest run --project embedded test/e2e/x.test.ts` one half.
 *
 * Interface (kept stable; additions only):
 *
 *   describeOnSubstrate(suite, (s) => { it(..., async () => { s().admin ... }) }, { daemon? })
 *     registers `describe('<suite> on the <kind> substrate')`, opens the substrate before its tests and closes it
 *     after them, adds a last test "the daemon met no forbidden request" (unless `daemon: false`), and prints one
 *     figures line: `figures: <suite> on <kind>: <t> s, daemon CPU <c> s, peak RSS <m> MiB (<n> daemons)`.
 *     `suite` is lowercase DNS-label text: it prefixes the suite's names on the shared cluster.
 *   substrateKind(): 'embedded' | 'real'.
 *
 *   Substrate (`s()` inside tests and hooks):
 *     kind, server, caPem, caFiles {certFile, keyFile}, registry, naming (kubernetes flavor on both), dir (scratch,
 *       removed at close), kubeconfig (admin, `system:masters`), admin (KubeClient as admin), kubectl (as admin),
 *       raw (RawClient as admin)
 *     api(method, path, body?, contentType?) -> RawResponse {code, json, ...}: one JSON request as admin, any status
 *     name(base) -> `<suite>-<base>`: a cluster-scoped name of this suite's own
 *     namespace(base) -> creates namespace `<suite>-<base>` (deleted at close) and returns its name
 *     identityKubeconfig({username, groups}) -> a kubeconfig with a client certificate of the cluster CA
 *     bootstrapToken(options?) -> a fresh bootstrap token (Secret in kube-system), as `id.secret`
 *     nodeAgent(nodeName, token?) -> a SimulatedNodeAgent (TLS bootstrap, renewals, whoAmI) for the substrate
 *     nodes() -> the names of the Ready nodes (kwok-node-N on real, the simulated nodes on embedded)
 *     startDaemon({name?, controllers?, args?, waitStarted?}) -> SubstrateDaemon: bin/orch-controller-manager.js
 *       with `--kubeconfig` of its own identity (a token of the ServiceAccount of deploy/kubernetes/rbac.yaml,
 *       which `kubectl apply -f` applied when the substrate opened: never admin), `--api-flavor=auto`, the cluster
 *       CA as signing CA, JSON logs, `--secure-port=0`; by default resolves once it logged `controllers started`.
 *     daemons: every daemon this suite started.
 *     writes() -> every write the API server has answered so far, from its audit log (level Metadata, one
 *       AuditEvent each; the real cluster's log holds the whole run's, the embedded plane's this suite's).
 *
 *   SubstrateDaemon: proc (test/support/daemons.ts Daemon: child, lines, identity, exit), started(timeoutMs?),
 *     log() (its output as text), usage() ({cpuSeconds, peakRssBytes} from /proc, sampled while it runs), stop()
 *     (SIGTERM, SIGKILL after 10 s).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Naming } from '../../src/api/naming.ts';
import { ResourceRegistry } from '../../src/api/registry.ts';
import { KubeClient } from '../../src/client/client.ts';
import { KubeConfig } from '../../src/client/kubeconfig.ts';
import type { AuditEvent } from '../../src/controlplane/audit.ts';
import { writeKubeconfig } from '../../src/controlplane/kubeconfig.ts';
import { issueKeyAndCertificate, loadCa } from '../../src/pki/certs.ts';
import { type BootstrapTokenOptions, createBootstrapToken } from '../../src/simulation/bootstrap-token.ts';
import { SimulatedNodeAgent } from '../../src/simulation/node-agent.ts';
import { startSimulatedNodes } from '../../src/simulation/nodes.ts';
import type { LocalClusterInfo } from '../cluster/local-cluster.ts';
import { startTestCluster } from './cluster.ts';
import { type Daemon, ROOT, spawnProcess } from './daemons.ts';
import { eventually } from './eventually.ts';
import { hasKubectl, Kubectl } from './kubectl.ts';
import { RawClient, type RawResponse } from './raw-https.ts';

export type SubstrateKind = 'embedded' | 'real';

declare module 'vitest' {
  export interface ProvidedContext {
    substrate: SubstrateKind;
    /** The shared real cluster of the run; null when its binaries are not built (the reason printed once). */
    realCluster: LocalClusterInfo | null;
  }
}

/** The shipped RBAC, applied as a user applies it. */
export const RBAC_MANIFEST = join(ROOT, 'deploy', 'kubernetes', 'rbac.yaml');
const NODES = 3;
const DAEMON_START_TIMEOUT_MS = 60_000;
const DAEMON_STOP_TIMEOUT_MS = 10_000;
const SAMPLE_INTERVAL_MS = 500;
const NAMESPACE_GONE_TIMEOUT_MS = 60_000;
/**
 * What the daemon logs when the API server's authorizer refuses it (a permission its RBAC lacks), in both planes'
 * words; not the other 403s, such as a create in a namespace being terminated.
 */
export const FORBIDDEN = /User \\?"[^"\\]*\\?" cannot [a-z]+ (resource|path) /;

export function substrateKind(): SubstrateKind {
  return inject('substrate') ?? 'embedded';
}

export interface Usage {
  cpuSeconds: number;
  peakRssBytes: number;
}

export interface SubstrateDaemon {
  readonly proc: Daemon;
  /** Resolves once the daemon runs its controllers (it leads); fails with its log after the timeout. */
  started(timeoutMs?: number): Promise<void>;
  log(): string;
  /** CPU (user + system) and peak RSS, read from /proc while it runs (the last sample once it has exited). */
  usage(): Usage;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  name?: string;
  /** `--controllers`; the daemon's default otherwise. */
  controllers?: string;
  args?: string[];
  /** Resolve only once its controllers run (default true); false for standbys. */
  waitStarted?: boolean;
}

export interface Substrate {
  readonly kind: SubstrateKind;
  readonly server: string;
  readonly caPem: string;
  readonly caFiles: { certFile: string; keyFile: string };
  readonly registry: ResourceRegistry;
  readonly naming: Naming;
  readonly dir: string;
  readonly kubeconfig: string;
  readonly admin: KubeClient;
  readonly kubectl: Kubectl;
  readonly raw: RawClient;
  readonly daemons: SubstrateDaemon[];
  api(method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse>;
  name(base: string): string;
  namespace(base: string): Promise<string>;
  identityKubeconfig(user: { username: string; groups: string[] }): Promise<string>;
  bootstrapToken(options?: BootstrapTokenOptions): Promise<string>;
  nodeAgent(nodeName: string, token?: string): SimulatedNodeAgent;
  nodes(): Promise<string[]>;
  startDaemon(options?: DaemonOptions): Promise<SubstrateDaemon>;
  writes(): Promise<AuditEvent[]>;
}

/** The plane under a substrate: where it is, and how it ends. */
interface Plane {
  server: string;
  kubeconfig: string;
  caFiles: { certFile: string; keyFile: string };
  registry: ResourceRegistry;
  auditLogPath: string;
  /** Resolves once every write answered so far is in the audit log. */
  flushAudit(): Promise<void>;
  stop(): Promise<void>;
}

async function embeddedPlane(): Promise<Plane> {
  const auditDir = await mkdtemp(join(tmpdir(), 'orch-e2e-audit-'));
  const auditLogPath = join(auditDir, 'audit.log');
  // The gates local-cluster.ts turns on in kube-apiserver, so the API accepts the same objects on both.
  const featureGates = {
    CoordinatedLeaderElection: true,
    ShardedListAndWatch: true,
    StatefulSetRecreateStrategy: true,
  };
  const c = await startTestCluster({ flavor: 'kubernetes', auditLogPath, featureGates });
  c.cp.attach(await startSimulatedNodes(c.cp, NODES));
  return {
    server: c.cp.url,
    kubeconfig: c.kubeconfig,
    caFiles: c.cp.caFiles,
    registry: c.cp.registry,
    auditLogPath,
    flushAudit: async () => c.cp.audit?.flush(),
    stop: async () => {
      await c.stop();
      await rm(auditDir, { recursive: true, force: true });
    },
  };
}

function realPlane(info: LocalClusterInfo): Plane {
  // The cluster outlives the suite: the run's global teardown stops it.
  // kube-apiserver's log backend writes each event before it answers (blocking mode): nothing to flush.
  return { ...info, registry: new ResourceRegistry('kubernetes'), flushAudit: async () => {}, stop: async () => {} };
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds (user + system) and peak RSS of a running process, or undefined once it is gone. */
export function processUsage(pid: number): Usage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the state, field 3: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuSeconds: ticks / CLOCK_TICKS, peakRssBytes: Number(hwm?.[1] ?? 0) * 1024 };
  } catch {
    return undefined;
  }
}

function substrateDaemon(proc: Daemon): SubstrateDaemon {
  let last: Usage = { cpuSeconds: 0, peakRssBytes: 0 };
  const sample = () => {
    const now = proc.exit || !proc.child.pid ? undefined : processUsage(proc.child.pid);
    if (now) last = now;
    return last;
  };
  const sampler = setInterval(sample, SAMPLE_INTERVAL_MS).unref();
  void proc.exited.then(() => clearInterval(sampler));
  const log = () => proc.lines.map((l) => JSON.stringify(l)).join('\n');
  return {
    proc,
    log,
    usage: sample,
    async started(timeoutMs = DAEMON_START_TIMEOUT_MS) {
      await eventually(
        () => proc.exit === undefined && proc.lines.some((l) => l.msg === 'controllers started'),
        timeoutMs,
        () => `${proc.name} running its controllers (exit: ${JSON.stringify(proc.exit)}); its log:\n${log()}`,
        50,
      );
    },
    async stop() {
      if (proc.exit) return;
      sample();
      proc.child.kill('SIGCONT');
      proc.child.kill('SIGTERM');
      const timer = setTimeout(() => proc.child.kill('SIGKILL'), DAEMON_STOP_TIMEOUT_MS);
      await proc.exited;
      clearTimeout(timer);
    },
  };
}

/** The ServiceAccount the shipped RBAC binds, as the manifest names it. */
function manifestServiceAccount(): { name: string; namespace: string } {
  const docs = parseAllDocuments(readFileSync(RBAC_MANIFEST, 'utf8')).map((d) => d.toJS());
  const sa = docs.find((d) => d?.kind === 'ServiceAccount');
  if (!sa) throw new Error(`${RBAC_MANIFEST}: no ServiceAccount`);
  return sa.metadata;
}

class OpenSubstrate implements Substrate {
  readonly naming: Naming;
  readonly admin: KubeClient;
  readonly kubectl: Kubectl;
  readonly raw: RawClient;
  readonly caPem: string;
  readonly daemons: SubstrateDaemon[] = [];
  private readonly namespaces: string[] = [];
  private daemonKubeconfig?: string;
  private files = 0;

  constructor(
    readonly kind: SubstrateKind,
    private readonly suite: string,
    private readonly plane: Plane,
    readonly dir: string,
    raw: RawClient,
  ) {
    this.naming = plane.registry.naming;
    const kc = new KubeConfig();
    kc.loadFromFile(plane.kubeconfig);
    this.admin = new KubeClient(kc, plane.registry, { qps: 0 });
    this.kubectl = new Kubectl(plane.kubeconfig, join(dir, 'kubectl-cache'));
    this.raw = raw;
    this.caPem = readFileSync(plane.caFiles.certFile, 'utf8');
  }

  get server() {
    return this.plane.server;
  }
  get kubeconfig() {
    return this.plane.kubeconfig;
  }
  get caFiles() {
    return this.plane.caFiles;
  }
  get registry() {
    return this.plane.registry;
  }

  api(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<RawResponse> {
    return this.raw.send({
      method,
      path,
      headers: { 'Content-Type': contentType, Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  name(base: string): string {
    return `${this.suite}-${base}`;
  }

  async namespace(base: string): Promise<string> {
    const name = this.name(base);
    await this.admin.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    this.namespaces.push(name);
    return name;
  }

  async identityKubeconfig(user: { username: string; groups: string[] }): Promise<string> {
    const ca = await loadCa(this.caPem, readFileSync(this.caFiles.keyFile, 'utf8'));
    const now = Date.now();
    const cert = await issueKeyAndCertificate({
      ca,
      subject: { commonName: user.username, organizations: user.groups },
      usages: ['client auth'],
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 24 * 3600_000),
    });
    const path = join(this.dir, `identity-${++this.files}.kubeconfig`);
    await writeKubeconfig(path, {
      server: this.server,
      caPem: this.caPem,
      user: { name: user.username, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem },
      clusterName: this.kind,
      contextName: this.kind,
    });
    return path;
  }

  async bootstrapToken(options: BootstrapTokenOptions = { ttlMs: 3600_000 }): Promise<string> {
    return (await createBootstrapToken(this.admin, options)).token;
  }

  nodeAgent(nodeName: string, token?: string): SimulatedNodeAgent {
    return new SimulatedNodeAgent({
      server: this.server,
      caPem: this.caPem,
      registry: this.registry,
      nodeName,
      bootstrapToken: token,
      expirationSeconds: 3600,
      timeoutMs: 30_000,
    });
  }

  async nodes(): Promise<string[]> {
    const { items } = await this.admin.kind('Node').list();
    const ready = (node: any) => node.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
    return items.filter(ready).map((node) => node.metadata.name as string);
  }

  /** Applies the shipped RBAC with kubectl and writes a kubeconfig with a token of its ServiceAccount. */
  private async ownIdentity(): Promise<string> {
    if (this.daemonKubeconfig) return this.daemonKubeconfig;
    await this.kubectl.ok(['apply', '-f', RBAC_MANIFEST]);
    const sa = manifestServiceAccount();
    const token = (await this.kubectl.ok(['create', 'token', sa.name, '-n', sa.namespace, '--duration=6h'])).trim();
    const path = join(this.dir, 'daemon.kubeconfig');
    await writeKubeconfig(path, {
      server: this.server,
      caPem: this.caPem,
      user: { name: `${sa.namespace}-${sa.name}`, token },
      clusterName: this.kind,
      contextName: this.kind,
    });
    this.daemonKubeconfig = path;
    return path;
  }

  async startDaemon(options: DaemonOptions = {}): Promise<SubstrateDaemon> {
    const kubeconfig = await this.ownIdentity();
    const proc = spawnProcess(options.name ?? `${this.suite}-daemon-${this.daemons.length + 1}`, [
      `--kubeconfig=${kubeconfig}`,
      '--api-flavor=auto',
      `--cluster-signing-cert-file=${this.caFiles.certFile}`,
      `--cluster-signing-key-file=${this.caFiles.keyFile}`,
      '--logging-format=json',
      '--secure-port=0',
      ...(options.controllers ? [`--controllers=${options.controllers}`] : []),
      ...(options.args ?? []),
    ]);
    const daemon = substrateDaemon(proc);
    this.daemons.push(daemon);
    if (options.waitStarted !== false) await daemon.started();
    return daemon;
  }

  async writes(): Promise<AuditEvent[]> {
    await this.plane.flushAudit();
    const lines = (await readFile(this.plane.auditLogPath, 'utf8')).split('\n').filter(Boolean);
    return lines.map((line) => JSON.parse(line) as AuditEvent).filter((e) => e.stage === 'ResponseComplete');
  }

  /**
   * Stops the daemons and removes what the suite made. The real cluster stays for the next suite: its namespaces are
   * waited for until gone, so that the next suite's daemon does not find this one's work still being torn down.
   */
  async close(): Promise<void> {
    await Promise.all(this.daemons.map((d) => d.stop()));
    const namespaces = this.admin.kind('Namespace');
    for (const name of this.namespaces) await namespaces.delete(undefined, name).catch(() => undefined);
    if (this.kind === 'real') {
      await eventually(
        async () => (await namespaces.list()).items.every((ns) => !this.namespaces.includes(ns.metadata.name ?? '')),
        NAMESPACE_GONE_TIMEOUT_MS,
        `namespaces ${this.namespaces.join(', ')} gone`,
        250,
      );
    }
    this.raw.close();
    await this.plane.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function openSubstrate(kind: SubstrateKind, suite: string): Promise<OpenSubstrate> {
  let plane: Plane;
  if (kind === 'real') {
    const info = inject('realCluster');
    if (!info) throw new Error('no real cluster was provided (run through the `real` vitest project)');
    plane = realPlane(info);
  } else {
    plane = await embeddedPlane();
  }
  const dir = await mkdtemp(join(tmpdir(), `orch-e2e-${suite}-`));
  return new OpenSubstrate(kind, suite, plane, dir, await RawClient.fromKubeconfig(plane.kubeconfig));
}

function figures(suite: string, kind: SubstrateKind, seconds: number, daemons: SubstrateDaemon[]): string {
  const usages = daemons.map((d) => d.usage());
  const cpu = usages.reduce((sum, u) => sum + u.cpuSeconds, 0);
  const peak = Math.max(0, ...usages.map((u) => u.peakRssBytes));
  return (
    `figures: ${suite} on ${kind}: ${seconds.toFixed(1)} s, daemon CPU ${cpu.toFixed(2)} s, ` +
    `peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB (${daemons.length} daemon${daemons.length === 1 ? '' : 's'})`
  );
}

/** Registers a suite that runs on this project's substrate; see the header for what it does. */
export function describeOnSubstrate(
  suite: string,
  body: (s: () => Substrate) => void,
  { daemon = true }: { /** The suite starts the daemon (else no forbidden-request check). */ daemon?: boolean } = {},
): void {
  const kind = substrateKind();
  // The shipped RBAC is applied with kubectl, as a user applies it.
  if (!hasKubectl) console.warn(`${suite} on ${kind}: skipped, no kubectl (PATH, $KUBECTL or npm run k8s:build)`);
  const unavailable = !hasKubectl || (kind === 'real' && !inject('realCluster'));
  describe.skipIf(unavailable)(`${suite} on the ${kind} substrate`, () => {
    let s: OpenSubstrate | undefined;
    let started = 0;
    beforeAll(async () => {
      s = await openSubstrate(kind, suite);
      started = performance.now();
    }, 240_000);
    afterAll(async () => {
      if (!s) return;
      const seconds = (performance.now() - started) / 1000;
      for (const d of s.daemons) d.usage();
      if (s.daemons.length) console.log(figures(suite, kind, seconds, s.daemons));
      await s.close();
    }, 2 * NAMESPACE_GONE_TIMEOUT_MS);
    const get = () => {
      if (!s) throw new Error(`${suite}: the substrate is not open (inside a test or hook only)`);
      return s;
    };
    body(get);
    if (!daemon) return;
    it('the daemon met no forbidden request', () => {
      expect(get().daemons.length, 'the suite started no daemon').toBeGreaterThan(0);
      for (const d of get().daemons) {
        expect(d.proc.lines.map((l) => JSON.stringify(l)).filter((l) => FORBIDDEN.test(l))).toEqual([]);
      }
    });
  });
}
