/** The discovery probe against real HTTPS servers on 127.0.0.1. */
import { createServer as createTlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendTls, type Target } from '../../src/api/apiservice.ts';
import type { APIService } from '../../src/api/types/misc.ts';
import type { CertificateWithKey } from '../../src/pki/certs.ts';
import { type ProbeOptions, probe } from './probe.ts';
import { type Backend, type Handler, remoteAPIService, servingCertificate, startBackend, testCa } from './testing.ts';

const PATH = '/apis/x.io/v1';
let ca: CertificateWithKey;
let serving: CertificateWithKey;
const backends: Backend[] = [];
const closers: (() => unknown)[] = [];

const apiService = (extra: Partial<NonNullable<APIService['spec']>> = {}) =>
  remoteAPIService(
    'v1',
    'x.io',
    'v1',
    { namespace: 'ns', name: 'api' },
    {
      caBundle: Buffer.from(ca.certPem).toString('base64'),
      ...extra,
    },
  );
const options = (s = apiService(), o: Partial<ProbeOptions> = {}): ProbeOptions => ({
  tls: backendTls(s),
  attempts: 5,
  timeoutMs: 2_000,
  watchdogMs: 3_000,
  start: 0,
  ...o,
});

async function backend(handler: Handler): Promise<Target> {
  const b = await startBackend(serving, handler);
  backends.push(b);
  return { host: '127.0.0.1', port: b.port };
}
const answer =
  (code: number, headers: Record<string, string> = {}): Handler =>
  (_req, res) =>
    res.writeHead(code, headers).end('{}');

beforeAll(async () => {
  ca = await testCa();
  serving = await servingCertificate(ca, 'api.ns.svc');
});

afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
  for (const close of closers) close();
});

describe('probe', () => {
  it('succeeds on a 2xx answer from a backend it trusts through the caBundle', async () => {
    const ok = await backend(answer(200));
    expect(await probe([ok], PATH, options())).toEqual({ ok: true });
  });

  it('succeeds when any attempt succeeds (one endpoint failing, one answering)', async () => {
    const bad = await backend(answer(500));
    const ok = await backend(answer(204));
    expect(await probe([bad, ok], PATH, options())).toEqual({ ok: true });
  });

  it('fails with the bad status when every attempt gets one, after that many requests', async () => {
    const requests: string[] = [];
    const bad = await backend((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(503).end();
    });
    const url = `https://127.0.0.1:${bad.port}${PATH}`;
    expect(await probe([bad], PATH, options())).toEqual({
      ok: false,
      message: `failing or missing response from ${url}: bad status from ${url}: 503`,
    });
    expect(requests).toEqual(Array(5).fill(PATH));
  });

  it('does not follow redirects', async () => {
    const redirect = await backend(answer(302, { Location: 'https://example.invalid/' }));
    const r = await probe([redirect], PATH, options());
    expect(r).toMatchObject({ ok: false, message: expect.stringMatching(/bad status from .*: 302$/) });
  });

  it('gives up on a hanging backend at the client timeout, or at the watchdog when that is shorter', async () => {
    const hang = await backend(() => {});
    const timeout = await probe([hang], PATH, options(apiService(), { timeoutMs: 150, watchdogMs: 5_000 }));
    expect(timeout).toMatchObject({ ok: false, message: expect.stringContaining('Client.Timeout exceeded') });
    const watchdog = await probe([hang], PATH, options(apiService(), { timeoutMs: 5_000, watchdogMs: 150 }));
    expect(watchdog).toEqual({ ok: false, message: `timed out waiting for https://127.0.0.1:${hang.port}${PATH}` });
  });

  it('reports a refused connection', async () => {
    const gone = await backend(answer(200));
    await backends.pop()!.close();
    const r = await probe([gone], PATH, options());
    expect(r).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^failing or missing response from .*ECONNREFUSED/),
    });
  });

  it('reports an answer that is not HTTP', async () => {
    const server = createTlsServer({ key: serving.keyPem, cert: serving.certPem }, (socket) =>
      socket.end('garbage garbage\r\n\r\n'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const port = (server.address() as { port: number }).port;
    const r = await probe([{ host: '127.0.0.1', port }], PATH, options());
    expect(r).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^failing or missing response from .*Parse Error/),
    });
  });

  describe('TLS', () => {
    it('rejects a certificate the caBundle does not sign, saying so', async () => {
      const ok = await backend(answer(200));
      const other = await testCa();
      const wrong = apiService({ caBundle: Buffer.from(other.certPem).toString('base64') });
      expect(await probe([ok], PATH, options(wrong))).toMatchObject({
        ok: false,
        message: expect.stringContaining(
          'x509: certificate signed by unknown authority (verified against spec.caBundle)',
        ),
      });
    });

    it('uses the system roots without a caBundle', async () => {
      const ok = await backend(answer(200));
      const r = await probe([ok], PATH, options(apiService({ caBundle: undefined })));
      expect(r).toMatchObject({ ok: false, message: expect.stringContaining('verified against the system roots') });
    });

    it('rejects a certificate for another service name', async () => {
      const ok = await backend(answer(200));
      const elsewhere = remoteAPIService(
        'v1',
        'x.io',
        'v1',
        { namespace: 'other', name: 'api' },
        {
          caBundle: Buffer.from(ca.certPem).toString('base64'),
        },
      );
      expect(await probe([ok], PATH, options(elsewhere))).toMatchObject({
        ok: false,
        message: expect.stringContaining('x509: certificate is not valid for api.other.svc'),
      });
    });

    it('skips verification with insecureSkipTLSVerify, or when the flag turns it off', async () => {
      const ok = await backend(answer(200));
      const insecure = apiService({ caBundle: undefined, insecureSkipTLSVerify: true });
      expect(await probe([ok], PATH, options(insecure))).toEqual({ ok: true });
      const unverified = { ...options(apiService({ caBundle: undefined })), tls: backendTls(apiService(), false) };
      expect(await probe([ok], PATH, unverified)).toEqual({ ok: true });
    });
  });
});
