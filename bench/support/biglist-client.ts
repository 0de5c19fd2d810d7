/**
 * A client of `npm run bench -- biglist`, in a process of its own so that receiving a big body costs the server's
 * thread nothing; the bench runs two, one that lists and one that probes, so that neither waits for the other's
 * thread. Each reads commands on stdin, one JSON line each, and answers one line each (or `{ error }`):
 *  - `{ list, accept }`: GETs `list` with that `Accept` (the body read to its end, not parsed); answers
 *    `{ listMs, bytes }`;
 *  - `{ probe, start: true }`: starts GETting `probe` one after another (a pause of PROBE_GAP_MS between them);
 *    answers `{}` at once; `{ stop: true }` ends that and answers `{ probesMs }`;
 *  - `{ probe, ms }`: the same GETs of `probe` for `ms`; answers `{ probesMs }`.
 * TLS material comes from the environment: BENCH_CA, BENCH_CERT, BENCH_KEY (PEM). Client QPS is unlimited.
 */
import { Agent, request } from 'node:https';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

interface Command {
  list?: string;
  accept?: string;
  probe?: string;
  ms?: number;
  start?: boolean;
  stop?: boolean;
}

const PROBE_GAP_MS = 2;
/** A request longer than this fails the run rather than hanging it. */
const TIMEOUT_MS = 120_000;

const tls = { ca: process.env.BENCH_CA, cert: process.env.BENCH_CERT, key: process.env.BENCH_KEY };
const listAgent = new Agent({ ...tls, keepAlive: true, maxSockets: 1 });
const probeAgent = new Agent({ ...tls, keepAlive: true, maxSockets: 1 });

/** GETs `url` and resolves with the body's size once it has all arrived. */
function get(url: string, agent: Agent, accept: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(url, { agent, headers: { Accept: accept }, timeout: TIMEOUT_MS }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      res.on('end', () => {
        if (res.statusCode !== 200) fail(new Error(`${url}: HTTP ${res.statusCode}`));
        else if (!res.complete) fail(new Error(`${url}: the body was cut short after ${bytes} bytes`));
        else done(bytes);
      });
      res.on('error', fail);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${TIMEOUT_MS} ms`)));
    req.on('error', fail);
    req.end();
  });
}

async function timedGet(url: string): Promise<number> {
  const started = performance.now();
  await get(url, probeAgent, 'application/json');
  return performance.now() - started;
}

/** Probe GETs until `stop()` is true (checked after each); their durations. */
async function probes(url: string, stop: () => boolean): Promise<number[]> {
  const out: number[] = [];
  do {
    out.push(await timedGet(url));
    await sleep(PROBE_GAP_MS);
  } while (!stop());
  return out;
}

/** The probing started by `{ start: true }`: its stop flag and its result. */
let probing: { stop: boolean; done: Promise<number[]> } | undefined;

async function run(c: Command): Promise<object> {
  if (c.list) {
    const started = performance.now();
    const bytes = await get(c.list, listAgent, c.accept ?? 'application/json');
    return { listMs: performance.now() - started, bytes };
  }
  if (c.stop) {
    if (!probing) throw new Error('no probing to stop');
    probing.stop = true;
    const probesMs = await probing.done;
    probing = undefined;
    return { probesMs };
  }
  if (!c.probe) throw new Error('a command needs list, probe or stop');
  if (c.start) {
    const state = { stop: false, done: Promise.resolve([] as number[]) };
    state.done = probes(c.probe, () => state.stop);
    probing = state;
    return {};
  }
  const until = performance.now() + (c.ms ?? 1000);
  return { probesMs: await probes(c.probe, () => performance.now() >= until) };
}

for await (const line of createInterface({ input: process.stdin })) {
  const reply = await run(JSON.parse(line) as Command).catch((err: Error) => ({ error: err.message }));
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
