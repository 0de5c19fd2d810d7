/**
 * What the binaries say when they cannot start, run as a newcomer runs them (child processes): a second daemon or
 * control plane on a data directory in use, and a busy diagnostics port, each answer one line naming the flag
 * that gets out of it, before any banner, and exit non-zero. And the names a flavor shows: the kubernetes flavor's
 * controllers carry its own words in --controllers, logs and metrics.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Binaries, CONTROL_PLANE, DAEMON, type Run } from './support/binaries.ts';
import { eventually } from './support/eventually.ts';
import { freePort } from './support/free-port.ts';
import { RawClient } from './support/raw-https.ts';

const binaries = new Binaries('orch-startup-');
const run = (bin: string, args: string[]) => binaries.run(bin, args);
const tempDir = () => binaries.tempDir();

afterAll(() => binaries.cleanup());

/** The daemon with its own control plane, on free ports, with no simulated nodes. */
const daemon = (dataDir: string, ...args: string[]) =>
  run(DAEMON, [
    '--embedded',
    '--embedded-secure-port=0',
    '--secure-port=0',
    '--simulated-nodes=0',
    `--data-dir=${dataDir}`,
    ...args,
  ]);

const controlPlane = (dataDir: string, ...args: string[]) =>
  run(CONTROL_PLANE, ['--secure-port=0', '--simulated-nodes=0', `--data-dir=${dataDir}`, ...args]);

const started = (r: Run) =>
  eventually(() => r.out.some((l) => l.startsWith('try, in another terminal')), 120_000, 'the banner', 100);

/** Exits non-zero having printed exactly this one line. */
async function refuses(r: Run, line: string): Promise<void> {
  expect(await r.exit).toBe(1);
  expect(r.out.filter(Boolean)).toEqual([`Error: ${line}`]);
}

describe('a data directory in use', () => {
  it('a second daemon or control plane on it answers one line naming the directory and --data-dir', {
    timeout: 180_000,
  }, async () => {
    const dir = join(await tempDir(), 'data');
    await started(daemon(dir));
    const line =
      `the data directory ${dir} is in use by another process (its store is locked: ${join(dir, 'store', 'LOCK')}); ` +
      'stop that process or pass another --data-dir';
    await refuses(daemon(dir), line);
    await refuses(controlPlane(dir), line);
  });
});

describe('a busy diagnostics port', () => {
  it('is one line naming --secure-port, before any banner, and nothing is written', { timeout: 120_000 }, async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    try {
      const dir = join(await tempDir(), 'data');
      await refuses(
        daemon(dir, `--secure-port=${port}`, '--bind-address=127.0.0.1'),
        `port ${port} on 127.0.0.1 is already in use: stop what holds it, or choose another with --secure-port`,
      );
      await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    } finally {
      holder.close();
    }
  });

  it('the same port given to both listeners is one line naming both flags', { timeout: 120_000 }, async () => {
    const dir = join(await tempDir(), 'data');
    await refuses(
      daemon(dir, '--embedded-secure-port=7443', '--secure-port=7443'),
      '--embedded-secure-port and --secure-port are both 7443: choose another port for one of them',
    );
  });
});

/** The controllers the daemon's "starting" log line names. */
async function startedControllers(r: Run): Promise<string[]> {
  const line = await eventually(
    () => r.out.find((l) => l.includes('"starting"')),
    120_000,
    () => `the start-up log line (output: ${r.out.join('\n')})`,
    100,
  );
  return JSON.parse(/ controllers=(\[[^\]]*\])/.exec(line)?.[1] ?? 'null');
}

