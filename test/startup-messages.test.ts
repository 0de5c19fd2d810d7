/**
 * What the binaries say when they cannot start, run as a newcomer runs them (child processes): a second daemon or
 * control plane on a data directory in use, and a busy diagnostics port, each answer one line naming the flag
 * that gets out of it, before any banner, and exit non-zero.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.ts';

const ROOT = resolve(import.meta.dirname, '..');
const DAEMON = join(ROOT, 'bin', 'orch-controller-manager.js');
const CONTROL_PLANE = join(ROOT, 'bin', 'orch-control-plane.js');
const running: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const child of running) child.kill('SIGTERM');
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

interface Run {
  out: string[];
  exit: Promise<number | null>;
}

function run(bin: string, args: string[]): Run {
  const child = spawn(process.execPath, [bin, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  const out: string[] = [];
  const collect = (chunk: Buffer) => out.push(...chunk.toString().split('\n'));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { out, exit };
}

/** The daemon with its own control plane, on free ports, with no simulated nodes. */
const daemon = (dataDir: string, ...args: string[]) =>
  run(DAEMON, [
    '--embedded',
    '--embedded-secure-port=0',
    '--secure-port=0',
    '--simulated-nodes=0',
    `--data-dir=${dataDir}`,
    ...args,
  ]);

const controlPlane = (dataDir: string, ...args: string[]) =>
  run(CONTROL_PLANE, ['--secure-port=0', '--simulated-nodes=0', `--data-dir=${dataDir}`, ...args]);

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-startup-'));
  dirs.push(dir);
  return dir;
}

const started = (r: Run) =>
  eventually(() => r.out.some((l) => l.startsWith('try, in another terminal')), 120_000, 'the banner', 100);

/** Exits non-zero having printed exactly this one line. */
async function refuses(r: Run, line: string): Promise<void> {
  expect(await r.exit).toBe(1);
  expect(r.out.filter(Boolean)).toEqual([`Error: ${line}`]);
}

describe('a data directory in use', () => {
  it('a second daemon or control plane on it answers one line naming the directory and --data-dir', {
    timeout: 180_000,
  }, async () => {
    const dir = join(await tempDir(), 'data');
    await started(daemon(dir));
    const line =
      `the data directory ${dir} is in use by another process (its store is locked: ${join(dir, 'store', 'LOCK')}); ` +
      'stop that process or pass another --data-dir';
    await refuses(daemon(dir), line);
    await refuses(controlPlane(dir), line);
  });
});

describe('a busy diagnostics port', () => {
  it('is one line naming --secure-port, before any banner, and nothing is written', { timeout: 120_000 }, async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    try {
      const dir = join(await tempDir(), 'data');
      await refuses(
        daemon(dir, `--secure-port=${port}`, '--bind-address=127.0.0.1'),
        `port ${port} on 127.0.0.1 is already in use: stop what holds it, or choose another with --secure-port`,
      );
      await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    } finally {
      holder.close();
    }
  });

  it('the same port given to both listeners is one line naming both flags', { timeout: 120_000 }, async () => {
    const dir = join(await tempDir(), 'data');
    await refuses(
      daemon(dir, '--embedded-secure-port=7443', '--secure-port=7443'),
      '--embedded-secure-port and --secure-port are both 7443: choose another port for one of them',
    );
  });
});
