/**
 * The plane the foreign-client suites drive: an embedded control plane of one flavor and every controller the
 * daemon runs, in process, recording events through the API (so clients can list them), the plane's CA signing.
 */

import { runControllers } from '../../controllers/certificates/testing.ts';
import { controllerDefinitions } from '../../controllers/index.ts';
import type { FlavorName } from '../../src/api/naming.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';

export interface ClientPlane {
  c: TestCluster;
  stop(): Promise<void>;
}

export async function startClientPlane(flavor: FlavorName): Promise<ClientPlane> {
  const c = await startTestCluster({ flavor });
  const running = await runControllers(c.client, c.cp.registry, controllerDefinitions, {
    signing: { ...c.cp.caFiles, perSigner: {}, durationMs: 24 * 3600_000 },
  }).catch(async (err) => {
    await c.stop();
    throw err;
  });
  return {
    c,
    async stop() {
      await running.stop();
      await c.stop();
    },
  };
}
