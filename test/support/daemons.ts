/**
 * Real `orch-controller-manager` processes for HA tests: spawned with JSON logs, every line parsed and kept, the
 * identity taken from the `starting` line, the exit recorded with its wall time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(ROOT, 'bin', 'orch-controller-manager.js');

export interface LogLine {
  level?: string;
  msg?: string;
  ts?: number;
  [k: string]: unknown;
}

export interface Daemon {
  name: string;
  child: ChildProcess;
  identity?: string;
  lines: LogLine[];
  exit?: { code: number | null; signal: NodeJS.Signals | null; wall: number };
  exited: Promise<void>;
}

export interface ReplicaSettings {
  kubeconfig: string;
  leaseMs: number;
  renewDeadlineMs: number;
  retryMs: number;
  /** `--controllers`; every controller by default. */
  controllers?: string;
  extraArgs?: string[];
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  ms: number,
): Promise<T> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const v = await fn();
    if (v !== undefined) return v;
    await sleep(10);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

/** The wall time (ms) of the first log line of `d` with message starting with `prefix`, after `afterWall`. */
export function logged(d: Daemon, prefix: string, afterWall = 0): number | undefined {
  const line = d.lines.find((l) => l.msg?.startsWith(prefix) && (l.ts ?? 0) * 1000 >= afterWall);
  return line?.ts === undefined ? undefined : line.ts * 1000;
}

/** Starts one daemon process with these arguments, its output parsed line by line. */
export function spawnProcess(name: string, args: string[]): Daemon {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const d: Daemon = { name, child, lines: [], exited: Promise.resolve() };
  const collect = (stream: NodeJS.ReadableStream) =>
    createInterface({ input: stream }).on('line', (line) => {
      let parsed: LogLine;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = { msg: line };
      }
      d.lines.push(parsed);
      if (parsed.msg === 'starting' && typeof parsed.identity === 'string') d.identity = parsed.identity;
    });
  collect(child.stdout!);
  collect(child.stderr!);
  d.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      d.exit = { code, signal, wall: Date.now() };
      resolve();
    });
  });
  return d;
}

/** Starts one replica with JSON logs and no diagnostics server (replicas on one host would share its port). */
export function spawnDaemon(name: string, s: ReplicaSettings): Daemon {
  return spawnProcess(name, [
    `--kubeconfig=${s.kubeconfig}`,
    '--api-flavor=orch',
    `--controllers=${s.controllers ?? '*'}`,
    `--leader-elect-lease-duration=${s.leaseMs}ms`,
    `--leader-elect-renew-deadline=${s.renewDeadlineMs}ms`,
    `--leader-elect-retry-period=${s.retryMs}ms`,
    '--logging-format=json',
    '--v=2',
    '--secure-port=0',
    ...(s.extraArgs ?? []),
  ]);
}

/** The daemons a test started: spawn, look up, and kill what is left at the end. */
export class Daemons {
  readonly all: Daemon[] = [];

  spawn(name: string, args: string[]): Daemon {
    const d = spawnProcess(name, args);
    this.all.push(d);
    return d;
  }

  alive(): Daemon[] {
    return this.all.filter((d) => !d.exit);
  }

  byIdentity(identity: string): Daemon | undefined {
    return this.all.find((d) => d.identity === identity);
  }

  /**
   * Daemons whose own logs say they lead the daemon's Lease now: became leader, not since failed to renew, still
   * running. Lines about a Lease of some controllers' own (they carry `lease`) do not count.
   */
  believers(): Daemon[] {
    return this.alive().filter((d) => {
      const own = (l: LogLine) => l.lease === undefined;
      const became = d.lines.findLastIndex((l) => own(l) && l.msg === 'became leader; starting controllers');
      const lost = d.lines.findLastIndex((l) => own(l) && (l.msg?.startsWith('failed to renew lease') ?? false));
      return became >= 0 && lost < became;
    });
  }

  /** SIGKILLs whatever still runs and waits (at most 5 s) for the exits. */
  killAll(): Promise<void> {
    return killAll(this.all);
  }
}

/** Waits until `d` has started and is campaigning (it logged its first acquire attempt). */
export async function campaigning(d: Daemon, ms: number): Promise<void> {
  await waitFor(
    `${d.name} campaigning`,
    () => (logged(d, 'attempting to acquire leader lease') ? true : undefined),
    ms,
  );
}

/** SIGKILLs every replica still running and waits (bounded) for them to go. */
export async function killAll(daemons: Daemon[]): Promise<void> {
  for (const d of daemons) {
    if (d.exit) continue;
    d.child.kill('SIGCONT');
    d.child.kill('SIGKILL');
  }
  await Promise.race([Promise.all(daemons.map((d) => d.exited)), sleep(5_000)]);
}
