/**
 * One stored Event, two views: the core `v1` Event and the `events.<group>/v1` Event. As the reference
 * keeps one internal Event behind both APIs, the store holds the core form and the events-group API
 * converts at its edge, field by field as the reference's events/v1 conversion does:
 * `involvedObject` ↔ `regarding`, `message` ↔ `note`, `source` ↔ `deprecatedSource`,
 * `reportingComponent` ↔ `reportingController`, `firstTimestamp`/`lastTimestamp`/`count` ↔
 * `deprecatedFirstTimestamp`/`deprecatedLastTimestamp`/`deprecatedCount`; the rest keep their names.
 */
import type { KubeObject } from './meta.ts';

/** [core field, events-group field]; fields absent from an object stay absent in the other view. */
const RENAMED: readonly (readonly [string, string])[] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['reportingComponent', 'reportingController'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];
const SAME = ['eventTime', 'series', 'related', 'action', 'reason', 'type', 'reportingInstance'];

function convert(obj: KubeObject, apiVersion: string, pairs: readonly (readonly [string, string])[]): KubeObject {
  const from = obj as Record<string, unknown>;
  const out: Record<string, unknown> = {
    apiVersion,
    kind: 'Event',
    metadata: withManagedFields(obj, apiVersion, pairs),
  };
  for (const [source, target] of pairs) if (from[source] !== undefined) out[target] = from[source];
  for (const field of SAME) if (from[field] !== undefined) out[field] = from[field];
  return out as KubeObject;
}

/**
 * Field ownership in the view's terms (`f:message` is `f:note` through the events group), so that
 * server-side apply through either API sees who owns a field written through the other and reports
 * the conflict. Each entry is then labelled with the view's apiVersion, the version its fields are in.
 */
function withManagedFields(
  obj: KubeObject,
  apiVersion: string,
  pairs: readonly (readonly [string, string])[],
): KubeObject['metadata'] {
  const entries = obj.metadata?.managedFields;
  if (!Array.isArray(entries)) return obj.metadata;
  const renamed = new Map(pairs.map(([source, target]) => [`f:${source}`, `f:${target}`]));
  const managedFields = entries.map((entry) => {
    const fields = entry?.fieldsV1;
    if (!fields || typeof fields !== 'object') return entry;
    const converted = Object.fromEntries(Object.entries(fields).map(([k, v]) => [renamed.get(k) ?? k, v]));
    return { ...entry, apiVersion, fieldsV1: converted };
  });
  return { ...obj.metadata, managedFields };
}

/** The core `v1` view of an events-group Event. */
export function eventToCore(obj: KubeObject): KubeObject {
  return convert(
    obj,
    'v1',
    RENAMED.map(([core, events]) => [events, core] as const),
  );
}

/** The events-group view (`apiVersion` as given) of a core Event. */
export function coreToEvent(obj: KubeObject, apiVersion: string): KubeObject {
  return convert(obj, apiVersion, RENAMED);
}

/** How core Event field selectors read the stored Event (the reference's `ToSelectableFields`). */
export const CORE_EVENT_FIELDS: Record<string, (e: KubeObject) => string | undefined> = {
  ...Object.fromEntries(
    ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [
      `involvedObject.${f}`,
      (e: KubeObject) => str((e as any).involvedObject?.[f]),
    ]),
  ),
  reason: (e) => str((e as any).reason),
  reportingComponent: (e) => str((e as any).reportingComponent),
  // The source component, or for events written through the events API the reporting controller.
  source: (e) => str((e as any).source?.component) || str((e as any).reportingComponent),
  type: (e) => str((e as any).type),
};

/**
 * The events-group field selectors: the reference maps `regarding.*` and `reportingController` onto the
 * core fields and selects on the stored Event, so they read the core view.
 */
export const EVENTS_GROUP_FIELDS: Record<string, (e: KubeObject) => string | undefined> = Object.fromEntries(
  Object.entries(CORE_EVENT_FIELDS).map(([label, read]) => [
    label.replace(/^involvedObject\./, 'regarding.').replace(/^reportingComponent$/, 'reportingController'),
    (e: KubeObject) => read(eventToCore(e)),
  ]),
);

function str(v: unknown): string {
  return v == null ? '' : String(v);
}
