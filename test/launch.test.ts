/**
 * bin/launch.js, on a package of its own in a temporary directory: the first start builds the bundle, the next
 * one runs it (and its code cache) as it is, a changed source is rebuilt at the next start and the old bundle
 * removed (so is one after a change of the launcher itself), and `import.meta.url` still names the source file.
 */
import { execFile } from 'node:child_process';
import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
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

function start(): Promise<string> {
  const launcher = pathToFileURL(join(pkg, 'bin', 'launch.js')).href;
  const script = `import(${JSON.stringify(launcher)}).then((m) => m.launch('src/cli/hello.ts'))`;
  return new Promise((done, fail) =>
    execFile(process.execPath, ['-e', script], (err, stdout, stderr) => (err ? fail(new Error(stderr)) : done(stdout))),
  );
}

const cached = () => readdir(join(pkg, 'node_modules', '.cache', 'orch'));

describe('launch', () => {
  it('builds once, reuses the bundle and its code cache, and rebuilds when a source changes', {
    timeout: 60_000,
  }, async () => {
    const source = pathToFileURL(join(pkg, 'src', 'cli', 'hello.ts')).href;
    expect(await start()).toBe(`1 ${source} µ→\n`);
    const first = await cached();
    const bundle = first.find((f) => f.endsWith('.cjs'));
    expect(bundle).toMatch(/^hello\.[0-9a-f]{12}\.cjs$/);
    // The code cache is written when the first run exits.
    expect(first).toContain(`${bundle}.v8`);

    expect(await start()).toBe(`1 ${source} µ→\n`);
    expect(await cached()).toEqual(first);

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

    // V8 keeps the bundle's text one byte a character only if every character fits in one: none beyond Latin-1
    // (a comment's are dropped, a string's escaped).
    const text = await readFile(join(pkg, 'node_modules', '.cache', 'orch', rebuilt!), 'utf8');
    expect([...text].filter((c) => c.codePointAt(0)! > 0xff)).toEqual([]);

    // A change of the launcher (how bundles are built) rebuilds too.
    await appendFile(join(pkg, 'bin', 'launch.js'), '// changed\n');
    expect(await start()).toBe(`2 ${source} µ→\n`);
    expect((await cached()).find((f) => f.endsWith('.cjs'))).not.toBe(rebuilt);
  });
});
