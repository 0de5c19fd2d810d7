/**
 * Lints our Prometheus text output with the real `promtool check metrics`. Skips when promtool is not installed
 * (Debian: `apt-get install -y prometheus`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Registry } from 'prom-client';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { naming } from '../src/api/naming.ts';
import { renderMetrics } from '../src/diagnostics/metrics/exposition.ts';
import { nativeHistogram } from '../src/diagnostics/metrics/native-histogram.ts';
import { sliMetrics } from '../src/diagnostics/metrics/slis.ts';
import { standardMetrics } from '../src/diagnostics/metrics/standard.ts';
import { startTestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';
import { freePort } from './support/free-port.ts';

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {}
  }
  return undefined;
}

const PROMTOOL = which('promtool');
const SKIP_REASON = 'SKIPPED: promtool not found on PATH (install it with `apt-get install -y prometheus`)';
if (!PROMTOOL) console.warn(`metrics-promtool: ${SKIP_REASON}`);

async function exposition(runtime: boolean): Promise<string> {
  const registry = new Registry();
  const n = naming();
  const { observeClientRequest } = standardMetrics(registry, {
    naming: n,
    gates: [{ name: 'NativeHistograms', stage: 'BETA', enabled: true }],
    build: {
      major: '1',
      minor: '34',
      gitVersion: 'v1.34.0',
      gitCommit: 'abc',
      gitTreeState: 'clean',
      buildDate: '2026-01-01T00:00:00Z',
    },
    runtime,
  });
  observeClientRequest({ method: 'GET', code: 200, host: '127.0.0.1:6443', seconds: 0.05 });
  observeClientRequest({ method: 'POST', code: 0, host: '127.0.0.1:6443', seconds: 1.5 });
  sliMetrics(n, registry).recordHealthCheck('readyz', 'informer-sync', true);
  const h = nativeHistogram({
    name: 'lint_latency_seconds',
    help: 'A native histogram.',
    labelNames: ['op'],
    registers: [registry],
  });
  for (const v of [0.001, 0.2, 3, -1]) h.observe({ op: 'a "quoted" op' }, v);
  return (await renderMetrics(registry, 'text/plain', { nativeHistograms: true })).body as string;
}

/** Starts the real daemon against an embedded control plane and reads its `/metrics` as the admin. */
async function daemonMetrics(): Promise<string> {
  const cluster = await startTestCluster();
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      'bin/orch-controller-manager.js',
      `--kubeconfig=${cluster.kubeconfig}`,
      '--leader-elect=false',
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      `--client-ca-file=${cluster.cp.caFiles.certFile}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  try {
    const lines: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
    await eventually(() => lines.some((l) => l.includes('controllers started')), 60_000, 'the daemon to start');
    const user = cluster.kc.getCurrentUser()!;
    const dispatcher = new Agent({
      connect: {
        cert: Buffer.from(user.certData!, 'base64'),
        key: Buffer.from(user.keyData!, 'base64'),
        rejectUnauthorized: false,
      },
    });
    const res = await request(`https://127.0.0.1:${port}/metrics`, { dispatcher });
    expect(res.statusCode).toBe(200);
    return await res.body.text();
  } finally {
    child.kill('SIGTERM');
    await cluster.stop();
  }
}

function promtool(input: string) {
  const r = spawnSync(PROMTOOL!, ['check', 'metrics'], { input, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describe.skipIf(!PROMTOOL)(PROMTOOL ? 'promtool check metrics' : `promtool check metrics (${SKIP_REASON})`, () => {
  it('passes our metrics with no findings', async () => {
    const { status, output } = promtool(await exposition(false));
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it("passes with prom-client's process and runtime metrics too", async () => {
    const { status, output } = promtool(await exposition(true));
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it("passes the running daemon's own /metrics", { timeout: 120_000 }, async () => {
    const { status, output } = promtool(await daemonMetrics());
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('rejects broken input (the check is live)', () => {
    expect(promtool('# TYPE x counter\nx{ 1\n').status).not.toBe(0);
  });
});
