import { describe, expect, it } from 'vitest';
import { CORE_EVENT_FIELDS, coreToEvent, EVENTS_GROUP_FIELDS, eventToCore } from './event-conversion.ts';
import type { KubeObject } from './meta.ts';

const metadata = { namespace: 'ns', name: 'web-0.1' };
const ref = {
  kind: 'Pod',
  apiVersion: 'v1',
  namespace: 'ns',
  name: 'web-0',
  uid: 'u1',
  fieldPath: 'spec.containers{a}',
};
const series = { count: 3, lastObservedTime: '2026-01-01T00:00:02.000000Z' };

/** Every field of each view, and what it is in the other. */
const core = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata,
  involvedObject: ref,
  reason: 'SuccessfulCreate',
  message: 'create Pod web-0',
  source: { component: 'statefulset-controller', host: 'h' },
  firstTimestamp: '2026-01-01T00:00:00Z',
  lastTimestamp: '2026-01-01T00:00:01Z',
  count: 2,
  type: 'Normal',
  eventTime: '2026-01-01T00:00:00.000000Z',
  series,
  action: 'Create',
  related: { kind: 'Node', name: 'n1' },
  reportingComponent: 'statefulset-controller',
  reportingInstance: 'cm-1',
} as unknown as KubeObject;
const events = {
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata,
  regarding: ref,
  reason: 'SuccessfulCreate',
  note: 'create Pod web-0',
  deprecatedSource: { component: 'statefulset-controller', host: 'h' },
  deprecatedFirstTimestamp: '2026-01-01T00:00:00Z',
  deprecatedLastTimestamp: '2026-01-01T00:00:01Z',
  deprecatedCount: 2,
  type: 'Normal',
  eventTime: '2026-01-01T00:00:00.000000Z',
  series,
  action: 'Create',
  related: { kind: 'Node', name: 'n1' },
  reportingController: 'statefulset-controller',
  reportingInstance: 'cm-1',
} as unknown as KubeObject;

describe('Event conversion', () => {
  it.each([
    ['core → events', () => coreToEvent(core, 'events.k8s.io/v1'), events],
    ['events → core', () => eventToCore(events), core],
    [
      'absent fields stay absent',
      () => eventToCore({ kind: 'Event', metadata, note: 'x' } as never),
      { apiVersion: 'v1', kind: 'Event', metadata, message: 'x' },
    ],
  ])('%s', (_name, convert, want) => {
    expect(convert()).toEqual(want);
  });

  it("puts field ownership in the view's terms and labels it with the view's apiVersion", () => {
    const entry = (apiVersion: string, fieldsV1: object) => ({
      manager: 'm',
      operation: 'Apply' as const,
      apiVersion,
      time: '2026-01-01T00:00:00Z',
      fieldsType: 'FieldsV1' as const,
      fieldsV1,
    });
    const owned = {
      'f:metadata': { 'f:labels': {} },
      'f:message': {},
      'f:involvedObject': { 'f:name': {} },
      'f:reason': {},
    };
    const stored = { kind: 'Event', metadata: { ...metadata, managedFields: [entry('v1', owned)] } } as KubeObject;
    const viewed = coreToEvent(stored, 'events.k8s.io/v1');
    expect(viewed.metadata.managedFields).toEqual([
      entry('events.k8s.io/v1', {
        'f:metadata': { 'f:labels': {} },
        'f:note': {},
        'f:regarding': { 'f:name': {} },
        'f:reason': {},
      }),
    ]);
    expect(eventToCore(viewed).metadata.managedFields).toEqual(stored.metadata.managedFields);
  });

  it('round-trips both ways', () => {
    expect(eventToCore(coreToEvent(core, 'events.orch.io/v1'))).toEqual(core);
    expect(coreToEvent(eventToCore(events), 'events.k8s.io/v1')).toEqual(events);
  });
});

describe('Event field selectors', () => {
  const written = (e: Record<string, unknown>) => ({ kind: 'Event', metadata, ...e }) as unknown as KubeObject;
  it.each([
    // [fields, label, core value, events-group label]
    [{ involvedObject: ref }, 'involvedObject.kind', 'Pod', 'regarding.kind'],
    [{ involvedObject: ref }, 'involvedObject.uid', 'u1', 'regarding.uid'],
    [{ involvedObject: ref }, 'involvedObject.fieldPath', 'spec.containers{a}', 'regarding.fieldPath'],
    [{ involvedObject: ref }, 'involvedObject.resourceVersion', '', 'regarding.resourceVersion'],
    [{ reason: 'R' }, 'reason', 'R', 'reason'],
    [{ type: 'Warning' }, 'type', 'Warning', 'type'],
    [{ reportingComponent: 'c' }, 'reportingComponent', 'c', 'reportingController'],
    [{ source: { component: 's' }, reportingComponent: 'c' }, 'source', 's', 'source'],
    // Written through the events API: no source, so `source` is the reporting controller.
    [{ reportingComponent: 'c' }, 'source', 'c', 'source'],
  ])('%j: %s = %j (events group: %s)', (fields, label, value, eventsLabel) => {
    const stored = written(fields);
    expect(CORE_EVENT_FIELDS[label](stored)).toBe(value);
    expect(EVENTS_GROUP_FIELDS[eventsLabel](coreToEvent(stored, 'events.k8s.io/v1'))).toBe(value);
  });

  it('offers the reference labels, no more', () => {
    expect(Object.keys(CORE_EVENT_FIELDS).sort()).toEqual(
      [
        'involvedObject.apiVersion',
        'involvedObject.fieldPath',
        'involvedObject.kind',
        'involvedObject.name',
        'involvedObject.namespace',
        'involvedObject.resourceVersion',
        'involvedObject.uid',
        'reason',
        'reportingComponent',
        'source',
        'type',
      ].sort(),
    );
    expect(Object.keys(EVENTS_GROUP_FIELDS).sort()).toEqual(
      [
        'regarding.apiVersion',
        'regarding.fieldPath',
        'regarding.kind',
        'regarding.name',
        'regarding.namespace',
        'regarding.resourceVersion',
        'regarding.uid',
        'reason',
        'reportingController',
        'source',
        'type',
      ].sort(),
    );
  });
});
