/**
 * Runs a command from one bundle of its TypeScript sources and their packages, built with esbuild on the first
 * start and rebuilt whenever one of its inputs changes, and compiled with V8's code cache (see writeCodeCache):
 * loading ~1,700 modules through a TypeScript loader cost seconds at every start.
 *
 * The bundle, its source map, its code cache and the list of its inputs live in node_modules/.cache/orch/, where
 * the bundle's own `require`s resolve. Where that directory cannot be written, the sources run through tsx as
 * before. Stack traces name places in the bundle (its code without comments or indentation); with
 * NODE_OPTIONS=--enable-source-maps (slower to start: no code cache, and the map is read) the TypeScript lines.
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'orch');
/**
 * Left to Node: a native addon and a package reading files beside its own code (both found through __dirname).
 * pino is bundled (its code then comes from the code cache): only its transports, which start workers from files
 * of their own, would need it left out, and nothing here uses them.
 */
const EXTERNAL = ['classic-level', 'etcd3'];
const UNWRITABLE = ['EACCES', 'EPERM', 'EROFS'];
/** Inputs esbuild does not list: how the bundle is built (this file) and the settings it reads. */
const SETTINGS = ['bin/launch.js', 'package.json', 'tsconfig.json'];
/**
 * How long a process runs before its code cache holds its start, made for good then. Long enough for a start on a
 * loaded machine (up to 9 s seen to the first reconcile); a cache made later holds functions a start does not run,
 * and costs their reading at every start (one of an embedded plane's run, read by a start with --kubeconfig: 0.57 s
 * of CPU to its first CSR issued against 0.51 s with one made by such starts, medians of 6).
 */
const COMPLETE_AFTER_MS = 10_000;

/** Runs `entry` (a path from the package root), from its bundle when one can be built. */
export async function launch(entry) {
  const bundle = await upToDateBundle(entry).catch((err) => {
    if (!UNWRITABLE.includes(err.code)) throw err;
    return undefined;
  });
  if (bundle) return run(bundle);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(join(ROOT, entry)).href);
}

