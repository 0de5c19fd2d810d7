import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { naming } from '../../api/naming.ts';
import type { ClientOptions } from '../../client/client.ts';
import { renderMetrics } from './exposition.ts';
import { NativeHistogram } from './native-histogram.ts';
import { decodeMetricFamilies } from './protobuf-decode.ts';
import {
  buildInfoMetric,
  featureEnabledMetric,
  REST_CLIENT_DURATION_BUCKETS,
  restClientMetrics,
  runtimeMetrics,
  standardMetrics,
} from './standard.ts';

const n = naming();
const PROTO = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

async function text(registry: Registry): Promise<string[]> {
  return ((await renderMetrics(registry, undefined, { nativeHistograms: false })).body as string).split('\n');
}

describe('featureEnabledMetric', () => {
  it('reports each gate with its stage, 1 when enabled', async () => {
    const registry = new Registry();
    featureEnabledMetric(registry, n, [
      { name: 'NativeHistograms', stage: 'BETA', enabled: true },
      { name: 'ComponentFlagz', stage: 'ALPHA', enabled: false },
    ]);
    // A second call (gates reloaded) updates the same gauge.
    featureEnabledMetric(registry, n, [{ name: 'ComponentFlagz', stage: 'ALPHA', enabled: true }]);
    const lines = await text(registry);
    expect(lines).toContain(`${n.metricPrefix}_feature_enabled{name="NativeHistograms",stage="BETA"} 1`);
    expect(lines).toContain(`${n.metricPrefix}_feature_enabled{name="ComponentFlagz",stage="ALPHA"} 1`);
  });
});

describe('buildInfoMetric', () => {
  it('is a constant 1 labelled by version and the Node.js runtime', async () => {
    const registry = new Registry();
    buildInfoMetric(registry, n, { major: '1', minor: '34', gitVersion: 'v1.34.0', gitCommit: 'abc123' });
    buildInfoMetric(registry, n, { major: '1', minor: '35', gitVersion: 'v1.35.0' });
    const lines = (await text(registry)).filter((l) => l.startsWith(`${n.metricPrefix}_build_info{`));
    expect(lines).toEqual([
      `${n.metricPrefix}_build_info{major="1",minor="35",git_version="v1.35.0",git_commit="",git_tree_state="",build_date="",node_version="${process.version}",platform="${process.platform}/${process.arch}"} 1`,
    ]);
  });

  it('reads build facts given as a function at the first scrape, not when registered', async () => {
    const registry = new Registry();
    let reads = 0;
    buildInfoMetric(registry, n, () => {
      reads++;
      return { major: '1', minor: '34', gitVersion: 'v1.34.0', gitCommit: 'abc123' };
    });
    expect(reads).toBe(0);
    const lines = (await text(registry)).filter((l) => l.startsWith(`${n.metricPrefix}_build_info{`));
    expect(reads).toBe(1);
    expect(lines).toEqual([
      `${n.metricPrefix}_build_info{major="1",minor="34",git_version="v1.34.0",git_commit="abc123",git_tree_state="",build_date="",node_version="${process.version}",platform="${process.platform}/${process.arch}"} 1`,
    ]);
  });
});

describe('runtimeMetrics', () => {
  it("adds prom-client's process and Node.js metrics once", async () => {
    const registry = new Registry();
    runtimeMetrics(registry);
    runtimeMetrics(registry);
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).toContain('process_cpu_seconds_total');
    expect(names).toContain('process_start_time_seconds');
    expect(names).toContain('nodejs_heap_size_used_bytes');
  });
});

describe('restClientMetrics', () => {
  it("fits ClientOptions.observe and counts requests under client-go's names and labels", async () => {
    const registry = new Registry();
    const observe: ClientOptions['observe'] = restClientMetrics(registry);
    observe!({ method: 'GET', code: 200, host: '127.0.0.1:6443', seconds: 0.02, path: '/api/v1/pods' });
    observe!({ method: 'GET', code: 200, host: '127.0.0.1:6443', seconds: 3, path: '/api/v1/pods' });
    observe!({ method: 'PUT', code: 0, host: '127.0.0.1:6443', seconds: 30, path: '/api/v1/pods/x' });
    const lines = await text(registry);
    expect(lines).toContain('rest_client_requests_total{code="200",method="GET",host="127.0.0.1:6443"} 2');
    expect(lines).toContain('rest_client_requests_total{code="<error>",method="PUT",host="127.0.0.1:6443"} 1');
    const buckets = lines.filter((l) => l.startsWith('rest_client_request_duration_seconds_bucket{verb="GET"'));
    expect(buckets.map((l) => l.match(/le="([^"]+)"/)![1])).toEqual([
      ...REST_CLIENT_DURATION_BUCKETS.map(String),
      '+Inf',
    ]);
    expect(lines).toContain(
      'rest_client_request_duration_seconds_bucket{verb="GET",host="127.0.0.1:6443",le="0.025"} 1',
    );
    expect(lines).toContain('rest_client_request_duration_seconds_bucket{verb="GET",host="127.0.0.1:6443",le="4"} 2');
    expect(lines).toContain('rest_client_request_duration_seconds_count{verb="PUT",host="127.0.0.1:6443"} 1');
  });

  it('carries native buckets for the duration in protobuf and reuses its metrics', async () => {
    const registry = new Registry();
    restClientMetrics(registry)({ method: 'GET', code: 200, host: 'h', seconds: 0.25 });
    restClientMetrics(registry)({ method: 'GET', code: 200, host: 'h', seconds: 0.25 });
    expect(registry.getSingleMetric('rest_client_request_duration_seconds')).toBeInstanceOf(NativeHistogram);
    const body = (await renderMetrics(registry, PROTO, { nativeHistograms: true })).body as Buffer;
    const duration = decodeMetricFamilies(body).find((f) => f.name === 'rest_client_request_duration_seconds')!;
    expect(duration.metric[0].histogram).toMatchObject({ sample_count: 2, schema: 3, positive_delta: [2] });
  });
});

describe('standardMetrics', () => {
  it('registers all of them and returns the client observer', async () => {
    const registry = new Registry();
    const { observeClientRequest } = standardMetrics(registry, {
      naming: n,
      gates: [{ name: 'NativeHistograms', stage: 'BETA', enabled: true }],
      build: { major: '1', minor: '34', gitVersion: 'v1.34.0' },
      runtime: false,
    });
    observeClientRequest({ method: 'GET', code: 404, host: 'h', seconds: 0.001 });
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).toEqual([
      `${n.metricPrefix}_feature_enabled`,
      `${n.metricPrefix}_build_info`,
      'rest_client_requests_total',
      'rest_client_request_duration_seconds',
    ]);
  });
});
