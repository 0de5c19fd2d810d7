/**
 * Persistence of the control plane's storage: a journal that writes every committed change to a
 * key-value store in groups (group commit: while one write is being made durable, the next changes
 * queue up and go together in the following one), and loads what was kept at start.
 *
 * Used for the embedded store (LevelDB); etcd is not journaled but authoritative (see etcd-store.ts).
 *
 * Layout:
 * - `o/<apiVersion>/<plural>|<namespace>/<name>`: the object as it is now (deleted objects are removed);
 * - `e/<resourceVersion, 16 digits>`: the event of that resourceVersion (`{r, t, o, p}`: resource,
 *   type, object, previous), the latest `retainedEvents` of them, so that watches resume across a restart.
 *
 * Each change's writes go in one atomic batch, so a crash leaves a change entirely there or entirely absent.
 */
import type { KubeObject } from '../api/meta.ts';
import { objectKey } from '../api/meta.ts';
import { FLAVORS, type FlavorName } from '../api/naming.ts';
import { apiVersionOf, ResourceRegistry, type ResourceType } from '../api/registry.ts';
import type { Commit, SavedState, Storage, StoredEvent } from './storage.ts';
import { toJson } from './watch.ts';

export type KvOp = { type: 'put'; key: string; value: string } | { type: 'del'; key: string };

/** A key-value store that applies writes atomically and durably. */
export interface KeyValueStore {
  /** Applies every group atomically (and the groups in order), durable once resolved. */
  write(groups: KvOp[][]): Promise<void>;
  /** Entries whose keys start with `prefix`, in key order. */
  scan(prefix: string): AsyncIterable<[string, string]>;
  close(): Promise<void>;
}

const OBJECTS = 'o/';
const EVENTS = 'e/';
const eventKey = (rv: number) => EVENTS + String(rv).padStart(16, '0');
const resourceId = (rt: ResourceType) => `${apiVersionOf(rt)}/${rt.plural}`;
const objectEntryKey = (rt: ResourceType, key: string) => `${OBJECTS}${resourceId(rt)}|${key}`;

/**
 * The flavor whose objects a store holds: the one with the most objects of resources only it serves (its API
 * groups carry its word). Undefined for an empty store, or one of shared resources (`v1`) alone.
 */
export function flavorOfResources(counts: ReadonlyMap<string, number>): FlavorName | undefined {
  const served = FLAVORS.map((f) => new Set(new ResourceRegistry(f).all.map(resourceId)));
  let best: { flavor?: FlavorName; objects: number } = { objects: 0 };
  for (const [i, flavor] of FLAVORS.entries()) {
    const own = (id: string) => served[i].has(id) && !served.some((other, j) => j !== i && other.has(id));
    let objects = 0;
    for (const [id, n] of counts) if (own(id)) objects += n;
    if (objects > best.objects) best = { flavor, objects };
  }
  return best.flavor;
}

