/**
 * The write guard of sharded controllers: a write leaves the process only under the guard of the term of the
 * shard it belongs to (see LeaseGuard), found from the write itself: the namespace in its path, or the uid in
 * its body. A write that names neither (an access review, the event of a cluster-scoped object) writes no
 * object of a shard: it leaves while any shard's term allows it.
 */
import type { WriteGuard, WritePermit, WriteTarget } from '../client/client.ts';
import { type LeaseGuard, LeaseLostError } from '../leaderelection/guard.ts';
import { type ShardKey, shardOf } from './ranges.ts';

const NAMESPACED_PATH = /\/namespaces\/([^/?]+)\/[^/?]/;

export class ShardGuard implements WriteGuard {
  constructor(
    private readonly key: ShardKey,
    private readonly shards: number,
    private readonly guardFor: (shard: number) => LeaseGuard | undefined,
  ) {}

  admit(what: string, target: WriteTarget): WritePermit {
    const key = this.key === 'namespace' ? NAMESPACED_PATH.exec(target.path)?.[1] : uidOf(target.body);
    const guard = key === undefined ? this.anyGuard() : this.guardFor(shardOf(decodeURIComponent(key), this.shards));
    if (!guard) {
      const which = key === undefined ? 'any shard' : `shard ${shardOf(decodeURIComponent(key), this.shards)}`;
      throw new LeaseLostError(`refusing ${what}: this replica does not hold ${which}`);
    }
    return guard.admit(what);
  }

  private anyGuard(): LeaseGuard | undefined {
    for (let i = 0; i < this.shards; i++) {
      const guard = this.guardFor(i);
      if (guard) return guard;
    }
    return undefined;
  }
}

function uidOf(body: unknown): string | undefined {
  let obj = body;
  if (typeof obj === 'string') {
    try {
      obj = JSON.parse(obj);
    } catch {
      return undefined;
    }
  }
  const uid = (obj as { metadata?: { uid?: unknown } } | undefined)?.metadata?.uid;
  return typeof uid === 'string' && uid ? uid : undefined;
}
