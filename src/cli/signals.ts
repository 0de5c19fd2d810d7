/** Waits for SIGINT or SIGTERM, then runs `shutdown` with a deadline so a stuck task cannot hold the process. */
export async function runUntilSignal(shutdown: () => Promise<void>, deadlineMs = 10_000): Promise<void> {
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  const timer = setTimeout(() => {
    console.error(`shutdown after ${signal} did not finish within ${deadlineMs} ms; exiting`);
    process.exit(1);
  }, deadlineMs);
  timer.unref();
  await shutdown();
  clearTimeout(timer);
}
