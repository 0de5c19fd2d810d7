/**
 * The service account credentials of `--use-service-account-credentials` against the embedded plane: a controller's
 * client sends its account's bound token and no client certificate (the server sees the account), the account is
 * created when missing, one token serves until renewal (concurrent first requests share one TokenRequest), and a
 * token the server refuses (its account deleted and so its tokens void) is replaced on the next request, the
 * account created again.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { group } from '../src/api/naming.ts';
import type { KubeClient } from '../src/client/client.ts';
import { isNotFound } from '../src/client/errors.ts';
import type { ControllerDefinition } from '../src/controller/controller.ts';
import { ServiceAccountCredentials, ServiceAccountToken } from '../src/controller/service-account-credentials.ts';
import { realClock } from '../src/util/clock.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let c: TestCluster;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  c = await startTestCluster();
});
afterAll(() => c?.stop());

const n = () => c.cp.registry.naming;
const ns = () => n().systemNamespace;
const definition = (account?: string) =>
  ({ name: 'x', serviceAccount: account ? () => account : undefined }) as unknown as ControllerDefinition;

async function whoAmI(client: KubeClient): Promise<string> {
  const authn = group(n(), 'authentication');
  const res = await client.request<{ status?: { userInfo?: { username?: string } } }>(
    'POST',
    `/apis/${authn}/v1/selfsubjectreviews`,
    { body: { apiVersion: `${authn}/v1`, kind: 'SelfSubjectReview', metadata: {} } },
  );
  return res.body.status?.userInfo?.username ?? '';
}

/** The token sources' options on the test cluster, as the daemon gives them. */
const sourceOptions = () => ({ root: c.client, naming: n(), namespace: ns(), clock: realClock, logger });

describe('service account credentials', () => {
  it("sends the controller's account token, creating the account; a controller without one keeps the root's", async () => {
    const credentials = new ServiceAccountCredentials(sourceOptions());
    await expect(c.client.kind('ServiceAccount').get(ns(), 'alpha-controller')).rejects.toSatisfy(isNotFound);
    const client = credentials.clientFor(definition('alpha-controller'), c.client);
    expect(await whoAmI(client)).toBe(`system:serviceaccount:${ns()}:alpha-controller`);
    expect((await c.client.kind('ServiceAccount').get(ns(), 'alpha-controller')).metadata.name).toBe(
      'alpha-controller',
    );
    expect(credentials.clientFor(definition(), c.client)).toBe(c.client);
    expect(await whoAmI(c.client)).toBe('admin');
    credentials.stop();
  });

  it('requests the token when the client is made, before its first request', async () => {
    const credentials = new ServiceAccountCredentials(sourceOptions());
    credentials.clientFor(definition('delta'), c.client);
    // No request goes through the client: the account (made with the token's request) shows the token was asked for.
    await expect
      .poll(
        () =>
          c.client
            .kind('ServiceAccount')
            .get(ns(), 'delta')
            .then(
              () => true,
              () => false,
            ),
        { timeout: 5_000 },
      )
      .toBe(true);
    credentials.stop();
  });

  it('shares one token among concurrent first requests, and keeps it', async () => {
    const token = new ServiceAccountToken({ ...sourceOptions(), name: 'beta' });
    const first = await Promise.all(Array.from({ length: 5 }, () => token.token()));
    expect(new Set(first).size).toBe(1);
    expect(await token.token()).toBe(first[0]);
  });

  it('replaces a refused token on the next request, the deleted account created again', async () => {
    const credentials = new ServiceAccountCredentials(sourceOptions());
    const client = credentials.clientFor(definition('gamma'), c.client);
    expect(await whoAmI(client)).toBe(`system:serviceaccount:${ns()}:gamma`);
    await c.client.kind('ServiceAccount').delete(ns(), 'gamma');
    // Its tokens die with it: the server refuses the one held (401), and the client drops it.
    await expect(whoAmI(client)).rejects.toMatchObject({ code: 401 });
    expect(await whoAmI(client)).toBe(`system:serviceaccount:${ns()}:gamma`);
    credentials.stop();
  });
});
