/** Polls `probe` until it yields a value (not undefined or false), or fails after `timeoutMs` saying what it waited for. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
  what: string | (() => string) = 'condition',
  intervalMs = 25,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) {
      const subject = typeof what === 'function' ? what() : what;
      throw new Error(`${subject} not met within ${timeoutMs} ms${last ? `: ${(last as Error).message ?? last}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
