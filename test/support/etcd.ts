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

let shared: Promise<string> | undefined;

/** The client URL of this process's etcd, starting it if needed. */
export function sharedEtcd(): Promise<string> {
  shared ??= startEtcd();
  return shared;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startEtcd(): Promise<string> {
  if (!etcdAvailable) throw new Error(`etcd is not installed at ${ETCD_BINARY} (Debian package etcd-server)`);
  const dir = mkdtempSync(join(tmpdir(), 'orch-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    ['--data-dir', dir],
    ['--listen-client-urls', client],
    ['--advertise-client-urls', client],
    ['--listen-peer-urls', peer],
    ['--initial-advertise-peer-urls', peer],
    ['--initial-cluster', `default=${peer}`],
    ['--log-level', 'error'],
  ].flat();
  // The test runner may end this process without an exit event: a shell watches it and takes etcd
  // (and its data) down with it.
  const watchdog = `"$@" & etcd=$!; while kill -0 ${process.pid} 2>/dev/null && kill -0 $etcd 2>/dev/null; do sleep 1; done; kill -9 $etcd; rm -rf '${dir}'`;
  spawn('sh', ['-c', watchdog, 'etcd', ETCD_BINARY, ...args], { stdio: 'ignore' });
  const probe = new Etcd3({ hosts: client });
  try {
    await eventually(() => probe.get('probe').then(() => true), 20_000, 'etcd ready');
  } finally {
    probe.close();
  }
  return client;
}
