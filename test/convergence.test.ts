/**
 * Convergence after faults, with the default backoff settings: informers of a default SharedInformerFactory
 * and the certificate and disruption controllers run against the embedded control plane. Each fault of the
 * fault API (dropped watches, compaction, restart, 429 and 500 storms, latency) is applied while objects
 * change behind it (pods and CSRs stored directly, so the fault does not stop them); from the moment the
 * fault ends, the caches must equal the server's lists and the controllers' outputs (PDB status, issued
 * CSRs) must match the server's pods and CSRs within 5 s, or within 5 s plus the server's Retry-After.
 * Storms and latency last 2 s; the restart keeps the API down for 1 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateControllers } from '../controllers/certificates/index.ts';
import {
  csrObject,
  type RunningControllers,
  runControllers,
  webcryptoRequest,
} from '../controllers/certificates/testing.ts';
import { disruptionControllerDefinition } from '../controllers/disruption/index.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { ResourceType } from '../src/api/registry.ts';
import type { CertificateSigningRequest } from '../src/api/types/certificates.ts';
import type { PodDisruptionBudget } from '../src/api/types/policy.ts';
import { SharedInformerFactory } from '../src/cache/factory.ts';
import type { SharedInformer } from '../src/cache/informer.ts';
import { VERY_SHORT_WATCH_MS } from '../src/cache/reflector.ts';
import { keyOf } from '../src/cache/store.ts';
import { realClock } from '../src/util/clock.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

const NS = 'converge';
const CONVERGE_MS = 5_000;
const STORM_MS = 2_000;
const RETRY_AFTER_S = 1;

let cluster: TestCluster;
let controllers: RunningControllers;
let factory: SharedInformerFactory;
let watched: { rt: ResourceType; informer: SharedInformer }[];
const measured: Record<string, number> = {};
/** What the informers recovered from, for the record when a case fails. */
const informerErrors: string[] = [];

beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.cp.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await cluster.cp.seed({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { namespace: NS, name: 'web' },
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
  });
  for (let i = 0; i < 3; i++) await addPod(`seed-${i}`, true);
  controllers = await runControllers(
    cluster.client,
    cluster.cp.registry,
    [...certificateControllers, disruptionControllerDefinition],
    { signing: { ...cluster.cp.caFiles, perSigner: {}, durationMs: 24 * 3600_000 } },
  );
  // Default options: client-go's reflector backoff, nothing shortened.
  factory = new SharedInformerFactory(cluster.client, realClock, {
    onError: (informer, err) => informerErrors.push(`${Math.round(performance.now())} ${informer}: ${String(err)}`),
  });
  const registry = cluster.cp.registry;
  watched = ['Pod', 'PodDisruptionBudget', 'CertificateSigningRequest'].map((kind) => {
    const rt = registry.byKind(kind)!;
    return { rt, informer: factory.informerFor(rt) };
  });
  factory.start();
  await factory.waitForSync(30_000);
}, 60_000);

afterAll(async () => {
  await factory?.stop();
  await controllers?.stop();
  await cluster?.stop();
  console.log(`convergence after each fault (ms): ${JSON.stringify(measured)}`);
});

let podCount = 0;
let csrCount = 0;

