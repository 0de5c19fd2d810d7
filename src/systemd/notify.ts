/**
 * The service manager's notify protocol (sd_notify) and watchdog, from `NOTIFY_SOCKET`, `WATCHDOG_USEC` and
 * `WATCHDOG_PID`. Node cannot send unix datagrams, so the default backend runs `systemd-notify` for each
 * message (with `--pid=<our pid>`, so the manager attributes it to the daemon; the unit still needs
 * `NotifyAccess=all`, because an unprivileged child cannot send on another process's behalf).
 *
 * Without `NOTIFY_SOCKET` every call is a no-op. The watchdog loop sends `WATCHDOG=1` every `WATCHDOG_USEC/2`,
 * and only while the health function passes; it is on only when `WATCHDOG_PID` is unset or names this process.
 */
import { spawn } from 'node:child_process';
import type { Logger } from 'pino';
import { type Clock, realClock, type Timer } from '../util/clock.ts';

/** Watchdog timeouts below this are not supported (the spec's limit). */
export const MIN_WATCHDOG_TIMEOUT_MS = 1_000;

/** Sends one notify message: `VAR=VALUE` assignments such as `READY=1`. */
export interface NotifyBackend {
  send(assignments: readonly string[]): Promise<void>;
}

export interface SystemdNotifyBackendOptions {
  /** The `NOTIFY_SOCKET` value. */
  socket: string;
  /** The daemon's pid, passed as `--pid=`. */
  pid: number;
  /** Default `systemd-notify` (found on PATH). */
  binary?: string;
  /** A call taking longer is killed and fails (default 10 s; systemd-notify waits up to 5 s for the manager). */
  timeoutMs?: number;
  /** PATH for finding the binary (default the process's). */
  path?: string;
}

/** Runs `systemd-notify --pid=<pid> [--ready] [--status=...] [VAR=VALUE...]` per message. */
export class SystemdNotifyBackend implements NotifyBackend {
  private readonly binary: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: SystemdNotifyBackendOptions) {
    this.binary = options.binary ?? 'systemd-notify';
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** The command-line arguments for a message. */
  args(assignments: readonly string[]): string[] {
    const args = [`--pid=${this.options.pid}`];
    for (const a of assignments) {
      if (a === 'READY=1') args.push('--ready');
      else if (a.startsWith('STATUS=')) args.push(`--status=${a.slice('STATUS='.length)}`);
      else args.push(a);
    }
    return args;
  }

  send(assignments: readonly string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const env: NodeJS.ProcessEnv = {
        NOTIFY_SOCKET: this.options.socket,
        PATH: this.options.path ?? process.env.PATH ?? '/usr/bin:/bin',
      };
      const child = spawn(this.binary, this.args(assignments), { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      let timedOut = false;
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        if (stderr.length < 4096) stderr += chunk;
      });
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, this.timeoutMs);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`${this.binary}: ${err.message}`));
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) reject(new Error(`${this.binary} did not finish within ${this.timeoutMs} ms`));
        else if (code === 0) resolve();
        else reject(new Error(`${this.binary} exited with ${code ?? signal}: ${stderr.trim()}`));
      });
    });
  }
}

export interface NotifierOptions {
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Default `process.pid`. */
  pid?: number;
  /** Default a {@link SystemdNotifyBackend} for `NOTIFY_SOCKET`. */
  backend?: NotifyBackend;
  /** Passed to the default backend. */
  binary?: string;
  sendTimeoutMs?: number;
  clock?: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;
  logger?: Pick<Logger, 'info' | 'warn' | 'debug'>;
}

/** The notify socket and watchdog settings the service manager passed, as sd_notify/sd_watchdog_enabled read them. */
export interface NotifyEnvironment {
  socket?: string;
  /** The watchdog timeout, when the watchdog is on for this process. */
  watchdogTimeoutMs?: number;
  /** Why a watchdog setting was ignored. */
  watchdogIgnored?: string;
}

export function readNotifyEnvironment(env: NodeJS.ProcessEnv, pid: number): NotifyEnvironment {
  const socket = env.NOTIFY_SOCKET || undefined;
  if (!socket) return {};
  const usec = env.WATCHDOG_USEC;
  if (usec === undefined || usec === '') return { socket };
  if (!/^\d+$/.test(usec) || Number(usec) <= 0) return { socket, watchdogIgnored: `invalid WATCHDOG_USEC "${usec}"` };
  const wpid = env.WATCHDOG_PID;
  if (wpid !== undefined && wpid !== '') {
    if (!/^\d+$/.test(wpid)) return { socket, watchdogIgnored: `invalid WATCHDOG_PID "${wpid}"` };
    if (Number(wpid) !== pid) return { socket, watchdogIgnored: `WATCHDOG_PID ${wpid} is not this process (${pid})` };
  }
  const timeoutMs = Number(usec) / 1000;
  if (timeoutMs < MIN_WATCHDOG_TIMEOUT_MS) {
    throw new Error(
      `the watchdog timeout ${timeoutMs} ms (WATCHDOG_USEC=${usec}) is too small: at least ${MIN_WATCHDOG_TIMEOUT_MS} ms is supported`,
    );
  }
  return { socket, watchdogTimeoutMs: timeoutMs };
}

