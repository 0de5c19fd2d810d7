/**
 * Event shapes as raw JSON: the `events.<group suffix>/v1` Event and the core `v1` Event (CoreEvent).
 * Both describe the same stored objects with different field names.
 */
import type { KubeObject } from '../meta.ts';
import type { ObjectReference, Open } from './core.ts';

export type EventType = Open<'Normal' | 'Warning'>;

export interface EventSeries {
  /** Required; occurrences in the series up to `lastObservedTime`. */
  count: number;
  /** Required MicroTime. */
  lastObservedTime: string;
}

export interface EventSource {
  component?: string;
  host?: string;
}

/** A report of something that happened to an object (`events.<group suffix>/v1` field names). */
export interface Event extends KubeObject {
  /** Required MicroTime of the first occurrence. */
  eventTime: string;
  /** Set for isomorphic events repeated in a series. */
  series?: EventSeries;
  /** Required for new events; e.g. `<domain>/<controller-name>`. */
  reportingController?: string;
  /** Required for new events; e.g. the controller's host name. At most 128 characters. */
  reportingInstance?: string;
  /** What was done (or failed); at most 128 characters. */
  action?: string;
  /** Why the action was taken; CamelCase, at most 128 characters. */
  reason?: string;
  /** The object the event is about. */
  regarding?: ObjectReference;
  /** A secondary object, e.g. the node a pod was scheduled to. */
  related?: ObjectReference;
  /** Human-readable description; at most 1kB. */
  note?: string;
  type?: EventType;
  deprecatedSource?: EventSource;
  deprecatedFirstTimestamp?: string;
  deprecatedLastTimestamp?: string;
  deprecatedCount?: number;
}

export interface CoreEventSeries {
  count?: number;
  lastObservedTime?: string;
}

/** The core `v1` Event: the same objects with the older field names (involvedObject, source, count, ...). */
export interface CoreEvent extends KubeObject {
  /** Required; the object the event is about. */
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: EventSource;
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  type?: EventType;
  /** MicroTime. */
  eventTime?: string;
  series?: CoreEventSeries;
  action?: string;
  related?: ObjectReference;
  reportingComponent?: string;
  reportingInstance?: string;
}
