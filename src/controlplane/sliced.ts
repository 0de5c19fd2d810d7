/**
 * Big answers (lists of thousands of objects) encoded and sent a slice at a time, so that one request never holds
 * the event loop for more than a few milliseconds: items are encoded for about SLICE_MS, then the loop gets a turn
 * (other requests, watches, controllers run); the body is then written in chunks, each after the socket drained
 * the last (its backpressure), with the loop free in between.
 */
import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Encoding time between turns of the event loop. */
const SLICE_MS = 4;
/** Bytes handed to the socket at once: TLS encrypts a write in one go. */
const CHUNK_BYTES = 256 * 1024;
/** A client that takes no more of the body for this long is cut off rather than kept, with the body, forever. */
const DRAIN_TIMEOUT_MS = 60_000;

/**
 * `encode` of every item, a slice at a time; undefined if `abandoned()` (the client left) at the end of a slice,
 * so that nobody's list is encoded for no one.
 */
export async function mapInSlices<T, R>(
  items: readonly T[],
  encode: (item: T, index: number) => R,
  abandoned: () => boolean,
): Promise<R[] | undefined> {
  const out = new Array<R>(items.length);
  let sliceEnd = performance.now() + SLICE_MS;
  for (let i = 0; i < items.length; i++) {
    out[i] = encode(items[i], i);
    if (performance.now() >= sliceEnd) {
      await nextTurn();
      if (abandoned()) return undefined;
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
  return out;
}

/**
 * Sends `pieces` (all strings or all bytes) as the body: in one piece with its length when it fits in one chunk,
 * else chunked, each chunk after the socket has drained the one before.
 */
export async function sendPieces(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  pieces: readonly (string | Uint8Array)[],
): Promise<void> {
  let next = 0;
  const chunk = (): Buffer | undefined => {
    if (next >= pieces.length) return undefined;
    const taken: (string | Uint8Array)[] = [];
    let size = 0;
    while (next < pieces.length && size < CHUNK_BYTES) {
      const piece = pieces[next++];
      taken.push(piece);
      size += piece.length;
    }
    return typeof taken[0] === 'string' ? Buffer.from(taken.join('')) : Buffer.concat(taken as Uint8Array[]);
  };
  const first = chunk() ?? Buffer.alloc(0);
  res.writeHead(status, headers);
  if (next >= pieces.length) {
    res.end(first);
    return;
  }
  for (let c: Buffer | undefined = first; c; c = chunk()) {
    if (res.destroyed) return;
    if (!res.write(c)) await drained(res, DRAIN_TIMEOUT_MS);
    else await nextTurn();
  }
  res.end();
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
