/**
 * How long this process's event loop is held by work: a 1 ms interval ticks on every turn it gets, and the most CPU
 * time (ms, every thread of the process) spent between two ticks is the longest hold. Unlike the wall-clock delay
 * (`monitorEventLoopDelay`), a process waiting for a core of a loaded machine does not count.
 */
export function watchLoopTurns(): { stop(): number } {
  let most = 0;
  let last = process.cpuUsage();
  const tick = setInterval(() => {
    const used = process.cpuUsage(last);
    most = Math.max(most, (used.user + used.system) / 1000);
    last = process.cpuUsage();
  }, 1);
  return {
    stop() {
      clearInterval(tick);
      return most;
    },
  };
}
