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
import { MAX_TIMER_MS } from '../util/time.ts';
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
  /** Live events a watcher may have waiting for its connection (the reference's watch cache gives each watcher 100). */
  maxQueuedEvents: number;
  /** Bytes a watcher may have waiting: its events not yet handed to the connection and the connection's unsent bytes. */
  maxQueuedBytes: number;
  /**
   * How long a watcher may stay over either bound with its client taking nothing before it is ended (it re-watches
   * from its last resourceVersion); at twice the bytes it is ended at once, so memory does not follow the write rate
   * meanwhile. Also how long an ended stream's last bytes may wait for the client before its connection is dropped.
   */
  slowWatcherGraceMs: number;
}

/** What waits for one watcher's client. */
export interface WatchQueue {
  events: number;
  bytes: number;
}

/**
 * The buffer policy of one watcher: `ok` under both bounds; `over` when over one of them; `end` when over one of them
 * with the client stuck (taking nothing) for the grace, or at twice the bytes. `stuckForMs` is how long the client
 * has taken nothing while over (undefined: it was not over). Events alone never end it at once: a burst of many
 * (a deletecollection) reaches a client that keeps reading, and what they hold is counted in the bytes.
 */
export function queueVerdict(
  queued: WatchQueue,
  limits: Pick<WatchSettings, 'maxQueuedEvents' | 'maxQueuedBytes' | 'slowWatcherGraceMs'>,
  stuckForMs: number | undefined,
): 'ok' | 'over' | 'end' {
  if (queued.events <= limits.maxQueuedEvents && queued.bytes <= limits.maxQueuedBytes) return 'ok';
  if (queued.bytes > 2 * limits.maxQueuedBytes) return 'end';
  return stuckForMs !== undefined && stuckForMs >= limits.slowWatcherGraceMs ? 'end' : 'over';
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
 * A stored object's JSON as an item of a list: without `apiVersion` and `kind`, which the reference leaves out of
 * a typed list's items (the list's own kind names them). Stored objects begin with the two (api.ts), so the shared
 * form is cut rather than serialized again.
 */
export function toItemJson(obj: KubeObject): string {
  const json = toJson(obj);
  const typeMeta = `{"apiVersion":${JSON.stringify(obj.apiVersion)},"kind":${JSON.stringify(obj.kind)},`;
  return json.startsWith(typeMeta) ? `{${json.slice(typeMeta.length)}` : json;
}

