/**
 * A throwaway etcd for tests: one per test process, started on first use from /usr/bin/etcd (Debian's
 * `etcd-server`) with its data in a temp directory, killed (by a watching shell) when the process exits. Tests keep apart
 * by key prefix.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { eventually } from './eventually.ts';

export const ETCD_BINARY = process.env.ETCD_BINARY ?? '/usr/bin/etcd';
export const etcdAvailable = existsSync(ETCD_BINARY);

let shared: Promise<TestEtcd> | undefined;

/** The client URL of this process's etcd, starting it if needed. */
export async function sharedEtcd(): Promise<string> {
  shared ??= startEtcd();
  return (await shared).url;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface TestEtcd {
  url: string;
  /** SIGKILLs etcd if it runs (its data stays). */
  kill(): Promise<void>;
  /** Starts it again on the same ports and data. */
  restart(): Promise<void>;
}

/** A single-member etcd of its own, on free ports, with its data in a temp directory. */
export async function startEtcd(): Promise<TestEtcd> {
  if (!etcdAvailable) throw new Error(`etcd is not installed at ${ETCD_BINARY} (Debian package etcd-server)`);
  const dir = mkdtempSync(join(tmpdir(), 'orch-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    ['--data-dir', dir],
    ['--listen-client-urls', url],
    ['--advertise-client-urls', url],
    ['--listen-peer-urls', peer],
    ['--initial-advertise-peer-urls', peer],
    ['--initial-cluster', `default=${peer}`],
    ['--log-level', 'error'],
  ].flat();
  // The test runner may end this process without an exit event: a shell watches it and takes etcd down
  // with it (and its data, once this process is gone). It prints etcd's pid, for kill().
  const watchdog = `"$@" & etcd=$!; echo $etcd; while kill -0 ${process.pid} 2>/dev/null && kill -0 $etcd 2>/dev/null; do sleep 1; done; kill -9 $etcd 2>/dev/null; kill -0 ${process.pid} 2>/dev/null || rm -rf '${dir}'`;
  let pid = 0;
  let exited: Promise<void> = Promise.resolve();
  let running = false;
  const launch = async () => {
    const shell = spawn('sh', ['-c', watchdog, 'etcd', ETCD_BINARY, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    running = true;
    exited = new Promise((resolve) =>
      shell.once('exit', () => {
        running = false;
        resolve();
      }),
    );
    pid = await new Promise<number>((resolve) =>
      shell.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
    );
    const probe = new Etcd3({ hosts: url });
    try {
      await eventually(() => probe.get('probe').then(() => true), 20_000, 'etcd ready');
    } finally {
      probe.close();
    }
  };
  await launch();
  return {
    url,
    async kill() {
      if (!running) return;
      process.kill(pid, 'SIGKILL');
      await exited;
    },
    restart: launch,
  };
}
