/** The package's binaries run as a user runs them, as child processes, with their output kept line by line. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
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
    const collect = (chunk: Buffer) => out.push(...chunk.toString().split('\n'));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    return { child, out, exit };
  }

  async tempDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), this.prefix));
    this.dirs.push(dir);
    return dir;
  }

  async cleanup(): Promise<void> {
    for (const child of this.running) child.kill('SIGTERM');
    for (const dir of this.dirs) await rm(dir, { recursive: true, force: true });
  }
}
