/**
 * Shards as ranges of the 64-bit FNV-1a hash space of `shardSelector` (§4.4): shard `i` of `n` covers
 * `[ceil(i·2^64/n), ceil((i+1)·2^64/n))`, so the shard of a hash `h` is `floor(h·n / 2^64)`. The hash and the
 * selector's syntax are those of src/api/shard-selector.ts, which the embedded plane uses too, so client and server
 * agree.
 */
import { fnv1a64, hexBound, type ShardPath, type ShardRange, shardRangesText } from '../api/shard-selector.ts';

const SPACE = 1n << 64n;

export type ShardKey = 'namespace' | 'uid';

/** How a controller's objects are sharded: by namespace (every namespaced cache), or one kind by uid. */
export type ShardBy = { key: 'namespace' } | { key: 'uid'; kind: string };

export const SHARD_PATHS: Readonly<Record<ShardKey, ShardPath>> = {
  namespace: 'object.metadata.namespace',
  uid: 'object.metadata.uid',
};

/** The shard of a key (a namespace, a uid). */
export function shardOf(key: string, shards: number): number {
  return Number((fnv1a64(key) * BigInt(shards)) / SPACE);
}

/** Shard `i`'s range, start inclusive, end exclusive. */
export function shardRange(i: number, shards: number): { start: bigint; end: bigint } {
  const bound = (k: number) => (BigInt(k) * SPACE + BigInt(shards) - 1n) / BigInt(shards);
  return { start: bound(i), end: bound(i + 1) };
}

/** `0x0000000000000000-0x1000000000000000`: a shard's range for people. */
export function rangeText(i: number, shards: number): string {
  const { start, end } = shardRange(i, shards);
  return `${hexBound(start)}-${hexBound(end)}`;
}

/** The `shardSelector` of a set of shards (adjacent ones merged into one range); undefined for none. */
export function shardSelector(key: ShardKey, held: Iterable<number>, shards: number): string | undefined {
  const sorted = [...new Set(held)].sort((a, b) => a - b);
  const ranges: ShardRange[] = [];
  for (let k = 0; k < sorted.length; ) {
    let last = k;
    while (last + 1 < sorted.length && sorted[last + 1] === sorted[last] + 1) last++;
    const start = shardRange(sorted[k], shards).start;
    const end = shardRange(sorted[last], shards).end;
    ranges.push({ path: SHARD_PATHS[key], start, end });
    k = last + 1;
  }
  return ranges.length ? shardRangesText(ranges) : undefined;
}
