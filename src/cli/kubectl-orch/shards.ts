/**
 * `kubectl orch shards`: the shard map of `--sharding` replicas, read from their shard Leases in the
 * leader-election namespace (`-n`, else the system namespace): SHARD, RANGE, HOLDER, RENEWED, one row per shard.
 */
import type { Lease } from '../../api/types/coordination.ts';
import { rangeText } from '../../sharding/ranges.ts';
import { humanDuration } from '../../util/time.ts';
import { table, UsageError } from './output.ts';
import type { Session } from './session.ts';

/**
 * The rows: every shard up to the highest Lease found (or `shards`), one without a Lease or holder shown as
 * `<none>`, RENEWED as the age of the last renewal.
 */
export function shardRows(leases: readonly Lease[], prefix: string, nowMs: number, shards?: number): string[][] {
  const byShard = new Map<number, Lease>();
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`);
  for (const l of leases) {
    const m = pattern.exec(l.metadata.name ?? '');
    if (m) byShard.set(Number(m[1]), l);
  }
  const count = shards ?? Math.max(0, ...[...byShard.keys()].map((i) => i + 1));
  return Array.from({ length: count }, (_, i) => {
    const spec = byShard.get(i)?.spec;
    const renewed = spec?.renewTime ? humanDuration(nowMs - Date.parse(spec.renewTime)) : '<none>';
    return [String(i), rangeText(i, count), spec?.holderIdentity || '<none>', renewed];
  });
}

export async function shards(
  session: Session,
  opts: { shards?: string; noHeaders: boolean },
  out: (t: string) => void,
): Promise<number> {
  const count = opts.shards === undefined ? undefined : Number(opts.shards);
  if (count !== undefined && !(Number.isInteger(count) && count >= 1 && count <= 256)) {
    throw new UsageError(`invalid argument "${opts.shards}" for "--shards" flag: must be between 1 and 256`);
  }
  const n = session.registry.naming;
  const namespace = session.namespaceGiven ? session.namespace : n.systemNamespace;
  const leases = await session.client.kind<Lease>('Lease').listAll(namespace);
  const rows = shardRows(leases.items, n.shardLeasePrefix, Date.now(), count);
  if (rows.length === 0) {
    out(`No shard Leases found in ${namespace} namespace.\n`);
    return 0;
  }
  out(table(opts.noHeaders ? rows : [['SHARD', 'RANGE', 'HOLDER', 'RENEWED'], ...rows]));
  return 0;
}
