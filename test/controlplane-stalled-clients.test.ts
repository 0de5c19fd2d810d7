/**
 * No client can stall the others: with watchers that stopped reading, concurrent writers on their own kept-alive
 * connections still get every large update parsed and answered. Run against the control plane as its own process
 * (`bin/orch-control-plane.js`): there a writer's next request can arrive before the write of its last 200 KB answer
 * completes, so the server pauses that connection, which once failed the request with "Parse Error: Paused".
 */
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Plane, spawnPlane, stalledWatch, stopPlane } from './support/child-plane.ts';
import { RawClient } from './support/raw-https.ts';

const STALLED = 20;
const WRITERS = 4;
const ROUNDS = 40;
const VALUE_BYTES = 200 * 1024;
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const JSON_HEADERS = { 'Content-Type': 'application/json' };

function configMap(writer: number, round: number) {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'big', namespace: 'default' },
    data: { writer: String(writer), round: String(round), value: String(round % 10).repeat(VALUE_BYTES) },
  });
}

describe('writers next to stalled watchers, through the real HTTPS server', () => {
  let plane: Plane;

  beforeAll(async () => {
    plane = await spawnPlane();
  }, 60_000);

  afterAll(() => stopPlane(plane));

  it(`${WRITERS} writers of 200 KB updates, each on its own connection, all answered while ${STALLED} watchers stall`, async () => {
    // One client (and so one kept-alive connection) per writer.
    const writers = await Promise.all(
      Array.from({ length: WRITERS }, () => RawClient.fromKubeconfig(plane.kubeconfig)),
    );
    const created = await writers[0].send({
      method: 'POST',
      path: CONFIGMAPS,
      headers: JSON_HEADERS,
      body: configMap(0, 0),
    });
    expect(created.code).toBe(201);
    const watchPath = `${CONFIGMAPS}?watch=true&resourceVersion=${created.json.metadata.resourceVersion}`;
    const stalled: TLSSocket[] = await Promise.all(
      Array.from({ length: STALLED }, () => stalledWatch(plane.tls, plane.port, watchPath)),
    );
    try {
      const answers = await Promise.all(
        writers.map(async (client, writer) => {
          const codes: string[] = [];
          for (let round = 1; round <= ROUNDS; round++) {
            const put = await client.send({
              method: 'PUT',
              path: `${CONFIGMAPS}/big`,
              headers: JSON_HEADERS,
              body: configMap(writer, round),
            });
            codes.push(put.code === 200 || put.code === 409 ? 'ok' : `${put.code} ${put.json?.message ?? put.body}`);
          }
          return codes;
        }),
      );
      const failures = answers.flat().filter((a) => a !== 'ok');
      expect(failures).toEqual([]);
      const stored = await writers[0].send({ path: `${CONFIGMAPS}/big` });
      expect(stored.json.data.round).toBe(String(ROUNDS));
    } finally {
      for (const s of stalled) s.destroy();
      for (const w of writers) w.close();
    }
  }, 120_000);
});
