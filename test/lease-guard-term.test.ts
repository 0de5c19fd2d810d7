/**
 * A lease-guarded write held up on its way is not made after the writer's term: the client gives it no longer
 * than the time left in the term (leaseDuration after the last renewal was sent), or than the term itself when it
 * is let go earlier (the guard revoked before a release), and the embedded plane writes nothing for a client gone
 * before it read the body. The server is held up by its fault injection (latency before serving).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap } from '../src/api/types/core.ts';
import { StatusError } from '../src/client/errors.ts';
import { LeaseGuard, LeaseLostError } from '../src/leaderelection/guard.ts';
import { realClock } from '../src/util/clock.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const LEASE_MS = 1_000;
const SERVER_LATENCY_MS = 2_500;

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

const configMap = (name: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'default', name },
  data: { written: 'yes' },
});

const plain = () => cluster.client.kind<ConfigMap>('ConfigMap');

/**
 * Creates `name` under `guard` (renewed now) on a server held up by SERVER_LATENCY_MS, `meanwhile` running as it
 * waits; then the same write without a guard, which is made once the server gets to it. Answers the guarded
 * write's error, how long it took, and whether the server made it.
 */
async function heldUp(guard: LeaseGuard, name: string, meanwhile = () => {}) {
  const guarded = cluster.client.derive({ writeGuard: guard }).kind<ConfigMap>('ConfigMap');
  cluster.cp.faults.latencyMs = SERVER_LATENCY_MS;
  let err: unknown;
  let waited: number;
  try {
    guard.renewed(realClock.now());
    const started = performance.now();
    const write = guarded.create(configMap(name)).catch((e: unknown) => e);
    meanwhile();
    err = await write;
    waited = performance.now() - started;
    await plain().create(configMap(`${name}-unguarded`));
  } finally {
    cluster.cp.faults.latencyMs = 0;
  }
  expect((await plain().get('default', `${name}-unguarded`)).data).toEqual({ written: 'yes' });
  const made = await plain()
    .get('default', name)
    .then(
      () => true,
      (e: unknown) => (e instanceof StatusError && e.code === 404 ? false : Promise.reject(e)),
    );
  return { err, waited, made };
}

describe('a write under a lease guard', () => {
  it('is abandoned when the term can end, and a server held up past it writes nothing', async () => {
    const { err, waited, made } = await heldUp(
      new LeaseGuard(LEASE_MS / 2, realClock, 'the test lease', LEASE_MS),
      'late',
    );
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(504);
    expect((err as StatusError).message).toMatch(/when the writer's lease term can end/);
    // Given up at the end of its term, not when the server answered.
    expect(waited).toBeLessThan(SERVER_LATENCY_MS - 500);
    expect(made).toBe(false);
  });

  it('is abandoned when the term is let go before it can end, and the server writes nothing', async () => {
    // A long lease: only the revoke (what the elector does before it writes a release) can cut the write short.
    const guard = new LeaseGuard(10 * LEASE_MS, realClock, 'the test lease', 20 * LEASE_MS);
    const { err, waited, made } = await heldUp(guard, 'released', () => setTimeout(() => guard.revoke(), 300));
    expect(err).toBeInstanceOf(LeaseLostError);
    expect((err as Error).message).toMatch(/the test lease was let go while the write was in flight/);
    expect(waited).toBeLessThan(SERVER_LATENCY_MS - 500);
    expect(made).toBe(false);
  });
});
