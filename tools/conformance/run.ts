/**
 * `npm run conformance:diff`: replays the corpus in order against a fresh embedded control plane (kubernetes
 * flavor) and a fresh real kube-apiserver, compares each pair of answers, prints every difference (one block per
 * request) and ends with `N requests: M identical, K differ (D written down)`. Exits 1 when a difference is not
 * written down in differences.yaml, 2 when a server cannot be started.
 *
 * `-- --only PREFIX` replays only the requests whose id starts with PREFIX (setup requests always run);
 * `-- --dump ID` prints both whole answers to that request; `-- --full` every difference (12 a request otherwise).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { missingBinaries } from '../../test/cluster/local-cluster.ts';
import { compareAnswers, type Difference, explain, type WrittenDown } from './compare.ts';
import { type CorpusRequest, fillIn, loadCorpus } from './corpus.ts';
import { type Answer, encodeBody, type Sent, send } from './http.ts';
import { type Substrate, startEmbedded, startReal } from './substrates.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const USER_AGENT = 'conformance-diff/v1.0.0 (linux/amd64) orch';
/** How long past its `timeoutSeconds` a watch may take to end; a request without one gets this much in all. */
const GRACE_MS = 5_000;

function isWatch(r: CorpusRequest): boolean {
  const w = r.query?.watch;
  return r.path.includes('/watch/') || w === true || w === 'true' || w === '1';
}

/** The request as one server gets it, its references filled in from that server's saved answers. */
function prepare(r: CorpusRequest, saved: Map<string, unknown>): Sent {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(r.query ?? {})) query.set(k, String(fillIn(String(v), saved)));
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'application/json' };
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = String(fillIn(v, saved));
  let body: Buffer | undefined;
  if (r.body !== undefined || r.padBytes) {
    headers['content-type'] ??= 'application/json';
    const value = fillIn(r.body ?? {}, saved) as Record<string, unknown>;
    const padded = r.padBytes ? { ...value, data: { big: 'x'.repeat(r.padBytes) } } : value;
    body = encodeBody(padded, headers['content-type']);
    headers['content-length'] = String(body.length);
  }
  const qs = query.toString();
  const timeout = Number(r.query?.timeoutSeconds ?? 0) * 1000;
  return {
    method: r.method,
    url: `${fillIn(r.path, saved)}${qs ? `?${qs}` : ''}`,
    headers,
    body,
    watch: isWatch(r),
    deadlineMs: timeout + GRACE_MS,
  };
}

async function ask(s: Substrate, r: CorpusRequest, saved: Map<string, unknown>): Promise<Answer> {
  try {
    const answer = await send(s.server, s.credentials[r.as], prepare(r, saved));
    if (r.save) saved.set(r.save, answer.body);
    return answer;
  } catch (error) {
    return { status: 0, contentType: '', warnings: [], body: { error: (error as Error).message } };
  }
}

const show = (v: unknown) => {
  const text = v === undefined ? '(absent)' : JSON.stringify(v);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
};

function report(
  r: CorpusRequest,
  differences: Difference[],
  explainedBy: WrittenDown[] | undefined,
  max: number,
): string {
  const query = r.query
    ? `?${new URLSearchParams(Object.entries(r.query).map(([k, v]): [string, string] => [k, String(v)]))}`
    : '';
  const lines = [`${explainedBy ? '~' : '✗'} ${r.id}: ${r.method} ${r.path}${query} as ${r.as}`];
  for (const d of differences.slice(0, max)) {
    lines.push(`    ${d.at}: real ${show(d.real)} | embedded ${show(d.embedded)}`);
  }
  if (differences.length > max) lines.push(`    ... and ${differences.length - max} more`);
  if (explainedBy) lines.push(`    written down: ${explainedBy.map((k) => `${k.name} (${k.kind})`).join(', ')}`);
  return lines.join('\n');
}

function loadWrittenDown(): WrittenDown[] {
  return parseYaml(readFileSync(join(HERE, 'differences.yaml'), 'utf8'))?.differences ?? [];
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const only = argv[argv.indexOf('--only') + 1];
  const dump = argv.includes('--dump') ? argv[argv.indexOf('--dump') + 1] : undefined;
  const full = argv.includes('--full');
  const corpus = loadCorpus().filter(
    (r) => !argv.includes('--only') || r.id.startsWith(only) || r.id.startsWith('setup/'),
  );
  const known = loadWrittenDown();
  const missing = missingBinaries();
  if (missing.length) {
    console.error(
      `conformance:diff: the real cluster's binaries are not built (${missing.join(', ')}); run \`npm run k8s:build\``,
    );
    return 2;
  }
  const startTime = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'orch-conformance-'));
  const substrates: Substrate[] = [];
  // Interrupted (Ctrl-C, a CI timeout, a closed pipe): the real cluster's processes are stopped all the same.
  const stopAll = () => Promise.all(substrates.splice(0).map((s) => s.stop()));
  const interrupted = () =>
    void stopAll()
      .then(() => rm(dir, { recursive: true, force: true }))
      .finally(() => process.exit(130));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, interrupted);
  process.stdout.on('error', interrupted);
  try {
    const started = (s: Substrate) => {
      substrates.push(s);
      return s;
    };
    const [real, embedded] = await Promise.all([
      startReal(join(dir, 'real'), (line) => console.error(`real: ${line}`)).then(started),
      startEmbedded(join(dir, 'embedded')).then(started),
    ]);
    console.error(
      `both servers started in ${((Date.now() - startTime) / 1000).toFixed(1)} s; replaying ${corpus.length} requests`,
    );
    const replayStart = Date.now();
    const saved = { real: new Map<string, unknown>(), embedded: new Map<string, unknown>() };
    let identical = 0;
    let writtenDown = 0;
    let unexplained = 0;
    const usedEntries = new Set<WrittenDown>();
    for (const r of corpus) {
      const [a, b] = await Promise.all([ask(real, r, saved.real), ask(embedded, r, saved.embedded)]);
      if (r.id === dump) console.log(JSON.stringify({ real: a, embedded: b }, null, 2));
      const differences = compareAnswers(a, b, r.compare ?? 'exact');
      if (differences.length === 0) {
        identical++;
        continue;
      }
      const explainedBy = explain(r.id, differences, known);
      if (explainedBy) {
        writtenDown++;
        for (const k of explainedBy) usedEntries.add(k);
      } else unexplained++;
      console.log(report(r, differences, explainedBy, full ? Number.POSITIVE_INFINITY : 12));
    }
    for (const k of known.filter((k) => !usedEntries.has(k))) {
      console.log(`(written down, not seen this run: ${k.name})`);
    }
    const seconds = (s: number) => `${(s / 1000).toFixed(1)} s`;
    console.log(
      `replay ${seconds(Date.now() - replayStart)}, in all ${seconds(Date.now() - startTime)}; ✗ unexplained, ~ written down`,
    );
    console.log(
      `${corpus.length} requests: ${identical} identical, ${writtenDown + unexplained} differ (${writtenDown} written down)`,
    );
    return unexplained > 0 ? 1 : 0;
  } finally {
    await stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main().catch((error) => {
  console.error(`conformance:diff: ${(error as Error).stack ?? error}`);
  return 2;
});
