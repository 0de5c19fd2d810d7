/**
 * Runs the real kubectl binary against a test cluster: one-shot commands (always with a timeout) and
 * long-running streams such as `kubectl get -w`, plus a parser for kubectl's column output.
 *
 * Everything here is asynchronous on purpose: the control plane under test runs in the same process,
 * so a synchronous child-process call would block the event loop the server needs to answer kubectl.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { findKubectl } from '../../tools/k8s/binaries.ts';

/** The kubectl binary: `$KUBECTL` when set, else `kubectl` from the PATH, else the one `npm run k8s:build` made. */
export const KUBECTL = findKubectl();

/** Whether kubectl can be run at all (probed once, when this module is loaded). */
export const hasKubectl: boolean =
  spawnSync(KUBECTL, ['version', '--client'], { stdio: 'ignore', timeout: 15_000 }).status === 0;

export interface KubectlResult {
  /** Exit code; null when the process was ended by a signal. */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to kubectl's standard input (for `-f -`). */
  input?: string;
  /** Kill kubectl and fail after this long. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** kubectl bound to one kubeconfig and one discovery cache directory. */
export class Kubectl {
  constructor(
    readonly kubeconfig: string,
    readonly cacheDir: string,
  ) {}

  private argv(args: readonly string[]): string[] {
    return ['--cache-dir', this.cacheDir, ...args];
  }

  private env(): NodeJS.ProcessEnv {
    return { ...process.env, KUBECONFIG: this.kubeconfig };
  }

  /** Runs kubectl to completion. Resolves with any exit code; rejects only when it had to be killed. */
  run(args: readonly string[], options: RunOptions = {}): Promise<KubectlResult> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const child = execFile(
        KUBECTL,
        this.argv(args),
        { env: this.env(), timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: MAX_OUTPUT_BYTES },
        (error, stdout, stderr) => {
          if (error && (error.killed || error.signal)) {
            reject(
              new Error(
                `kubectl ${args.join(' ')}: killed after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
              ),
            );
            return;
          }
          if (error && typeof error.code !== 'number') {
            reject(error);
            return;
          }
          resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
        },
      );
      child.stdin?.end(options.input ?? '');
    });
  }

  /** Runs kubectl and returns its standard output; fails with kubectl's messages on a non-zero exit. */
  async ok(args: readonly string[], options: RunOptions = {}): Promise<string> {
    const r = await this.run(args, options);
    if (r.code !== 0) {
      throw new Error(`kubectl ${args.join(' ')} exited with ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    }
    return r.stdout;
  }

  /** Runs kubectl with `-o json` and parses the result. */
  async json<T = any>(args: readonly string[], options: RunOptions = {}): Promise<T> {
    return JSON.parse(await this.ok([...args, '-o', 'json'], options)) as T;
  }

  /** Starts a long-running kubectl (e.g. `get -w`) whose output is read line by line. */
  stream(args: readonly string[]): KubectlStream {
    const child = spawn(KUBECTL, this.argv(args), { env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    return new KubectlStream(child, args);
  }
}

interface LineWaiter {
  test: (line: string) => boolean;
  resolve: (line: string) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** A running kubectl: its standard output as complete lines, and a way to wait for a given line. */
export class KubectlStream {
  readonly lines: string[] = [];
  stderr = '';
  /** Settles when the process has ended, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = '';
  private waiters: LineWaiter[] = [];
  private ended = false;

  constructor(
    private readonly child: ChildProcess,
    private readonly args: readonly string[],
  ) {
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.onData(chunk));
    child.stderr!.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        this.ended = true;
        if (this.partial) this.addLine(this.partial);
        this.partial = '';
        for (const w of this.waiters.splice(0)) {
          clearTimeout(w.timer);
          w.reject(new Error(`kubectl ${this.args.join(' ')} ended (${code ?? signal}) first\n${this.describe()}`));
        }
        resolve({ code, signal });
      });
    });
  }

  private onData(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.addLine(line);
  }

  private addLine(line: string): void {
    this.lines.push(line);
    for (const w of [...this.waiters]) {
      if (!w.test(line)) continue;
      clearTimeout(w.timer);
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(line);
    }
  }

  private describe(): string {
    return `stdout:\n${this.lines.join('\n')}\nstderr:\n${this.stderr}`;
  }

  /** The first line (already read or still to come) that matches; fails after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
    const seen = this.lines.find((l) => pattern.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    if (this.ended) return Promise.reject(new Error(`kubectl ended without printing ${pattern}\n${this.describe()}`));
    return new Promise((resolve, reject) => {
      const waiter: LineWaiter = {
        test: (line) => pattern.test(line),
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms\n${this.describe()}`));
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Ends the process (SIGTERM, then SIGKILL if it lingers) and waits for it to be gone. */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.ended) {
      this.child.kill('SIGTERM');
      const force = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
      try {
        return await this.exited;
      } finally {
        clearTimeout(force);
      }
    }
    return this.exited;
  }
}

export interface Table {
  /** Column names as printed in the header, left to right. */
  columns: string[];
  /** One record per data row, by column name (empty string for an empty cell). */
  rows: Record<string, string>[];
}

/**
 * Parses kubectl's column output (a header line, then rows aligned under it). Cells are cut at the
 * offsets where the header's names start, so empty cells and cells containing spaces (such as the
 * `[get list]` verbs of `api-resources -o wide`) come out right. Header names may contain single spaces
 * (`MIN AVAILABLE`); columns are at least two spaces apart.
 */
export function parseTable(text: string): Table {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return { columns: [], rows: [] };
  const header = lines[0];
  const starts: number[] = [];
  const columns: string[] = [];
  for (const m of header.matchAll(/\S+(?: \S+)*/g)) {
    starts.push(m.index);
    columns.push(m[0]);
  }
  const rows = lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    columns.forEach((name, i) => {
      row[name] = line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trim();
    });
    return row;
  });
  return { columns, rows };
}
