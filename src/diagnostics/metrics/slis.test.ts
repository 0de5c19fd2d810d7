import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FLAVORS, naming } from '../../api/naming.ts';
import { renderMetrics } from './exposition.ts';
import { sliMetrics } from './slis.ts';

describe.each(FLAVORS)('sliMetrics (%s flavor)', (flavor) => {
  const prefix = naming(flavor).metricPrefix;

  it('records the latest result as a gauge and every result in a counter', async () => {
    const slis = sliMetrics(naming(flavor));
    slis.recordHealthCheck('readyz', 'informer-sync', true);
    slis.recordHealthCheck('readyz', 'informer-sync', false);
    slis.recordHealthCheck('readyz', 'informer-sync', true);
    slis.recordHealthCheck('healthz', 'ping', false);
    const { contentType, body } = await renderMetrics(slis.registry, undefined, { nativeHistograms: false });
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const lines = (body as string).split('\n');
    expect(lines).toContain(`# TYPE ${prefix}_healthcheck gauge`);
    expect(lines).toContain(`${prefix}_healthcheck{name="informer-sync",type="readyz"} 1`);
    expect(lines).toContain(`${prefix}_healthcheck{name="ping",type="healthz"} 0`);
    expect(lines).toContain(`# TYPE ${prefix}_healthchecks_total counter`);
    expect(lines).toContain(`${prefix}_healthchecks_total{name="informer-sync",status="success",type="readyz"} 2`);
    expect(lines).toContain(`${prefix}_healthchecks_total{name="informer-sync",status="error",type="readyz"} 1`);
    expect(lines).toContain(`${prefix}_healthchecks_total{name="ping",status="error",type="healthz"} 1`);
    expect(lines.filter((l) => l.startsWith('# HELP')).every((l) => l.includes('[ALPHA]'))).toBe(true);
  });

  it('uses its own registry unless given one', () => {
    const a = sliMetrics(naming(flavor));
    const b = sliMetrics(naming(flavor));
    expect(a.registry).not.toBe(b.registry);
    const shared = new Registry();
    expect(sliMetrics(naming(flavor), shared).registry).toBe(shared);
  });
});
