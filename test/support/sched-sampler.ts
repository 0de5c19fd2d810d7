/**
 * CPU starvation versus a process's own work, from Linux's per-thread scheduler statistics
 * (`/proc/<pid>/task/<pid>/schedstat`: nanoseconds on a CPU, nanoseconds runnable but waiting for one). Sampled
 * on the main thread, where a Node process runs its JavaScript: a second with much waiting was a second the
 * machine gave to others; a second with much CPU was the process's own work. Elsewhere than Linux it samples
 * nothing.
 */
import { readFile } from 'node:fs/promises';

export interface SchedSample {
  /** Wall ms at the end of the interval. */
  wall: number;
  name: string;
  /** Over the interval, in ms: on a CPU, and runnable but waiting for one. */
  cpuMs: number;
  waitMs: number;
}

async function schedstat(pid: number): Promise<[number, number] | undefined> {
  const text = await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').catch(() => undefined);
  const [cpu, wait] = text?.split(' ').map(Number) ?? [];
  return cpu === undefined || wait === undefined ? undefined : [cpu / 1e6, wait / 1e6];
}

/**
 * Samples the processes `targets()` names every `periodMs` until `signal` aborts; keeps at most `limit`
 * samples (the oldest dropped). The next round is timed from the end of the last, so two never overlap.
 */
export function sampleScheduling(
  targets: () => { name: string; pid: number }[],
  signal: AbortSignal,
  periodMs = 1_000,
  limit = 50_000,
): SchedSample[] {
  const samples: SchedSample[] = [];
  const last = new Map<string, [number, number]>();
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    for (const { name, pid } of targets()) {
      const now = await schedstat(pid);
      const key = `${name}:${pid}`;
      const before = last.get(key);
      if (!now) continue;
      last.set(key, now);
      if (before) samples.push({ wall: Date.now(), name, cpuMs: now[0] - before[0], waitMs: now[1] - before[1] });
    }
    if (samples.length > limit) samples.splice(0, samples.length - limit);
    if (!signal.aborted) timer = setTimeout(round, periodMs);
  };
  timer = setTimeout(round, periodMs);
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  return samples;
}

/** Per process, the worst second's wait and CPU between two wall times (samples ending up to a period later). */
export function schedulingBetween(
  samples: readonly SchedSample[],
  fromWall: number,
  toWall: number,
  periodMs = 1_000,
): Record<string, { maxWaitMs: number; maxCpuMs: number; waitMs: number; cpuMs: number }> {
  const out: Record<string, { maxWaitMs: number; maxCpuMs: number; waitMs: number; cpuMs: number }> = {};
  for (const s of samples) {
    if (s.wall < fromWall || s.wall > toWall + periodMs) continue;
    out[s.name] ??= { maxWaitMs: 0, maxCpuMs: 0, waitMs: 0, cpuMs: 0 };
    const o = out[s.name];
    o.maxWaitMs = Math.max(o.maxWaitMs, Math.round(s.waitMs));
    o.maxCpuMs = Math.max(o.maxCpuMs, Math.round(s.cpuMs));
    o.waitMs += Math.round(s.waitMs);
    o.cpuMs += Math.round(s.cpuMs);
  }
  return out;
}
