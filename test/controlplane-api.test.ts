import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';

let c: TestCluster;
beforeAll(async () => {
  const t = Date.now();
  c = await startTestCluster();
  console.log('start ms', Date.now() - t);
});
afterAll(() => c.stop());

it('smoke', async () => {
  const core = c.kc.makeApiClient(CoreV1Api);
  const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { k: 'v' } } });
  console.log(cm);
  try {
    await core.readNamespacedConfigMap({ namespace: 'default', name: 'zz' });
  } catch (e: any) {
    console.log(e.code, typeof e.body, e.body, e.headers);
  }
  expect(1).toBe(1);
});
