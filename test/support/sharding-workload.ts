/**
 * The workload of sharded replicas (the sharding e2e test and `npm run bench -- sharding`): node-client CSRs,
 * and namespaces each with a one-replica StatefulSet and a PodDisruptionBudget over its pod; and what of it has
 * not converged yet.
 */
import { execFile } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { webcryptoRequestWithKeys } from '../../controllers/certificates/testing.ts';
import type { Naming } from '../../src/api/naming.ts';
import type { StatefulSet } from '../../src/api/types/apps.ts';
import type { CertificateSigningRequest } from '../../src/api/types/certificates.ts';
import type { Lease } from '../../src/api/types/coordination.ts';
import type { PodDisruptionBudget } from '../../src/api/types/policy.ts';
import type { KubeClient } from '../../src/client/client.ts';
import type { KubeConfig } from '../../src/client/kubeconfig.ts';
import { generateKeyPair } from '../../src/pki/keys.ts';
import type { ShardReport } from '../../src/sharding/replica.ts';
import { shardLeaseName } from '../../src/sharding/shards.ts';
import { ROOT } from './daemons.ts';
import { hasKubectl, KUBECTL } from './kubectl.ts';

const KEYS = generateKeyPair('ECDSA-P256');

/** `count` node-client CSRs named `<tag>-<i>`, for the approver (the admin may) and the signer. */
export async function createCsrs(client: KubeClient, n: Naming, tag: string, count: number): Promise<void> {
  const keys = await KEYS;
  const csrs = client.kind<CertificateSigningRequest>('CertificateSigningRequest');
  await inBatches(count, async (i) => {
    const spec = { organizations: ['system:nodes'], commonName: `system:node:${tag}-${i}` };
    const pem = (await webcryptoRequestWithKeys(keys, spec)).pem;
    await csrs.create({
      metadata: { name: `${tag}-${i}` },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName: n.signers.apiServerClientNodeAgent,
        usages: ['digital signature', 'client auth'],
      },
    } as CertificateSigningRequest);
  });
}

/** `count` namespaces, each with a StatefulSet `web` of one replica and a PDB `web` (minAvailable 1) over it. */
export async function createNamespaces(client: KubeClient, tag: string, count: number): Promise<void> {
  await inBatches(count, async (i) => {
    // FNV-1a's top bits hardly depend on the last characters: names that differ only there (ns-1, ns-2) would
    // all fall into one shard, so the number is not last.
    const ns = `${tag}-${i}-apps`;
    await client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const labels = { app: 'web' };
    await client.kind<StatefulSet>('StatefulSet').create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { namespace: ns, name: 'web' },
      spec: {
        replicas: 1,
        serviceName: 'web',
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'app:1' }] } },
      },
    } as StatefulSet);
    await client.kind<PodDisruptionBudget>('PodDisruptionBudget').create({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { namespace: ns, name: 'web' },
      spec: { minAvailable: 1, selector: { matchLabels: labels } },
    } as PodDisruptionBudget);
  });
}

async function inBatches(count: number, fn: (i: number) => Promise<void>, width = 16): Promise<void> {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, k) => fn(start + k)));
  }
}

/** What has not converged yet: CSRs without a certificate, sets not ready, budgets not observing a healthy pod. */
export async function unconverged(client: KubeClient): Promise<string[]> {
  const csrs = await client.kind<CertificateSigningRequest>('CertificateSigningRequest').listAll();
  const sets = await client.kind<StatefulSet>('StatefulSet').listAll();
  const pdbs = await client.kind<PodDisruptionBudget>('PodDisruptionBudget').listAll();
  return [
    ...csrs.items.filter((x) => !x.status?.certificate).map((x) => `csr/${x.metadata.name}`),
    ...sets.items.filter((s) => s.status?.readyReplicas !== 1).map((s) => `sts/${s.metadata.namespace}`),
    ...pdbs.items
      .filter((p) => p.status?.currentHealthy !== 1 || p.status?.observedGeneration !== p.metadata.generation)
      .map((p) => `pdb/${p.metadata.namespace}`),
  ];
}

