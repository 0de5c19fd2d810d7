/**
 * What a newcomer does, run as written: the daemon with its embedded control plane (what `npm start` runs,
 * on free ports and a data directory of the test's own), in each naming flavor; every command its banner
 * prints; every example applied and each object reaching its expected status; and the README's quick start.
 * Also: a busy port answers one line naming the flag, and leaves nothing in the data directory.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/api/meta.ts';
import { type FlavorName, naming } from '../src/api/naming.ts';
import { ResourceRegistry } from '../src/api/registry.ts';
import type { Pod } from '../src/api/types/core.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { Binaries, DAEMON } from './support/binaries.ts';
import { ROOT } from './support/daemons.ts';
import { eventually } from './support/eventually.ts';
import { hasKubectl } from './support/kubectl.ts';

const binaries = new Binaries('orch-quickstart-');
const start = (args: string[]) => binaries.run(DAEMON, ['--embedded', ...args]);
const tempDir = () => binaries.tempDir();

afterAll(() => binaries.cleanup());

/** Runs one shell line in the repository; `export` lines change `env` for the lines after them. */
function shell(line: string, env: NodeJS.ProcessEnv, watchMs?: number): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const script = line.startsWith('export ') ? `${line}\nenv -0` : line;
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    // A watch never ends by itself: it passes once it has printed its first rows.
    const timer = setTimeout(() => child.kill('SIGTERM'), watchMs ?? 120_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (line.startsWith('export ')) {
        for (const entry of out.split('\0')) {
          const eq = entry.indexOf('=');
          if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
        }
      }
      done({ code, out });
    });
  });
}

async function runLines(lines: string[], env: NodeJS.ProcessEnv): Promise<void> {
  for (const line of lines) {
    const watch = /\s-w(\s|$)/.test(line);
    const r = await shell(line, env, watch ? 20_000 : undefined);
    if (watch) expect(r.out, line).toMatch(/^NAME\s/m);
    else expect({ line, code: r.code, out: r.code === 0 ? '' : r.out }).toEqual({ line, code: 0, out: '' });
  }
}

/** The banner's commands: the indented lines after "try". */
function bannerCommands(out: string[]): string[] {
  const from = out.findIndex((l) => l.startsWith('try'));
  const lines: string[] = [];
  for (const l of out.slice(from + 1)) {
    if (!l.startsWith('  ')) break;
    lines.push(l.trim());
  }
  return lines;
}

function clientFor(kubeconfig: string, flavor: FlavorName): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return new KubeClient(kc, new ResourceRegistry(flavor), { qps: 0 });
}

/** Each example object reaches the status its controller gives it. */
async function expectExamplesSettled(client: KubeClient): Promise<void> {
  const get = (kind: string, ns: string | undefined, name: string) => client.kind(kind).get(ns, name);
  const status = (o: KubeObject) => (o as { status?: Record<string, unknown> }).status ?? {};
  let unmet: string[] = [];
  await eventually(
    async () => {
      const csr = status(await get('CertificateSigningRequest', undefined, 'node-csr-worker-1'));
      const pdb = status(await get('PodDisruptionBudget', 'demo', 'web'));
      const sts = status(await get('StatefulSet', 'demo', 'web'));
      const vap = await get('ValidatingAdmissionPolicy', undefined, 'demo-replica-limit');
      const reader = (await get('ClusterRole', undefined, 'demo-reader')) as { rules?: unknown[] };
      const api = status(await get('APIService', undefined, 'v1alpha1.metrics.example.com'));
      const checks: Record<string, boolean> = {
        'CSR issued': Boolean(csr.certificate),
        'PDB status': pdb.observedGeneration === 1,
        'StatefulSet ready': sts.readyReplicas === 3,
        'policy type-checked': status(vap).observedGeneration === vap.metadata.generation,
        'ClusterRole aggregated': (reader.rules?.length ?? 0) > 0,
        'APIService condition': ((api.conditions as { type: string }[] | undefined) ?? []).some(
          (c) => c.type === 'Available',
        ),
      };
      unmet = Object.keys(checks).filter((k) => !checks[k]);
      return unmet.length === 0;
    },
    180_000,
    () => `every example to reach its status (still waiting: ${unmet.join(', ')})`,
    500,
  );
  // limitrange.yaml's defaults keep its own ratio: a pod that sets nothing is admitted, with them.
  const pod = await client.kind<Pod>('Pod').create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'defaults', namespace: 'demo' },
    spec: { containers: [{ name: 'c', image: 'app:1' }] },
  });
  expect(pod.spec?.containers[0].resources).toEqual({
    requests: { cpu: '100m', memory: '128Mi' },
    limits: { cpu: '400m', memory: '256Mi' },
  });
}

async function startDaemon(flavor: FlavorName): Promise<{ dir: string; out: string[] }> {
  const dir = await tempDir();
  const args = ['--embedded-secure-port=0', '--secure-port=0', `--data-dir=${dir}`];
  const d = start(flavor === 'kubernetes' ? [...args, '--api-flavor=kubernetes'] : args);
  await eventually(() => d.out.some((l) => l.includes('controllers started')), 120_000, 'the daemon to start', 100);
  return { dir, out: d.out };
}

describe.skipIf(!hasKubectl).each<FlavorName>(['orch', 'kubernetes'])('quick start (%s flavor)', (flavor) => {
  it('every command the banner prints works, and every example settles', { timeout: 600_000 }, async () => {
    const { dir, out } = await startDaemon(flavor);
    const commands = bannerCommands(out);
    expect(commands[0]).toMatch(/^export KUBECONFIG=/);
    expect(commands).toContain('kubectl api-resources');
    const env = { ...process.env, HOME: dir };
    await runLines(commands, env);
    await expectExamplesSettled(clientFor(join(dir, 'kubeconfig'), flavor));
    // The examples a kubernetes-flavor user applies carry the real names.
    if (flavor === 'kubernetes') {
      const csr = await readFile(join(dir, 'examples', 'certificatesigningrequest.yaml'), 'utf8');
      expect(csr).toContain(`signerName: ${naming('kubernetes').signers.apiServerClientNodeAgent}`);
      expect(csr).not.toMatch(/orch\.io/);
    }
  });
});

describe.skipIf(!hasKubectl)('README', () => {
  it('the quick start runs as written', { timeout: 600_000 }, async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const block = /Then, in another terminal:\n\n```sh\n([\s\S]*?)```/.exec(readme);
    expect(block, 'the quick start block after "Then, in another terminal:"').not.toBeNull();
    const { dir } = await startDaemon('orch');
    // The README's `.orch/` is the data directory; this test has its own.
    const lines = block![1]
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean)
      .map((l) => l.replaceAll('.orch/', `${dir}/`));
    await runLines(lines, { ...process.env, HOME: dir });
  });
});

describe('a busy port', () => {
  it('answers one line naming the port and the flag, exit 1, and writes nothing', { timeout: 120_000 }, async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    try {
      const dir = join(await tempDir(), 'data');
      const d = start([`--embedded-secure-port=${port}`, '--secure-port=0', `--data-dir=${dir}`]);
      expect(await d.exit).toBe(1);
      expect(d.out.filter(Boolean)).toEqual([
        `Error: port ${port} on 127.0.0.1 is already in use: stop what holds it, or choose another with --embedded-secure-port`,
      ]);
      await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    } finally {
      holder.close();
    }
  });
});