/** An object without `apiVersion` and `kind`, for the list items of the other formats (see toItemJson). */
export function withoutTypeMeta(obj: KubeObject): Omit<KubeObject, 'apiVersion' | 'kind'> {
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = obj;
  return rest;
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

/** Events are written in pieces of about this many characters (the initial ones; live ones that came together)... */
const BATCH_CHARS = 64 * 1024;
/**
 * ...and events are handed to the connection while less than this waits in it; past it, the rest waits until it
 * has drained. Deeper than one batch, to keep the client fed while the server waits to be scheduled again; no
 * deeper, since the connection holds its own copy of every byte, per watcher.
 */
const CONNECTION_QUEUE_BYTES = 1024 * 1024;

export class WatchStream implements WatchSubscriber {
  private stopped = false;
  private unsubscribe: () => void = () => {};
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly matches: (obj: KubeObject) => boolean;
  /** The point the replay reached: live events at or below it were already sent. */
  private replayedRv = 0;
  /** While the initial events or the history are written, live events wait in the queue until after them. */
  private replaying = false;
  /** Lines of live events not yet handed to the connection, oldest first; `queuedChars` is their length. */
  private queue: string[] = [];
  private queuedChars = 0;
  /** Whether a flush waits for the connection to drain. */
  private awaitingDrain = false;
  /** Whether a flush is due once this round of I/O is over (see enqueue). */
  private flushPending = false;
  /**
   * Since when (performance.now()) the queue is over a bound with the client taking nothing, and the timer that
   * looks again at the grace.
   */
  private stuckSince: number | undefined;
  private graceTimer: NodeJS.Timeout | undefined;

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
   * the initial events (or the history since a resourceVersion) are then written from that snapshot as
   * the client takes them, and live events arriving meanwhile wait until after them. What is sent may
   * include changes not yet durable: it is held back until they are.
   */
  start(): void {
    const opts = this.api.watchOptions(this.query);
    if (opts.timeoutSeconds !== undefined && opts.timeoutSeconds < 0) {
      // As the reference (the spec says nothing of it): the deadline passed before the watch began, so it
      // answers 200 and at once the ERROR event of an expired request context.
      this.fail(new ApiError(500, 'InternalError', 'context deadline exceeded'));
      return;
    }
    const rt = this.req.rt;
    const storage = this.api.storage;
    if (!storage.isDurable()) this.sink = heldUntil(this.sink, storage.durable());
    this.unsubscribe = storage.watch(rt, this);
    const current = storage.currentRv();
    this.replayedRv = current;
    const rv = opts.resourceVersion === '' ? 0 : Number(opts.resourceVersion);
    const initial = opts.sendInitialEvents ?? (opts.resourceVersion === '' || opts.resourceVersion === '0');
    let replayed: Iterable<string> | undefined;
    try {
      if (initial) replayed = this.added(storage.list(rt, this.req.namespace));
      else if (rv > 0) replayed = this.changes(storage.eventsSince(rt, Math.min(rv, current)));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // The reference answers an expired resourceVersion inside the stream, as an ERROR event.
      this.fail(err);
      return;
    }
    if (replayed) {
      this.replaying = true;
      const endRv = initial && opts.sendInitialEvents ? current : undefined;
      this.replay(replayed, endRv).catch((err: unknown) => this.fail(err));
    }
    if (opts.allowWatchBookmarks && this.settings.bookmarkIntervalMs > 0) {
      const timer = setInterval(() => {
        if (!this.replaying) this.enqueue(this.bookmarkLine(Math.max(storage.deliveredRv(), this.replayedRv), false));
      }, this.settings.bookmarkIntervalMs);
      this.timers.push(timer);
    }
    // As the reference: a timeoutSeconds of 0 is no timeout asked for, so the server's default applies.
    const timeout = opts.timeoutSeconds || this.settings.defaultTimeoutSeconds;
    // Longer than Node's timers go is as good as never (24.8 days).
    this.timers.push(setTimeout(() => this.stop(), Math.min(timeout * 1000, MAX_TIMER_MS)));
    for (const t of this.timers) t.unref();
  }

  private *added(objects: readonly KubeObject[]): Iterable<string> {
    for (const obj of objects) if (this.matches(obj)) yield eventLine('ADDED', this.render(obj));
  }

  private *changes(events: readonly StoredEvent[]): Iterable<string> {
    for (const e of events) {
      const line = this.lineFor(e);
      if (line !== undefined) yield line;
    }
  }

  /**
   * Writes the replayed lines in batches, pausing while the client is well behind (a client that never reads
   * holds one connection queue of them, no more); then the initial-events-end bookmark at `endRv` (when asked
   * for) and the live events queued meanwhile.
   */
  private async replay(lines: Iterable<string>, endRv: number | undefined): Promise<void> {
    let batch = '';
    for (const line of lines) {
      batch += line;
      if (batch.length < BATCH_CHARS) continue;
      if (!this.handOver(batch) && this.sink.backlog() >= CONNECTION_QUEUE_BYTES) {
        await this.sink.drained();
        this.clientTookSome();
      }
      batch = '';
      if (this.stopped) return;
    }
    if (batch) this.handOver(batch);
    if (endRv !== undefined) this.handOver(this.bookmarkLine(endRv, true));
    this.replaying = false;
    this.flush();
  }

  deliver(event: StoredEvent): void {
    if (this.stopped || event.rv <= this.replayedRv) return;
    const line = this.lineFor(event);
    if (line !== undefined) this.enqueue(line);
  }

  /** The line this watcher sends for a change, by its selection before and after; none when neither matches. */
  private lineFor(e: StoredEvent): string | undefined {
    const now = this.matches(e.object);
    const before = e.previous !== undefined && e.type !== 'ADDED' && this.matches(e.previous);
    let type: WatchEventType | undefined;
    if (e.type === 'ADDED') type = now ? 'ADDED' : undefined;
    else if (e.type === 'DELETED') type = now || before ? 'DELETED' : undefined;
    else if (now) type = before ? 'MODIFIED' : 'ADDED';
    else if (before) type = 'DELETED';
    return type && eventLine(type, this.render(e.object));
  }

  private bookmarkLine(rv: number, initialEventsEnd: boolean): string {
    const rt: ResourceType = this.req.rt;
    const metadata: KubeObject['metadata'] = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata.annotations = { [this.api.naming.annotations.initialEventsEnd]: 'true' };
    return eventLine('BOOKMARK', JSON.stringify({ kind: rt.kind, apiVersion: apiVersionOf(rt), metadata }));
  }

  /** Writes lines to the connection unless stopped; false when the client should be given time to catch up. */
  private handOver(lines: string): boolean {
    return !this.stopped && this.sink.write(lines);
  }

  /**
   * Queues a line, handed to the connection once the event loop's round of I/O callbacks is over (`setImmediate`),
   * with the other lines queued meanwhile (the changes of the writes the server served in that round): one chunk,
   * where one per event would cost this server and every client reading it a chunk's work each.
   */
  private enqueue(line: string): void {
    if (this.stopped) return;
    this.queue.push(line);
    this.queuedChars += line.length;
    // A burst (a collection deleted) goes out, and is held to the bounds, as it comes.
    if (this.queuedChars >= BATCH_CHARS) this.flush();
    else if (!this.flushPending) {
      this.flushPending = true;
      setImmediate(() => {
        this.flushPending = false;
        this.flush();
      });
    }
  }

  /**
   * Hands queued lines to the connection while it has room (after any replay), waits for it to drain when it has
   * none, and holds the queue to its bounds.
   */
  private flush(): void {
    if (this.stopped) return;
    let sent = 0;
    while (!this.replaying && sent < this.queue.length && this.sink.backlog() < CONNECTION_QUEUE_BYTES) {
      let batch = this.queue[sent++];
      while (sent < this.queue.length && batch.length < BATCH_CHARS) batch += this.queue[sent++];
      this.queuedChars -= batch.length;
      this.handOver(batch);
    }
    // Taken off at once: shifting one by one costs the queue's length each time.
    this.queue.splice(0, sent);
    if (!this.replaying && this.queue.length > 0 && !this.awaitingDrain) {
      this.awaitingDrain = true;
      void this.sink.drained().then(() => {
        this.clientTookSome();
        // On a later turn: a connection gone may report drained at once, and its close must get its turn.
        setImmediate(() => {
          this.awaitingDrain = false;
          this.flush();
        });
      });
    }
    this.holdToBounds();
  }

  /** The client took what the connection held: it is not stuck, whatever the queue's length. */
  private clientTookSome(): void {
    if (this.stuckSince !== undefined) this.stuckSince = performance.now();
  }

  /**
   * Ends a watcher whose queue stays over its bounds with its client stuck past the grace, or goes far over them,
   * as a slow consumer.
   */
  private holdToBounds(): void {
    if (this.stopped) return;
    const queued = { events: this.queue.length, bytes: this.queuedChars + this.sink.backlog() };
    const now = performance.now();
    const stuckFor = this.stuckSince === undefined ? undefined : now - this.stuckSince;
    const verdict = queueVerdict(queued, this.settings, stuckFor);
    if (verdict === 'ok') {
      this.stuckSince = undefined;
      clearTimeout(this.graceTimer);
      this.graceTimer = undefined;
    } else if (verdict === 'end') {
      this.logForcedClose(queued);
      this.stop();
    } else {
      this.stuckSince ??= now;
      if (this.graceTimer) return;
      const left = this.settings.slowWatcherGraceMs - (now - this.stuckSince);
      this.graceTimer = setTimeout(() => {
        // Looked at after this turn's I/O: when the server itself was busy past the grace, its clients' drains
        // are counted first.
        setImmediate(() => {
          this.graceTimer = undefined;
          this.holdToBounds();
        });
      }, left + 1);
      this.graceTimer.unref();
    }
  }

  /** Logged as the reference's watch cache logs a watcher it terminates, with what was waiting for it. */
  private logForcedClose(queued: WatchQueue): void {
    const rt = this.req.rt;
    const resource = rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
    const key = `/${rt.plural}/${this.req.namespace ?? ''}`;
    const labels = this.query.get('labelSelector') ?? '';
    const fields = this.query.get('fieldSelector') ?? '';
    this.api.options.log.warn(
      { resource, queuedEvents: queued.events, queuedBytes: queued.bytes },
      `Forcing ${resource} watcher close due to unresponsiveness: key: ${JSON.stringify(key)}, labels: ` +
        `${JSON.stringify(labels)}, fields: ${JSON.stringify(fields)}. queued events = ${queued.events}, ` +
        `queued bytes = ${queued.bytes}`,
    );
  }

  /**
   * Ends the stream on an error found once it has started: the client gets it as an ERROR event, right after
   * what it was already sent (live events still queued would follow the error, so they are dropped).
   */
  private fail(err: unknown): void {
    if (!(err instanceof ApiError)) this.api.options.log.error({ err }, 'unexpected error in a watch stream');
    const apiErr = err instanceof ApiError ? err : internalError((err as Error)?.message ?? String(err));
    this.queue = [];
    this.handOver(eventLine('ERROR', JSON.stringify(apiErr.toStatus())));
    this.stop();
  }

  /** Ends the stream; what is still queued is dropped (the client resumes from the last resourceVersion it got). */
  stop(): void {
    if (this.stopped) return;
    // What came before the end is sent, as far as the connection has room for it (a flush may end it itself).
    if (this.flushPending) {
      this.flushPending = false;
      this.flush();
      if (this.stopped) return;
    }
    this.stopped = true;
    this.unsubscribe();
    for (const t of this.timers) clearTimeout(t);
    clearTimeout(this.graceTimer);
    this.queue = [];
    this.queuedChars = 0;
    this.sink.close();
    this.onStop();
  }
}

/**
 * A sink that queues what is written until `ready` settles, then passes it on (or closes if it failed). What it
 * holds counts as the client's backlog, so a replay waits rather than piling up here.
 */
function heldUntil(sink: WatchSink, ready: Promise<void>): WatchSink {
  let queued: string[] | undefined = [];
  let queuedChars = 0;
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
      queuedChars += lines.length;
      return false;
    },
    close() {
      if (queued) closeRequested = true;
      else sink.close();
    },
    backlog: () => (queued ? queuedChars : 0) + sink.backlog(),
    drained: () =>
      ready.then(
        () => sink.drained(),
        () => undefined,
      ),
  };
}
