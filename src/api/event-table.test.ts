/** The Event table both Event APIs print (the reference's `printEvent`), row by row. */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from './meta.ts';
import { ResourceRegistry } from './registry.ts';

const registry = new ResourceRegistry('kubernetes');
const core = registry.resource('', 'v1', 'events')!;
const grouped = registry.resource('events.k8s.io', 'v1', 'events')!;
const now = new Date('2026-01-01T01:00:00Z');
const row = (rt: typeof core, e: Record<string, unknown>) =>
  Object.fromEntries(rt.columns.map((c) => [c.name, c.value({ metadata: { name: 'e.1' }, ...e } as KubeObject, now)]));

describe('Event table', () => {
  it.each([
    [
      'an old-style Event: first and last timestamps, count, source',
      {
        firstTimestamp: '2026-01-01T00:50:00Z',
        lastTimestamp: '2026-01-01T00:59:00Z',
        count: 4,
        source: { component: 'kubelet', host: 'node-1' },
        involvedObject: { kind: 'Pod', name: 'web-0', fieldPath: 'spec.containers{app}' },
      },
      { 'Last Seen': '60s', 'First Seen': '10m', Count: 4, Source: 'kubelet, node-1', Object: 'pod/web-0' },
    ],
    [
      'a new-style singleton: eventTime for both times, count 1, reporting controller and instance',
      {
        eventTime: '2026-01-01T00:58:00.000000Z',
        reportingComponent: 'statefulset-controller',
        reportingInstance: 'cm-1',
        involvedObject: { kind: 'StatefulSet', name: 'web' },
      },
      { 'Last Seen': '2m', 'First Seen': '2m', Count: 1, Source: 'statefulset-controller, cm-1' },
    ],
    [
      'a series: last observed time and its count',
      {
        eventTime: '2026-01-01T00:30:00.000000Z',
        series: { count: 9, lastObservedTime: '2026-01-01T00:59:30.000000Z' },
        reportingComponent: 'c',
      },
      { 'Last Seen': '30s', 'First Seen': '30m', Count: 9, Source: 'c' },
    ],
    ['no times at all', { involvedObject: { kind: 'Node' } }, { 'Last Seen': '<unknown>', Object: 'node' }],
  ])('%s', (_name, event, want) => {
    expect(row(core, event)).toMatchObject(want);
  });

  it('prints an events-group Event as its core view', () => {
    const event = {
      eventTime: '2026-01-01T00:58:00.000000Z',
      reportingController: 'sc',
      regarding: { kind: 'Pod', name: 'p' },
      note: 'hello',
      reason: 'R',
      type: 'Normal',
    };
    expect(row(grouped, event)).toEqual({
      'Last Seen': '2m',
      Type: 'Normal',
      Reason: 'R',
      Object: 'pod/p',
      Subobject: undefined,
      Source: 'sc',
      Message: 'hello',
      'First Seen': '2m',
      Count: 1,
      Name: 'e.1',
    });
    expect(grouped.columns.map((c) => [c.name, c.priority ?? 0])).toEqual(
      core.columns.map((c) => [c.name, c.priority ?? 0]),
    );
  });
});
