/**
 * The notifier against a real notify socket: a python3 process binds an AF_UNIX SOCK_DGRAM socket, closes the
 * file descriptors systemd-notify passes with its BARRIER=1 message (as the service manager does), and prints
 * every datagram. The notifier spawns the real /usr/bin/systemd-notify.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Notifier } from '../src/systemd/notify.ts';

const RECEIVER = `
import array, json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("LISTENING", flush=True)
while True:
    data, ancillary, _flags, _addr = s.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    for fd in fds:
        os.close(fd)
    print(json.dumps({"data": data.decode(), "fds": len(fds)}), flush=True)
`;

interface Datagram {
  data: string;
  fds: number;
  at: number;
}

const haveTools = existsSync('/usr/bin/systemd-notify');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!haveTools)('watchdog over a real notify socket', () => {
  let dir: string;
  let socketPath: string;
  let receiver: ChildProcess;
  const received: Datagram[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'notify-'));
    socketPath = join(dir, 'notify.sock');
    await writeFile(join(dir, 'receiver.py'), RECEIVER);
    receiver = spawn('python3', [join(dir, 'receiver.py'), socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: receiver.stdout! });
    await new Promise<void>((resolve, reject) => {
      receiver.once('error', reject);
      receiver.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
      lines.on('line', (line) => {
        if (line === 'LISTENING') return resolve();
        received.push({ ...(JSON.parse(line) as Omit<Datagram, 'at'>), at: performance.now() });
      });
    });
  }, 30_000);

  afterAll(async () => {
    receiver?.kill();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Datagrams other than systemd-notify's BARRIER=1 round trips, received since `from`. */
  const messages = (from = 0) => received.filter((d) => d.at >= from && d.data !== 'BARRIER=1');
  const pings = (from = 0, to = Number.POSITIVE_INFINITY) =>
    messages(from).filter((d) => d.at < to && d.data.split('\n').includes('WATCHDOG=1'));
  /** The assignments of a datagram, sorted (systemd-notify puts MAINPID= first or last). */
  const assignments = (d: Datagram) => d.data.split('\n').sort();

  it('sends READY=1, STATUS=, keep-alives at half the timeout only while healthy, and STOPPING=1', async () => {
    const notifier = new Notifier({
      env: { NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: '1000000', PATH: process.env.PATH },
    });
    expect(notifier.enabled).toBe(true);
    expect(notifier.watchdogIntervalMs).toBe(500);

    expect(await notifier.ready()).toBe(true);
    expect(await notifier.status('controllers running')).toBe(true);
    await sleep(100);
    const first = messages();
    expect(assignments(first[0])).toEqual([`MAINPID=${process.pid}`, 'READY=1']);
    expect(assignments(first[1])).toEqual([`MAINPID=${process.pid}`, 'STATUS=controllers running']);
    // systemd-notify waits for the manager to read each message: a BARRIER=1 with one passed descriptor.
    expect(received.filter((d) => d.data === 'BARRIER=1').every((d) => d.fds === 1)).toBe(true);

    // Healthy: about one keep-alive every 500 ms.
    let healthy = true;
    const start = performance.now();
    notifier.startWatchdog(() => healthy);
    await sleep(2_250);
    const healthyPings = pings(start);
    expect(healthyPings.length).toBeGreaterThanOrEqual(4);
    expect(healthyPings.length).toBeLessThanOrEqual(6);
    for (const p of healthyPings) expect(assignments(p)).toEqual([`MAINPID=${process.pid}`, 'WATCHDOG=1']);
    const gaps = healthyPings.slice(1).map((p, i) => p.at - healthyPings[i].at);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThan(300);
      expect(gap).toBeLessThan(800);
    }

    // Failing: no keep-alive (a tick that judged health just before the switch may still land shortly after).
    healthy = false;
    const failedAt = performance.now();
    await sleep(1_600);
    expect(pings(failedAt + 150)).toEqual([]);

    // Healthy again: keep-alives resume within one interval.
    healthy = true;
    const recoveredAt = performance.now();
    await sleep(800);
    expect(pings(recoveredAt).length).toBeGreaterThanOrEqual(1);

    await notifier.stop();
    const stoppedAt = performance.now();
    await sleep(100);
    const last = messages().at(-1)!;
    expect(assignments(last)).toEqual([`MAINPID=${process.pid}`, 'STOPPING=1']);
    await sleep(1_000);
    expect(pings(stoppedAt)).toEqual([]);
    expect(notifier.check()).toEqual({ ok: true });
  }, 30_000);

  it('reports through its health check when the socket is gone', async () => {
    const notifier = new Notifier({ env: { NOTIFY_SOCKET: join(dir, 'missing.sock'), PATH: process.env.PATH } });
    expect(await notifier.ready()).toBe(false);
    const check = notifier.check();
    expect(check.ok).toBe(false);
    expect(check.message).toMatch(
      /^notifying the service manager failed: systemd-notify exited with 1: .*No such file or directory/,
    );
  });

  it('sends nothing when NOTIFY_SOCKET is unset', async () => {
    const before = received.length;
    const notifier = new Notifier({ env: { WATCHDOG_USEC: '1000000' } });
    expect(await notifier.ready()).toBe(false);
    notifier.startWatchdog(() => true);
    await sleep(700);
    await notifier.stop();
    expect(received.length).toBe(before);
  });
});
