/**
 * etcd as the key-value store (`--etcd-servers`), through the `etcd3` client. Every key lives under a
 * prefix; a group commit becomes as few transactions as etcd's limits allow (128 operations and about
 * 1.5 MiB per request by default), each change's operations always in the same one. One control
 * plane owns a prefix: it holds an etcd lock (on a lease it keeps alive) for as long as it runs.
 *
 * etcd may be unreachable for a while (a restart, a leader election): a transaction is retried until
 * it goes through, for up to a minute. That is safe because every transaction only puts and deletes
 * whole keys, so applying one twice leaves the same state.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3, IRequestOp, Lock } from 'etcd3';
import type { KeyValueStore, KvOp } from './persistence.ts';

const MAX_TXN_OPS = 128;
const MAX_TXN_BYTES = 1024 * 1024;
const SCAN_PAGE = 500;

const WRITE_RETRY_MS = 60_000;
const MAX_RETRY_DELAY_MS = 2000;

/** How long the lock of an owner that crashed outlives it (its lease's TTL). */
const OWNER_TTL_SECONDS = 10;

export async function openEtcdStore(servers: string[], prefix: string): Promise<KeyValueStore> {
  // Imported on use: the client and its gRPC stack would cost every start ~0.3 s.
  const { Etcd3 } = await import('etcd3');
  const client = new Etcd3({ hosts: servers, dialTimeout: 10_000 });
  let owner: Lock;
  try {
    owner = await acquireOwner(client, `${prefix}owner`);
  } catch (err) {
    client.close();
    throw new Error(`cannot use etcd prefix ${prefix} (is another control plane using it?): ${(err as Error).message}`);
  }
  const toRequest = (op: KvOp): IRequestOp =>
    op.type === 'put'
      ? { request_put: { key: Buffer.from(prefix + op.key), value: Buffer.from(op.value) } }
      : { request_delete_range: { key: Buffer.from(prefix + op.key) } };
  return {
    async write(groups) {
      for (const txn of transactions(groups)) {
        const request = { success: txn.map(toRequest) };
        const deadline = Date.now() + WRITE_RETRY_MS;
        for (let delay = 100; ; delay = Math.min(2 * delay, MAX_RETRY_DELAY_MS)) {
          try {
            await client.kv.txn(request);
            break;
          } catch (err) {
            if (Date.now() + delay > deadline) throw err;
            await sleep(delay);
          }
        }
      }
    },
    async *scan(keyPrefix) {
      const full = prefix + keyPrefix;
      const end = Buffer.from(`${full}\uffff`);
      let from = Buffer.from(full);
      for (;;) {
        const page = await client.kv.range({ key: from, range_end: end, limit: SCAN_PAGE });
        for (const kv of page.kvs) yield [kv.key.toString().slice(prefix.length), kv.value.toString()];
        if (!page.more || page.kvs.length === 0) return;
        from = Buffer.concat([page.kvs[page.kvs.length - 1].key, Buffer.from([0])]);
      }
    },
    async close() {
      await owner.release();
      client.close();
    },
  };
}

/** Takes the prefix's lock, waiting out the lease of an owner that crashed without releasing it. */
async function acquireOwner(client: Etcd3, key: string): Promise<Lock> {
  const deadline = Date.now() + (OWNER_TTL_SECONDS + 2) * 1000;
  for (;;) {
    try {
      return await client.lock(key).ttl(OWNER_TTL_SECONDS).acquire();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

/**
 * Groups packed into transactions within etcd's limits, never splitting a group, and never writing a
 * key twice in one transaction (etcd refuses that): a later change of the same key starts the next one.
 */
function* transactions(groups: KvOp[][]): Generator<KvOp[]> {
  let txn: KvOp[] = [];
  let bytes = 0;
  const keys = new Set<string>();
  for (const group of groups) {
    const size = group.reduce((n, op) => n + op.key.length + (op.type === 'put' ? op.value.length : 0), 0);
    const full = txn.length + group.length > MAX_TXN_OPS || bytes + size > MAX_TXN_BYTES;
    if (txn.length > 0 && (full || group.some((op) => keys.has(op.key)))) {
      yield txn;
      txn = [];
      bytes = 0;
      keys.clear();
    }
    txn.push(...group);
    bytes += size;
    for (const op of group) keys.add(op.key);
  }
  if (txn.length > 0) yield txn;
}
