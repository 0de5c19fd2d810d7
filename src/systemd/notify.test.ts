import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.ts';
import { Notifier, type NotifyBackend, readNotifyEnvironment, SystemdNotifyBackend } from './notify.ts';

/** A backend that records messages and can be made to fail. */
function recording(): NotifyBackend & { sent: string[]; fail: boolean } {
  const b = {
    sent: [] as string[],
    fail: false,
    async send(assignments: readonly string[]) {
      if (b.fail) throw new Error('socket gone');
      b.sent.push(assignments.join('\n'));
    },
  };
  return b;
}

/** Lets queued promise callbacks run. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

describe('readNotifyEnvironment', () => {
  it('reads the socket and the watchdog as sd_notify and sd_watchdog_enabled do', () => {
    expect(readNotifyEnvironment({}, 10)).toEqual({});
    expect(readNotifyEnvironment({ WATCHDOG_USEC: '15000000' }, 10)).toEqual({});
    expect(readNotifyEnvironment({ NOTIFY_SOCKET: '/run/n' }, 10)).toEqual({ socket: '/run/n' });
    expect(readNotifyEnvironment({ NOTIFY_SOCKET: '/run/n', WATCHDOG_USEC: '15000000' }, 10)).toEqual({
      socket: '/run/n',
      watchdogTimeoutMs: 15_000,
    });
    expect(
      readNotifyEnvironment({ NOTIFY_SOCKET: '@abstract', WATCHDOG_USEC: '1500000', WATCHDOG_PID: '10' }, 10),
    ).toEqual({
      socket: '@abstract',
      watchdogTimeoutMs: 1_500,
    });
  });

  it('ignores a watchdog meant for another process or malformed', () => {
    expect(readNotifyEnvironment({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '15000000', WATCHDOG_PID: '11' }, 10)).toEqual({
      socket: '/n',
      watchdogIgnored: 'WATCHDOG_PID 11 is not this process (10)',
    });
    expect(readNotifyEnvironment({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: 'soon' }, 10).watchdogTimeoutMs).toBeUndefined();
    expect(readNotifyEnvironment({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '0' }, 10).watchdogTimeoutMs).toBeUndefined();
    expect(
      readNotifyEnvironment({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '9', WATCHDOG_PID: 'x' }, 10).watchdogIgnored,
    ).toBe('invalid WATCHDOG_PID "x"');
  });

  it('refuses watchdog timeouts under one second', () => {
    expect(() => readNotifyEnvironment({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '999999' }, 10)).toThrow(
      'at least 1000 ms is supported',
    );
    expect(readNotifyEnvironment({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '1000000' }, 10).watchdogTimeoutMs).toBe(1000);
  });
});

describe('Notifier', () => {
  it('does nothing without NOTIFY_SOCKET', async () => {
    const backend = recording();
    const clock = new FakeClock();
    const n = new Notifier({ env: { WATCHDOG_USEC: '2000000' }, backend, clock });
    expect(n.enabled).toBe(false);
    expect(await n.ready()).toBe(false);
    expect(await n.status('x')).toBe(false);
    n.startWatchdog(() => true);
    expect(clock.pendingTimers).toBe(0);
    await n.stop();
    expect(backend.sent).toEqual([]);
  });

  it('sends ready, status (one line) and stopping, in order', async () => {
    const backend = recording();
    const n = new Notifier({ env: { NOTIFY_SOCKET: '/n' }, backend });
    const results = await Promise.all([n.ready(), n.status('syncing\ninformers'), n.watchdog()]);
    expect(results).toEqual([true, true, true]);
    await Promise.all([n.stop(), n.stop()]);
    await n.stop();
    expect(backend.sent).toEqual(['READY=1', 'STATUS=syncing informers', 'WATCHDOG=1', 'STOPPING=1']);
  });

  it('pings every half timeout, only while healthy, and clears its timer on stop', async () => {
    const backend = recording();
    const clock = new FakeClock();
    const n = new Notifier({ env: { NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '4000000' }, backend, clock });
    expect(n.watchdogIntervalMs).toBe(2_000);
    let healthy = true;
    n.startWatchdog(() => healthy);
    n.startWatchdog(() => true); // a second start is ignored
    clock.step(0);
    await settle();
    expect(backend.sent).toEqual(['WATCHDOG=1']);
    clock.step(1_999);
    await settle();
    expect(backend.sent).toHaveLength(1);
    clock.step(1);
    await settle();
    expect(backend.sent).toHaveLength(2);
    healthy = false;
    for (let i = 0; i < 3; i++) {
      clock.step(2_000);
      await settle();
    }
    expect(backend.sent).toHaveLength(2);
    healthy = true;
    clock.step(2_000);
    await settle();
    expect(backend.sent).toHaveLength(3);
    expect(clock.pendingTimers).toBe(1);
    await n.stop();
    expect(clock.pendingTimers).toBe(0);
    clock.step(10_000);
    await settle();
    expect(backend.sent).toEqual(['WATCHDOG=1', 'WATCHDOG=1', 'WATCHDOG=1', 'STOPPING=1']);
  });

  it('treats a throwing health function as unhealthy', async () => {
    const backend = recording();
    const clock = new FakeClock();
    const n = new Notifier({ env: { NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '2000000' }, backend, clock });
    n.startWatchdog(() => {
      throw new Error('broken');
    });
    clock.step(0);
    await settle();
    clock.step(1_000);
    await settle();
    expect(backend.sent).toEqual([]);
    await n.stopWatchdog();
    expect(clock.pendingTimers).toBe(0);
  });

  it('keeps the watchdog off for another WATCHDOG_PID', async () => {
    const backend = recording();
    const clock = new FakeClock();
    const n = new Notifier({
      env: { NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '2000000', WATCHDOG_PID: '1' },
      pid: 4242,
      backend,
      clock,
    });
    expect(n.watchdogTimeoutMs).toBeUndefined();
    n.startWatchdog(() => true);
    expect(clock.pendingTimers).toBe(0);
    expect(await n.ready()).toBe(true);
  });

  it('reports failed deliveries through its health check until one succeeds', async () => {
    const backend = recording();
    const n = new Notifier({ env: { NOTIFY_SOCKET: '/n' }, backend });
    expect(n.check()).toEqual({ ok: true });
    backend.fail = true;
    expect(await n.status('a')).toBe(false);
    expect(n.check()).toEqual({ ok: false, message: 'notifying the service manager failed: socket gone' });
    backend.fail = false;
    expect(await n.status('b')).toBe(true);
    expect(n.check()).toEqual({ ok: true });
  });
});

describe('SystemdNotifyBackend', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'notify-unit-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function script(name: string, body: string): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
    return path;
  }

  it('maps messages to systemd-notify arguments', () => {
    const b = new SystemdNotifyBackend({ socket: '/n', pid: 77 });
    expect(b.args(['READY=1'])).toEqual(['--pid=77', '--ready']);
    expect(b.args(['STATUS=all good'])).toEqual(['--pid=77', '--status=all good']);
    expect(b.args(['WATCHDOG=1'])).toEqual(['--pid=77', 'WATCHDOG=1']);
    expect(b.args(['STOPPING=1'])).toEqual(['--pid=77', 'STOPPING=1']);
  });

  it('runs the binary with NOTIFY_SOCKET and the arguments', async () => {
    const out = join(dir, 'out.txt');
    const binary = await script('fake-notify', `echo "$NOTIFY_SOCKET $*" > ${out}`);
    await new SystemdNotifyBackend({ socket: '/run/x.sock', pid: 5, binary }).send(['READY=1', 'STATUS=up']);
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(out, 'utf8')).trim()).toBe('/run/x.sock --pid=5 --ready --status=up');
  });

  it('fails with the exit code and stderr, for a missing binary, and after its timeout', async () => {
    const failing = await script('failing-notify', 'echo "Failed to notify init system: No such file" >&2; exit 1');
    await expect(
      new SystemdNotifyBackend({ socket: '/n', pid: 1, binary: failing }).send(['WATCHDOG=1']),
    ).rejects.toThrow('exited with 1: Failed to notify init system: No such file');
    await expect(
      new SystemdNotifyBackend({ socket: '/n', pid: 1, binary: join(dir, 'missing') }).send(['WATCHDOG=1']),
    ).rejects.toThrow('ENOENT');
    const slow = await script('slow-notify', 'exec sleep 30');
    const started = performance.now();
    await expect(
      new SystemdNotifyBackend({ socket: '/n', pid: 1, binary: slow, timeoutMs: 200 }).send(['WATCHDOG=1']),
    ).rejects.toThrow('did not finish within 200 ms');
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
