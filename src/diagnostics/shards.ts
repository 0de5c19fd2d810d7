/**
 * `/debug/shards`: the shards this `--sharding` replica holds, since when, and how many objects its sharded
 * caches hold; with `?bytes=1` their size as JSON too (it serializes every cached object, so only when asked).
 * Plain text, or JSON for `Accept: application/json`; authorized as every other debug path.
 */
import { table } from '../cli/kubectl-orch/output.ts';
import { rangeText } from '../sharding/ranges.ts';
import type { ShardReport } from '../sharding/replica.ts';
import { type RouteRegistry, textReply } from './server.ts';

export const SHARDS_PATH = '/debug/shards';

export function installShards(server: RouteRegistry, report: (opts: { bytes: boolean }) => ShardReport): void {
  server.route(SHARDS_PATH, (req) => {
    const r = report({ bytes: req.query.get('bytes') === '1' });
    const held = r.held.map((h) => ({ ...h, range: rangeText(h.shard, r.shards), since: h.since.toISOString() }));
    if (req.headers.accept?.includes('application/json')) {
      const body = JSON.stringify({ ...r, held });
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body };
    }
    const rows = [
      ['SHARD', 'RANGE', 'LEASE', 'SINCE'],
      ...held.map((h) => [String(h.shard), h.range, h.lease, h.since]),
    ];
    const bytes = (informer: string) => (r.cachedBytes ? `, ${r.cachedBytes[informer] ?? 0} bytes as JSON` : '');
    const cached = Object.entries(r.cached).map(([informer, n]) => `  ${informer}: ${n}${bytes(informer)}`);
    const text = [
      `identity: ${r.identity}`,
      `holding ${held.length} of ${r.shards} shards`,
      table(rows).trimEnd(),
      'cached objects:',
      ...(cached.length ? cached : ['  none']),
    ];
    return textReply(200, `${text.join('\n')}\n`);
  });
}

/** The statusz line: `Shards held: 3 (since ...), 7 (since ...)`. */
export function shardsStatuszLine(r: ShardReport): string {
  const held = r.held.map((h) => `${h.shard} (since ${h.since.toISOString()})`);
  return `Shards held: ${held.length ? held.join(', ') : 'none'} of ${r.shards}`;
}
