/**
 * A watch stream: replays what the client asked for (synthetic ADDED events, history since a
 * resourceVersion, the initial-events-end bookmark), then forwards live events through the
 * request's selection, with periodic bookmarks and a timeout.
 *
 * Selection changes are events too: an object that stops matching is sent as DELETED and one that
 * starts matching as ADDED, as the reference's watch cache does.
 */
import type { KubeObject, WatchEventType } from '../api/meta.ts';
import { apiVersionOf, type ResourceType } from '../api/registry.ts';
import type { ApiServer } from './api.ts';
import { ApiError } from './errors.ts';
import type { ResourceRequest } from './request-info.ts';
import type { StoredEvent, WatchSubscriber } from './storage.ts';

/** Where a watch writes: one serialized event per call; `false` means the client is falling behind. */
export interface WatchSink {
  write(line: string): boolean;
  close(): void;
  /** Bytes queued but not yet sent to the client. */
  backlog(): number;
}

export interface WatchSettings {
  bookmarkIntervalMs: number;
  /** Used when the client sends no timeoutSeconds. */
  defaultTimeoutSeconds: number;
  /** A client this far behind is disconnected (it will resume from its last resourceVersion). */
  maxBacklogBytes: number;
}

/** Serialized forms of stored objects, computed once and shared by every watcher and reader. */
const serialized = new WeakMap<KubeObject, string>();
export function toJson(obj: KubeObject): string {
  let s = serialized.get(obj);
  if (s === undefined) {
    s = JSON.stringify(obj);
    serialized.set(obj, s);
  }
  return s;
}

function eventLine(type: WatchEventType, objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

export class WatchStream implements WatchSubscriber {
  private stopped = false;
  private unsubscribe: () => void = () => {};
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly matches: (obj: KubeObject) => boolean;
  /** The point the replay reached: live events at or below it were already sent. */
  private replayedRv = 0;

  constructor(
    private readonly api: ApiServer,
    private readonly req: ResourceRequest,
    private readonly query: URLSearchParams,
    private sink: WatchSink,
    private readonly settings: WatchSettings,
    private readonly onStop: () => void = () => {},
    /** How objects are written: plain JSON, or e.g. a one-row table for kubectl. */
    private readonly render: (obj: KubeObject) => string = toJson,
  ) {
    this.matches = api.selection(req, query).matches;
  }

  /**
   * Validates the options (throws ApiError before anything is written), then starts streaming.
   * Storage is synchronous, so the replay below and the subscription see one consistent point. The
   * replay may include changes not yet durable: it is held back until they are.
   */
  start(): void {
    const opts = this.api.watchOptions(this.query);
    const rt = this.req.rt;
    const storage = this.api.storage;
    if (!storage.isDurable()) this.sink = heldUntil(this.sink, storage.durable());
    this.unsubscribe = storage.watch(rt, this);
    const current = storage.currentRv();
    this.replayedRv = current;
    const rv = opts.resourceVersion === '' ? 0 : Number(opts.resourceVersion);
    const initial = opts.sendInitialEvents ?? (opts.resourceVersion === '' || opts.resourceVersion === '0');
    try {
      if (initial) {
        for (const obj of storage.list(rt, this.req.namespace)) {
          if (this.matches(obj)) this.send('ADDED', this.render(obj));
        }
        if (opts.sendInitialEvents) this.sendBookmark(current, true);
      } else if (rv > 0) {
        for (const e of storage.eventsSince(rt, Math.min(rv, current))) this.forward(e);
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // The reference answers an expired resourceVersion inside the stream, as an ERROR event.
      this.send('ERROR', JSON.stringify(err.toStatus()));
      this.stop();
      return;
    }
    if (opts.allowWatchBookmarks && this.settings.bookmarkIntervalMs > 0) {
      const timer = setInterval(
        () => this.sendBookmark(Math.max(storage.deliveredRv(), this.replayedRv), false),
        this.settings.bookmarkIntervalMs,
      );
      this.timers.push(timer);
    }
    const timeout = opts.timeoutSeconds ?? this.settings.defaultTimeoutSeconds;
    this.timers.push(setTimeout(() => this.stop(), timeout * 1000));
    for (const t of this.timers) t.unref();
  }

  deliver(event: StoredEvent): void {
    if (!this.stopped && event.rv > this.replayedRv) this.forward(event);
  }

  private forward(e: StoredEvent): void {
    const now = this.matches(e.object);
    const before = e.previous !== undefined && e.type !== 'ADDED' && this.matches(e.previous);
    if (e.type === 'ADDED') {
      if (now) this.send('ADDED', this.render(e.object));
    } else if (e.type === 'DELETED') {
      if (now || before) this.send('DELETED', this.render(e.object));
    } else if (now && before) {
      this.send('MODIFIED', this.render(e.object));
    } else if (now) {
      this.send('ADDED', this.render(e.object));
    } else if (before) {
      this.send('DELETED', this.render(e.object));
    }
  }

  private sendBookmark(rv: number, initialEventsEnd: boolean): void {
    const rt: ResourceType = this.req.rt;
    const metadata: KubeObject['metadata'] = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata.annotations = { [this.api.naming.annotations.initialEventsEnd]: 'true' };
    this.send('BOOKMARK', JSON.stringify({ kind: rt.kind, apiVersion: apiVersionOf(rt), metadata }));
  }

  private send(type: WatchEventType, objectJson: string): void {
    if (this.stopped) return;
    this.sink.write(eventLine(type, objectJson));
    if (this.sink.backlog() > this.settings.maxBacklogBytes) this.stop();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe();
    for (const t of this.timers) clearTimeout(t);
    this.sink.close();
    this.onStop();
  }
}

/** A sink that queues what is written until `ready` settles, then passes it on (or closes if it failed). */
function heldUntil(sink: WatchSink, ready: Promise<void>): WatchSink {
  let queued: string[] | undefined = [];
  let closeRequested = false;
  const release = (ok: boolean) => {
    if (ok) for (const line of queued ?? []) sink.write(line);
    queued = undefined;
    if (closeRequested || !ok) sink.close();
  };
  ready.then(
    () => release(true),
    () => release(false),
  );
  return {
    write(line) {
      if (!queued) return sink.write(line);
      queued.push(line);
      return true;
    },
    close() {
      if (queued) closeRequested = true;
      else sink.close();
    },
    backlog: () => sink.backlog(),
  };
}
