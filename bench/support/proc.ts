/** A child process's CPU time and memory as Linux's /proc shows them, for benchmarks of processes not our own. */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's times (`getconf CLK_TCK`, 100 on Linux). */
const TICKS_PER_SECOND = 100;

export interface ProcSample {
  /** User + system CPU seconds so far, threads included. */
  cpuSeconds: number;
  /** Resident set now, MiB. */
  rssMiB: number;
  /** The peak resident set so far (VmHWM), MiB. */
  peakRssMiB: number;
}

/** The process's figures now, or undefined once it is gone. */
export function procSample(pid: number): ProcSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces), from the 3rd (state): utime is the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { cpuSeconds: ticks / TICKS_PER_SECOND, rssMiB: kib('VmRSS') / 1024, peakRssMiB: kib('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}
