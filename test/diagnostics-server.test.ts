/**
 * The diagnostics server end to end with delegated authentication and authorization against the embedded
 * control plane: bearer tokens are checked with its TokenReview, client certificates against its cluster CA,
 * and every other request with its SubjectAccessReview over RBAC. On top: health checks, z-pages, metrics and
 * the health SLIs, as the daemon wires them.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gauge, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { group } from '../src/api/naming.ts';
import { versionInfo } from '../src/build-info.ts';
import { defaultPolicy } from '../src/controlplane/authz/policy.ts';
import { RbacAuthorizer, requestAuthorizer } from '../src/controlplane/authz/rbac.ts';
import { createReviewer } from '../src/controlplane/authz/reviews.ts';
import type { RequestAuthorizer } from '../src/controlplane/request-info.ts';
import {
  type AccessReviewer,
  apiAccessReviewer,
  apiTokenReviewer,
  cachedAccessReviewer,
  cachedTokenReviewer,
  type TokenReviewer,
} from '../src/diagnostics/auth.ts';
import { HealthChecks } from '../src/diagnostics/health.ts';
import { sliMetrics } from '../src/diagnostics/metrics/slis.ts';
import { installMetricsRoutes } from '../src/diagnostics/routes.ts';
import { DiagnosticsServer } from '../src/diagnostics/server.ts';
import { installZPages } from '../src/diagnostics/zpages.ts';
import { issueKeyAndCertificate } from '../src/pki/certs.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const TOKEN = 'tina-7f3k-token';

interface Got {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Identity {
  cert?: string;
  key?: string;
  token?: string;
}

describe('diagnostics server with delegated auth against the embedded control plane', () => {
  let c: TestCluster;
  let dir: string;
  let server: DiagnosticsServer;
  let port: number;
  let servingCa: string;
  let configGroup: string;
  let componentName: string;
  let prefix: string;
  let readyzSynced = false;
  const counts = { tokenReviews: 0, accessReviews: 0 };
  const id: Record<'admin' | 'alice' | 'bob' | 'tina' | 'stranger', Identity> = {
    admin: {},
    alice: {},
    bob: {},
    tina: { token: TOKEN },
    stranger: { token: 'no-such-token' },
  };

  function get(path: string, who?: Identity, accept?: string, p = port, ca = servingCa): Promise<Got> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (who?.token) headers.Authorization = `Bearer ${who.token}`;
      if (accept !== undefined) headers.Accept = accept;
      const req = request(
        {
          host: '127.0.0.1',
          port: p,
          path,
          headers,
          ca,
          cert: who?.cert,
          key: who?.key,
          servername: 'localhost',
          agent: false,
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  const message = (r: Got) => (JSON.parse(r.body) as { message: string }).message;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'diag-cluster-'));
    const tokenAuthFile = join(dir, 'tokens.csv');
    await writeFile(tokenAuthFile, `${TOKEN},tina,uid-9,"qa"\n`);
    let authorize: RequestAuthorizer = async () => {
      throw new Error('not wired yet');
    };
    c = await startTestCluster({ tokenAuthFile, authorize: (u, info, m) => authorize(u, info, m) });
    const { cp } = c;
    const n = cp.registry.naming;
    configGroup = n.configGroup;
    componentName = n.controllerManager;
    prefix = n.metricPrefix;
    for (const obj of defaultPolicy(n)) await cp.seed(obj);
    const rbac = new RbacAuthorizer(cp.storage, cp.registry);
    authorize = requestAuthorizer(rbac);
    cp.api.reviewer = createReviewer({ authorizer: rbac, naming: n, lookup: (t) => cp.tokens.lookup(t) });

    // RBAC for the diagnostics paths: alice may read metrics, tina (a token user) the z-pages.
    const rbacGroup = group(n, 'rbac.authorization');
    const base = `/apis/${rbacGroup}/v1`;
    const grant = async (name: string, urls: string[], user: string) => {
      await c.client.request('POST', `${base}/clusterroles`, {
        body: { metadata: { name }, rules: [{ verbs: ['get'], nonResourceURLs: urls }] },
      });
      await c.client.request('POST', `${base}/clusterrolebindings`, {
        body: {
          metadata: { name },
          roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name },
          subjects: [{ kind: 'User', apiGroup: rbacGroup, name: user }],
        },
      });
    };
    await grant('metrics-reader', ['/metrics', '/metrics/*'], 'alice');
    await grant('zpages-reader', ['/statusz', '/flagz'], 'tina');

    const issue = async (who: 'admin' | 'alice' | 'bob', organizations: string[]) => {
      const cert = await issueKeyAndCertificate({
        ca: cp.clusterCa,
        subject: { commonName: who, organizations },
        usages: ['client auth'],
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 3600_000),
      });
      id[who] = { cert: cert.certPem, key: cert.keyPem };
    };
    await issue('admin', ['system:masters']);
    await issue('alice', ['readers']);
    await issue('bob', []);

    // The daemon's wiring, with counting reviewers in the cache's place.
    const tokenApi = apiTokenReviewer(c.client, n);
    const accessApi = apiAccessReviewer(c.client, n);
    const tokenReviewer: TokenReviewer = cachedTokenReviewer((t) => {
      counts.tokenReviews++;
      return tokenApi(t);
    });
    const accessReviewer: AccessReviewer = cachedAccessReviewer((u, a) => {
      counts.accessReviews++;
      return accessApi(u, a);
    });
    server = new DiagnosticsServer({
      bindAddress: '127.0.0.1',
      pickFreePort: true,
      clientCaPem: cp.caPem,
      tokenReviewer,
      accessReviewer,
    });
    const metrics = new Registry();
    new Gauge({ name: `${n.metricPrefix}_test_up`, help: 'Whether the test is up.', registers: [metrics] }).set(1);
    const slis = sliMetrics(n);
    const health = new HealthChecks({ recordHealthCheck: slis.recordHealthCheck })
      .add('leaderElection', () => ({ ok: true }))
      .add('informer-sync', () => (readyzSynced ? { ok: true } : { ok: false, message: 'informers not synced' }), [
        'readyz',
      ]);
    health.install(server);
    installMetricsRoutes(server, { metrics, slis: slis.registry, nativeHistograms: false });
    installZPages(server, {
      componentName,
      configGroup,
      startTime: new Date(Date.now() - 5_000),
      binaryVersion: '0.1.0',
      emulationVersion: '1.34',
      flags: () => ({ kubeconfig: '/etc/kc', 'leader-elect': 'true' }),
      configz: () => ({ [`component.${configGroup}`]: { leaderElect: true } }),
      version: () => versionInfo('0.1.0'),
    });
    port = (await server.start())!;
    servingCa = server.servingCertificate!.caPem!;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await c?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves health endpoints to anyone, with verbose and failing bodies', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok' });
    expect(await get('/livez?verbose')).toMatchObject({
      status: 200,
      body: '[+]ping ok\n[+]leaderElection ok\nlivez check passed\n',
    });
    expect(await get('/readyz')).toMatchObject({
      status: 500,
      body: '[+]ping ok\n[+]leaderElection ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n',
    });
    expect(await get('/readyz?exclude=informer-sync&exclude=nope&verbose')).toMatchObject({
      status: 200,
      body:
        '[+]ping ok\n[+]leaderElection ok\n[+]informer-sync excluded: ok\n' +
        'warn: some health checks cannot be excluded: no matches for "nope"\nreadyz check passed\n',
    });
    readyzSynced = true;
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ok' });
  });

  it('answers 401 without credentials and with an unknown token, checked by TokenReview', async () => {
    for (const path of [
      '/metrics',
      '/metrics/slis',
      '/statusz',
      '/flagz',
      '/configz',
      '/version',
      '/readyz/informer-sync',
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(401);
      expect(message(r)).toBe('Unauthorized');
    }
    expect((await get('/metrics', id.stranger)).status).toBe(401);
    expect((await get('/healthz', id.stranger)).status).toBe(401);
  });

  it('answers 403 to users RBAC does not allow, with the reference message', async () => {
    const bob = await get('/metrics', id.bob);
    expect(bob.status).toBe(403);
    expect(bob.headers['content-type']).toBe('application/json');
    expect(message(bob)).toBe('forbidden: User "bob" cannot get path "/metrics"');
    expect(message(await get('/statusz', id.alice))).toBe('forbidden: User "alice" cannot get path "/statusz"');
    expect(message(await get('/metrics', id.tina))).toBe('forbidden: User "tina" cannot get path "/metrics"');
  });

  it('serves metrics and the health SLIs to a certificate user RBAC allows', async () => {
    const metrics = await get('/metrics', id.alice);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(metrics.body).toContain(`${prefix}_test_up 1`);
    const slis = await get('/metrics/slis', id.alice);
    expect(slis.status).toBe(200);
    expect(slis.body).toContain(`${prefix}_healthcheck{name="ping",type="healthz"} 1`);
    expect(slis.body).toContain(`${prefix}_healthcheck{name="informer-sync",type="readyz"} 1`);
    expect(slis.body).toContain(`${prefix}_healthchecks_total{name="informer-sync",status="error",type="readyz"} 1`);
    expect(slis.body).not.toContain('type="livez"');
  });

  it('serves statusz and flagz to a token user RBAC allows, negotiating the form', async () => {
    const text = await get('/statusz', id.tina);
    expect(text.status).toBe(200);
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.body.split('\n').slice(0, 3)).toEqual([
      '',
      `${componentName} statusz`,
      'Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.',
    ]);
    expect(text.body).toContain('\nPaths: /configz /flagz /healthz /livez /metrics /readyz /statusz /version\n');

    const json = await get('/statusz', id.tina, `application/json;v=v1beta1;g=${configGroup};as=Statusz`);
    expect(json.status).toBe(200);
    const statusz = JSON.parse(json.body);
    expect(statusz).toMatchObject({
      kind: 'Statusz',
      apiVersion: `${configGroup}/v1beta1`,
      metadata: { name: componentName },
      goVersion: `Node.js ${process.version}`,
      binaryVersion: '0.1.0',
      emulationVersion: '1.34',
    });
    expect(statusz.uptimeSeconds).toBeGreaterThanOrEqual(5);

    for (const accept of [
      'application/json',
      `application/json;v=v1beta1;g=${configGroup}`,
      `application/json;v=v1beta1;g=wrong.example;as=Statusz`,
      `application/json;v=v1alpha1;g=${configGroup};as=Statusz`,
      `application/json;v=v1beta1;g=${configGroup};as=Flagz`,
    ]) {
      expect(await get('/statusz', id.tina, accept), accept).toMatchObject({ status: 406, body: 'not acceptable\n' });
    }

    const flagz = await get('/flagz', id.tina);
    expect(flagz.body.endsWith('\n\nkubeconfig=/etc/kc\nleader-elect=true\n')).toBe(true);
    const flagzJson = await get('/flagz', id.tina, `application/json;v=v1alpha1;g=${configGroup};as=Flagz`);
    expect(JSON.parse(flagzJson.body)).toEqual({
      kind: 'Flagz',
      apiVersion: `${configGroup}/v1beta1`,
      metadata: { name: componentName },
      flags: { kubeconfig: '/etc/kc', 'leader-elect': 'true' },
    });
    expect((await get('/flagz', id.tina, 'application/json')).status).toBe(406);
  });

  it('lets system:masters read everything, including single health checks', async () => {
    expect(JSON.parse((await get('/configz', id.admin)).body)).toEqual({
      [`component.${configGroup}`]: { leaderElect: true },
    });
    expect(JSON.parse((await get('/version', id.admin)).body)).toMatchObject({
      major: '0',
      minor: '1',
      gitVersion: 'v0.1.0',
    });
    expect(await get('/livez/leaderElection', id.admin)).toMatchObject({ status: 200, body: 'ok' });
    expect(await get('/nothing', id.admin)).toMatchObject({ status: 404, body: '404 page not found\n' });
  });

  it('caches reviews: repeated requests within the TTL ask the API server once', async () => {
    expect((await get('/flagz', id.tina)).status).toBe(200);
    expect((await get('/metrics', id.bob)).status).toBe(403);
    const before = { ...counts };
    for (let i = 0; i < 3; i++) {
      expect((await get('/flagz', id.tina)).status).toBe(200);
      expect((await get('/metrics', id.bob)).status).toBe(403);
    }
    expect(counts).toEqual(before);
    const carol = await issueKeyAndCertificate({
      ca: c.cp.clusterCa,
      subject: { commonName: 'carol' },
      usages: ['client auth'],
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 3600_000),
    });
    for (let i = 0; i < 3; i++)
      expect((await get('/metrics', { cert: carol.certPem, key: carol.keyPem })).status).toBe(403);
    expect(counts).toEqual({ ...before, accessReviews: before.accessReviews + 1 });
  });

  it('answers 404 for z-pages whose feature gate is off', async () => {
    const off = new DiagnosticsServer({
      bindAddress: '127.0.0.1',
      pickFreePort: true,
      clientCaPem: c.cp.caPem,
      tokenReviewer: apiTokenReviewer(c.client, c.cp.registry.naming),
      accessReviewer: apiAccessReviewer(c.client, c.cp.registry.naming),
    });
    installZPages(off, {
      componentName,
      configGroup,
      startTime: new Date(),
      binaryVersion: '0.1.0',
      flags: () => ({}),
      features: (gate) => !['ComponentStatusz', 'ComponentFlagz'].includes(gate),
    });
    const offPort = (await off.start())!;
    try {
      const ca = off.servingCertificate!.caPem!;
      for (const path of ['/statusz', '/flagz']) {
        expect(await get(path, id.admin, undefined, offPort, ca), path).toMatchObject({
          status: 404,
          body: '404 page not found\n',
        });
        expect(await get(path, id.tina, undefined, offPort, ca), path).toMatchObject({
          status: 404,
          body: '404 page not found\n',
        });
        // The 404 comes after authorization: others still learn nothing.
        expect((await get(path, id.bob, undefined, offPort, ca)).status).toBe(403);
        expect((await get(path, undefined, undefined, offPort, ca)).status).toBe(401);
      }
    } finally {
      await off.stop();
    }
  });
});
