/**
 * Lints our Prometheus text output with the real `promtool check metrics`. Skips when promtool is not installed
 * (Debian: `apt-get install -y prometheus`).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { naming } from '../src/api/naming.ts';
import { renderMetrics } from '../src/diagnostics/metrics/exposition.ts';
import { nativeHistogram } from '../src/diagnostics/metrics/native-histogram.ts';
import { sliMetrics } from '../src/diagnostics/metrics/slis.ts';
import { standardMetrics } from '../src/diagnostics/metrics/standard.ts';

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

/** prom-client's own gauges whose names end in `_total`, which promtool's linter dislikes; not ours to rename. */
const PROM_CLIENT_TOTAL_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

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

  it("parses the output with prom-client's runtime metrics; the only lint findings are prom-client's names", async () => {
    const { status, output } = promtool(await exposition(true));
    const findings = output ? output.split('\n') : [];
    // Exit code 1 would be a parse error; 3 means lint findings only.
    expect([0, 3]).toContain(status);
    for (const line of findings) {
      expect(
        PROM_CLIENT_TOTAL_GAUGES.some((name) => line.startsWith(`${name} `)),
        line,
      ).toBe(true);
    }
  });

  it('rejects broken input (the check is live)', () => {
    expect(promtool('# TYPE x counter\nx{ 1\n').status).not.toBe(0);
  });
});
