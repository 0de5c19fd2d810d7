/**
 * The daemon's process contract outside leader election (test/ha.test.ts covers that): usage errors
 * are one line on stderr and exit 1; without leader election it starts the controllers at once, and
 * SIGTERM stops them and exits 0 within a bounded time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'orch-controller-manager.js');

let cluster: TestCluster;
const children: ChildProcess[] = [];

beforeAll(async () => {
  cluster = await startTestCluster();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await cluster?.stop();
});

interface Run {
  child: ChildProcess;
  stderr: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function daemon(args: string[]): Run {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  createInterface({ input: child.stdout! }).on('line', (line) => stderr.push(line));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stderr, exit };
}

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms))]);

describe('orch-controller-manager process', () => {
  it('reports usage errors in one line and exits 1', { timeout: 60_000 }, async () => {
    const base = [`--kubeconfig=${cluster.kubeconfig}`, '--api-flavor=orch', '--secure-port=0'];
    const [unknownController, unknownFlag, badFormat] = [
      daemon([...base, '--controllers=*,-nope']),
      daemon([...base, '--no-such-flag']),
      daemon([...base, '--logging-format=yaml']),
    ];
    const results = await Promise.all([unknownController, unknownFlag, badFormat].map((r) => within(r.exit, 45_000)));
    expect(results).toEqual([
      { code: 1, signal: null },
      { code: 1, signal: null },
      { code: 1, signal: null },
    ]);
    // One line each, naming the flag and the bad value (the wording belongs to the flag and config parsers).
    const oneLine = (r: Run, pattern: RegExp) => {
      expect(r.stderr).toHaveLength(1);
      expect(r.stderr[0]).toMatch(pattern);
    };
    oneLine(unknownController, /^Error: .*--controllers.*"nope"/);
    oneLine(unknownFlag, /^Error: .*--no-such-flag/);
    oneLine(badFormat, /^Error: .*--logging-format.*"yaml"/);
  });

  it('without leader election starts at once, and SIGTERM stops it with exit 0', { timeout: 60_000 }, async () => {
    const run = daemon([
      `--kubeconfig=${cluster.kubeconfig}`,
      '--api-flavor=orch',
      '--leader-elect=false',
      '--logging-format=json',
      // No diagnostics server: the default port may be taken by another test's daemon.
      '--secure-port=0',
    ]);
    const deadline = performance.now() + 45_000;
    const started = () => run.stderr.some((l) => l.includes('"msg":"controllers started"'));
    while (!started() && performance.now() < deadline && run.child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(started()).toBe(true);
    // No election happened.
    expect(run.stderr.some((l) => l.includes('attempting to acquire leader lease'))).toBe(false);
    const term = performance.now();
    run.child.kill('SIGTERM');
    const result = await within(run.exit, 15_000);
    const took = performance.now() - term;
    expect(result).toEqual({ code: 0, signal: null });
    // Well inside the manager's 10 s shutdown timeout: nothing was stuck.
    expect(took).toBeLessThan(5_000);
    for (const line of run.stderr) expect(() => JSON.parse(line)).not.toThrow();
  });
});
