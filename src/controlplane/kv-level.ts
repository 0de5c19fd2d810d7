/**
 * The embedded key-value store: LevelDB (through `classic-level`) in the data directory. Every group
 * commit is one batch written with `sync`, so it is on disk before the journal reports it durable;
 * LevelDB's log checksums each record, and a record torn by a crash is dropped when the log is replayed.
 */
import { ClassicLevel } from 'classic-level';
import type { KeyValueStore } from './persistence.ts';

export async function openLevelStore(dir: string): Promise<KeyValueStore> {
  const db = new ClassicLevel<string, string>(dir, { valueEncoding: 'utf8' });
  try {
    await db.open();
  } catch (err) {
    const cause = (err as { cause?: Error }).cause?.message ?? (err as Error).message;
    throw new Error(`cannot open the store in ${dir} (is another control plane using it?): ${cause}`);
  }
  return {
    write: (groups) => db.batch(groups.flat(), { sync: true }),
    scan: (prefix) => db.iterator({ gte: prefix, lt: `${prefix}\uffff` }),
    close: () => db.close(),
  };
}
