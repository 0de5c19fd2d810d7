/**
 * The embedded key-value store: LevelDB (through `classic-level`) in the data directory. Every group
 * commit is one batch written with `sync`, so it is on disk before the journal reports it durable.
 *
 * LevelDB's log checksums each record, but its replay drops a record whose checksum fails and goes on
 * (classic-level does not expose `paranoid_checks`), and it reads tables without verifying them. So
 * before it opens, every record of its logs and manifest and every block of its tables is checked
 * here (leveldb-files.ts): a damaged store refuses to start, in one line that says what is damaged
 * and the way out, rather than come up without acknowledged writes. A record torn by a crash at the
 * very end of the log was never acknowledged, and is dropped whole.
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { checkLogFile, checkTableFile, manifestNamed } from './leveldb-files.ts';
import { type KeyValueStore, keptObject } from './persistence.ts';
import { StoreDamaged, StoreInUse } from './store-refusal.ts';

export async function openLevelStore(dir: string): Promise<KeyValueStore> {
  // Before the files are read: a live store's files change underneath, and must not be taken for damage.
  if (await lockedByAnotherProcess(dir)) throw storeInUse(dir);
  const damage = await damageIn(dir);
  if (damage) throw storeDamaged(dir, damage);
  const db = new ClassicLevel<string, string>(dir, { valueEncoding: 'utf8' });
  try {
    await db.open();
  } catch (err) {
    const cause = (err as { cause?: Error & { code?: string } }).cause;
    if (cause?.code === 'LEVEL_CORRUPTION') throw storeDamaged(dir, cause.message);
    if (cause?.code === 'LEVEL_LOCKED') throw storeInUse(dir);
    throw new Error(`cannot open the store in ${dir}: ${cause?.message ?? (err as Error).message}`);
  }
  return {
    write: (groups) => db.batch(groups.flat(), { sync: true }),
    scan: (prefix) => scanChecked(dir, db, prefix),
    close: () => db.close(),
  };
}

/**
 * Salvages a damaged store (`orch-control-plane --repair-store`, the control plane stopped): LevelDB's
 * repair keeps every record and block that reads whole (and moves the files it replaced or could not
 * read to `lost/`); the watch history is cleared, as it may have gaps now, so watches from before the
 * repair answer 410 and their clients list again. Returns what it did, in one line.
 */
export async function repairLevelStore(dir: string): Promise<string> {
  // LevelDB's repair takes no lock: a live store is not repaired under its control plane.
  if (await lockedByAnotherProcess(dir)) throw storeInUse(dir);
  const before = await damageIn(dir);
  await ClassicLevel.repair(dir);
  const after = await damageIn(dir);
  if (after) throw storeDamaged(dir, `still, after LevelDB's repair: ${after}`);
  const db = new ClassicLevel<string, string>(dir, { valueEncoding: 'utf8' });
  await db.open();
  try {
    // What LevelDB's repair keeps may still be damaged in a way that decodes (bytes that are no object, an object
    // without its resourceVersion: both seen after one flipped bit in a log): such values are moved aside too, or
    // every list of their resource would fail, or no request be answered.
    let objects = 0;
    const undecodable: { key: string; value: string }[] = [];
    for await (const [key, value] of db.iterator({ gte: 'o/', lt: 'o/\uffff' })) {
      if (keptObject(key, value)) objects++;
      else undecodable.push({ key, value });
    }
    const lost = join(dir, 'lost');
    if (undecodable.length) {
      await mkdir(lost, { recursive: true });
      const lines = undecodable.map((entry) => `${JSON.stringify(entry)}\n`);
      await writeFile(join(lost, 'undecodable-objects.jsonl'), lines.join(''));
      await db.batch(undecodable.map(({ key }) => ({ type: 'del' as const, key })));
    }
    await db.clear({ gte: 'e/', lt: 'e/\uffff' });
    const found = before ? `it was damaged (${before})` : 'no damage found';
    const dropped = undecodable.length ? `, ${undecodable.length} whose bytes are no object moved to ${lost}` : '';
    return `repaired the store in ${dir}: ${found}; ${objects} objects kept${dropped}, the files it replaced or could not read moved to ${lost}, watch history cleared`;
  } finally {
    await db.close();
  }
}