export type HealthFunction = () => boolean | Promise<boolean>;

export class Notifier {
  readonly socket?: string;
  /** The watchdog timeout (`WATCHDOG_USEC`), when the watchdog is on for this process. */
  readonly watchdogTimeoutMs?: number;
  private readonly backend?: NotifyBackend;
  private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;
  private readonly logger?: NotifierOptions['logger'];
  private queue: Promise<unknown> = Promise.resolve();
  private timer?: Timer;
  private tick?: Promise<void>;
  private watching = false;
  private stopped = false;
  private stopOnce?: Promise<void>;
  private lastError?: string;

  constructor(options: NotifierOptions = {}) {
    const pid = options.pid ?? process.pid;
    const found = readNotifyEnvironment(options.env ?? process.env, pid);
    this.socket = found.socket;
    this.watchdogTimeoutMs = found.watchdogTimeoutMs;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger;
    if (found.watchdogIgnored) this.logger?.warn({ reason: found.watchdogIgnored }, 'systemd watchdog is off');
    if (this.socket) {
      this.backend =
        options.backend ??
        new SystemdNotifyBackend({
          socket: this.socket,
          pid,
          binary: options.binary,
          timeoutMs: options.sendTimeoutMs,
        });
    }
  }

  /** Whether a service manager listens (`NOTIFY_SOCKET` is set). */
  get enabled(): boolean {
    return this.backend !== undefined;
  }

  /** Half the watchdog timeout: how often `WATCHDOG=1` is sent. */
  get watchdogIntervalMs(): number | undefined {
    return this.watchdogTimeoutMs === undefined ? undefined : this.watchdogTimeoutMs / 2;
  }

  /** `READY=1`: start-up finished. Resolves true when sent. */
  ready(): Promise<boolean> {
    return this.notify(['READY=1']);
  }

  /** `STATUS=<text>` (one line). */
  status(text: string): Promise<boolean> {
    return this.notify([`STATUS=${text.replace(/[\r\n]+/g, ' ')}`]);
  }

  /** `STOPPING=1`: shutdown began. */
  stopping(): Promise<boolean> {
    return this.notify(['STOPPING=1']);
  }

  /** One `WATCHDOG=1` keep-alive. */
  watchdog(): Promise<boolean> {
    return this.notify(['WATCHDOG=1']);
  }

  /**
   * Starts the keep-alive loop: at once, then every half timeout, `healthy()` is asked and `WATCHDOG=1` sent
   * only when it passes. Does nothing when the watchdog is off.
   */
  startWatchdog(healthy: HealthFunction): void {
    const interval = this.watchdogIntervalMs;
    if (interval === undefined || !this.backend || this.watching || this.stopped) return;
    this.watching = true;
    this.logger?.info({ intervalMs: interval }, 'systemd watchdog keep-alives started');
    const run = async () => {
      this.timer = undefined;
      const started = this.clock.now();
      let ok = false;
      try {
        ok = await healthy();
      } catch (err) {
        this.logger?.warn({ err }, 'watchdog health function failed');
      }
      if (!this.watching) return;
      if (ok) await this.watchdog();
      else this.logger?.warn('health checks failing: not sending WATCHDOG=1');
      if (!this.watching) return;
      const delay = Math.max(0, interval - (this.clock.now() - started));
      this.timer = this.clock.setTimeout(() => {
        this.tick = run();
      }, delay);
    };
    this.timer = this.clock.setTimeout(() => {
      this.tick = run();
    }, 0);
  }

  /** Stops the keep-alive loop (clearing its timer) and waits for a tick in progress. */
  async stopWatchdog(): Promise<void> {
    this.watching = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.tick;
  }

  /** Stops the watchdog loop and sends `STOPPING=1`, once; later calls wait for the first to finish. */
  stop(): Promise<void> {
    this.stopped = true;
    this.stopOnce ??= (async () => {
      await this.stopWatchdog();
      await this.stopping();
    })();
    return this.stopOnce;
  }

  /** The `watchdog` health check: fails while the last notification could not be delivered. */
  readonly check = (): { ok: boolean; message?: string } =>
    this.lastError === undefined
      ? { ok: true }
      : { ok: false, message: `notifying the service manager failed: ${this.lastError}` };

  private notify(assignments: string[]): Promise<boolean> {
    const backend = this.backend;
    if (!backend) return Promise.resolve(false);
    const sent = this.queue.then(async () => {
      try {
        await backend.send(assignments);
        this.lastError = undefined;
        this.logger?.debug({ message: assignments.join(' ') }, 'notified the service manager');
        return true;
      } catch (err) {
        this.lastError = (err as Error)?.message ?? String(err);
        this.logger?.warn({ err, message: assignments.join(' ') }, 'notifying the service manager failed');
        return false;
      }
    });
    this.queue = sent;
    return sent;
  }
}
