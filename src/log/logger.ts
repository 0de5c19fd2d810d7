/**
 * Structured logs in the reference's JSON shape (`ts` in seconds, `v`, `msg`, `err` as a string,
 * `logger` name), with klog-style verbosity: `V(n)` logs only when n ≤ `--v`.
 */
import { type Logger, pino } from 'pino';

export type LoggingFormat = 'json' | 'text';

export interface LogOptions {
  verbosity: number;
  format: LoggingFormat;
  destination?: NodeJS.WritableStream;
}

const LEVEL_LETTER: Record<string, string> = { trace: 'I', debug: 'I', info: 'I', warn: 'W', error: 'E', fatal: 'F' };

/** The text form for people at a terminal: `I1121 19:30:21.123456] "msg" key="value"`. */
function textLine(obj: Record<string, unknown>): string {
  const { level, ts, msg, ...rest } = obj;
  const d = new Date(Number(ts) * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const stamp = `${pad(d.getMonth() + 1)}${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}000`;
  const kv = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v)}`)
    .join(' ');
  return `${LEVEL_LETTER[String(level)] ?? 'I'}${stamp}] ${JSON.stringify(msg ?? '')}${kv ? ` ${kv}` : ''}\n`;
}

const VERBOSITY = Symbol('verbosity');

export function createLogger(opts: LogOptions): Logger {
  const destination = opts.destination ?? process.stderr;
  const stream =
    opts.format === 'text' ? { write: (line: string) => destination.write(textLine(JSON.parse(line))) } : destination;
  const logger = pino(
    {
      base: undefined,
      messageKey: 'msg',
      errorKey: 'err',
      timestamp: () => `,"ts":${Date.now() / 1000}`,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: (e: unknown) => (e instanceof Error ? e.message : String(e)) },
    },
    stream as NodeJS.WritableStream,
  );
  // Child loggers inherit from their parent's prototype chain, so they all see the root's verbosity.
  (logger as unknown as Record<symbol, number>)[VERBOSITY] = opts.verbosity;
  return logger;
}

const silent = pino({ level: 'silent' });

/** klog's V(n): a logger tagging lines with `v: n`, or a silent one when n exceeds `--v`. */
export function V(logger: Logger, n: number): Logger {
  const verbosity = (logger as unknown as Record<symbol, number | undefined>)[VERBOSITY] ?? 0;
  return n <= verbosity ? logger.child({ v: n }) : silent;
}
