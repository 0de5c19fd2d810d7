import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockHeldByAnother, openLevelStore, repairLevelStore } from './kv-level.ts';
import { StoreInUse } from './store-refusal.ts';

// stat's dev of major 254 (0xfe), minor 0, and of major 8, minor 0x123 (the high minor bits above bit 8 shift by 12).
const DEV_FE_00 = 254 << 8;
const DEV_08_123 = (8 << 8) | 0x23 | (0x100 << 12);

describe('lockHeldByAnother: /proc/locks lines of a LevelDB LOCK file', () => {
  it.each([
    ['1: POSIX  ADVISORY  WRITE 12058 fe:00:9978024 0 EOF', DEV_FE_00, 9978024, 1, true],
    ['1: POSIX  ADVISORY  WRITE 12058 fe:00:9978024 0 EOF', DEV_FE_00, 9978024, 12058, false],
    ['1: POSIX  ADVISORY  WRITE 12058 fe:00:9978025 0 EOF', DEV_FE_00, 9978024, 1, false],
    ['1: POSIX  ADVISORY  WRITE 12058 fe:01:9978024 0 EOF', DEV_FE_00, 9978024, 1, false],
    ['1: POSIX  ADVISORY  WRITE 7 08:123:42 0 EOF', DEV_08_123, 42, 1, true],
    ['1: -> POSIX  ADVISORY  WRITE 12058 fe:00:9978024 0 EOF', DEV_FE_00, 9978024, 1, false],
    [
      '1: FLOCK  ADVISORY  WRITE 9 fe:00:1 0 EOF\n2: POSIX  ADVISORY  WRITE 12058 fe:00:9978024 0 EOF',
      DEV_FE_00,
      9978024,
      1,
      true,
    ],
    ['', DEV_FE_00, 9978024, 1, false],
  ])('%j (dev %i, inode %i, pid %i) → %s', (locks, dev, ino, pid, held) => {
    expect(lockHeldByAnother(locks, dev, ino, pid)).toBe(held);
  });
});

describe('a store another process has open', () => {
  it.skipIf(process.platform !== 'linux')(
    'is in use, whatever its files look like meanwhile',
    { timeout: 30_000 },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'orch-kv-lock-'));
      const store = join(dir, 'store');
      const script = `const { ClassicLevel } = require('classic-level'); new ClassicLevel(${JSON.stringify(store)}).open().then(() => console.log('open')); setInterval(() => {}, 1000);`;
      const holder = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        await new Promise<void>((resolve, reject) => {
          holder.stdout.on('data', () => resolve());
          holder.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
        });
        // What a reader may see of a live store mid-write: not damage, since it is not ours to check.
        await writeFile(join(store, 'CURRENT'), 'half-written');
        const opened = openLevelStore(store);
        await expect(opened).rejects.toBeInstanceOf(StoreInUse);
        await expect(opened).rejects.toThrow(`the data directory ${dir} is in use by another process`);
        await expect(repairLevelStore(store)).rejects.toBeInstanceOf(StoreInUse);
      } finally {
        holder.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
