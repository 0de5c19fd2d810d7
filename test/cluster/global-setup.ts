/**
 * The real cluster of a vitest run (project `real`): started once, before its first suite, and shared by every
 * suite, each isolated by its own names (test/support/substrate.ts); stopped after the last. Without the binaries
 * the project's suites are skipped and one line says why.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { kubernetesRelease } from '../../tools/k8s/binaries.ts';
import { hasClusterBinaries, missingBinaries, startLocalCluster } from './local-cluster.ts';

const NODES = 3;

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!hasClusterBinaries) {
    console.warn(
      `real cluster: suites skipped, its binaries are not built (${missingBinaries().join(', ')}); run \`npm run k8s:build\``,
    );
    project.provide('realCluster', null);
    return undefined;
  }
  const dir = await mkdtemp(join(tmpdir(), 'orch-real-'));
  const started = performance.now();
  const cluster = await startLocalCluster({ dir: join(dir, 'cluster'), nodes: NODES }).catch(async (error) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`real cluster: kube-apiserver ${kubernetesRelease()} with ${NODES} kwok nodes ready in ${seconds} s`);
  const { server, kubeconfig, caFiles, auditLogPath } = cluster;
  project.provide('realCluster', { server, kubeconfig, dir: cluster.dir, caFiles, auditLogPath });
  return async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
