/**
 * `npm run bench -- apiservice`: the APIService availability controller with 500 remote APIServices
 * over 50 real HTTPS backends on 127.0.0.1 (a Service and an EndpointSlice each, caBundle verified),
 * against the embedded control plane in the same process. The controller's client has no QPS limit
 * (qps 0), as the floor's.
 *
 * Figures, per round: the time from starting the controller to all 500 `Available=True` (informer
 * sync, 5 probe attempts per APIService, one status write each), and the status writes made during
 * two resync periods afterwards (must be 0; the periods are shortened to 5 s, and at least one
 * full resync must have happened in them). The floor is the same end state reached by hand: one
 * discovery GET per APIService and one status write, five at a time (the controller's worker count).
 * Controller and floor rounds alternate (floor first in even rounds); the ratio is the median of the paired
 * rounds, with its range. Completion of the controller's rounds is seen on a watch of APIServices.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiServiceAvailabilityController } from '../controllers/apiservice/index.ts';
import {
  type Backend,
  discoveryHandler,
  remoteAPIService,
  servingCertificate,
  startBackend,
  testCa,
} from '../controllers/apiservice/testing.ts';
import { backendTls, isAvailable, targetUrl } from '../src/api/apiservice.ts';
import { group } from '../src/api/naming.ts';
import type { APIService } from '../src/api/types/misc.ts';
import { KubeClient } from '../src/client/client.ts';
import { KubeConfig } from '../src/client/kubeconfig.ts';
import { ControlPlane } from '../src/controlplane/control-plane.ts';
import { runControllers } from '../test/support/controllers.ts';
import { counted, inParallel, interleaved, pairedFigure, print, watchUntil } from './run.ts';

const NS = 'bench';
const BACKENDS = 50;
const APISERVICES = 500;
const ROUNDS = 3;
const RESYNC_MS = 5_000;
const STEADY_RESYNCS = 2;
const TIMEOUT_MS = 300_000;

function apiServiceObjects(apiVersion: string, caBundle: string): APIService[] {
  return Array.from({ length: APISERVICES }, (_, i) =>
    remoteAPIService(
      apiVersion,
      `g${i}.bench.example.com`,
      'v1',
      { namespace: NS, name: `svc-${i % BACKENDS}` },
      { caBundle },
    ),
  );
}

function get(url: string, tls: ReturnType<typeof backendTls>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: tls.ca, servername: tls.servername, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-apiservice-'));
  const cp = new ControlPlane({ port: 0, dataDir: dir, storage: 'memory', historySize: 50_000 });
  await cp.start();
  const n = cp.registry.naming;
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const client = new KubeClient(kc, cp.registry, { qps: 0 });
  const apiServiceRt = cp.registry.resource(group(n, 'apiregistration'), 'v1', 'apiservices')!;
  const backends: Backend[] = [];
  try {
    const ca = await testCa();
    const caBundle = Buffer.from(ca.certPem).toString('base64');
    await cp.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS }, status: { phase: 'Active' } });
    for (let b = 0; b < BACKENDS; b++) {
      const backend = await startBackend(await servingCertificate(ca, `svc-${b}.${NS}.svc`), discoveryHandler('', ''));
      backends.push(backend);
      await cp.seed({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { namespace: NS, name: `svc-${b}` },
        spec: { ports: [{ name: 'https', port: 443 }] },
      });
      await cp.seed({
        apiVersion: `${group(n, 'discovery')}/v1`,
        kind: 'EndpointSlice',
        metadata: { namespace: NS, name: `svc-${b}-1`, labels: { [n.labels.serviceName]: `svc-${b}` } },
        addressType: 'IPv4',
        ports: [{ name: 'https', port: backend.port }],
        endpoints: [{ addresses: ['127.0.0.1'] }],
      });
    }
    const objects = apiServiceObjects(`${group(n, 'apiregistration')}/v1`, caBundle);
    const names = new Set(objects.map((o) => o.metadata.name!));
    let writes = 0;
    cp.storage.onCommit((c) => {
      if (c.rt === apiServiceRt && c.event.type === 'MODIFIED' && names.has(c.event.object.metadata.name ?? ''))
        writes++;
    });
    const allAvailable = () =>
      objects.every((o) => isAvailable(cp.storage.get(apiServiceRt, o.metadata.name!) as APIService));
    const reset = async () => {
      for (const o of objects)
        if (cp.storage.get(apiServiceRt, o.metadata.name!))
          await cp.storage.backend.remove(apiServiceRt, o.metadata.name!);
      for (const o of objects) await cp.seed(o);
    };

    const steadyWrites: number[] = [];
    /** The controller from its start to all Available (seen on a watch), then its writes in steady state. */
    const controllerRound = async (): Promise<number> => {
      await reset();
      const { definition, reconciled } = counted(apiServiceAvailabilityController);
      const started = performance.now();
      const controllers = await runControllers(client, cp.registry, [definition], {
        config: { apiservice: { resyncMs: RESYNC_MS } },
      });
      await watchUntil(
        client.resource<APIService>(apiServiceRt),
        undefined,
        (seen) =>
          objects.every((o) => {
            const s = seen.get(o.metadata.name!);
            return s !== undefined && isAvailable(s);
          }),
        TIMEOUT_MS,
      );
      const seconds = (performance.now() - started) / 1000;
      // Steady state: let the echo of the writes pass, then count writes over two resyncs.
      await new Promise((r) => setTimeout(r, RESYNC_MS));
      const writesBefore = writes;
      const reconcilesBefore = reconciled();
      await new Promise((r) => setTimeout(r, STEADY_RESYNCS * RESYNC_MS));
      if (reconciled() - reconcilesBefore < APISERVICES) {
        throw new Error(`only ${reconciled() - reconcilesBefore} reconciles in ${STEADY_RESYNCS} resync periods`);
      }
      steadyWrites.push(writes - writesBefore);
      await controllers.stop();
      return seconds;
    };
    /** The floor: one discovery GET and one status write per APIService, five at a time. */
    const floorRound = async (): Promise<number> => {
      await reset();
      const floorStarted = performance.now();
      await inParallel(
        APISERVICES,
        async (i) => {
          const s = objects[i];
          const backend = backends[i % BACKENDS];
          const code = await get(
            targetUrl({ host: '127.0.0.1', port: backend.port }, `/apis/${s.spec!.group}/v1`),
            backendTls(s),
          );
          if (code !== 200) throw new Error(`floor: ${code}`);
          const stored = cp.storage.get(apiServiceRt, s.metadata.name!) as APIService;
          const condition = {
            type: 'Available',
            status: 'True' as const,
            reason: 'Passed',
            message: 'all checks passed',
          };
          await client
            .resource<APIService>(apiServiceRt)
            .replaceStatus({ ...stored, status: { conditions: [condition] } });
        },
        5,
      );
      const seconds = (performance.now() - floorStarted) / 1000;
      if (!allAvailable()) throw new Error('floor: not all available');
      return seconds;
    };

    const rounds = await interleaved(ROUNDS, controllerRound, floorRound);
    print(`APIService availability: ${APISERVICES} APIServices, ${BACKENDS} HTTPS backends, client qps unlimited`, [
      pairedFigure('time to all Available', 's', 'one GET + one write each, 5 at a time', rounds),
      {
        name: `status writes in ${STEADY_RESYNCS} resyncs (max of rounds)`,
        value: Math.max(...steadyWrites),
        unit: 'writes',
      },
    ]);
  } finally {
    await Promise.all(backends.map((b) => b.close()));
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
