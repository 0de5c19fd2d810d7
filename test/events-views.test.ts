/**
 * Events through both APIs, in both flavors, over the real HTTPS server: the core `/api/v1` Event and
 * the `events.<group>/v1` Event are views of one stored Event (as the reference serves both from its
 * core Event storage). A write through either is read, listed, field-selected and watched through the
 * other with the fields converted; and kubectl (`get events`, `events`, `describe`) shows the Events
 * the controllers write through the events group, such as the StatefulSet controller's SuccessfulCreate.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statefulSetControllerDefinition } from '../controllers/statefulset/index.ts';
import type { KubeObject, WatchEvent } from '../src/api/meta.ts';
import { type FlavorName, group } from '../src/api/naming.ts';
import type { ResourceClient } from '../src/client/resource.ts';
import { ApiEventRecorder } from '../src/controller/events.ts';
import { DEFAULT_FEATURE_GATES } from '../src/controlplane/validation/context.ts';
import { realClock } from '../src/util/clock.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { type RunningControllers, runControllers } from './support/controllers.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl, Kubectl, parseTable } from './support/kubectl.ts';

const NS = 'events-views';

/** Every watch event the stream delivers until `stop`. */
function record(client: ResourceClient, fieldSelector: string): { seen: WatchEvent[]; stop(): void } {
  const seen: WatchEvent[] = [];
  const abort = new AbortController();
  client.watch(NS, { fieldSelector }, (e) => seen.push(e), abort.signal).catch(() => undefined);
  return { seen, stop: () => abort.abort() };
}

