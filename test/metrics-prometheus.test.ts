/**
 * A real Prometheus scrapes our exposition: the negotiated endpoint (protobuf, native histograms on), and the
 * OpenMetrics and text formats forced on their own paths. Skips when `prometheus` is not installed (Debian:
 * `apt-get install -y prometheus`). Every wait is bounded; the server and Prometheus stop in afterAll.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { naming } from '../src/api/naming.ts';
import { renderMetrics } from '../src/diagnostics/metrics/exposition.ts';
import { nativeHistogram } from '../src/diagnostics/metrics/native-histogram.ts';
import { standardMetrics } from '../src/diagnostics/metrics/standard.ts';
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

const PROMETHEUS = which('prometheus');
const SKIP_REASON = 'SKIPPED: prometheus not found on PATH (install it with `apt-get install -y prometheus`)';
if (!PROMETHEUS) console.warn(`metrics-prometheus: ${SKIP_REASON}`);

const HISTOGRAM = 'scrape_test_latency_seconds';
/** Forced formats by path; `/metrics` negotiates by the scraper's Accept. */
const FORCED: Record<string, string | undefined> = {
  '/metrics': undefined,
  '/metrics-openmetrics': 'application/openmetrics-text; version=1.0.0',
  '/metrics-text': 'text/plain; version=0.0.4',
};
const JOBS = { negotiated: '/metrics', openmetrics: '/metrics-openmetrics', text: '/metrics-text' };

/** Major and minor of `prometheus --version`, to pick how native histograms are switched on. */
function version(bin: string): [number, number] {
  const out = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const m = out.match(/version (\d+)\.(\d+)/);
  if (!m) throw new Error(`cannot read the Prometheus version from: ${out}`);
  return [Number(m[1]), Number(m[2])];
}

describe.skipIf(!PROMETHEUS)(
  PROMETHEUS ? 'a real Prometheus scrape' : `a real Prometheus scrape (${SKIP_REASON})`,
  () => {
    let server: Server;
    let prometheus: ChildProcess | undefined;
    let dir: string;
    let api: string;
    let stderr = '';
    const accepts: Record<string, string | undefined> = {};

    beforeAll(async () => {
      const registry = new Registry();
      const { observeClientRequest } = standardMetrics(registry, {
        naming: naming(),
        gates: [{ name: 'NativeHistograms', stage: 'BETA', enabled: true }],
        build: { major: '1', minor: '34', gitVersion: 'v1.34.0' },
      });
      for (let i = 0; i < 7; i++)
        observeClientRequest({ method: 'GET', code: 200, host: '127.0.0.1:6443', seconds: 0.01 * i });
      const h = nativeHistogram({
        name: HISTOGRAM,
        help: 'Scraped by the test.',
        labelNames: ['op'],
        classicBuckets: [25, 50, 75, 100],
        registers: [registry],
      });
      for (let v = 1; v <= 100; v++) h.observe({ op: 'sync' }, v);

      server = createServer((req, res) => {
        const path = req.url ?? '';
        if (!(path in FORCED)) {
          res.writeHead(404).end();
          return;
        }
        accepts[path] = req.headers.accept;
        renderMetrics(registry, FORCED[path] ?? req.headers.accept, { nativeHistograms: true }).then(
          ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
          (err) => res.writeHead(500).end(String(err)),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;

      const [major, minor] = version(PROMETHEUS!);
      dir = mkdtempSync(join(tmpdir(), 'metrics-prometheus-'));
      const perJob = major >= 3 ? '\n    scrape_native_histograms: true' : '';
      const jobs = Object.entries(JOBS).map(
        ([job, path]) =>
          `  - job_name: ${job}\n    metrics_path: ${path}${perJob}\n    static_configs:\n      - targets: ['${target}']`,
      );
      writeFileSync(
        join(dir, 'prometheus.yml'),
        `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n${jobs.join('\n')}\n`,
      );
      const port = await freePort();
      api = `http://127.0.0.1:${port}`;
      const args = [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ];
      if (major < 3 || (major === 3 && minor < 9)) args.push('--enable-feature=native-histograms');
      prometheus = spawn(PROMETHEUS!, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      prometheus.stderr?.on('data', (chunk) => {
        stderr = (stderr + chunk).slice(-8000);
      });
      await eventually(
        async () => {
          if (prometheus?.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
          return (await fetch(`${api}/-/ready`)).ok || undefined;
        },
        20_000,
        'Prometheus to become ready',
        250,
      );
    });

    afterAll(async () => {
      if (prometheus && prometheus.exitCode === null) {
        const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
        prometheus.kill('SIGTERM');
        const stopped = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
        if (!stopped) prometheus.kill('SIGKILL');
      }
      await new Promise((resolve) => server?.close(resolve));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** The vector of an instant query (throws on API errors). */
    async function query(
      promql: string,
    ): Promise<Array<{ metric: Record<string, string>; value?: [number, string]; histogram?: unknown }>> {
      const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const json = (await res.json()) as { status: string; error?: string; data: { result: never[] } };
      if (json.status !== 'success') throw new Error(`${promql}: ${json.error}`);
      return json.data.result;
    }

    async function scalarOf(promql: string): Promise<number> {
      const result = await eventually(
        async () => {
          const r = await query(promql);
          return r.length ? r : undefined;
        },
        25_000,
        promql,
        250,
      );
      return Number(result[0].value![1]);
    }

    it('scrapes all three formats successfully', async () => {
      for (const job of Object.keys(JOBS)) {
        expect(await scalarOf(`up{job="${job}"} == 1`), `${job} (prometheus log: ${stderr})`).toBe(1);
      }
      for (const job of Object.keys(JOBS)) {
        expect(await scalarOf(`sum(rest_client_requests_total{job="${job}"})`)).toBe(7);
      }
    }, 45_000);

    it('negotiates protobuf and answers histogram_quantile on the native histogram', async () => {
      const count = await scalarOf(`histogram_count(${HISTOGRAM}{job="negotiated"})`);
      expect(count).toBe(100);
      expect(accepts['/metrics']).toMatch(/^application\/vnd\.google\.protobuf/);
      const median = await scalarOf(`histogram_quantile(0.5, ${HISTOGRAM}{job="negotiated"})`);
      expect(median).toBeGreaterThan(45); // true median 50.5; schema 3 buckets are ~9% wide
      expect(median).toBeLessThan(56);
      const [sample] = await query(`${HISTOGRAM}{job="negotiated"}`);
      expect(sample.histogram, 'stored as a native histogram').toBeDefined();
      // With native ingestion the classic series of that scrape are not stored (spec §6).
      expect(await query(`${HISTOGRAM}_bucket{job="negotiated"}`)).toEqual([]);
    }, 45_000);

    it('reads the classic buckets from the OpenMetrics and text scrapes', async () => {
      for (const job of ['openmetrics', 'text']) {
        expect(await scalarOf(`${HISTOGRAM}_count{job="${job}"}`)).toBe(100);
        const median = await scalarOf(`histogram_quantile(0.5, ${HISTOGRAM}_bucket{job="${job}"})`);
        expect(median).toBeCloseTo(50, 5); // linear within the classic bucket (25, 50]
      }
    }, 45_000);
  },
);
