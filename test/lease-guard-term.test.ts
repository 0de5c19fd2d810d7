/**
 * A lease-guarded write held up on its way is not made after the writer's term: the client gives it no longer
 * than the time left in the term (leaseDuration after the last renewal was sent), and the embedded plane writes
 * nothing for a client gone before it read the body. The server is held up by its fault injection (latency
 * before serving).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap } from '../src/api/types/core.ts';
import { StatusError } from '../src/client/errors.ts';
import { LeaseGuard } from '../src/leaderelection/guard.ts';
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

describe('a write under a lease guard', () => {
  it('is abandoned when the term can end, and a server held up past it writes nothing', async () => {
    const guard = new LeaseGuard(LEASE_MS / 2, realClock, 'the test lease', LEASE_MS);
    const guarded = cluster.client.derive({ writeGuard: guard }).kind<ConfigMap>('ConfigMap');
    const plain = cluster.client.kind<ConfigMap>('ConfigMap');
    cluster.cp.faults.latencyMs = SERVER_LATENCY_MS;
    try {
      guard.renewed(realClock.now());
      const started = performance.now();
      const late = await guarded.create(configMap('late')).catch((err: unknown) => err);
      const waited = performance.now() - started;
      expect(late).toBeInstanceOf(StatusError);
      expect((late as StatusError).code).toBe(504);
      expect((late as StatusError).message).toMatch(/when the writer's lease term can end/);
      // Given up at the end of its term, not when the server answered.
      expect(waited).toBeLessThan(SERVER_LATENCY_MS - 500);
      // The same delay without a guard: the write is made, once the server gets to it.
      await plain.create(configMap('unguarded'));
    } finally {
      cluster.cp.faults.latencyMs = 0;
    }
    expect((await plain.get('default', 'unguarded')).data).toEqual({ written: 'yes' });
    const late = await plain.get('default', 'late').catch((err: unknown) => err);
    expect((late as StatusError).code).toBe(404);
  });
});