/** How many objects a store keeps of each resource (`<apiVersion>/<plural>`). */
export async function storedResources(kv: KeyValueStore): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const [key] of kv.scan(OBJECTS)) {
    const id = key.slice(OBJECTS.length, key.indexOf('|'));
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** A stored object, or undefined when its bytes do not decode to one (reported as a corrupt object). */
export function decodeObject(value: string): KubeObject | undefined {
  try {
    const object = JSON.parse(value) as KubeObject;
    return object && typeof object === 'object' && typeof object.metadata === 'object' ? object : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The object the embedded store kept under `key` (`o/<apiVersion>/<plural>|<namespace>/<name>`), or undefined
 * when the entry is damaged in a way that still decodes: no object, no valid resourceVersion (the store's counter
 * resumes from the largest, and one that is no number is never durable: no request would be answered), or a
 * name or namespace other than its key's (it would be served under another name, and its entry never rewritten).
 */
export function keptObject(key: string, value: string): KubeObject | undefined {
  const object = decodeObject(value);
  if (!object || !/^[1-9][0-9]*$/.test(String(object.metadata.resourceVersion))) return undefined;
  return objectKey(object.metadata) === key.slice(key.indexOf('|') + 1) ? object : undefined;
}

interface EventRecord {
  r: string;
  t: StoredEvent['type'];
  o: KubeObject;
  p?: KubeObject;
}

export class Journal {
  private queue: KvOp[][] = [];
  private queuedRv = 0;
  private flushing?: Promise<void>;
  private failed = false;
  private stopCommits: () => void = () => {};
  /** The oldest event still kept in the store. */
  private oldestEventRv: number;

  private constructor(
    private readonly storage: Storage,
    private readonly kv: KeyValueStore,
    private readonly retainedEvents: number,
    oldestEventRv: number,
  ) {
    this.oldestEventRv = oldestEventRv;
  }

  /**
   * Loads what `kv` kept into an empty `storage`, then journals every later change. Objects of
   * resources this registry does not serve (another flavor's) are left in the store, unloaded.
   */
  static async open(
    storage: Storage,
    kv: KeyValueStore,
    registry: ResourceRegistry,
    retainedEvents: number,
  ): Promise<{ journal: Journal; skipped: number }> {
    // Views (events-group Events) have no keys of their own: their objects are the stored resource's.
    const byId = new Map(registry.all.filter((rt) => !rt.storedAs).map((rt) => [resourceId(rt), rt]));
    const saved: SavedState = { rv: 0, objects: [], events: [], keptAfter: 0, corrupt: [] };
    let skipped = 0;
    for await (const [key, value] of kv.scan(OBJECTS)) {
      const rt = byId.get(key.slice(OBJECTS.length, key.indexOf('|')));
      if (!rt) {
        skipped++;
        continue;
      }
      const object = keptObject(key, value);
      if (!object) {
        saved.corrupt?.push({ rt, key: key.slice(key.indexOf('|') + 1) });
        continue;
      }
      saved.objects.push({ rt, object });
      saved.rv = Math.max(saved.rv, Number(object.metadata.resourceVersion));
    }
    for await (const [key, value] of kv.scan(EVENTS)) {
      const record = JSON.parse(value) as EventRecord;
      const rv = Number(key.slice(EVENTS.length));
      const rt = byId.get(record.r);
      saved.rv = Math.max(saved.rv, rv);
      if (saved.events.length === 0) saved.keptAfter = rv - 1;
      if (rt) saved.events.push({ rt, event: { type: record.t, rv, object: record.o, previous: record.p } });
    }
    if (saved.events.length === 0) saved.keptAfter = saved.rv;
    storage.restore(saved);
    const journal = new Journal(storage, kv, retainedEvents, saved.keptAfter + 1);
    storage.holdUntilDurable();
    const stopCommits = storage.onCommit((c) => journal.append(c));
    const stopPurges = storage.onPurge((rt, key) => journal.purge(rt, key));
    journal.stopCommits = () => {
      stopCommits();
      stopPurges();
    };
    return { journal, skipped };
  }

  /** Waits for the writes queued so far, then closes the store. */
  async close(): Promise<void> {
    this.stopCommits();
    await this.flushing;
    await this.kv.close();
  }

  private append({ rt, event }: Commit): void {
    if (this.failed) return;
    const key = objectEntryKey(rt, objectKey(event.object.metadata));
    const previous = event.previous && event.type !== 'ADDED' ? `,"p":${toJson(event.previous)}` : '';
    const record = `{"r":"${resourceId(rt)}","t":"${event.type}","o":${toJson(event.object)}${previous}}`;
    const group: KvOp[] = [
      event.type === 'DELETED' ? { type: 'del', key } : { type: 'put', key, value: toJson(event.object) },
      { type: 'put', key: eventKey(event.rv), value: record },
    ];
    // resourceVersions are consecutive, one per change: the event falling out of the window is known.
    while (event.rv - this.oldestEventRv >= this.retainedEvents) {
      group.push({ type: 'del', key: eventKey(this.oldestEventRv++) });
    }
    this.queue.push(group);
    this.queuedRv = event.rv;
    this.flushing ??= this.flush();
  }

  /** Deletes the bytes of a corrupt object. */
  private purge(rt: ResourceType, key: string): void {
    if (this.failed) return;
    this.queue.push([{ type: 'del', key: objectEntryKey(rt, key) }]);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const groups = this.queue;
      const rv = this.queuedRv;
      this.queue = [];
      try {
        await this.kv.write(groups);
      } catch (err) {
        this.failed = true;
        this.queue = [];
        this.storage.markFailed(new Error(`the store could not persist a change: ${(err as Error).message}`));
        break;
      }
      this.storage.markDurable(rv);
    }
    this.flushing = undefined;
  }
}
