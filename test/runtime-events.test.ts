/**
 * The event recorder against the embedded control plane: Events are written to the events group (and
 * read back through the core one, the same stored Event), identical events become one Event whose `series.count` is patched (time driven by a
 * FakeClock), and the spam filter caps a burst at 25 Events per object.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { group } from '../src/api/naming.ts';
import type { ResourceClient } from '../src/client/resource.ts';
import { ApiEventRecorder } from '../src/controller/events.ts';
import { FakeClock } from '../src/util/clock.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { eventually } from './support/eventually.ts';

let cluster: TestCluster;
let events: ResourceClient;
let namespace: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  const n = cluster.cp.registry.naming;
  events = cluster.client.resource(cluster.cp.registry.resource(group(n, 'events'), 'v1', 'events')!);
  namespace = `ev-${randomUUID().slice(0, 8)}`;
  await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
});

afterAll(async () => {
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function configMap(name: string): Promise<KubeObject> {
  return cluster.client
    .kind('ConfigMap')
    .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name }, data: { a: '1' } });
}

const about = async (name: string) =>
  (await events.list(namespace, { fieldSelector: `regarding.name=${name}` })).items as KubeObject[];

function recorder(clock: FakeClock, warnings: string[] = []) {
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
  return new ApiEventRecorder(events, 'sample-controller', `host_${randomUUID()}`, clock, logger);
}

describe('ApiEventRecorder on the control plane', () => {
  it('writes Events in the events group, and identical ones become one Event with a patched series', async () => {
    const clock = new FakeClock();
    const warnings: string[] = [];
    const rec = recorder(clock, warnings);
    const cm = await configMap('synced');
    rec.event(cm, 'Normal', 'Synced', 'Reconcile', 'configuration applied');
    const [created] = await eventually(async () => {
      const items = await about('synced');
      return items.length === 1 && items;
    });
    // Read back from the events group (list items carry no apiVersion, as the reference's typed lists).
    expect(events.apiVersion).toBe(`events.${cluster.cp.registry.naming.groupSuffix}/v1`);
    expect((await events.get(namespace, created.metadata.name!)).apiVersion).toBe(events.apiVersion);
    expect(created).toMatchObject({
      reason: 'Synced',
      type: 'Normal',
      action: 'Reconcile',
      note: 'configuration applied',
      reportingController: 'sample-controller',
      regarding: { kind: 'ConfigMap', name: 'synced', namespace, uid: cm.metadata.uid },
    });
    expect(created.series).toBeUndefined();
    // The core group serves the same stored Event, converted.
    const core = await cluster.client.request<KubeObject>(
      'GET',
      `/api/v1/namespaces/${namespace}/events/${created.metadata.name}`,
    );
    expect(core.body).toMatchObject({
      apiVersion: 'v1',
      message: 'configuration applied',
      reportingComponent: 'sample-controller',
    });

    for (let i = 0; i < 4; i++) {
      clock.step(2_000);
      rec.event(cm, 'Normal', 'Synced', 'Reconcile', 'configuration applied');
    }
    clock.step(30_000); // the series flush period
    const patched = await eventually(async () => {
      const items = await about('synced');
      const series = items[0]?.series as { count: number; lastObservedTime: string } | undefined;
      return series?.count === 5 && items;
    });
    expect(patched).toHaveLength(1);
    expect(patched[0].metadata.name).toBe(created.metadata.name);
    expect(typeof (patched[0].series as { lastObservedTime: unknown }).lastObservedTime).toBe('string');
    expect(warnings).toEqual([]);
    rec.stop();
  });

  it('caps a burst of distinct events about one object at 25', async () => {
    const clock = new FakeClock();
    const warnings: string[] = [];
    const rec = recorder(clock, warnings);
    const noisy = await configMap('noisy');
    const quiet = await configMap('quiet');
    for (let i = 0; i < 40; i++) rec.event(noisy, 'Warning', 'Flapping', 'Reconcile', `attempt ${i} failed`);
    rec.event(quiet, 'Normal', 'Synced', 'Reconcile', 'fine');
    await eventually(async () => (await about('noisy')).length === 25 && (await about('quiet')).length === 1);
    await sleep(300); // nothing more trickles in
    const written = await about('noisy');
    expect(written).toHaveLength(25);
    expect(new Set(written.map((e) => e.note))).toEqual(
      new Set(Array.from({ length: 25 }, (_, i) => `attempt ${i} failed`)),
    );
    expect(warnings).toEqual([]);
    rec.stop();
  });
});
