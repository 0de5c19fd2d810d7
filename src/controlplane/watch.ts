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
import { ApiError, internalError } from './errors.ts';
import type { ResourceRequest } from './request-info.ts';
import type { StoredEvent, WatchSubscriber } from './storage.ts';

/** Where a watch writes: serialized events, one or more lines per call; `false` means the client is falling behind. */
export interface WatchSink {
  write(lines: string): boolean;
  close(): void;
  /** Bytes queued but not yet sent to the client. */
  backlog(): number;
  /** Resolves once the queued bytes are sent, or the connection is gone. */
  drained(): Promise<void>;
}

export interface WatchSettings {
  bookmarkIntervalMs: number;
  /** Used when the client sends no timeoutSeconds. */
  defaultTimeoutSeconds: number;
  /** A client this far behind is disconnected (it will resume from its last resourceVersion). */
  maxBacklogBytes: number;
}

/** Serialized forms of stored objects, computed once and shared by every watcher and list. */
const serialized = new WeakMap<object, string>();
export function toJson(obj: KubeObject): string {
  let s = serialized.get(obj);
  if (s === undefined) {
    s = JSON.stringify(obj);
    serialized.set(obj, s);
  }
  return s;
}

/**
 * The JSON of one object for one answer (a get or a write): the shared form when a watcher, a list or the journal
 * already made it, else made and not kept, since an answer is sent once.
 */
export function answerJson(obj: object): string {
  return serialized.get(obj) ?? JSON.stringify(obj);
}

function eventLine(type: WatchEventType, objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

/** The initial events are written in pieces of about this many characters... */
const REPLAY_BATCH_CHARS = 64 * 1024;
/**
 * ...while less than this is queued for the client; past it, the next waits until the queue has drained.
 * A queue much deeper than one batch keeps the client fed while the server waits to be scheduled again.
 */
const REPLAY_QUEUE_BYTES = 1024 * 1024;

export class WatchStream implements WatchSubscriber {
  private stopped = false;
  private unsubscribe: () => void = () => {};
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly matches: (obj: KubeObject) => boolean;
  /** The point the replay reached: live events at or below it were already sent. */
  private replayedRv = 0;
  /** Live events that arrive while the initial events are still being written, sent right after them. */
  private pending: StoredEvent[] | undefined;

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
   * Storage is synchronous, so the snapshot taken here and the subscription see one consistent point;
   * the initial events are then written from that snapshot as the client takes them, and live events
   * arriving meanwhile wait until after them. What is sent may include changes not yet durable: it is
   * held back until they are.
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
        this.pending = [];
        this.replay(storage.list(rt, this.req.namespace), opts.sendInitialEvents ? current : undefined).catch(
          (err: unknown) => this.fail(err),
        );
      } else if (rv > 0) {
        for (const e of storage.eventsSince(rt, Math.min(rv, current))) this.forward(e);
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // The reference answers an expired resourceVersion inside the stream, as an ERROR event.
      this.fail(err);
      return;
    }
    if (opts.allowWatchBookmarks && this.settings.bookmarkIntervalMs > 0) {
      const timer = setInterval(() => {
        if (!this.pending) this.sendBookmark(Math.max(storage.deliveredRv(), this.replayedRv), false);
      }, this.settings.bookmarkIntervalMs);
      this.timers.push(timer);
    }
    const timeout = opts.timeoutSeconds ?? this.settings.defaultTimeoutSeconds;
    this.timers.push(setTimeout(() => this.stop(), timeout * 1000));
    for (const t of this.timers) t.unref();
  }

  /**
   * Writes an ADDED event for each matching object, in batches, pausing while the client is well
   * behind; then the initial-events-end bookmark at `endRv` (when asked for) and the live events held meanwhile.
   */
  private async replay(objects: readonly KubeObject[], endRv: number | undefined): Promise<void> {
    let batch = '';
    for (let i = 0; i < objects.length && !this.stopped; i++) {
      if (this.matches(objects[i])) batch += eventLine('ADDED', this.render(objects[i]));
      if (batch && (batch.length >= REPLAY_BATCH_CHARS || i === objects.length - 1)) {
        const more = this.write(batch);
        batch = '';
        if (!more && this.sink.backlog() >= REPLAY_QUEUE_BYTES) await this.sink.drained();
      }
    }
    if (this.stopped) return;
    if (endRv !== undefined) this.sendBookmark(endRv, true);
    const held = this.pending ?? [];
    this.pending = undefined;
    for (const e of held) this.forward(e);
  }

  deliver(event: StoredEvent): void {
    if (this.stopped || event.rv <= this.replayedRv) return;
    if (this.pending) this.pending.push(event);
    else this.forward(event);
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
    this.write(eventLine(type, objectJson));
  }

  /** Writes lines unless stopped; false when the client should be given time to catch up. */
  private write(lines: string): boolean {
    if (this.stopped) return false;
    const more = this.sink.write(lines);
    if (this.sink.backlog() > this.settings.maxBacklogBytes) this.stop();
    return more;
  }

  /** Ends the stream on an error found once it has started: the client gets it as an ERROR event. */
  private fail(err: unknown): void {
    if (!(err instanceof ApiError)) this.api.options.log.error({ err }, 'unexpected error in a watch stream');
    const apiErr = err instanceof ApiError ? err : internalError((err as Error)?.message ?? String(err));
    this.send('ERROR', JSON.stringify(apiErr.toStatus()));
    this.stop();
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
    write(lines) {
      if (!queued) return sink.write(lines);
      queued.push(lines);
      return true;
    },
    close() {
      if (queued) closeRequested = true;
      else sink.close();
    },
    backlog: () => sink.backlog(),
    drained: () =>
      ready.then(
        () => sink.drained(),
        () => undefined,
      ),
  };
}