async function addPod(name: string, ready: boolean): Promise<void> {
  await cluster.cp.seed({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: NS, name, labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
}

/** A node client CSR as a bootstrap token's user creates it: the approver and the signer take it from there. */
async function nodeCsr(): Promise<CertificateSigningRequest> {
  const node = `converge-${++csrCount}`;
  const { pem } = await webcryptoRequest('ECDSA-P256', {
    commonName: `system:node:${node}`,
    organizations: ['system:nodes'],
  });
  const csr = csrObject(pem, {
    signerName: cluster.cp.registry.naming.signers.apiServerClientNodeAgent,
    usages: ['digital signature', 'client auth'],
    username: 'system:bootstrap:abcdef',
    groups: ['system:bootstrappers', 'system:authenticated'],
  });
  return { ...csr, metadata: { name: `csr-${node}` } };
}

/** Changes made behind the fault: two pods (one Ready) and a CSR, straight into storage. */
async function changeBehindTheFault(csr: CertificateSigningRequest): Promise<void> {
  await addPod(`p-${++podCount}`, true);
  await addPod(`p-${++podCount}`, false);
  await cluster.cp.seed(csr);
}

const byKey = (objs: KubeObject[]) =>
  JSON.stringify(
    objs.map((o) => [keyOf(o), o.metadata.resourceVersion]).sort(([a], [b]) => String(a).localeCompare(String(b))),
  );

/** What is not yet converged, as readable lines; empty once caches and controller outputs match the server. */
async function divergence(): Promise<string[]> {
  const problems: string[] = [];
  for (const { rt, informer } of watched) {
    const truth = (await cluster.client.resource(rt).listAll()).items;
    const cached = byKey(informer.getStore().list());
    if (byKey(truth) !== cached) problems.push(`${rt.plural} cache ${cached}, server ${byKey(truth)}`);
  }
  const pods = (await cluster.client.kind('Pod').listAll(NS)).items;
  const ready = pods.filter((p) =>
    ((p.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some(
      (c) => c.type === 'Ready' && c.status === 'True',
    ),
  ).length;
  const pdb = await cluster.client.kind<PodDisruptionBudget>('PodDisruptionBudget').get(NS, 'web');
  const expected = { expectedPods: pods.length, currentHealthy: ready, desiredHealthy: 2 };
  const status = pdb.status ?? {};
  if (
    status.expectedPods !== expected.expectedPods ||
    status.currentHealthy !== expected.currentHealthy ||
    status.desiredHealthy !== expected.desiredHealthy ||
    status.disruptionsAllowed !== Math.max(0, ready - 2)
  ) {
    problems.push(`PDB status ${JSON.stringify(status)} for ${JSON.stringify(expected)}`);
  }
  const csrs = (await cluster.client.kind<CertificateSigningRequest>('CertificateSigningRequest').listAll()).items;
  const unissued = csrs.filter((c) => !c.status?.certificate).map((c) => c.metadata.name);
  if (unissued.length) problems.push(`CSRs not issued: ${unissued.join(', ')}`);
  return problems;
}

/** Milliseconds from now until nothing diverges; fails with what still diverges after `limitMs`. */
async function convergence(limitMs: number): Promise<number> {
  const start = performance.now();
  let last: string[] = [];
  while (performance.now() - start < limitMs + 5_000) {
    last = await divergence();
    if (last.length === 0) return Math.round(performance.now() - start);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not converged ${limitMs + 5_000} ms after the fault: ${last.join('; ')}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface FaultCase {
  name: string;
  /** Starts the fault with `change` made behind it; resolves when the fault has ended. */
  run(change: () => Promise<void>): Promise<void>;
  limitMs: number;
}

/** A fault that lasts STORM_MS and starts by cutting the watches, so every reconnect runs into it. */
function storm(name: string, limitMs: number, begin: () => void): FaultCase {
  return {
    name,
    limitMs,
    async run(change) {
      begin();
      cluster.cp.faults.dropWatches();
      await change();
      await sleep(STORM_MS);
      cluster.cp.faults.clear();
    },
  };
}

const faults: FaultCase[] = [
  {
    name: 'dropped watches',
    limitMs: CONVERGE_MS,
    async run(change) {
      cluster.cp.faults.dropWatches();
      await change();
    },
  },
  {
    name: 'compaction',
    limitMs: CONVERGE_MS,
    async run(change) {
      // The streams go, the changes land and history is compacted before anyone can watch again: 410.
      cluster.cp.faults.dropWatches();
      await change();
      await cluster.cp.faults.compact();
    },
  },
  {
    name: 'restart',
    limitMs: CONVERGE_MS,
    async run(change) {
      const restarted = cluster.cp.faults.restart(1_000);
      await change();
      await restarted;
    },
  },
  storm('429 storm', CONVERGE_MS + RETRY_AFTER_S * 1000, () =>
    cluster.cp.faults.failRequests({ code: 429, count: Number.POSITIVE_INFINITY, retryAfterSeconds: RETRY_AFTER_S }),
  ),
  storm('500 storm', CONVERGE_MS, () => cluster.cp.faults.failRequests({ code: 500, count: Number.POSITIVE_INFINITY })),
  storm('latency', CONVERGE_MS, () => {
    cluster.cp.faults.latencyMs = 500;
  }),
];

describe('convergence after faults, default backoff', () => {
  it('starts converged', { timeout: 30_000 }, async () => {
    await convergence(CONVERGE_MS);
  });

  it.each(faults)(
    'after $name: caches, PDB status and CSR issuance within the limit',
    { timeout: 60_000 },
    async (f) => {
      const csr = await nodeCsr();
      // Faults are apart: the streams have been up for longer than a very short watch, so they count as
      // working and the fault's failures are the first in a row.
      await sleep(VERY_SHORT_WATCH_MS + 500);
      informerErrors.length = 0;
      await f.run(() => changeBehindTheFault(csr));
      const ms = await convergence(f.limitMs).catch((err) => {
        throw new Error(`${err.message}\ninformer errors since the fault began:\n${informerErrors.join('\n')}`);
      });
      measured[f.name] = ms;
      expect(ms).toBeLessThan(f.limitMs);
    },
  );
});