/** Runs the bundle as Node runs a CommonJS module, from the code cache when V8 accepts it. */
function run(bundle) {
  // Node maps stack traces of the modules it loads itself, not of scripts compiled here.
  if (process.sourceMapsEnabled) return createRequire(import.meta.url)(bundle);
  const cacheFile = `${bundle}.v8`;
  let cache;
  try {
    cache = parseCodeCache(readFileSync(cacheFile));
  } catch {}
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) {${bundleText(readFileSync(bundle))}\n})`,
    {
      filename: bundle,
      cachedData: cache?.data,
      // The bundle's import() of an external package (see EXTERNAL), resolved from here as from the bundle.
      importModuleDynamically: (specifier) => import(specifier),
    },
  );
  if (!cache || script.cachedDataRejected || !cache.complete) writeCodeCache(script, cacheFile);
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
}

/** An ASCII bundle read as Latin-1, a plain copy: ~1 ms where decoding its 2.6 MB as UTF-8 takes ~12. */
const bundleText = (bytes) => bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');

/**
 * A cache holds the functions compiled by the time it is made (those read from the cache before included). Made at
 * the exit of a process that ended early (a `--help`, a start stopped at once), it may lack much of what a start
 * compiles, so it is marked partial and made again by the next process; one that has run COMPLETE_AFTER_MS makes
 * it for good. (Before, the first run's cache was kept: the bench's `--help` one, without any start's functions.)
 */
function writeCodeCache(script, cacheFile) {
  // V8 drops the bytecode of functions unused over a few full collections: under load, those of the start were
  // gone by COMPLETE_AFTER_MS, and a cache without them cost every later start 0.1 s (0.41–0.47 s to the first CSR
  // against 0.28–0.33 s). It keeps them until the cache is made, then flushes again (before the cache is made:
  // V8 refuses a cache made under other flags).
  const keepBytecode = !process.execArgv.some((arg) => /flush[-_]bytecode/.test(arg));
  if (keepBytecode) setFlagsFromString('--no-flush-bytecode');
  const write = (complete) => {
    if (keepBytecode) setFlagsFromString('--flush-bytecode');
    try {
      writeAtomically(cacheFile, encodeCodeCache(script.createCachedData(), complete));
    } catch {}
  };
  const atExit = () => {
    clearTimeout(timer);
    write(false);
  };
  const timer = setTimeout(() => {
    process.off('exit', atExit);
    write(true);
  }, COMPLETE_AFTER_MS).unref();
  process.once('exit', atExit);
}

/**
 * A code cache file: one line `{"complete":…,"bytes":…}`, then V8's data. V8 refuses data of another V8, other
 * flags or another source length; the bundle's name holds the hash of its inputs, so its cache is of its source.
 * The byte count refuses a file cut short.
 */
export function encodeCodeCache(data, complete) {
  return Buffer.concat([Buffer.from(`${JSON.stringify({ complete, bytes: data.length })}\n`), data]);
}

/** The cache in `file`'s bytes, or undefined when they are not one whole cache. */
export function parseCodeCache(file) {
  const newline = file.indexOf(10);
  if (newline < 0 || newline > 100) return undefined;
  let header;
  try {
    header = JSON.parse(file.subarray(0, newline).toString('latin1'));
  } catch {
    return undefined;
  }
  const data = file.subarray(newline + 1);
  if (typeof header?.complete !== 'boolean' || header.bytes !== data.length) return undefined;
  return { complete: header.complete, data };
}

async function upToDateBundle(entry) {
  const name = basename(entry, '.ts');
  const manifestFile = join(CACHE, `${name}.json`);
  // Read at once: nothing else runs meanwhile, and an async read is four trips through the thread pool.
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch {}
  if (manifest && inputsUnchanged(manifest)) return join(CACHE, manifest.bundle);
  return build(entry, name, manifestFile);
}

function inputsUnchanged(manifest) {
  try {
    // A source of the same size and time as when it was bundled keeps its hash: only the others are read again.
    const known = new Map();
    for (const [path, [stamp, hash]] of Object.entries(manifest.sources ?? {})) {
      if (stampOf(path) === stamp) known.set(path, hash);
    }
    return fingerprint(manifest.inputs, known) === manifest.fingerprint;
  } catch {
    return false; // a source was removed
  }
}

/** How the bundle finds and joins its modules: what decides which modules it holds and which import which. */
export const BUNDLE_RESOLUTION = {
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: EXTERNAL,
  // Only Node's own conditions, as Node resolves the packages when the sources run without a bundle. esbuild's
  // default adds `module`, which picks tslib's ES module for every require() of it: a copy of its exports each.
  conditions: [],
};

async function build(entry, name, manifestFile) {
  const { build: esbuild } = await import('esbuild');
  await mkdir(CACHE, { recursive: true });
  const compiled = new Map();
  const result = await esbuild({
    ...BUNDLE_RESOLUTION,
    entryPoints: [join(ROOT, entry)],
    write: false,
    metafile: true,
    // No comments (some hold characters beyond Latin-1) nor indentation: V8 keeps the bundle's text as long as the
    // process lives, one byte a character only if every character fits in one. The daemon's: 10 MB of heap, now 3.8.
    minifyWhitespace: true,
    // Licence comments in a file beside the bundle: with the escapes esbuild writes in strings, templates and names,
    // and asciiPatterns, the bundle is ASCII, read the fast way (bundleText).
    legalComments: 'external',
    sourcemap: 'linked',
    sourcesContent: false,
    outfile: join(CACHE, `${name}.cjs`),
    plugins: [ownSources(compiled), noGlobalHeaders, asciiPatterns],
    logLevel: 'error',
  });
  const inputs = [...Object.keys(result.metafile.inputs), ...SETTINGS.filter((f) => existsSync(join(ROOT, f)))];
  const print = fingerprint(inputs, new Map([...compiled].map(([path, [, hash]]) => [path, hash])));
  const bundle = `${name}.${print.slice(0, 12)}.cjs`;
  for (const file of result.outputFiles) {
    const suffix = file.path.endsWith('.map') ? '.map' : file.path.endsWith('.LEGAL.txt') ? '.LEGAL.txt' : '';
    const text = suffix
      ? file.text
      : file.text.replace(`sourceMappingURL=${name}.cjs.map`, `sourceMappingURL=${bundle}.map`);
    writeAtomically(join(CACHE, `${bundle}${suffix}`), text);
  }
  writeAtomically(
    manifestFile,
    JSON.stringify({ bundle, fingerprint: print, inputs, sources: Object.fromEntries(compiled) }),
  );
  // Earlier bundles of this entry, with their maps and code caches.
  const earlier = new RegExp(`^${name}\\.([0-9a-f]{12})\\.cjs(\\.map|\\.v8|\\.LEGAL\\.txt)?$`);
  for (const file of await readdir(CACHE)) {
    const hash = earlier.exec(file)?.[1];
    if (hash && hash !== print.slice(0, 12)) await rm(join(CACHE, file), { force: true });
  }
  return join(CACHE, bundle);
}

/**
 * undici's cookie helpers, loaded with undici, accept Node's global Headers as well as undici's own: reading that
 * global at load compiles and runs Node's own copy of undici (10–30 ms of CPU a start here), which nothing here
 * uses. Ours accept undici's Headers only (nothing here hands them Node's). Another undici is bundled as it is.
 */
const noGlobalHeaders = {
  name: 'no-global-headers',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]undici[\\/]lib[\\/]web[\\/]cookies[\\/]index\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replace('[Headers, globalThis.Headers]', '[Headers]'), loader: 'js' };
    });
  },
};

/**
 * esbuild escapes characters beyond ASCII in strings, templates and names, not in regular expression literals. Such a
 * pattern of a package, spelled with the escape instead: the same pattern, and the bundle stays ASCII.
 */
const asciiPatterns = {
  name: 'ascii-patterns',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]@marcbachmann[\\/]cel-js[\\/]lib[\\/]functions\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replace('(ns|us|\u00b5s|ms|s|m|h)/', '(ns|us|\\u00b5s|ms|s|m|h)/'), loader: 'js' };
    });
  },
};

/**
 * Our TypeScript files as esbuild compiles them, each hashed as read (so the fingerprint is of what was bundled) and
 * stamped with its size and time, with `import.meta.url` (and its `dirname`, `filename`) naming the source file: a
 * bundle has no `import.meta`.
 */
function ownSources(compiled) {
  return {
    name: 'own-sources',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const path = relative(ROOT, args.path);
        if (path.startsWith('node_modules')) return undefined;
        // Stamped before the read: a change after it shows as another stamp at the next start.
        const stamp = stampOf(path);
        const source = await readFile(args.path, 'utf8');
        compiled.set(path, [stamp, sha256(source)]);
        const contents = source
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
          .replaceAll('import.meta.filename', JSON.stringify(args.path));
        return { contents, loader: 'ts' };
      });
    },
  };
}

/**
 * One hash over the inputs (paths from the package root): the contents of our sources; for packages, the size and
 * time of each one's package.json and of npm's record of node_modules, which every install that changes them
 * rewrites. (An edit by hand inside node_modules is not seen: delete node_modules/.cache/orch after one.)
 */
function fingerprint(inputs, known = new Map()) {
  const parts = [];
  const packages = new Set(['node_modules/.package-lock.json']);
  for (const path of inputs) {
    const pkg = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1];
    if (pkg) packages.add(`${pkg}/package.json`);
    else parts.push(`${path} ${known.get(path) ?? sha256(readFileSync(join(ROOT, path), 'utf8'))}`);
  }
  for (const file of packages) {
    const s = statSync(join(ROOT, file), { throwIfNoEntry: false });
    parts.push(`${file} ${s?.size} ${s?.mtimeMs}`);
  }
  return sha256(parts.join('\n'));
}

/** A source's size and modification time, which every edit changes. */
function stampOf(path) {
  const s = statSync(join(ROOT, path));
  return `${s.size} ${s.mtimeMs}`;
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

function writeAtomically(path, data) {
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, data);
  renameSync(aside, path);
}
