/**
 * The discovery probe: several concurrent `GET <discovery path>` attempts at the backend's
 * endpoints; the first 2xx answer wins, otherwise the last failure collected is the message.
 * Each attempt has an HTTP timeout and a watchdog a little longer; redirects are not followed
 * (node's client never follows them: a 3xx is a bad status like any other non-2xx).
 */
import { request } from 'node:https';
import { type BackendTls, type Target, targetUrl, transportErrorText } from '../../src/api/apiservice.ts';
import type { ProbeOutcome } from './core.ts';

export interface ProbeOptions {
  tls: BackendTls;
  attempts: number;
  timeoutMs: number;
  watchdogMs: number;
  /** First endpoint tried (attempt i goes to `targets[(start + i) % n]`); random by default. */
  start?: number;
}

export const PROBE_DEFAULTS = { attempts: 5, timeoutMs: 5_000, watchdogMs: 6_000 };

export async function probe(targets: Target[], path: string, opts: ProbeOptions): Promise<ProbeOutcome> {
  if (targets.length === 0) return { ok: false, message: 'no endpoints to probe' };
  const start = opts.start ?? Math.floor(Math.random() * targets.length);
  const cancel = new AbortController();
  const attempts = Array.from({ length: opts.attempts }, (_, i) =>
    attempt(targetUrl(targets[(start + i) % targets.length], path), opts, cancel.signal),
  );
  return new Promise<ProbeOutcome>((resolve) => {
    let pending = attempts.length;
    let lastFailure = '';
    for (const a of attempts) {
      a.then((failure) => {
        pending--;
        if (failure === undefined) {
          cancel.abort();
          resolve({ ok: true });
        } else lastFailure = failure;
        if (pending === 0) resolve({ ok: false, message: lastFailure });
      });
    }
  });
}

/** One attempt: `undefined` on a 2xx answer, else the reference's error text. */
function attempt(url: string, opts: ProbeOptions, cancel: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const failing = (detail: string) => `failing or missing response from ${url}: ${detail}`;
    let settled = false;
    const finish = (failure: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      clearTimeout(timeout);
      req.destroy();
      resolve(failure);
    };
    const watchdog = setTimeout(() => finish(`timed out waiting for ${url}`), opts.watchdogMs);
    const req = request(url, {
      method: 'GET',
      ca: opts.tls.ca,
      rejectUnauthorized: opts.tls.rejectUnauthorized,
      servername: opts.tls.servername,
      agent: false,
      signal: cancel,
    });
    const timeout = setTimeout(
      () => finish(failing(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)),
      opts.timeoutMs,
    );
    req.on('response', (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      finish(code >= 200 && code < 300 ? undefined : failing(`bad status from ${url}: ${code}`));
    });
    req.on('error', (err) => finish(cancel.aborted ? 'canceled' : failing(transportErrorText(err, opts.tls))));
    req.end();
  });
}
