/**
 * Rendering `/metrics` with 1,000 series in each format (text 0.0.4, OpenMetrics, protobuf with and
 * without native histograms): bytes and time, against prom-client's own text rendering of the same
 * registry as the peer.
 */
import { Counter, Registry } from 'prom-client';
import { CONTENT_TYPES, renderMetrics } from '../src/diagnostics/metrics/exposition.ts';
import { nativeHistogram } from '../src/diagnostics/metrics/native-histogram.ts';
import { type Figure, print } from './run.ts';

const SERIES = 1000;
const ROUNDS = 25;

async function median(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
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

function histograms(): Registry {
  const registry = new Registry();
  const h = nativeHistogram({
    name: 'bench_duration_seconds',
    help: 'Durations.',
    labelNames: ['verb', 'host'],
    classicBuckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers: [registry],
  });
  for (let i = 0; i < SERIES; i++) {
    for (let j = 0; j < 50; j++) h.observe({ verb: `v${i % 4}`, host: `h${i}` }, Math.exp((j - 25) / 5));
  }
  return registry;
}

export async function run(): Promise<void> {
  for (const [label, registry] of [
    ['counters', counters()],
    ['native histograms (12 classic buckets)', histograms()],
  ] as const) {
    const peer = await median(() => registry.metrics());
    const figures: Figure[] = [];
    const formats = [
      ['text 0.0.4', CONTENT_TYPES.text, false],
      ['OpenMetrics 1.0', CONTENT_TYPES.openmetrics, false],
      ['protobuf, classic buckets only', CONTENT_TYPES.protobuf, false],
      ['protobuf, native histograms on', CONTENT_TYPES.protobuf, true],
    ] as const;
    for (const [name, accept, nativeHistograms] of formats) {
      const { body } = await renderMetrics(registry, accept, { nativeHistograms });
      const ms = await median(() => renderMetrics(registry, accept, { nativeHistograms }));
      figures.push({ name: `${name}: bytes`, value: Buffer.byteLength(body), unit: 'B' });
      figures.push({
        name: `${name}: render`,
        value: ms,
        unit: 'ms',
        against: { name: "prom-client's own text", value: peer },
      });
    }
    print(`/metrics with ${SERIES} series: ${label} (median of ${ROUNDS})`, figures);
  }
}
