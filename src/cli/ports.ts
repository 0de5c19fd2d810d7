/** A busy port is a usage problem: one line naming the port and the flag that moves it, not a stack trace. */
import { createServer } from 'node:net';
import { FlagError } from './flags.ts';

export const isAddressInUse = (err: unknown): boolean => (err as NodeJS.ErrnoException)?.code === 'EADDRINUSE';

export function portInUse(host: string, port: number, flag: string): FlagError {
  return new FlagError(
    `port ${port} on ${host} is already in use: stop what holds it, or choose another with --${flag}`,
  );
}

/** Fails with {@link portInUse} when the port cannot be bound now (0, any free port, always can). */
export async function assertPortFree(host: string, port: number, flag: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err) => reject(isAddressInUse(err) ? portInUse(host, port, flag) : err));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** A port the process will listen on, and the flag that sets it. */
export interface Listener {
  host: string;
  port: number;
  flag: string;
}

const WILDCARDS = new Set(['', '0.0.0.0', '::']);

/** Two of the process's own listeners that would take the same port (0, any free port, never clashes). */
export function portClash(listeners: readonly Listener[]): string | undefined {
  for (const [i, a] of listeners.entries()) {
    for (const b of listeners.slice(i + 1)) {
      const overlap = a.host === b.host || WILDCARDS.has(a.host) || WILDCARDS.has(b.host);
      if (a.port !== 0 && a.port === b.port && overlap) {
        return `--${a.flag} and --${b.flag} are both ${a.port}: choose another port for one of them`;
      }
    }
  }
  return undefined;
}

/** Checks every listener's port before anything starts, so that no banner or file precedes the one line. */
export async function assertPortsFree(listeners: readonly Listener[]): Promise<void> {
  const clash = portClash(listeners);
  if (clash) throw new FlagError(clash);
  for (const l of listeners) await assertPortFree(l.host, l.port, l.flag);
}
