/**
 * The diagnostics server over real HTTPS with small fake reviewers (test/diagnostics-server.test.ts runs the
 * same flow against the embedded control plane's TokenReview and SubjectAccessReview).
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertificateWithKey, createSelfSignedCa, issueKeyAndCertificate } from '../pki/certs.ts';
import type { AccessReviewer, NonResourceAttributes, TokenReviewer, UserInfo } from './auth.ts';
import { HealthChecks } from './health.ts';
import { DiagnosticsServer } from './server.ts';

interface Got {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  peer?: X509Certificate;
}

interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  ca?: string;
  cert?: string;
  key?: string;
}

function call(port: number, path: string, o: CallOptions = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: o.method ?? 'GET',
        headers: o.headers,
        ca: o.ca,
        cert: o.cert,
        key: o.key,
        rejectUnauthorized: o.ca !== undefined,
        agent: false,
      },
      (res) => {
        const raw = (res.socket as TLSSocket).getPeerX509Certificate();
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, peer: raw }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const STATUS_401 = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
};

const forbidden = (message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason: 'Forbidden',
  details: {},
  code: 403,
});

async function clientCert(
  ca: CertificateWithKey,
  cn: string,
  o: string[],
  usage: 'client auth' | 'server auth' = 'client auth',
) {
  return issueKeyAndCertificate({
    ca,
    subject: { commonName: cn, organizations: o },
    usages: [usage],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3600_000),
  });
}

describe('DiagnosticsServer', () => {
  let server: DiagnosticsServer;
  let port: number;
  let caPem: string;
  let clientCa: CertificateWithKey;
  const reviews: string[] = [];
  let accessFails = false;

  const tokenReviewer: TokenReviewer = async (token) => {
    if (token === 'ann-token') return { authenticated: true, user: { username: 'ann', uid: 'u-1', groups: ['ops'] } };
    if (token === 'root-token') return { authenticated: true, user: { username: 'root', groups: ['system:masters'] } };
    if (token === 'broken-token') throw new Error('connection refused');
    return { authenticated: false, error: 'token not found' };
  };
  const accessReviewer: AccessReviewer = async (user: UserInfo, attrs: NonResourceAttributes) => {
    reviews.push(`${user.username}[${user.groups.join(',')}] ${attrs.verb} ${attrs.path}`);
    if (accessFails) throw new Error('webhook unavailable');
    if (attrs.path === '/configz') return { allowed: false, reason: 'no RBAC policy matched' };
    return { allowed: ['ann', 'carl'].includes(user.username) && attrs.path !== '/statusz' };
  };

  beforeAll(async () => {
    clientCa = await createSelfSignedCa({ commonName: 'client-ca' });
    server = new DiagnosticsServer({
      bindAddress: '127.0.0.1',
      pickFreePort: true,
      clientCaPem: clientCa.certPem,
      tokenReviewer,
      accessReviewer,
    });
    new HealthChecks().add('leaderElection', () => ({ ok: true })).install(server);
    server.route('/metrics', () => ({ status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'up 1\n' }));
    server.route('/statusz', () => ({ status: 200, body: 'statusz' }));
    server.route('/configz', () => ({ status: 200, body: '{}' }));
    server.route('/boom', () => {
      throw new Error('handler failed');
    });
    port = (await server.start())!;
    caPem = server.servingCertificate!.caPem!;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('serves a self-signed certificate for localhost and 127.0.0.1, made in memory', async () => {
    const r = await call(port, '/healthz', { ca: caPem });
    expect(r.status).toBe(200);
    expect(r.peer?.subject).toMatch(/^CN=localhost@\d+$/);
    expect(r.peer?.issuer).toMatch(/^CN=localhost-ca@\d+$/);
    expect(r.peer?.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(r.peer?.checkIssued(new X509Certificate(caPem))).toBe(true);
  });

  it('serves always-allowed paths to anyone, with no-cache headers', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const r = await call(port, path);
      expect(r.status, path).toBe(200);
      expect(r.body).toBe('ok');
      expect(r.headers['cache-control']).toBe('no-cache, private');
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
    expect((await call(port, '/readyz?verbose')).body).toBe('[+]ping ok\n[+]leaderElection ok\nreadyz check passed\n');
  });

  it('answers 401 to requests without credentials elsewhere, and to failed credentials everywhere', async () => {
    reviews.length = 0;
    for (const [path, headers] of [
      ['/metrics', {}],
      ['/healthz/ping', {}],
      ['/nothing-here', {}],
      ['/metrics', { Authorization: 'Bearer wrong' }],
      ['/metrics', { Authorization: 'Bearer broken-token' }],
      ['/healthz', { Authorization: 'Bearer wrong' }],
    ] as const) {
      const r = await call(port, path, { headers });
      expect(r.status, path).toBe(401);
      expect(r.headers['content-type']).toBe('application/json');
      expect(JSON.parse(r.body)).toEqual(STATUS_401);
    }
    expect(reviews).toEqual([]);
  });

  it('authorizes token users with a SubjectAccessReview of the path and the lower-case method', async () => {
    reviews.length = 0;
    const auth = { Authorization: 'Bearer ann-token' };
    const ok = await call(port, '/metrics', { headers: auth });
    expect(ok).toMatchObject({ status: 200, body: 'up 1\n' });
    const denied = await call(port, '/statusz', { headers: auth });
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.body)).toEqual(forbidden('forbidden: User "ann" cannot get path "/statusz"'));
    const withReason = await call(port, '/configz', { headers: auth });
    expect(JSON.parse(withReason.body)).toEqual(
      forbidden('forbidden: User "ann" cannot get path "/configz": no RBAC policy matched'),
    );
    expect((await call(port, '/metrics', { headers: auth, method: 'POST' })).status).toBe(200);
    expect(reviews).toEqual([
      'ann[ops,system:authenticated] get /metrics',
      'ann[ops,system:authenticated] get /statusz',
      'ann[ops,system:authenticated] get /configz',
      'ann[ops,system:authenticated] post /metrics',
    ]);
  });

  it('lets system:masters through without a review, and answers 404 for unknown paths after authorization', async () => {
    reviews.length = 0;
    const auth = { Authorization: 'Bearer root-token' };
    expect((await call(port, '/statusz', { headers: auth })).status).toBe(200);
    const missing = await call(port, '/nothing-here', { headers: auth });
    expect(missing).toMatchObject({ status: 404, body: '404 page not found\n' });
    expect(reviews).toEqual([]);
  });

  it('authenticates client certificates of the client CA: CN is the user, O the groups', async () => {
    reviews.length = 0;
    const carl = await clientCert(clientCa, 'carl', ['team-a', 'team-b']);
    const r = await call(port, '/metrics', { cert: carl.certPem, key: carl.keyPem });
    expect(r.status).toBe(200);
    expect(reviews).toEqual(['carl[team-a,team-b,system:authenticated] get /metrics']);

    const stranger = await clientCert(await createSelfSignedCa({ commonName: 'other-ca' }), 'carl', []);
    expect((await call(port, '/metrics', { cert: stranger.certPem, key: stranger.keyPem })).status).toBe(401);
    expect((await call(port, '/healthz', { cert: stranger.certPem, key: stranger.keyPem })).status).toBe(401);
    const serverOnly = await clientCert(clientCa, 'carl', [], 'server auth');
    expect((await call(port, '/metrics', { cert: serverOnly.certPem, key: serverOnly.keyPem })).status).toBe(401);
    // A bad certificate does not spoil a good token, as in the reference's union of authenticators.
    expect(
      (
        await call(port, '/metrics', {
          cert: stranger.certPem,
          key: stranger.keyPem,
          headers: { Authorization: 'Bearer ann-token' },
        })
      ).status,
    ).toBe(200);
  });

  it('answers 500 when the review fails or a handler throws', async () => {
    accessFails = true;
    try {
      const r = await call(port, '/metrics', { headers: { Authorization: 'Bearer ann-token' } });
      expect(r).toMatchObject({ status: 500, body: 'Internal Server Error: "/metrics": webhook unavailable\n' });
    } finally {
      accessFails = false;
    }
    const boom = await call(port, '/boom', { headers: { Authorization: 'Bearer root-token' } });
    expect(boom).toMatchObject({ status: 500, body: 'Internal Server Error\n' });
  });

  it('answers HEAD without a body', async () => {
    const r = await call(port, '/healthz', { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.body).toBe('');
    expect(r.headers['content-length']).toBe('2');
  });

  it('registers each route once and lists them sorted', () => {
    expect(() => server.route('/metrics', () => ({ status: 200, body: '' }))).toThrow(
      'route "/metrics" is already registered',
    );
    expect(() => server.route('metrics', () => ({ status: 200, body: '' }))).toThrow('must start with /');
    expect(server.paths()).toEqual(['/boom', '/configz', '/healthz', '/livez', '/metrics', '/readyz', '/statusz']);
  });
});

describe('DiagnosticsServer options', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'diag-server-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('does not serve with securePort 0', async () => {
    const s = new DiagnosticsServer({ securePort: 0 });
    expect(s.enabled).toBe(false);
    expect(await s.start()).toBeUndefined();
    expect(s.port).toBeUndefined();
    await s.stop();
    await expect(s.start()).rejects.toThrow('already started');
  });

  it('checks its options', () => {
    expect(() => new DiagnosticsServer({ tlsCertFile: '/x.crt' })).toThrow('must be given together');
    expect(() => new DiagnosticsServer({ securePort: 70_000 })).toThrow('must be between 0 and 65535');
    expect(() => new DiagnosticsServer({ alwaysAllowPaths: ['/a*b'] })).toThrow('only trailing * allowed');
  });

  it('serves the given certificate files, and can make prefix paths always allowed', async () => {
    const ca = await createSelfSignedCa({ commonName: 'serving-ca' });
    const serving = await issueKeyAndCertificate({
      ca,
      subject: { commonName: 'diag.example' },
      ipAddresses: ['127.0.0.1'],
      usages: ['server auth'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 3600_000),
    });
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    const s = new DiagnosticsServer({
      bindAddress: '127.0.0.1',
      pickFreePort: true,
      tlsCertFile: join(dir, 'tls.crt'),
      tlsPrivateKeyFile: join(dir, 'tls.key'),
      alwaysAllowPaths: ['/healthz', '/healthz/*'],
    });
    new HealthChecks().install(s);
    const port = (await s.start())!;
    try {
      const r = await call(port, '/healthz/ping', { ca: ca.certPem });
      expect(r).toMatchObject({ status: 200, body: 'ok' });
      expect(r.peer?.subject).toBe('CN=diag.example');
      expect(s.servingCertificate?.caPem).toBeUndefined();
      expect((await call(port, '/livez')).status).toBe(401);
    } finally {
      await s.stop();
    }
  });

  it('authorizes requests without credentials as system:anonymous when anonymous is on', async () => {
    const seen: string[] = [];
    const s = new DiagnosticsServer({
      bindAddress: '127.0.0.1',
      pickFreePort: true,
      anonymous: true,
      accessReviewer: async (user, attrs) => {
        seen.push(`${user.username}[${user.groups.join(',')}] ${attrs.path}`);
        return { allowed: attrs.path === '/open' };
      },
    });
    s.route('/open', () => ({ status: 200, body: 'open' }));
    s.route('/closed', () => ({ status: 200, body: 'closed' }));
    const port = (await s.start())!;
    try {
      expect((await call(port, '/open')).body).toBe('open');
      const closed = await call(port, '/closed');
      expect(closed.status).toBe(403);
      expect(JSON.parse(closed.body).message).toBe('forbidden: User "system:anonymous" cannot get path "/closed"');
      expect(seen).toEqual([
        'system:anonymous[system:unauthenticated] /open',
        'system:anonymous[system:unauthenticated] /closed',
      ]);
    } finally {
      await s.stop();
    }
  });

  it('forbids everything but always-allowed paths and groups without an access reviewer', async () => {
    const s = new DiagnosticsServer({
      bindAddress: '127.0.0.1',
      pickFreePort: true,
      tokenReviewer: async (t) => ({
        authenticated: true,
        user: { username: t, groups: t === 'admin' ? ['system:masters'] : [] },
      }),
    });
    s.route('/metrics', () => ({ status: 200, body: 'm' }));
    const port = (await s.start())!;
    try {
      expect((await call(port, '/metrics', { headers: { Authorization: 'Bearer admin' } })).status).toBe(200);
      const r = await call(port, '/metrics', { headers: { Authorization: 'Bearer joe' } });
      expect(JSON.parse(r.body).message).toBe('forbidden: User "joe" cannot get path "/metrics"');
    } finally {
      await s.stop();
    }
  });
});
