/**
 * Big answers (lists of thousands of objects) encoded and sent a slice at a time, so that one request never holds
 * the event loop for more than a few milliseconds: items are encoded for about SLICE_MS, then the loop gets a turn
 * (other requests, watches, controllers run); what is encoded goes to the socket in chunks as it is made, waiting
 * for the socket to drain whenever it is backed up (its backpressure). Sent as it is made, an encoded item is
 * garbage within milliseconds rather than kept, and copied by every scavenge, until the whole list is done.
 */
import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Encoding time between turns of the event loop. */
const SLICE_MS = 4;
/** Bytes handed to the socket at once: TLS encrypts a write in one go. */
const CHUNK_BYTES = 64 * 1024;
/** A client that takes no more of the body for this long is cut off rather than kept, with the body, forever. */
const DRAIN_TIMEOUT_MS = 60_000;

/**
 * `encode` of every item, a slice at a time, for a body whose head depends on all of them (protobuf's length);
 * undefined if the client left meanwhile, so that no list is encoded for no one.
 */
export async function mapInSlices<T, R>(
  res: ServerResponse,
  items: readonly T[],
  encode: (item: T, index: number) => R,
): Promise<R[] | undefined> {
  const out = new Array<R>(items.length);
  let sliceEnd = performance.now() + SLICE_MS;
  for (let i = 0; i < items.length; i++) {
    out[i] = encode(items[i], i);
    if (performance.now() >= sliceEnd) {
      await nextTurn();
      if (gone(res)) return undefined;
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
  return out;
}

/**
 * Sends `head`, every item through `encode`, then `tail` (all strings or all bytes), a slice at a time: in one
 * piece with its length when it all fits in one chunk, else chunked as it is encoded.
 */
export async function sendList<T, P extends string | Uint8Array>(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  head: P,
  items: readonly T[],
  encode: (item: T, index: number) => P,
  tail: P,
): Promise<void> {
  let pending: P[] = [head];
  let size = head.length;
  let started = false;
  let sliceEnd = performance.now() + SLICE_MS;
  for (let i = 0; i < items.length; i++) {
    const piece = encode(items[i], i);
    pending.push(piece);
    size += piece.length;
    if (size >= CHUNK_BYTES) {
      if (!started) res.writeHead(status, headers);
      started = true;
      const flushed = res.write(joined(pending));
      pending = [];
      size = 0;
      if (!flushed) await drained(res, DRAIN_TIMEOUT_MS);
    }
    if (performance.now() >= sliceEnd) {
      await nextTurn();
      sliceEnd = performance.now() + SLICE_MS;
    }
    if (gone(res)) return;
  }
  pending.push(tail);
  if (!started) res.writeHead(status, headers);
  res.end(joined(pending));
}

function joined(pieces: (string | Uint8Array)[]): Buffer {
  return typeof pieces[0] === 'string' ? Buffer.from(pieces.join('')) : Buffer.concat(pieces as Uint8Array[]);
}

function gone(res: ServerResponse): boolean {
  return res.destroyed || res.socket?.destroyed === true;
}

/**
 * Resolves once the response's queued bytes are sent, or it is closed (then nothing will drain). With a timeout,
 * a response still not drained by then is destroyed.
 */
export function drained(res: ServerResponse, timeoutMs?: number): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            res.destroy();
            done();
          }, timeoutMs);
    res.on('drain', done);
    res.on('close', done);
  });
}
