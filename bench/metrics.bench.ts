/**
 * `npm run bench -- metrics`: rendering `/metrics` (`renderMetrics`, what the diagnostics server calls per
 * scrape) for 1,000 series of one family, in each format we serve (text 0.0.4, OpenMetrics 1.0, delimited
 * protobuf), for three registries: counters, classic histograms with prom-client's default buckets (the
 * same as client_golang's DefBuckets: 11 and +Inf), and native histograms (12 classic buckets too).
 *
 * Two references, each measured in rounds alternating with ours (median and range of the paired ratios):
 * the floor, a plain `join` of the text format's lines precomputed (the bytes, none of the work of getting
 * them), and the peer, prom-client's own text rendering of the same registry (`registry.metrics()`).
 * Every side ends with the body encoded as UTF-8 bytes, as the server's write does. A round is the mean of
 * RENDERS renders; the goal for 1,000 classic histograms is ≤ 15 ms in text. For text 0.0.4 the render's CPU
 * time is printed too (the process's, GC threads included): on a loaded machine the wall time is mostly waiting
 * for a core. Both medians are also printed as a ratio to the goal.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { CONTENT_TYPES, renderMetrics } from '../src/diagnostics/metrics/exposition.ts';
import { nativeHistogram } from '../src/diagnostics/metrics/native-histogram.ts';
import { type Figure, interleaved, pairedFigure, print } from './run.ts';

const SERIES = 1000;
const ROUNDS = 7;
const RENDERS = 5;
const GOAL_MS = 15;
const GOAL = { name: `the ${GOAL_MS} ms goal`, value: GOAL_MS };

/**
 * The body as the bytes the server writes: a string built by concatenation is a rope until flattened, which the
 * write would do, so each side of a comparison pays for it.
 */
function encoded(body: string | Buffer): Buffer {
  return typeof body === 'string' ? Buffer.from(body) : body;
}

/** Mean milliseconds of one call of `fn` over RENDERS calls. */
async function timed(fn: () => unknown): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < RENDERS; i++) await fn();
  return (performance.now() - started) / RENDERS;
}

/** Mean CPU milliseconds (the process's, GC threads included) of one call of `fn` over RENDERS calls. */
async function cpuTimed(fn: () => unknown): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < RENDERS; i++) await fn();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000 / RENDERS;
}

function counters(): Registry {
  const registry = new Registry();
  const c = new Counter({
    name: 'bench_requests_total',
    help: 'Requests.',
    labelNames: ['code', 'method', 'host'],
    registers: [registry],
  });
  for (let i = 0; i < SERIES; i++) c.inc({ code: String(200 + (i % 5)), method: `m${i % 7}`, host: `h${i}` }, i);
  return registry;
}

/** 1,000 series of `observe`, 50 observations each spread over the buckets. */
function observed(observe: (labels: Record<string, string>, v: number) => void): void {
  for (let i = 0; i < SERIES; i++) {
    for (let j = 0; j < 50; j++) observe({ verb: `v${i % 4}`, host: `h${i}` }, Math.exp((j - 25) / 5));
  }
}

function classicHistograms(): Registry {
  const registry = new Registry();
  const h = new Histogram({
    name: 'bench_duration_seconds',
    help: 'Durations.',
    labelNames: ['verb', 'host'],
    registers: [registry],
  });
  observed((labels, v) => h.observe(labels, v));
  return registry;
}

function nativeHistograms(): Registry {
  const registry = new Registry();
  const h = nativeHistogram({
    name: 'bench_duration_seconds',
    help: 'Durations.',
    labelNames: ['verb', 'host'],
    classicBuckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers: [registry],
  });
  observed((labels, v) => h.observe(labels, v));
  return registry;
}

const FORMATS = [
  ['text 0.0.4', CONTENT_TYPES.text, false],
  ['OpenMetrics 1.0', CONTENT_TYPES.openmetrics, false],
  ['protobuf, classic buckets only', CONTENT_TYPES.protobuf, false],
  ['protobuf, native histograms on', CONTENT_TYPES.protobuf, true],
] as const;

export async function run(): Promise<void> {
  for (const [label, registry] of [
    ['counters', counters()],
    ['classic histograms (default buckets)', classicHistograms()],
    ['native histograms (12 classic buckets)', nativeHistograms()],
  ] as const) {
    const text = (await renderMetrics(registry, CONTENT_TYPES.text, { nativeHistograms: false })).body as string;
    const lines = text.slice(0, -1).split('\n');
    const joined = () => encoded(`${lines.join('\n')}\n`);
    const floor = () => timed(joined);
    const peer = () => timed(async () => encoded(await registry.metrics()));
    const figures: Figure[] = [];
    for (const [name, accept, nativeHistograms] of FORMATS) {
      if (nativeHistograms && !label.startsWith('native')) continue;
      const render = async () => encoded((await renderMetrics(registry, accept, { nativeHistograms })).body);
      const ours = () => timed(render);
      await ours(); // warm-up (JIT)
      const { body } = await renderMetrics(registry, accept, { nativeHistograms });
      figures.push({ name: `${name}: bytes`, value: Buffer.byteLength(body), unit: 'B' });
      const wall = pairedFigure(
        `${name}: render`,
        'ms',
        'join of the text lines',
        await interleaved(ROUNDS, ours, floor),
      );
      figures.push(wall);
      figures.push(
        pairedFigure(`${name}: render`, 'ms', "prom-client's own text", await interleaved(ROUNDS, ours, peer)),
      );
      if (accept === CONTENT_TYPES.text) {
        // CPU rather than wall: on a loaded machine, what the render itself costs.
        const oursCpu = () => cpuTimed(render);
        const floorCpu = () => cpuTimed(joined);
        const rounds = await interleaved(ROUNDS, oursCpu, floorCpu);
        const cpu = pairedFigure(`${name}: render, CPU`, 'ms', 'join of the text lines', rounds);
        figures.push(cpu);
        for (const f of [wall, cpu]) {
          figures.push({ name: `${f.name} (median)`, value: f.value, unit: 'ms', against: GOAL });
        }
      }
    }
    print(`/metrics, ${SERIES} series of ${label}, ${lines.length} text lines (mean of ${RENDERS} per round)`, figures);
  }
  console.log(`goal: 1,000 classic histogram series rendered as text in ≤ ${GOAL_MS} ms`);
}