describe.each<FlavorName>(['orch', 'kubernetes'])('Events through both APIs (%s flavor)', (flavor) => {
  let cluster: TestCluster;
  let controllers: RunningControllers;
  let kubectl: Kubectl;
  let cacheDir: string;
  let groupEvents: ResourceClient;
  let coreEvents: ResourceClient;
  let eventsApiVersion: string;

  beforeAll(async () => {
    cluster = await startTestCluster({ flavor });
    const registry = cluster.cp.registry;
    eventsApiVersion = `${group(registry.naming, 'events')}/v1`;
    groupEvents = cluster.client.resource(registry.resource(group(registry.naming, 'events'), 'v1', 'events')!);
    coreEvents = cluster.client.resource(registry.resource('', 'v1', 'events')!);
    await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const recorder = new ApiEventRecorder(
      groupEvents,
      'statefulset-controller',
      'test-instance',
      realClock,
      pino({ level: 'silent' }),
    );
    controllers = await runControllers(cluster.client, registry, [statefulSetControllerDefinition], {
      features: DEFAULT_FEATURE_GATES,
      recorder,
    });
    cacheDir = await mkdtemp(join(tmpdir(), 'events-kubectl-'));
    kubectl = new Kubectl(cluster.kubeconfig, cacheDir);
  }, 60_000);

  afterAll(async () => {
    await controllers?.stop();
    await cluster?.stop();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('an Event written through the events group is read, selected and watched through /api/v1, converted', async () => {
    const watch = record(coreEvents, 'involvedObject.name=cm-a,reportingComponent=scheduler');
    const created = await groupEvents.create({
      apiVersion: eventsApiVersion,
      kind: 'Event',
      metadata: { namespace: NS, name: 'cm-a.1' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      series: { count: 2, lastObservedTime: '2026-01-01T00:00:05.000000Z' },
      reportingController: 'scheduler',
      reportingInstance: 'scheduler-1',
      action: 'Binding',
      reason: 'Scheduled',
      type: 'Normal',
      note: 'assigned',
      regarding: { kind: 'ConfigMap', apiVersion: 'v1', namespace: NS, name: 'cm-a', uid: 'u-a', fieldPath: 'data' },
      related: { kind: 'Node', name: 'n1' },
      deprecatedSource: { component: 'old-scheduler', host: 'h1' },
      deprecatedFirstTimestamp: '2026-01-01T00:00:00Z',
      deprecatedLastTimestamp: '2026-01-01T00:00:04Z',
      deprecatedCount: 7,
    } as KubeObject);
    const core = await coreEvents.get(NS, 'cm-a.1');
    expect(core).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        ...created.metadata,
        // Ownership in the core view's terms.
        managedFields: [
          expect.objectContaining({ apiVersion: 'v1', fieldsV1: expect.objectContaining({ 'f:message': {} }) }),
        ],
      },
      eventTime: '2026-01-01T00:00:00.000000Z',
      series: { count: 2, lastObservedTime: '2026-01-01T00:00:05.000000Z' },
      reportingComponent: 'scheduler',
      reportingInstance: 'scheduler-1',
      action: 'Binding',
      reason: 'Scheduled',
      type: 'Normal',
      message: 'assigned',
      involvedObject: {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        namespace: NS,
        name: 'cm-a',
        uid: 'u-a',
        fieldPath: 'data',
      },
      related: { kind: 'Node', name: 'n1' },
      source: { component: 'old-scheduler', host: 'h1' },
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:04Z',
      count: 7,
    });
    // The core field selectors the reference supports, each matching and each excluding.
    const names = async (fieldSelector: string) =>
      (await coreEvents.list(NS, { fieldSelector })).items.map((e) => e.metadata.name);
    for (const selector of [
      'involvedObject.kind=ConfigMap',
      'involvedObject.namespace=events-views',
      'involvedObject.name=cm-a',
      'involvedObject.uid=u-a',
      'involvedObject.apiVersion=v1',
      'involvedObject.fieldPath=data',
      'involvedObject.resourceVersion=',
      'reason=Scheduled',
      'type=Normal',
      'reportingComponent=scheduler',
      'source=old-scheduler',
    ]) {
      expect(await names(selector), selector).toContain('cm-a.1');
      expect(await names(`${selector.split('=')[0]}=other`), selector).not.toContain('cm-a.1');
    }
    await eventually(() => watch.seen.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'cm-a.1'));
    // Updates and deletes through the events group reach the core watch as the core Event.
    await groupEvents.patch(NS, 'cm-a.1', { note: 'reassigned' }, 'merge');
    await groupEvents.delete(NS, 'cm-a.1');
    await eventually(() => watch.seen.some((e) => e.type === 'DELETED'));
    watch.stop();
    expect(watch.seen.map((e) => [e.type, e.object.apiVersion, (e.object as any).message])).toEqual([
      ['ADDED', 'v1', 'assigned'],
      ['MODIFIED', 'v1', 'reassigned'],
      ['DELETED', 'v1', 'reassigned'],
    ]);
  });

  it('an Event written through /api/v1 is read, selected and watched through the events group, converted', async () => {
    const watch = record(groupEvents, 'regarding.name=cm-b,reportingController=kubelet');
    await coreEvents.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: NS, name: 'cm-b.1' },
      involvedObject: { kind: 'ConfigMap', apiVersion: 'v1', namespace: NS, name: 'cm-b', uid: 'u-b' },
      reason: 'Pulled',
      message: 'image pulled',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:09Z',
      count: 3,
      type: 'Warning',
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
    } as KubeObject);
    const viewed = await groupEvents.get(NS, 'cm-b.1');
    expect(viewed).toMatchObject({
      apiVersion: eventsApiVersion,
      regarding: { kind: 'ConfigMap', name: 'cm-b', uid: 'u-b' },
      reason: 'Pulled',
      note: 'image pulled',
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2026-01-01T00:00:00Z',
      deprecatedLastTimestamp: '2026-01-01T00:00:09Z',
      deprecatedCount: 3,
      type: 'Warning',
      reportingController: 'kubelet',
      reportingInstance: 'node-1',
    });
    for (const field of ['involvedObject', 'message', 'source', 'count', 'reportingComponent']) {
      expect(viewed, field).not.toHaveProperty(field);
    }
    const names = async (fieldSelector: string) =>
      (await groupEvents.list(NS, { fieldSelector })).items.map((e) => e.metadata.name);
    for (const selector of [
      'regarding.kind=ConfigMap',
      'regarding.namespace=events-views',
      'regarding.name=cm-b',
      'regarding.uid=u-b',
      'regarding.apiVersion=v1',
      'regarding.fieldPath=',
      'reason=Pulled',
      'type=Warning',
      'reportingController=kubelet',
      'source=kubelet',
    ]) {
      expect(await names(selector), selector).toEqual(['cm-b.1']);
      expect(await names(`${selector.split('=')[0]}=other`), selector).not.toContain('cm-b.1');
    }
    await coreEvents.patch(NS, 'cm-b.1', { message: 'pulled again', count: 4 }, 'merge');
    await coreEvents.delete(NS, 'cm-b.1');
    await eventually(() => watch.seen.some((e) => e.type === 'DELETED'));
    watch.stop();
    expect(
      watch.seen.map((e) => [e.type, e.object.apiVersion, (e.object as any).note, (e.object as any).deprecatedCount]),
    ).toEqual([
      ['ADDED', eventsApiVersion, 'image pulled', 3],
      ['MODIFIED', eventsApiVersion, 'pulled again', 4],
      ['DELETED', eventsApiVersion, 'pulled again', 4],
    ]);
  });

  it('server-side apply through one API sees the fields a manager applied through the other', async () => {
    const applied = await groupEvents.apply(
      {
        apiVersion: eventsApiVersion,
        kind: 'Event',
        metadata: { namespace: NS, name: 'ssa.1' },
        note: 'a',
        reason: 'R',
      },
      'group-writer',
      { force: false },
    );
    expect(applied.metadata.managedFields).toMatchObject([
      { manager: 'group-writer', apiVersion: eventsApiVersion, fieldsV1: { 'f:note': {}, 'f:reason': {} } },
    ]);
    const core = await coreEvents.get(NS, 'ssa.1');
    expect(core.metadata.managedFields).toMatchObject([
      { manager: 'group-writer', apiVersion: 'v1', fieldsV1: { 'f:message': {}, 'f:reason': {} } },
    ]);
    const conflict = await coreEvents
      .apply(
        { apiVersion: 'v1', kind: 'Event', metadata: { namespace: NS, name: 'ssa.1' }, message: 'b' } as KubeObject,
        'core-writer',
        {
          force: false,
        },
      )
      .then(
        () => undefined,
        (err) => err,
      );
    expect(conflict?.code ?? conflict?.status).toBe(409);
    expect(String(conflict?.message)).toMatch(/group-writer[\s\S]*\.message/);
    expect(((await groupEvents.get(NS, 'ssa.1')) as any).note).toBe('a');
    await coreEvents.delete(NS, 'ssa.1');
  });

  it('refuses field selectors the reference does not offer on each API, naming the label', async () => {
    const refused = async (client: ResourceClient, fieldSelector: string) =>
      client.list(NS, { fieldSelector }).then(
        () => undefined,
        (err) => err,
      );
    for (const [client, label] of [
      [groupEvents, 'involvedObject.name'],
      [groupEvents, 'note'],
      [coreEvents, 'regarding.name'],
      [coreEvents, 'message'],
    ] as const) {
      const err = await refused(client, `${label}=x`);
      expect(err?.code ?? err?.status, label).toBe(400);
      expect(String(err?.message), label).toContain(label);
    }
  });

  it.skipIf(!hasKubectl)(
    'kubectl get events, kubectl events and kubectl describe show the StatefulSet controller Events',
    async () => {
      await kubectl.ok(['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { namespace: NS, name: 'web' },
          spec: {
            replicas: 1,
            serviceName: 'web',
            selector: { matchLabels: { app: 'web' } },
            template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } },
          },
        }),
      });
      const table = await eventually(async () => {
        const t = parseTable(await kubectl.ok(['get', 'events', '-n', NS]));
        return t.rows.some((r) => r.OBJECT === 'statefulset/web' && r.REASON === 'SuccessfulCreate') && t;
      }, 20_000);
      expect(table.columns).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
      expect(table.rows.find((r) => r.REASON === 'SuccessfulCreate')).toMatchObject({
        TYPE: 'Normal',
        MESSAGE: expect.stringContaining('web-0'),
      });

      const wide = parseTable(await kubectl.ok(['get', 'events', '-n', NS, '-o', 'wide']));
      expect(wide.columns).toEqual([
        'LAST SEEN',
        'TYPE',
        'REASON',
        'OBJECT',
        'SUBOBJECT',
        'SOURCE',
        'MESSAGE',
        'FIRST SEEN',
        'COUNT',
        'NAME',
      ]);
      expect(wide.rows.find((r) => r.REASON === 'SuccessfulCreate')).toMatchObject({
        SOURCE: 'statefulset-controller, test-instance',
        COUNT: '1',
        NAME: expect.stringMatching(/^web\./),
      });

      const events = await kubectl.ok(['events', '-n', NS, '--for', 'statefulset/web']);
      expect(events).toMatch(/Normal\s+SuccessfulCreate\s+StatefulSet\/web/);

      const describeSts = await kubectl.ok(['describe', 'sts', 'web', '-n', NS]);
      expect(describeSts).toMatch(
        /Events:[\s\S]*Normal\s+SuccessfulCreate\s+\S+\s+statefulset-controller\s+Create Pod web-0/,
      );

      // An Event about the pod written through the events group, as a scheduler would: describe pod reads core Events.
      const pod = await eventually(() =>
        cluster.client
          .kind('Pod')
          .get(NS, 'web-0')
          .catch(() => undefined),
      );
      await groupEvents.create({
        apiVersion: eventsApiVersion,
        kind: 'Event',
        metadata: { namespace: NS, name: 'web-0.scheduled' },
        eventTime: new Date().toISOString().replace('Z', '000Z'),
        reportingController: 'default-scheduler',
        reportingInstance: 'scheduler-1',
        action: 'Binding',
        reason: 'Scheduled',
        type: 'Normal',
        note: 'Successfully assigned events-views/web-0',
        regarding: { kind: 'Pod', apiVersion: 'v1', namespace: NS, name: 'web-0', uid: pod.metadata.uid },
      } as KubeObject);
      const describePod = await kubectl.ok(['describe', 'pod', 'web-0', '-n', NS]);
      expect(describePod).toMatch(/Events:[\s\S]*Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned/);

      // `kubectl get events -w` (core, as a table) sees an Event written through the events group.
      const watching = kubectl.stream(['get', 'events', '-n', NS, '-w']);
      try {
        await watching.waitForLine(/SuccessfulCreate/);
        await groupEvents.create({
          apiVersion: eventsApiVersion,
          kind: 'Event',
          metadata: { namespace: NS, name: 'web-0.watched' },
          eventTime: new Date().toISOString().replace('Z', '000Z'),
          reportingController: 'default-scheduler',
          reportingInstance: 'scheduler-1',
          action: 'Binding',
          reason: 'Watched',
          type: 'Warning',
          note: 'seen by a watch',
          regarding: { kind: 'Pod', apiVersion: 'v1', namespace: NS, name: 'web-0', uid: pod.metadata.uid },
        } as KubeObject);
        expect(await watching.waitForLine(/Watched/)).toMatch(/Warning\s+Watched\s+pod\/web-0\s+seen by a watch/);
      } finally {
        await watching.stop();
      }

      // The events group's own name prints the same table.
      const grouped = parseTable(
        await kubectl.ok(['get', `events.${group(cluster.cp.registry.naming, 'events')}`, '-n', NS]),
      );
      expect(grouped.columns).toEqual(table.columns);
      expect(grouped.rows.map((r) => r.REASON).sort()).toEqual(
        parseTable(await kubectl.ok(['get', 'events', '-n', NS]))
          .rows.map((r) => r.REASON)
          .sort(),
      );
    },
    90_000,
  );
});