/** What in the store's directory fails its checks, if anything. */
export async function damageIn(dir: string): Promise<string | undefined> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException): string[] => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const logs = names.filter((n) => n.endsWith('.log')).sort();
  const tables = names.filter((n) => n.endsWith('.ldb') || n.endsWith('.sst')).sort();
  if (!names.includes('CURRENT')) {
    // Without CURRENT, LevelDB would start an empty store next to the old files.
    const orphans = names.filter((n) => n.startsWith('MANIFEST-')).length + tables.length;
    return orphans > 0 ? 'CURRENT is missing' : undefined;
  }
  const manifest = manifestNamed(await readFile(join(dir, 'CURRENT'), 'latin1'));
  if (!manifest) return 'CURRENT does not name a manifest';
  if (!names.includes(manifest)) return `CURRENT names ${manifest}, which is missing`;
  for (const name of [manifest, ...logs]) {
    const problem = checkLogFile(await readFile(join(dir, name)));
    if (problem) return `${name}: ${problem}`;
  }
  for (const name of tables) {
    const problem = checkTableFile(await readFile(join(dir, name)));
    if (problem) return `${name}: ${problem}`;
  }
  return undefined;
}

function storeInUse(dir: string): StoreInUse {
  return new StoreInUse(
    `the data directory ${dirname(dir)} is in use by another process (its store is locked: ${join(dir, 'LOCK')}); ` +
      'stop that process or pass another --data-dir',
  );
}

/**
 * Whether another process holds LevelDB's lock (a POSIX lock on `LOCK`), from Linux's `/proc/locks`; false where
 * that cannot tell, and opening the store then finds out.
 */
async function lockedByAnotherProcess(dir: string): Promise<boolean> {
  const [locks, lock] = await Promise.all([
    readFile('/proc/locks', 'latin1').catch(() => undefined),
    stat(join(dir, 'LOCK')).catch(() => undefined),
  ]);
  return locks !== undefined && lock !== undefined && lockHeldByAnother(locks, lock.dev, lock.ino, process.pid);
}

/**
 * Whether `/proc/locks` lists a lock of another process than `pid` on the file (`dev`, `ino`: `stat`'s). Its lines
 * read `1: POSIX  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF`, major and minor in hex; waiters' lines
 * (`1: -> POSIX ...`) hold nothing.
 */
export function lockHeldByAnother(locks: string, dev: number, ino: number, pid: number): boolean {
  const major = (dev >> 8) & 0xfff;
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
  for (const line of locks.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === '->' || fields.length < 6) continue;
    const [maj, min, inode] = fields[5].split(':');
    const held = Number.parseInt(maj, 16) === major && Number.parseInt(min, 16) === minor && inode === String(ino);
    if (held && Number(fields[4]) !== pid) return true;
  }
  return false;
}

/** The one line a damaged store refuses to start with: where, what, and the way out. */
function storeDamaged(dir: string, what: string): StoreDamaged {
  const dataDir = dirname(dir);
  return new StoreDamaged(
    `the store in ${dir} is damaged (${what}), so the control plane does not start: acknowledged writes could be lost. ` +
      `Restore ${dataDir} from a backup, or run \`orch-control-plane --data-dir=${dataDir} --repair-store\` to keep what reads whole (README: Operations)`,
  );
}

/** Entries under `prefix`; LevelDB's report of a damaged block becomes the one-line refusal. */
async function* scanChecked(dir: string, db: ClassicLevel<string, string>, prefix: string) {
  try {
    yield* db.iterator({ gte: prefix, lt: `${prefix}\uffff` });
  } catch (err) {
    if ((err as { code?: string }).code === 'LEVEL_CORRUPTION') throw storeDamaged(dir, (err as Error).message);
    throw err;
  }
}
