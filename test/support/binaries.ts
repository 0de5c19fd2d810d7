/** The package's binaries run as a user runs them, as child processes, with their output kept line by line. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './daemons.ts';

export const DAEMON = join(ROOT, 'bin', 'orch-controller-manager.js');
export const CONTROL_PLANE = join(ROOT, 'bin', 'orch-control-plane.js');

export interface Run {
  child: ChildProcess;
  /** stdout and stderr, split into lines as they arrive. */
  out: string[];
  exit: Promise<number | null>;
}

/** Starts binaries and temporary directories, and ends them all in `cleanup` (call it in `afterAll`). */
export class Binaries {
  private readonly running: ChildProcess[] = [];
  private readonly dirs: string[] = [];

  constructor(private readonly prefix: string) {}

  run(bin: string, args: string[]): Run {
    const child = spawn(process.execPath, [bin, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.running.push(child);
    const out: string[] = [];
    // Whole lines, however the output is cut into chunks; 'close' comes after the last of them.
    for (const stream of [child.stdout!, child.stderr!])
      createInterface({ input: stream }).on('line', (l) => out.push(l));
    const exit = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    return { child, out, exit };
  }

  async tempDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), this.prefix));
    this.dirs.push(dir);
    return dir;
  }

  /** Stops what still runs (SIGKILL after 5 s), then removes the directories it used. */
  async cleanup(): Promise<void> {
    await Promise.all(
      this.running
        .filter((child) => child.exitCode === null && child.signalCode === null)
        .map(
          (child) =>
            new Promise<void>((done) => {
              const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
              child.once('exit', () => {
                clearTimeout(timer);
                done();
              });
              child.kill('SIGTERM');
            }),
        ),
    );
    for (const dir of this.dirs) await rm(dir, { recursive: true, force: true });
  }
}
