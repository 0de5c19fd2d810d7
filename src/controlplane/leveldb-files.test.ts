/** The checks of LevelDB's files, on files LevelDB wrote, whole and with one bit flipped. */
import { cp, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { damageIn } from './kv-level.ts';
import { checkLogFile, crc32c, manifestNamed, maskCrc, snappyUncompress } from './leveldb-files.ts';

let root: string;
/** A store with tables (a first session, compacted on reopen) and a log (a second session). */
let store: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'orch-leveldb-files-'));
  store = join(root, 'store');
  for (const session of [0, 1]) {
    const db = new ClassicLevel<string, string>(store, { valueEncoding: 'utf8' });
    for (let i = 0; i < 200; i++) {
      const value = JSON.stringify({ metadata: { name: `cm-${session}-${i}` }, data: { v: 'x'.repeat(i) } });
      await db.put(`o/v1/configmaps|default/cm-${session}-${i}`, value, { sync: true });
    }
    await db.close();
  }
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A copy of the store with one bit flipped in the file `pick` chooses, at `where` (a fraction of its length). */
async function flipped(pick: (names: string[]) => string, where: number): Promise<string> {
  const dir = await mkdtemp(join(root, 'copy-'));
  await cp(store, dir, { recursive: true });
  const file = join(dir, pick(await readdir(dir)));
  const bytes = await readFile(file);
  const at = Math.floor((bytes.length - 1) * where);
  bytes[at] ^= 0x10;
  await writeFile(file, bytes);
  return dir;
}

const named = (suffix: string) => (names: string[]) => names.find((n) => n.endsWith(suffix) || n.startsWith(suffix))!;

describe('checksums', () => {
  it.each([
    ['', 0],
    ['123456789', 0xe3069283],
    ['a', 0xc1d04330],
  ])('crc32c(%j) = %d', (text, crc) => {
    expect(crc32c(Buffer.from(text))).toBe(crc);
  });

  it('masks as LevelDB does, and the mask is not the identity', () => {
    expect(maskCrc(0)).toBe(0xa282ead8);
    expect(maskCrc(0xe3069283)).not.toBe(0xe3069283);
  });
});

describe('snappy', () => {
  it.each([
    ['a literal', [5, 0x10, 104, 101, 108, 108, 111], 'hello'],
    // "ab" then a copy of 4 bytes from 2 back (overlapping): "ababab".
    ['an overlapping copy', [6, 0x04, 97, 98, 0x01, 2], 'ababab'],
  ])('uncompresses %s', (_, input, output) => {
    expect(snappyUncompress(Buffer.from(input)).toString()).toBe(output);
  });

  it.each([
    ['a copy from before the start', [4, 0x01, 9]],
    ['less than announced', [9, 0x10, 104, 101, 108, 108, 111]],
    ['a literal past the end', [5, 0x10, 104]],
  ])('refuses %s', (_, input) => {
    expect(() => snappyUncompress(Buffer.from(input))).toThrow();
  });
});

describe('CURRENT', () => {
  it.each([
    ['MANIFEST-000005\n', 'MANIFEST-000005'],
    ['MANIFEST-000005', undefined],
    ['MANIFEST-0000\x155\n', undefined],
    ['', undefined],
  ])('%j names %s', (text, name) => {
    expect(manifestNamed(text)).toBe(name);
  });
});

describe('a store LevelDB wrote', () => {
  it('has tables, a manifest and a log, and passes', async () => {
    const names = await readdir(store);
    expect(names.some((n) => n.endsWith('.ldb'))).toBe(true);
    expect(names.some((n) => n.endsWith('.log'))).toBe(true);
    expect(await damageIn(store)).toBeUndefined();
  });

  it.each([
    ['.log', 0.1],
    ['.log', 0.5],
    ['.log', 0.999],
    ['.ldb', 0.1],
    ['.ldb', 0.5],
    // The index block, near the end.
    ['.ldb', 0.97],
    ['MANIFEST-', 0.5],
    ['MANIFEST-', 0],
    ['CURRENT', 0.5],
  ])('with a bit flipped in %s at %d of its length, names the file', async (suffix, where) => {
    const dir = await flipped(named(suffix), where);
    expect(await damageIn(dir)).toMatch(
      suffix === 'CURRENT' ? /CURRENT|MANIFEST/ : new RegExp(suffix.replace('.', '\\.')),
    );
  });

  it('takes a record cut short by the end of the log for a write torn by a crash', async () => {
    const dir = await mkdtemp(join(root, 'torn-'));
    await cp(store, dir, { recursive: true });
    const log = join(dir, named('.log')(await readdir(dir)));
    await truncate(log, (await stat(log)).size - 7);
    expect(checkLogFile(await readFile(log))).toBeUndefined();
    expect(await damageIn(dir)).toBeUndefined();
  });

  it('without CURRENT, refuses rather than let LevelDB start an empty store', async () => {
    const dir = await mkdtemp(join(root, 'no-current-'));
    await cp(store, dir, { recursive: true });
    await rm(join(dir, 'CURRENT'));
    expect(await damageIn(dir)).toBe('CURRENT is missing');
  });
});

describe('log records, built by hand', () => {
  /** One log record as LevelDB writes it: masked CRC of type and payload, length, type, payload. */
  const record = (payload: string, type = 1) => {
    const body = Buffer.concat([Buffer.from([type]), Buffer.from(payload)]);
    const header = Buffer.alloc(6);
    header.writeUInt32LE(maskCrc(crc32c(body)), 0);
    header.writeUInt16LE(payload.length, 4);
    return Buffer.concat([header, body]);
  };

  it.each([
    ['two whole records', Buffer.concat([record('a'), record('bc')]), undefined],
    ['zeroes to the end of the block', Buffer.concat([record('a'), Buffer.alloc(20)]), undefined],
    [
      'a record after zeroes',
      Buffer.concat([record('a'), Buffer.alloc(7), record('b')]),
      'records after zeroes at byte 8',
    ],
    ['an unknown record type', record('a', 9), 'bad record header at byte 0'],
    ['a record cut short at the end', record('abc').subarray(0, 9), undefined],
    ['a header cut short at the end', Buffer.concat([record('a'), record('b').subarray(0, 4)]), undefined],
  ])('%s', (_, log, problem) => {
    expect(checkLogFile(log)).toBe(problem);
  });
});
