/**
 * `npm run diff:kcm [-- --full] [-- --only a,b]`: every scenario runs twice, each time on a fresh real cluster
 * (test/cluster/local-cluster.ts): once with kube-controller-manager running every controller, ours included, once
 * with KCM running all but ours and our daemon in their place (a cluster starts in about 5 s, so no run sees
 * another's objects, restarts or leftovers). The objects are compared after normalizing what must differ; each
 * difference is printed, marked when deliberate.ts writes it down, and the last line counts the scenarios. Exits 1
 * when a difference is unexplained or a scenario failed. The reduced set (CI) is the default (`--quick` says so);
 * `--full` runs every scenario; `--keep` keeps each run's directory and its outcome.json.
 */
import 'reflect-metadata';
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import * as x509 from '@peculiar/x509';
import { pemToDer } from '../../src/pki/pem.ts';
import {
  type LocalCluster,
  missingBinaries,
  OUR_KCM_CONTROLLERS,
  startLocalCluster,
} from '../cluster/local-cluster.ts';
import { ROOT } from '../support/daemons.ts';
import { identities } from './client.ts';
import { type Difference, differences } from './compare.ts';
import { type Deliberate, writtenDown } from './deliberate.ts';
import { type Outcome, runScenario, type Scenario } from './scenario.ts';
import { SCENARIOS } from './scenarios/index.ts';

const DAEMON_START_MS = 60_000;
const DAEMON_STOP_MS = 10_000;
type Side = 'kcm' | 'ours';

const { values } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const only = values.only?.split(',');
const chosen = SCENARIOS.filter((s) => (only ? only.includes(s.name) : values.full || s.quick));
if (only && chosen.length !== only.length) {
  console.error(`--only: unknown scenario; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
if (missingBinaries().length) {
  console.error(`diff:kcm: not built: ${missingBinaries().join(', ')}; run \`npm run k8s:build\``);
  process.exit(2);
}
const started = Date.now();
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(0)} s`;

/** Our daemon against the cluster, its log in the cluster's; resolves once its controllers have started. */
async function startDaemon(cluster: LocalCluster): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin', 'orch-controller-manager.js'),
      `--kubeconfig=${cluster.kubeconfig}`,
      `--controllers=${OUR_KCM_CONTROLLERS.join(',')}`,
      `--cluster-signing-cert-file=${cluster.caFiles.certFile}`,
      `--cluster-signing-key-file=${cluster.caFiles.keyFile}`,
      '--logging-format=json',
      '--secure-port=0',
      // As KCM runs in the local cluster: alone, so at once.
      '--leader-elect=false',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const log = createWriteStream(join(cluster.dir, 'logs', 'orch-controller-manager.log'), { flags: 'a' });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('our daemon: no "controllers started" within 60 s')),
      DAEMON_START_MS,
    );
    child.on('exit', (code) => reject(new Error(`our daemon exited (${code}) before starting its controllers`)));
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on('line', (line) => {
        log.write(`${line}\n`);
        if (line.includes('"controllers started"')) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  });
  await ready;
  return child;
}

async function stopDaemon(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), DAEMON_STOP_MS);
  await exited;
  clearTimeout(timer);
}

/** Stops what the current run started: on its way out, and on a signal or a crash, so no process is left. */
let stopCurrent: (() => Promise<void>) | undefined;
const exitAfterCleanup = async (code: number) => {
  await stopCurrent?.();
  process.exit(code);
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void exitAfterCleanup(130));
process.on('uncaughtException', (error) => {
  console.error(error);
  void exitAfterCleanup(1);
});

/** One run of a scenario on a fresh cluster, everything stopped after. */
async function runOnce(side: Side, scenario: Scenario): Promise<Outcome> {
  const since = Date.now();
  const dir = await mkdtemp(join(tmpdir(), `diff-kcm-${scenario.name}-${side}-`));
  let cluster: LocalCluster | undefined;
  let daemon: ChildProcess | undefined;
  stopCurrent = async () => {
    if (daemon) await stopDaemon(daemon);
    await cluster?.stop();
  };
  try {
    cluster = await startLocalCluster({ dir, nodes: 3, kcmControllers: side === 'kcm' ? ['*'] : undefined });
    const local = cluster;
    if (side === 'ours') daemon = await startDaemon(local);
    const caPem = await readFile(local.caFiles.certFile, 'utf8');
    const nctx = { caNotAfterMs: new x509.X509Certificate(pemToDer(caPem, 'CERTIFICATE')).notAfter.getTime() };
    const id = await identities(local);
    const restartControllerManager = async () => {
      if (side === 'kcm') return local.restartControllerManager();
      if (daemon) await stopDaemon(daemon);
      daemon = await startDaemon(local);
    };
    const outcome = await runScenario(scenario, { admin: id.admin, id, nctx, restartControllerManager });
    if (values.keep) await writeFile(join(dir, 'outcome.json'), JSON.stringify(outcome, null, 2));
    const result = 'error' in outcome ? `FAILED: ${outcome.error.split('\n')[0]}` : 'ran';
    console.log(`${scenario.name} on ${side}: ${result} in ${seconds(since)}`);
    return outcome;
  } finally {
    await stopCurrent();
    stopCurrent = undefined;
    if (values.keep) console.log(`${scenario.name} on ${side}: kept ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  }
}

/** Every difference of one scenario, each as `<scenario> <checkpoint> <object> <path>`. */
function compareScenario(name: string, kcm: Outcome, ours: Outcome): (Difference & { where: string })[] {
  if ('error' in kcm || 'error' in ours) {
    const error = (o: Outcome) => ('error' in o ? o.error.split('\n')[0] : 'ran');
    return [{ where: `${name} run`, path: '', kcm: error(kcm), ours: error(ours) }];
  }
  const [a, b] = [kcm.snapshot, ours.snapshot];
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((checkpoint) => {
    const [x, y] = [a[checkpoint] ?? {}, b[checkpoint] ?? {}];
    return [...new Set([...Object.keys(x), ...Object.keys(y)])]
      .sort()
      .flatMap((key) =>
        differences(x[key], y[key]).map((d) => ({ ...d, where: `${name} ${checkpoint} ${key} ${d.path}`.trim() })),
      );
  });
}

const MAX_SHOWN = 240;
const show = (value: unknown) => {
  const text = value === undefined ? '(absent)' : JSON.stringify(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
};

let identical = 0;
let differ = 0;
let explained = 0;
let unexplained = 0;
const used = new Set<Deliberate>();
for (const scenario of chosen) {
  const found = compareScenario(scenario.name, await runOnce('kcm', scenario), await runOnce('ours', scenario));
  if (found.length === 0) {
    identical++;
    continue;
  }
  differ++;
  let all = true;
  for (const d of found) {
    const entry = writtenDown(d.where, d.kcm, d.ours);
    if (entry) used.add(entry);
    else all = false;
    const mark = entry ? `written down: ${entry.id}` : 'UNEXPLAINED';
    console.log(`${d.where}: kcm ${show(d.kcm)}, ours ${show(d.ours)} [${mark}]`);
  }
  if (all) explained++;
  else unexplained++;
}
for (const entry of used) console.log(`written down, ${entry.id}: ${entry.reason}`);
console.log(
  `wall time ${seconds(started)}${unexplained ? `; ${unexplained} scenarios with unexplained differences` : ''}`,
);
console.log(`${chosen.length} scenarios: ${identical} identical, ${differ} differ (${explained} written down)`);
process.exit(unexplained ? 1 : 0);
