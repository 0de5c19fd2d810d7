/** Small timing helpers on a {@link Clock}: an abortable pause and a signal with a deadline. */
import type { Clock } from '../util/clock.ts';

/** Waits `ms` on the clock; resolves early (never rejects) when `signal` aborts. The timer is always cleared. */
export function pause(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export interface Deadline {
  /** Aborts when the parent aborts or `ms` have passed on the clock. */
  readonly signal: AbortSignal;
  /** Stops the timer and detaches from the parent; call it when the guarded work is over. */
  dispose(): void;
}

/** A child of `parent` that also aborts after `ms` (reason: an Error naming `what`). */
export function deadline(clock: Clock, parent: AbortSignal, ms: number, what: string): Deadline {
  const controller = new AbortController();
  const onParent = () => controller.abort(parent.reason);
  const timer = clock.setTimeout(() => controller.abort(new Error(`${what} timed out after ${ms} ms`)), ms);
  const dispose = () => {
    clock.clearTimeout(timer);
    parent.removeEventListener('abort', onParent);
  };
  if (parent.aborted) onParent();
  else parent.addEventListener('abort', onParent, { once: true });
  return { signal: controller.signal, dispose };
}

/**
 * Runs `fn` with a signal that aborts after `ms` or with `parent`, and always stops the timer. The result
 * rejects with the abort reason as soon as the signal aborts, even if `fn` ignores its signal.
 */
export async function withDeadline<T>(
  clock: Clock,
  parent: AbortSignal,
  ms: number,
  what: string,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const d = deadline(clock, parent, ms, what);
  if (d.signal.aborted) {
    d.dispose();
    throw d.signal.reason;
  }
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(d.signal.reason);
    d.signal.addEventListener('abort', onAbort, { once: true });
  });
  const work = fn(d.signal);
  work.catch(() => {}); // settled late after an abort: nobody is listening any more
  try {
    return await Promise.race([work, aborted]);
  } finally {
    d.signal.removeEventListener('abort', onAbort);
    d.dispose();
  }
}
