import { describe, expect, it } from 'vitest';
import { fnv1a64, parseShardSelector } from '../api/shard-selector.ts';
import { rangeText, shardOf, shardRange, shardSelector } from './ranges.ts';

describe('shard ranges', () => {
  it('cut the whole hash space into adjacent ranges, for any shard count', () => {
    for (const n of [1, 3, 7, 16, 100]) {
      expect(shardRange(0, n).start).toBe(0n);
      expect(shardRange(n - 1, n).end).toBe(1n << 64n);
      for (let i = 1; i < n; i++) expect(shardRange(i, n).start).toBe(shardRange(i - 1, n).end);
    }
    expect(rangeText(1, 16)).toBe('0x1000000000000000-0x2000000000000000');
  });

  it('put every key in the range of its shard, as the server’s selector matches it', () => {
    for (const n of [3, 16]) {
      for (let k = 0; k < 200; k++) {
        const ns = `ns-${k}`;
        const i = shardOf(ns, n);
        const { start, end } = shardRange(i, n);
        const h = fnv1a64(ns);
        expect(start <= h && h < end).toBe(true);
        const pod = { metadata: { name: 'p', namespace: ns, uid: `u-${k}` } };
        expect(parseShardSelector(shardSelector('namespace', [i], n)!).matches(pod)).toBe(true);
        expect(parseShardSelector(shardSelector('namespace', [(i + 1) % n], n)!).matches(pod)).toBe(false);
        const byUid = shardOf(`u-${k}`, n);
        expect(parseShardSelector(shardSelector('uid', [byUid], n)!).matches(pod)).toBe(true);
      }
    }
  });

  it('merge adjacent shards into one term; none gives no selector', () => {
    expect(shardSelector('uid', [3, 1, 2, 7], 16)).toBe(
      "shardRange(object.metadata.uid, '0x1000000000000000', '0x4000000000000000') || " +
        "shardRange(object.metadata.uid, '0x7000000000000000', '0x8000000000000000')",
    );
    expect(shardSelector('namespace', [15], 16)).toBe(
      "shardRange(object.metadata.namespace, '0xf000000000000000', '0x10000000000000000')",
    );
    expect(shardSelector('uid', [], 16)).toBeUndefined();
  });
});
