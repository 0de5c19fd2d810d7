/**
 * `npm run bench -- startup`: the time from spawning what `npm start` runs (`node bin/orch-controller-manager.js
 * --embedded`, on free ports and a data directory of its own) to its "controllers started" log line, with a fresh
 * data directory and with the warm one of the round before; and `npm start` itself, npm's own start-up included.
 * The floor is node with tsx loaded and nothing else (`node --import tsx -e 0`), timed in the same rounds, the
 * order of the sides alternating. The bundle the daemon runs from is built before the rounds (a start after a
 * source change pays that build once).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { interleaved, type Paired, printPaired } from './run.ts';

const ROUNDS = 5;
const ROOT = resolve(import.meta.dirname, '..');
const STARTED = 'controllers started';
const TIMEOUT_MS = 120_000;

/** Milliseconds from spawning `command` to the first output containing `until` (or to its exit); then stops it. */
function timed(command: string, args: string[], until?: string): Promise<number> {
  return new Promise((done, fail) => {
    const started = performance.now();
    // A group of its own: npm's shell and the daemon under it stop together.
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stop = (signal: NodeJS.Signals) => process.kill(-child.pid!, signal);
    let seen = '';
    let ms: number | undefined;
    const timer = setTimeout(() => stop('SIGKILL'), TIMEOUT_MS);
    const watch = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4096);
      if (until && ms === undefined && seen.includes(until)) {
        ms = performance.now() - started;
        stop('SIGTERM');
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!until && code === 0) done(performance.now() - started);
      else if (until && ms !== undefined) done(ms);
      else fail(new Error(`${command} ${args.join(' ')} exited with ${code} before "${until}":\n${seen}`));
    });
  });
}

const daemonArgs = (dataDir: string) => [
  '--embedded',
  '--embedded-secure-port=0',
  '--secure-port=0',
  `--data-dir=${dataDir}`,
];

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-startup-'));
  const floor = () => timed(process.execPath, ['--import', 'tsx', '-e', '0']);
  const daemon = (dataDir: string) =>
    timed(process.execPath, ['bin/orch-controller-manager.js', ...daemonArgs(dataDir)], STARTED);
  try {
    const warm = join(dir, 'warm');
    // Builds the bundle if a source changed, and fills the warm data directory.
    await daemon(warm);
    let fresh = 0;
    const figures: Paired[] = [
      {
        name: 'fresh data directory (CA, keys, seeding)',
        unit: 'ms',
        floorName: 'node --import tsx -e 0',
        rounds: await interleaved(ROUNDS, () => daemon(join(dir, `fresh-${fresh++}`)), floor),
      },
      {
        name: 'warm data directory',
        unit: 'ms',
        floorName: 'node --import tsx -e 0',
        rounds: await interleaved(ROUNDS, () => daemon(warm), floor),
      },
      {
        name: 'npm start (warm data directory)',
        unit: 'ms',
        floorName: 'node --import tsx -e 0',
        rounds: await interleaved(
          ROUNDS,
          () => timed('npm', ['start', '--', ...daemonArgs(warm).slice(1)], STARTED),
          floor,
        ),
      },
    ];
    printPaired(`npm start to "${STARTED}" (${ROUNDS} paired rounds, goal ≤ 1,500 ms)`, figures);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
