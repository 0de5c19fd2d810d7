/**
 * `npm start` (the daemon with `--embedded`) gives its diagnostics server the embedded cluster's CA as
 * `--client-ca-file`: the admin kubeconfig it writes reads /metrics, /statusz, /flagz and /configz, while a
 * client without a certificate is refused. Both servers listen on free ports, the data directory is a temp one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.ts';
import { freePort } from './support/free-port.ts';
import { RawClient } from './support/raw-https.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'orch-controller-manager.js');

describe('the daemon with --embedded serves diagnostics to the admin kubeconfig', () => {
  let dir: string;
  let child: ChildProcess;
  let port: number;
  let output = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-diag-'));
    port = await freePort();
    child = spawn(
      process.execPath,
      [
        BIN,
        '--embedded',
        '--embedded-secure-port=0',
        `--data-dir=${dir}`,
        `--secure-port=${port}`,
        '--leader-elect=false',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (d) => {
      output += d;
    });
    child.stderr!.on('data', (d) => {
      output += d;
    });
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  });

  /** The admin's API client, and the same credentials pointed at the diagnostics port (self-signed there). */
  async function adminClients(): Promise<{ admin: RawClient; diagnostics: RawClient }> {
    const admin = await eventually(
      async () => {
        const client = await RawClient.fromKubeconfig(join(dir, 'kubeconfig')).catch(() => undefined);
        return client;
      },
      45_000,
      () => `the admin kubeconfig (daemon output: ${output})`,
    );
    return { admin, diagnostics: admin.at(`https://127.0.0.1:${port}`, { rejectUnauthorized: false }) };
  }

  it('answers /metrics, /statusz, /flagz and /configz for the admin, 401 without credentials', async () => {
    const { admin, diagnostics } = await adminClients();
    const metrics = await eventually(
      async () => {
        const r = await diagnostics.send({ path: '/metrics' }).catch(() => undefined);
        return r?.code === 200 ? r : undefined;
      },
      45_000,
      () => `/metrics (daemon output: ${output})`,
    );
    expect(metrics.body).toContain('# TYPE');
    for (const path of ['/statusz', '/flagz', '/configz']) {
      const r = await diagnostics.send({ path });
      expect(r.code, `${path}: ${r.body}`).toBe(200);
    }
    const nobody = RawClient.anonymous(`https://127.0.0.1:${port}`);
    expect((await nobody.send({ path: '/metrics' })).code).toBe(401);
    nobody.close();
    admin.close();
    diagnostics.close();
  }, 120_000);

  it('answers /debug/why for the admin, from the disruption core', async () => {
    const { admin, diagnostics } = await adminClients();
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { minAvailable: 1 },
    };
    const created = await admin.send({
      method: 'POST',
      path: '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(pdb),
    });
    expect(created.code, created.body).toBe(201);
    const text = await eventually(
      async () => {
        const r = await diagnostics
          .send({ path: '/debug/why/poddisruptionbudgets/default/web' })
          .catch(() => undefined);
        return r?.code === 200 ? r.body : undefined;
      },
      45_000,
      () => `/debug/why (daemon output: ${output})`,
    );
    expect(text).toContain(
      'poddisruptionbudget/web in namespace default: no disruption is allowed: 0 healthy and 1 must stay healthy',
    );
    const json = await diagnostics.send({
      path: '/debug/why/pdb/default/web',
      headers: { accept: 'application/json' },
    });
    expect(JSON.parse(json.body)).toMatchObject({ subject: 'poddisruptionbudget/web', namespace: 'default' });
    const missing = await diagnostics.send({ path: '/debug/why/pdb/default/absent' });
    expect([missing.code, missing.body]).toEqual([
      404,
      'poddisruptionbudgets "absent" not found in namespace default\n',
    ]);
    expect((await diagnostics.send({ path: '/debug/why/secrets/default/x' })).code).toBe(404);
    expect((await diagnostics.send({ path: '/debug/why/pdb/web' })).code).toBe(400);
    const nobody = RawClient.anonymous(`https://127.0.0.1:${port}`);
    expect((await nobody.send({ path: '/debug/why/pdb/default/web' })).code).toBe(401);
    nobody.close();
    admin.close();
    diagnostics.close();
  }, 120_000);
});
