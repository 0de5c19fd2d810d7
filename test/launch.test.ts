/**
 * bin/launch.js, on a package of its own in a temporary directory: the first start builds the bundle, the next
 * one runs it (and its code cache) as it is, a changed source is rebuilt at the next start and the old bundle
 * removed (so is one after a change of the launcher itself), and `import.meta.url` still names the source file.
 * A partial code cache is made again, a whole one kept, and one V8 or the launcher refuses is made again. Bundles are
 * ASCII, the daemon's too, or else read as UTF-8.
 */
import { isAscii } from 'node:buffer';
import { execFile } from 'node:child_process';
import {
  appendFile,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
let pkg: string;

beforeAll(async () => {
  pkg = await mkdtemp(join(tmpdir(), 'orch-launch-'));
  await mkdir(join(pkg, 'bin'));
  await mkdir(join(pkg, 'src', 'cli'), { recursive: true });
  await mkdir(join(pkg, 'node_modules'));
  await copyFile(join(ROOT, 'bin', 'launch.js'), join(pkg, 'bin', 'launch.js'));
  await symlink(join(ROOT, 'node_modules', 'esbuild'), join(pkg, 'node_modules', 'esbuild'));
  await symlink(join(ROOT, 'node_modules', 'undici'), join(pkg, 'node_modules', 'undici'));
  await writeFile(
    join(pkg, 'src', 'cli', 'hello.ts'),
    // A comment and a string with a character beyond Latin-1 (the arrow).
    "import { answer } from '../answer.ts';\nconst n: number = answer;\nconsole.log(n, import.meta.url, { // → stdout\n s: 'µ→' }.s);\n",
  );
  await setAnswer(1);
});

afterAll(async () => {
  await rm(pkg, { recursive: true, force: true });
});

const setAnswer = (n: number) => writeFile(join(pkg, 'src', 'answer.ts'), `export const answer = ${n};\n`);

function start(entry = 'src/cli/hello.ts'): Promise<string> {
  const launcher = pathToFileURL(join(pkg, 'bin', 'launch.js')).href;
  const script = `import(${JSON.stringify(launcher)}).then((m) => m.launch(${JSON.stringify(entry)}))`;
  return new Promise((done, fail) =>
    execFile(process.execPath, ['-e', script], (err, stdout, stderr) => (err ? fail(new Error(stderr)) : done(stdout))),
  );
}

const cached = () => readdir(join(pkg, 'node_modules', '.cache', 'orch'));
const cacheDir = () => join(pkg, 'node_modules', '.cache', 'orch');

interface CodeCache {
  complete: boolean;
  data: Buffer;
}
const { BUNDLE_RESOLUTION, encodeCodeCache, parseCodeCache } = (await import(
  pathToFileURL(join(ROOT, 'bin', 'launch.js')).href
)) as {
  BUNDLE_RESOLUTION: import('esbuild').BuildOptions;
  encodeCodeCache(data: Buffer, complete: boolean): Buffer;
  parseCodeCache(file: Buffer): CodeCache | undefined;
};

describe('code cache files', () => {
  const data = Buffer.from([0xc0, 0xde, 0x0a, 0x00, 0xff]);
  const whole = encodeCodeCache(data, true);
  it.each([
    ['a whole one', whole, { complete: true, data }],
    ['a partial one', encodeCodeCache(data, false), { complete: false, data }],
    ['cut short', whole.subarray(0, whole.length - 1), undefined],
    ['with bytes after it', Buffer.concat([whole, Buffer.from([1])]), undefined],
    ['bare V8 data (no header line)', data, undefined],
    ['empty', Buffer.alloc(0), undefined],
    ['a header that is not JSON', Buffer.concat([Buffer.from('{complete\n'), data]), undefined],
    ['a header without `complete`', Buffer.concat([Buffer.from(`{"bytes":${data.length}}\n`), data]), undefined],
  ])('%s', (_, file, expected) => {
    expect(parseCodeCache(file)).toEqual(expected);
  });
});

describe('launch', () => {
  it('builds once, reuses the bundle and its code cache, and rebuilds when a source changes', {
    timeout: 60_000,
  }, async () => {
    const source = pathToFileURL(join(pkg, 'src', 'cli', 'hello.ts')).href;
    expect(await start()).toBe(`1 ${source} µ→\n`);
    const first = await cached();
    const bundle = first.find((f) => f.endsWith('.cjs'));
    expect(bundle).toMatch(/^hello\.[0-9a-f]{12}\.cjs$/);
    // The code cache is written when the first run exits: a short run's, partial.
    expect(first).toContain(`${bundle}.v8`);
    const cacheFile = join(cacheDir(), `${bundle}.v8`);
    const partial = parseCodeCache(await readFile(cacheFile));
    expect(partial?.complete).toBe(false);

    // A partial cache is made again by the next run; a whole one V8 accepts is kept as it is.
    const written = async () => (await stat(cacheFile)).mtimeMs;
    const before = await written();
    expect(await start()).toBe(`1 ${source} µ→\n`);
    expect(await cached()).toEqual(first);
    expect(await written()).not.toBe(before);
    await writeFile(cacheFile, encodeCodeCache(parseCodeCache(await readFile(cacheFile))!.data, true));
    const whole = await written();
    expect(await start()).toBe(`1 ${source} µ→\n`);
    expect(await written()).toBe(whole);

    // Data V8 refuses (here: not its own) marked whole, and a file cut short, are not used and are made again.
    for (const bad of [
      encodeCodeCache(Buffer.from('not V8 data'), true),
      (await readFile(cacheFile)).subarray(0, 99),
    ]) {
      await writeFile(cacheFile, bad);
      expect(await start()).toBe(`1 ${source} µ→\n`);
      expect(parseCodeCache(await readFile(cacheFile))?.data.length).toBeGreaterThan(99);
    }

    // Written again with the same content (a checkout): another time stamp, read again, the same bundle.
    await setAnswer(1);
    expect(await start()).toBe(`1 ${source} µ→\n`);
    expect(await cached()).toEqual(first);

    await setAnswer(2);
    expect(await start()).toBe(`2 ${source} µ→\n`);
    const after = await cached();
    const rebuilt = after.find((f) => f.endsWith('.cjs'));
    expect(rebuilt).not.toBe(bundle);
    expect(after.filter((f) => f.startsWith(bundle!))).toEqual([]);
    // The new bundle (of the same length: V8 would take the old one's cache for it) has a cache of its own.
    expect(after).toContain(`${rebuilt}.v8`);

    // ASCII (a comment's characters dropped, a string's escaped): read as Latin-1, and one byte a character in V8.
    expect(isAscii(await readFile(join(cacheDir(), rebuilt!)))).toBe(true);

    // A change of the launcher (how bundles are built) rebuilds too.
    await appendFile(join(pkg, 'bin', 'launch.js'), '// changed\n');
    expect(await start()).toBe(`2 ${source} µ→\n`);
    expect((await cached()).find((f) => f.endsWith('.cjs'))).not.toBe(rebuilt);
  });

  it('runs a bundle that is not ASCII (a pattern keeps its characters), its licence comments in a file beside it', {
    timeout: 60_000,
  }, async () => {
    await writeFile(
      join(pkg, 'src', 'cli', 'pattern.ts'),
      "/*! Licence of Jimmy Wärting */\nconsole.log(/^µ→$/u.test('µ→'), /^(ns|µs)$/.exec('µs')?.[1]);\n",
    );
    expect(await start('src/cli/pattern.ts')).toBe('true µs\n');
    const files = await cached();
    const bundle = files.find((f) => /^pattern\.[0-9a-f]{12}\.cjs$/.test(f))!;
    expect(isAscii(await readFile(join(cacheDir(), bundle)))).toBe(false);
    expect(await readFile(join(cacheDir(), `${bundle}.LEGAL.txt`), 'utf8')).toContain('Licence of Jimmy Wärting');
  });

  it("keeps the daemon's bundle ASCII", { timeout: 120_000 }, async () => {
    await new Promise<void>((done, fail) =>
      execFile(process.execPath, [join(ROOT, 'bin', 'orch-controller-manager.js'), '--help'], (err) =>
        err ? fail(err) : done(),
      ),
    );
    const cache = join(ROOT, 'node_modules', '.cache', 'orch');
    const { bundle } = JSON.parse(await readFile(join(cache, 'controller-manager.json'), 'utf8')) as { bundle: string };
    const text = await readFile(join(cache, bundle));
    // Which characters are not (a package's pattern, say: see asciiPatterns in bin/launch.js).
    expect(isAscii(text) || text.toString('utf8').match(/.{0,40}[^ -~\s].{0,40}/g)).toBe(true);
  });

  it("evaluates no ASN.1 library at the daemon's start (its X.509 work there is done by hand), nor CEL's", async () => {
    const { build } = await import('esbuild');
    const entry = 'src/cli/controller-manager.ts';
    // Resolved as the launcher bundles it.
    const { metafile } = await build({ ...BUNDLE_RESOLUTION, entryPoints: [entry], write: false, metafile: true });
    // What a start evaluates: the modules its static imports reach (an import() runs its module on first use).
    const reached = new Set([entry]);
    for (const path of reached) {
      for (const i of metafile.inputs[path].imports)
        if (i.kind !== 'dynamic-import' && !i.external) reached.add(i.path);
    }
    expect(reached.size).toBeGreaterThan(100);
    expect([...reached].filter((path) => /@peculiar|reflect-metadata|tsyringe|asn1js|cel-js/.test(path))).toEqual([]);
  });

  it("loads undici without Node's own copy of it", { timeout: 60_000 }, async () => {
    await writeFile(
      join(pkg, 'src', 'cli', 'web.ts'),
      "import { Agent } from 'undici';\nconsole.log(typeof Agent, process.moduleLoadList.filter((m) => m.includes('undici')));\n",
    );
    expect(await start('src/cli/web.ts')).toBe('function []\n');
  });
});