describe('the kubernetes flavor names its controllers with its own words', () => {
  const ORCH = 'orch-apiserver-serving-clustertrustbundle-publisher-controller';
  const KUBE = 'kube-apiserver-serving-clustertrustbundle-publisher-controller';

  it('in the start-up log, its own log lines and the metrics labels', { timeout: 180_000 }, async () => {
    const dir = join(await tempDir(), 'data');
    const port = await freePort();
    const d = daemon(dir, '--api-flavor=kubernetes', `--secure-port=${port}`, '--leader-elect=false');
    expect(await startedControllers(d)).toContain(KUBE);
    const admin = await RawClient.fromKubeconfig(join(dir, 'kubeconfig'));
    const diagnostics = admin.at(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    try {
      const metrics = await eventually(
        async () => {
          const r = await diagnostics.send({ path: '/metrics' }).catch(() => undefined);
          return r?.code === 200 && r.body.includes(KUBE) ? r.body : undefined;
        },
        60_000,
        'the publisher in /metrics',
        200,
      );
      expect(metrics).toMatch(new RegExp(`^workqueue_adds_total\\{name="${KUBE}"\\}`, 'm'));
      expect(metrics).not.toContain(ORCH);
      // The publisher's own log line.
      await eventually(() => d.out.some((l) => l.includes(`controller="${KUBE}"`)), 30_000, 'its log line', 100);
      expect(d.out.join('\n')).not.toContain(ORCH);
    } finally {
      admin.close();
      diagnostics.close();
    }
  });

  it('its orch name still selects it', { timeout: 120_000 }, async () => {
    const dir = join(await tempDir(), 'data');
    const d = daemon(dir, '--api-flavor=kubernetes', '--leader-elect=false', `--controllers=${ORCH}`);
    expect(await startedControllers(d)).toEqual([KUBE]);
  });
});

describe('switching --api-flavor on one data directory', () => {
  /** Starts a control plane of the flavor, returns its kubeconfig's path and the namespaces it serves, stops it. */
  async function session(
    dir: string,
    flavor: string,
  ): Promise<{ kubeconfig: string; namespaces: string[]; out: string }> {
    const r = controlPlane(dir, `--api-flavor=${flavor}`);
    await started(r);
    const kubeconfig = r.out.find((l) => l.startsWith('kubeconfig: '))!.slice('kubeconfig: '.length);
    const client = await RawClient.fromKubeconfig(kubeconfig);
    try {
      const list = await client.send({ path: '/api/v1/namespaces' });
      expect(list.code).toBe(200);
      const namespaces = (list.json as { items: { metadata: { name: string } }[] }).items.map((n) => n.metadata.name);
      r.child.kill('SIGTERM');
      expect(await r.exit).toBe(0);
      return { kubeconfig, namespaces, out: r.out.join('\n') };
    } finally {
      client.close();
    }
  }

  it('keeps each flavor in its own directory, and each finds its own as it left it', { timeout: 240_000 }, async () => {
    const dir = join(await tempDir(), 'data');
    const orch = await session(dir, 'orch');
    expect(orch.kubeconfig).toBe(join(dir, 'kubeconfig'));
    const ca = await readFile(join(dir, 'ca.crt'), 'utf8');

    const kube = await session(dir, 'kubernetes');
    expect(kube.kubeconfig).toBe(join(dir, 'kubernetes', 'kubeconfig'));
    expect(kube.namespaces).toContain('kube-system');
    expect(kube.namespaces).not.toContain('orch-system');
    expect(kube.out).not.toMatch(/skipped|does not serve/);

    const again = await session(dir, 'orch');
    expect(again.kubeconfig).toBe(join(dir, 'kubeconfig'));
    expect(again.namespaces).toContain('orch-system');
    expect(again.namespaces).not.toContain('kube-system');
    expect(again.out).not.toMatch(/skipped|does not serve/);
    // The orch cluster's clients keep trusting it.
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(ca);
  });

  it('a data directory from before the flavor was recorded stays the flavor of its store', {
    timeout: 240_000,
  }, async () => {
    const dir = join(await tempDir(), 'data');
    await session(dir, 'kubernetes');
    // What an older version left: the same files, without the record of the flavor.
    await rm(join(dir, 'flavor'));
    const ca = await readFile(join(dir, 'ca.crt'), 'utf8');

    const orch = await session(dir, 'orch');
    expect(orch.kubeconfig).toBe(join(dir, 'orch', 'kubeconfig'));
    expect(orch.namespaces).not.toContain('kube-system');

    const kube = await session(dir, 'kubernetes');
    expect(kube.kubeconfig).toBe(join(dir, 'kubeconfig'));
    expect(kube.namespaces).toContain('kube-system');
    expect(kube.out).not.toMatch(/skipped|does not serve/);
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(ca);
  });
});
