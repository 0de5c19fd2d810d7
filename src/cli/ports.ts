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
