/**
 * The discovery probe: several concurrent `GET <discovery path>` attempts at the backend's
 * endpoints; the first 2xx answer wins, otherwise the last failure collected is the message.
 * Each attempt has an HTTP timeout and a watchdog a little longer; redirects are not followed
 * (node's client never follows them: a 3xx is a bad status like any other non-2xx).
 */
import { type Agent, request } from 'node:https';
import { type BackendTls, type Target, targetUrl, transportErrorText } from '../../src/api/apiservice.ts';
import type { ProbeOutcome } from './core.ts';

export interface ProbeOptions {
  tls: BackendTls;
  /** A keep-alive agent reuses connections between probes, as the reference's transport does; none by default. */
  agent?: Agent;
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
  // The first success answers; the other attempts run to their end (bounded by their timeouts), so
  // their connections go back to the agent's pool for the next probe instead of being torn down.
  const attempts = Array.from({ length: opts.attempts }, (_, i) =>
    attempt(targetUrl(targets[(start + i) % targets.length], path), opts),
  );
  return new Promise<ProbeOutcome>((resolve) => {
    let pending = attempts.length;
    let lastFailure = '';
    for (const a of attempts) {
      a.then((failure) => {
        pending--;
        if (failure === undefined) resolve({ ok: true });
        else lastFailure = failure;
        if (pending === 0) resolve({ ok: false, message: lastFailure });
      });
    }
  });
}

/** One attempt: `undefined` on a 2xx answer, else the reference's error text. */
function attempt(url: string, opts: ProbeOptions): Promise<string | undefined> {
  return new Promise((resolve) => {
    const failing = (detail: string) => `failing or missing response from ${url}: ${detail}`;
    let settled = false;
    // A complete exchange keeps its connection (when pooled); a cut-off one is torn down.
    const finish = (failure: string | undefined, complete = true) => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      clearTimeout(timeout);
      if (!complete) req.destroy();
      resolve(failure);
    };
    const abandon = (failure: string) => finish(failure, false);
    const watchdog = setTimeout(() => abandon(`timed out waiting for ${url}`), opts.watchdogMs);
    const req = request(url, {
      method: 'GET',
      ca: opts.tls.ca,
      rejectUnauthorized: opts.tls.rejectUnauthorized,
      servername: opts.tls.servername,
      agent: opts.agent ?? false,
    });
    const timeout = setTimeout(
      () =>
        abandon(failing(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)),
      opts.timeoutMs,
    );
    req.on('response', (res) => {
      const code = res.statusCode ?? 0;
      // Read to the end so a keep-alive connection can be reused.
      res.resume();
      res.on('end', () => finish(code >= 200 && code < 300 ? undefined : failing(`bad status from ${url}: ${code}`)));
      res.on('error', (err) => abandon(failing(transportErrorText(err, opts.tls))));
    });
    req.on('error', (err) => abandon(failing(transportErrorText(err, opts.tls))));
    req.end();
  });
}
