/**
 * The writes a controller of the plane (the garbage collector, the node and storage controllers) made and that
 * are not answered yet: with etcd each takes a round trip. A conflict or a vanished object is no failure: the
 * newer change is queued and will be looked at again.
 */
import type { Logger } from 'pino';
import { ApiError } from './errors.ts';

export class PendingWrites {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly log: () => Logger,
    private readonly logger: string,
  ) {}

  add(write: () => Promise<unknown>): void {
    const done: Promise<void> = write()
      .then(
        () => {},
        (err) => {
          if (err instanceof ApiError && ['Conflict', 'NotFound'].includes(err.reason)) return;
          this.log().error({ err, logger: this.logger }, 'a write failed');
        },
      )
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves once the controller is idle (`busy` says whether it has work queued) and every write answered. */
  async settled(busy: () => boolean): Promise<void> {
    while (busy() || this.pending.size) {
      await Promise.all(this.pending);
      await new Promise((r) => setImmediate(r));
    }
  }
}
