/**
 * A lister-watcher confined to some shards: it sends `shardSelector` with every list and watch, and drops what
 * does not match on the client too, so it also works against a server that ignores the parameter (one without
 * the `ShardedListAndWatch` gate, or before it); `onUnfiltered` hears of the first object the server let through.
 */
import type { KubeObject, WatchEvent } from '../api/meta.ts';
import type { ResourceType } from '../api/registry.ts';
import { parseShardSelector } from '../api/shard-selector.ts';
import type { ListOptions, WatchOptions } from '../client/resource.ts';
import type { ListerWatcher } from './reflector.ts';

export interface ShardFilter {
  /** The `shardSelector` text (src/sharding/ranges.ts writes it). */
  selector: string;
  /** Whether a resource's informers are sharded. */
  applies(rt: ResourceType): boolean;
  /** The server sent an object outside the selector: it does not filter, the client does. */
  onUnfiltered(informer: string): void;
}

export function shardedListerWatcher<T extends KubeObject>(
  inner: ListerWatcher<T>,
  filter: ShardFilter,
  informer: string,
): ListerWatcher<T> {
  const selector = parseShardSelector(filter.selector);
  let told = false;
  const keep = (obj: T): boolean => {
    if (selector.matches(obj)) return true;
    if (!told) {
      told = true;
      filter.onUnfiltered(informer);
    }
    return false;
  };
  const shardSelector = filter.selector;
  return {
    async list(namespace, opts: ListOptions & { signal?: AbortSignal }) {
      const list = await inner.list(namespace, { ...opts, shardSelector });
      return { ...list, items: list.items.filter(keep) };
    },
    ...(inner.listPage && {
      async listPage(namespace: string | undefined, opts: ListOptions & { signal?: AbortSignal }) {
        const page = await inner.listPage!(namespace, { ...opts, shardSelector });
        return { metadata: page.metadata, items: () => page.items().filter(keep) };
      },
    }),
    watch(namespace, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => void, signal) {
      // Bookmarks and errors carry no object of a shard; a shard's key (uid, namespace) never changes, so an
      // object stays in or out of the selection for its whole life.
      const pass = (e: WatchEvent<T>) => e.type === 'BOOKMARK' || e.type === 'ERROR' || keep(e.object);
      return inner.watch(namespace, { ...opts, shardSelector }, (e) => pass(e) && onEvent(e), signal);
    },
  };
}
