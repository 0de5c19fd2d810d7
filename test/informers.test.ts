import { test } from 'vitest';
import { startTestCluster } from './support/cluster.ts';
test('probe', async () => {
  const c = await startTestCluster();
  console.log('started', c.cp.url);
  await c.stop();
});
