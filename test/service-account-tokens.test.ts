/**
 * Service account tokens end to end, in both flavors: `kubectl create token` (a protobuf TokenRequest) issues a
 * bound token; it authenticates as the service account (bearer, TokenReview, SelfSubjectReview), for its
 * audiences only, while its service account and bound pod live; bad requests are refused naming the rule.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { FLAVORS, type FlavorName, group } from '../src/api/naming.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { hasKubectl, Kubectl } from './support/kubectl.ts';
import { RawClient } from './support/raw-https.ts';

describe.skipIf(!hasKubectl).each(FLAVORS)('service account tokens (%s flavor)', (flavor: FlavorName) => {
  let c: TestCluster;
  let kubectl: Kubectl;
  let admin: RawClient;
  let authentication: string;

  beforeAll(async () => {
    c = await startTestCluster({ flavor });
    authentication = group(c.cp.registry.naming, 'authentication');
    kubectl = new Kubectl(c.kubeconfig, join(c.dir, 'kubectl-cache'));
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    const objects = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot', namespace: 'default' } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-0', namespace: 'default' },
        spec: { containers: [{ name: 'c', image: 'registry.example.com/app:1' }] },
      },
    ];
    await kubectl.ok(['create', '-f', '-'], { input: objects.map((o) => stringify(o)).join('---\n') });
  });

  afterAll(async () => {
    admin?.close();
    await c?.stop();
  });

  /** A raw request authenticated by a bearer token only. */
  async function asBearer(token: string, path: string) {
    const bare = await RawClient.fromKubeconfig(c.kubeconfig);
    try {
      return await bare.send({ path, headers: { Authorization: `Bearer ${token}` } });
    } finally {
      bare.close();
    }
  }

  async function tokenReview(token: string, audiences?: string[]) {
    const r = await admin.send({
      method: 'POST',
      path: `/apis/${authentication}/v1/tokenreviews`,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: `${authentication}/v1`, kind: 'TokenReview', spec: { token, audiences } }),
    });
    expect(r.code, r.body).toBe(201);
    return r.json.status;
  }

  it('kubectl create token issues a token that authenticates as the service account', async () => {
    const token = (await kubectl.ok(['create', 'token', 'bot'])).trim();
    const review = await tokenReview(token);
    expect(review.authenticated).toBe(true);
    expect(review.user).toMatchObject({
      username: 'system:serviceaccount:default:bot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    });
    expect(review.audiences).toEqual([`https://${c.cp.registry.naming.product}.default.svc.cluster.local`]);

    // As a bearer token: the service account is authenticated, and authorized only for what it was granted.
    const listed = await asBearer(token, '/api/v1/namespaces/default/configmaps');
    expect(listed.code).toBe(403);
    expect(listed.json.message).toContain('User "system:serviceaccount:default:bot" cannot list resource "configmaps"');
    const who = await admin.send({
      method: 'POST',
      path: `/apis/${authentication}/v1/selfsubjectreviews`,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ apiVersion: `${authentication}/v1`, kind: 'SelfSubjectReview' }),
    });
    expect(who.json.status.userInfo.username).toBe('system:serviceaccount:default:bot');
  });

  it('a token for other audiences is no API credential, and a review for them says which', async () => {
    const token = (await kubectl.ok(['create', 'token', 'bot', '--audience', 'vault', '--duration', '15m'])).trim();
    expect((await asBearer(token, '/api/v1/namespaces/default/configmaps')).code).toBe(401);
    // Not authenticated, with an error (the reference's names the JWT check that failed; this one is generic).
    expect(await tokenReview(token)).toEqual({ user: {}, error: expect.any(String) });
    expect(await tokenReview(token, ['vault', 'other'])).toMatchObject({ authenticated: true, audiences: ['vault'] });
    expect(await tokenReview('not-a-token')).toEqual({ user: {}, error: 'invalid bearer token' });
  });

  it('a token bound to a pod dies with the pod', async () => {
    const token = (
      await kubectl.ok(['create', 'token', 'bot', '--bound-object-kind', 'Pod', '--bound-object-name', 'web-0'])
    ).trim();
    const review = await tokenReview(token);
    expect(review.user.extra).toMatchObject({ [`authentication.${c.cp.registry.naming.domain}/pod-name`]: ['web-0'] });
    await kubectl.ok(['delete', 'pod', 'web-0', '--grace-period=0', '--force', '--wait=false']);
    expect(await tokenReview(token)).toEqual({ user: {}, error: expect.any(String) });
  });

  it('refuses bad token requests naming the rule', async () => {
    const post = (name: string, body: object) =>
      admin.send({
        method: 'POST',
        path: `/api/v1/namespaces/default/serviceaccounts/${name}/token`,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiVersion: `${authentication}/v1`, kind: 'TokenRequest', ...body }),
      });
    const short = await post('bot', { spec: { expirationSeconds: 10 } });
    expect(short.code).toBe(422);
    expect(short.json.message).toBe(
      `TokenRequest.${authentication} "" is invalid: spec.expirationSeconds: Invalid value: 10: may not specify a duration less than 10 minutes`,
    );
    const long = await post('bot', { spec: { expirationSeconds: 2 ** 33 } });
    expect(long.json.message).toContain('may not specify a duration larger than 2^32 seconds');
    const typed = await post('bot', { spec: { expirationSeconds: 'soon' } });
    expect(typed.code).toBe(400);
    expect(typed.json.message).toContain('spec.expirationSeconds');
    expect((await post('ghost', { spec: {} })).json.message).toBe('serviceaccounts "ghost" not found');
    const kind = await post('bot', { spec: { boundObjectRef: { kind: 'ConfigMap', name: 'x' } } });
    expect(kind.json.message).toBe('cannot bind token to object of type ConfigMap');
    const renamed = await post('bot', { metadata: { name: 'other' }, spec: {} });
    expect(renamed.json.message).toBe('name in URL does not match name in TokenRequest body');
  });
});
