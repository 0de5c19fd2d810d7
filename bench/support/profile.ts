/** CPU profiles of this process over a piece of a benchmark, for the `*_BENCH_PROFILE=<dir>` knobs. */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

const SAMPLING_INTERVAL_US = 100;

/** Runs `fn` under the CPU profiler of this process when `path` is given, and writes the profile there. */
export async function profiled<T>(path: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (!path) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // Ten times the default rate: a request's pieces take microseconds, and a profile over seconds.
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(path, JSON.stringify(profile));
    session.disconnect();
  }
}
