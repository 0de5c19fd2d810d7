/** A control plane run as its own process (`bin/orch-control-plane.js`), and watch clients that stop reading. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { ROOT } from './daemons.ts';

export interface Plane {
  child: ChildProcess;
  port: number;
  logs: { msg?: string }[];
  /** Its data directory, removed by stopPlane. */
  dir: string;
  /** The admin kubeconfig it wrote, and the TLS options and headers of its credentials. */
  kubeconfig: string;
  tls: RequestOptions;
}

/** Starts a control plane on a free port with the memory store, in a new temporary data directory. */
export async function spawnPlane(): Promise<Plane> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-child-plane-'));
  const child = spawn(
    process.execPath,
    ['bin/orch-control-plane.js', '--secure-port=0', `--data-dir=${dir}`, '--storage=memory'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const logs: Plane['logs'] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line));
    } catch {
      logs.push({ msg: line });
    }
  });
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^port: (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the control plane exited with ${code}`)));
  });
  const kubeconfig = join(dir, 'kubeconfig');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const tls: RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  return { child, port, logs, dir, kubeconfig, tls };
}

/** Stops a spawned control plane, waits for it to exit and removes its data directory. */
export async function stopPlane(plane: Plane | undefined): Promise<void> {
  if (!plane) return;
  if (plane.child.exitCode === null) {
    const exited = new Promise((r) => plane.child.once('exit', r));
    plane.child.kill('SIGTERM');
    await exited;
  }
  await rm(plane.dir, { recursive: true, force: true });
}

/** A watch that connects, sends its request and never reads: what the server sends piles up on its side. */
export function stalledWatch(tls: RequestOptions, port: number, path: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port, ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !!tls.ca },
      () => {
        socket.pause();
        const auth = (tls.headers as Record<string, string> | undefined)?.Authorization;
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth ? `Authorization: ${auth}\r\n` : ''}\r\n`,
        );
        resolve(socket);
      },
    );
    socket.once('error', reject);
  });
}
