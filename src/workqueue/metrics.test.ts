import { Registry, register } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.ts';
import { WorkQueue } from './queue.ts';

function setup(name = 'q') {
  const clock = new FakeClock();
  const registry = new Registry();
  return { clock, registry, q: new WorkQueue<string>({ name, clock, registry }) };
}

/** The sample `sample` (e.g. `workqueue_depth`, `…_seconds_sum`) for queue `name`, as scraped. */
async function read(registry: Registry, sample: string, name = 'q'): Promise<number | undefined> {
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const v of metric.values as { metricName?: string; labels: { name?: string }; value: number }[]) {
      if ((v.metricName ?? metric.name) === sample && v.labels.name === name) return v.value;
    }
  }
  return undefined;
}

describe('workqueue metrics', () => {
  it('counts depth and adds: coalesced adds do not count, adds while processing do', async () => {
    const { q, registry } = setup();
    expect(await read(registry, 'workqueue_depth')).toBe(0);
    expect(await read(registry, 'workqueue_adds_total')).toBe(0);
    q.add('a');
    q.add('a');
    q.add('b');
    expect(await read(registry, 'workqueue_depth')).toBe(2);
    expect(await read(registry, 'workqueue_adds_total')).toBe(2);
    await q.get();
    expect(await read(registry, 'workqueue_depth')).toBe(1);
    q.add('a');
    expect(await read(registry, 'workqueue_depth')).toBe(2);
    expect(await read(registry, 'workqueue_adds_total')).toBe(3);
  });

  it('counts every addAfter and addRateLimited as a retry, but none after shutdown', async () => {
    const { q, registry } = setup();
    q.addAfter('a', 10);
    q.addAfter('b', 0);
    q.addRateLimited('c');
    expect(await read(registry, 'workqueue_retries_total')).toBe(3);
    q.shutDown();
    q.addAfter('d', 10);
    expect(await read(registry, 'workqueue_retries_total')).toBe(3);
  });

  it('observes queue and work durations on the queue clock', async () => {
    const { q, registry, clock } = setup();
    q.add('a');
    clock.step(250);
    q.add('a'); // coalesced: the wait counts from the first add
    clock.step(250);
    await q.get();
    clock.step(1500);
    q.done('a');
    expect(await read(registry, 'workqueue_queue_duration_seconds_sum')).toBe(0.5);
    expect(await read(registry, 'workqueue_queue_duration_seconds_count')).toBe(1);
    expect(await read(registry, 'workqueue_work_duration_seconds_sum')).toBe(1.5);
    expect(await read(registry, 'workqueue_work_duration_seconds_count')).toBe(1);
  });

  it('uses buckets from 1e-8 s to 10 s by factors of 10', async () => {
    const { q, registry, clock } = setup();
    q.add('a');
    await q.get();
    clock.step(3); // 3 ms of work
    q.done('a');
    const [metric] = (await registry.getMetricsAsJSON()).filter((m) => m.name === 'workqueue_work_duration_seconds');
    const buckets = (metric.values as { metricName?: string; labels: { le?: number | string }; value: number }[])
      .filter((v) => v.metricName === 'workqueue_work_duration_seconds_bucket')
      .map((v) => [v.labels.le, v.value]);
    expect(buckets).toEqual([
      [1e-8, 0],
      [1e-7, 0],
      [1e-6, 0],
      [1e-5, 0],
      [1e-4, 0],
      [1e-3, 0],
      [1e-2, 1],
      [1e-1, 1],
      [1, 1],
      [10, 1],
      ['+Inf', 1],
    ]);
  });

  it("exports every series from the queue's creation and renders the histograms as prom-client does", async () => {
    const { q, registry, clock } = setup();
    const text = async () => (await registry.metrics()).split('\n');
    expect(await text()).toContain('workqueue_work_duration_seconds_count{name="q"} 0');
    q.add('a');
    await q.get();
    clock.step(20);
    q.done('a');
    const lines = await text();
    expect(lines).toContain('# TYPE workqueue_work_duration_seconds histogram');
    expect(lines).toContain('workqueue_work_duration_seconds_bucket{le="0.01",name="q"} 0');
    expect(lines).toContain('workqueue_work_duration_seconds_bucket{le="0.1",name="q"} 1');
    expect(lines).toContain('workqueue_work_duration_seconds_bucket{le="+Inf",name="q"} 1');
    expect(lines).toContain('workqueue_work_duration_seconds_sum{name="q"} 0.02');
    expect(lines).toContain('workqueue_queue_duration_seconds_bucket{le="1e-8",name="q"} 1');
  });

  it('reports unfinished work and the longest-running worker at scrape time', async () => {
    const { q, registry, clock } = setup();
    q.add('a');
    q.add('b');
    await q.get();
    clock.step(1000);
    await q.get();
    clock.step(500);
    expect(await read(registry, 'workqueue_unfinished_work_seconds')).toBe(2);
    expect(await read(registry, 'workqueue_longest_running_processor_seconds')).toBe(1.5);
    q.done('a');
    q.done('b');
    expect(await read(registry, 'workqueue_unfinished_work_seconds')).toBe(0);
    expect(await read(registry, 'workqueue_longest_running_processor_seconds')).toBe(0);
    q.shutDown();
    expect(await read(registry, 'workqueue_unfinished_work_seconds')).toBeUndefined();
  });

  it('shares metrics between queues of the same name instead of throwing', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const first = new WorkQueue<string>({ name: 'q', clock, registry });
    const second = new WorkQueue<string>({ name: 'q', clock, registry });
    const other = new WorkQueue<string>({ name: 'other', clock, registry });
    first.add('a');
    second.add('a');
    other.add('a');
    expect(await read(registry, 'workqueue_depth')).toBe(2);
    expect(await read(registry, 'workqueue_depth', 'other')).toBe(1);
    await first.get();
    clock.step(1000);
    await second.get();
    clock.step(1000);
    expect(await read(registry, 'workqueue_unfinished_work_seconds')).toBe(3);
    expect(await read(registry, 'workqueue_longest_running_processor_seconds')).toBe(2);
  });

  it('reports nothing for an unnamed queue', async () => {
    const registry = new Registry();
    const q = new WorkQueue<string>({ clock: new FakeClock(), registry });
    q.add('a');
    q.addAfter('b', 0);
    expect(await registry.getMetricsAsJSON()).toEqual([]);
  });

  it("registers in prom-client's global registry by default", async () => {
    const q = new WorkQueue<string>({ name: 'global-default', clock: new FakeClock() });
    q.add('a');
    expect(await read(register, 'workqueue_adds_total', 'global-default')).toBe(1);
    q.shutDown();
  });
});
