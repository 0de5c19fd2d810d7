/**
 * The real cluster itself (`npm run cluster`'s control plane, kwok nodes): it serves the real release, its nodes
 * Ready (our StatefulSet controller on them: test/e2e/statefulset.test.ts). It runs on the
 * real substrate only (the `real` vitest project's shared cluster), skipped with the rest when the binaries are not
 * built.
 */
import { expect, it } from 'vitest';
import { kubernetesRelease } from '../../tools/k8s/binaries.ts';
import { describeOnSubstrate } from '../support/substrate.ts';

describeOnSubstrate(
  'smoke',
  (s) => {
    it('serves the pinned release, and kubectl lists the kwok nodes Ready', async () => {
      const version = await s().kubectl.json(['version']);
      expect(version.serverVersion.gitVersion).toBe(kubernetesRelease());
      const rows = (await s().kubectl.ok(['get', 'nodes', '--no-headers'])).trim().split('\n');
      expect(rows).toHaveLength(3);
      for (const row of rows) expect(row).toMatch(/^kwok-node-\d\s+Ready\s/);
    });
  },
  { daemon: false },
);