/** GET on a daemon's diagnostics server as the kubeconfig's user (its client certificate), or anonymously. */
export async function diagnosticsGet(
  kc: KubeConfig,
  port: number,
  path: string,
  opts: { anonymous?: boolean; accept?: string } = {},
): Promise<{ status: number; body: string }> {
  const user = kc.getCurrentUser()!;
  const cert = opts.anonymous
    ? undefined
    : { cert: Buffer.from(user.certData!, 'base64'), key: Buffer.from(user.keyData!, 'base64') };
  const dispatcher = new Agent({ connect: { ...cert, rejectUnauthorized: false } });
  try {
    const headers = opts.accept ? { accept: opts.accept } : {};
    const res = await request(`https://127.0.0.1:${port}${path}`, { dispatcher, headers });
    return { status: res.statusCode, body: await res.body.text() };
  } finally {
    await dispatcher.close();
  }
}

/** A `--sharding` daemon's `/debug/shards`; with `bytes`, the sharded caches' JSON size too. */
export async function shardReport(kc: KubeConfig, port: number, bytes = false): Promise<ShardReport> {
  const path = bytes ? '/debug/shards?bytes=1' : '/debug/shards';
  const res = await diagnosticsGet(kc, port, path, { accept: 'application/json' });
  if (res.status !== 200) throw new Error(`/debug/shards: ${res.status} ${res.body}`);
  return JSON.parse(res.body) as ShardReport;
}

/** The holder of each shard Lease now ('' when none, or expired by its own renewTime unless `expired` is set). */
export async function shardHolders(
  client: KubeClient,
  n: Naming,
  shards: number,
  opts: { expired?: boolean } = {},
): Promise<string[]> {
  const list = await client.kind<Lease>('Lease').list(n.systemNamespace);
  const now = Date.now();
  return Array.from({ length: shards }, (_, i) => {
    const spec = list.items.find((l) => l.metadata.name === shardLeaseName(n.shardLeasePrefix, i))?.spec;
    const valid = spec && Date.parse(spec.renewTime ?? '') + (spec.leaseDurationSeconds ?? 0) * 1000 > now;
    return valid || opts.expired ? (spec?.holderIdentity ?? '') : '';
  });
}

/** `kubectl orch shards ARGS` as kubectl runs the plugin (on PATH under `dir`), or the plugin itself without kubectl. */
export async function orchShards(dir: string, kubeconfig: string, args: string[]): Promise<string> {
  const pluginPath = join(dir, 'bin');
  await mkdir(pluginPath, { recursive: true });
  await symlink(join(ROOT, 'bin', 'kubectl-orch'), join(pluginPath, 'kubectl-orch')).catch(() => {});
  const [file, argv] = hasKubectl
    ? [KUBECTL, ['orch', 'shards', ...args]]
    : [process.execPath, [join(ROOT, 'bin', 'kubectl-orch'), 'shards', ...args]];
  const env = { ...process.env, PATH: `${pluginPath}:${process.env.PATH}`, KUBECONFIG: kubeconfig };
  return (await promisify(execFile)(file, argv, { env, timeout: 60_000 })).stdout;
}

/**
 * `kubectl orch shards ARGS` printed while the shard map stood still: each shard Lease's holderIdentity (expired or
 * not, as the plugin prints it) read before and after must agree, else it is run again (a loaded machine's late
 * renewals move the map). Answers the printed lines and those holders, `<none>` for none.
 */
export async function orchShardsSteady(
  client: KubeClient,
  n: Naming,
  shards: number,
  where: { dir: string; kubeconfig: string },
  args: string[],
): Promise<{ lines: string[]; holders: string[] }> {
  const read = async () => (await shardHolders(client, n, shards, { expired: true })).map((h) => h || '<none>');
  for (let attempt = 1; ; attempt++) {
    const before = await read();
    const lines = (await orchShards(where.dir, where.kubeconfig, args)).trimEnd().split('\n');
    const holders = await read();
    if (JSON.stringify(before) === JSON.stringify(holders) || attempt === 20) return { lines, holders };
  }
}
