import { test } from 'vitest';
import { startTestCluster } from './support/cluster.ts';
test('probe', async () => {
  const c = await startTestCluster();
  const cms = c.client.kind('ConfigMap');
  for (let round = 0; round < 2; round++) {
    let t0 = performance.now();
    for (let i = 1; i < 101; i++) await cms.create({ metadata: { name: `c${i}`, namespace: 'default' }, data: { a: 'b' } } as any);
    console.log('100 cm create ms', performance.now() - t0);
    t0 = performance.now();
    for (let i = 0; i < 100; i++) await cms.get('default', 'c1');
    console.log('100 GET ms', performance.now() - t0);
    t0 = performance.now();
    for (let i = 1; i < 101; i++) await cms.delete('default', `c${i}`);
    console.log('100 cm delete ms', performance.now() - t0);
    t0 = performance.now();
    await Promise.all(Array.from({length: 100}, (_, i) => cms.create({ metadata: { name: `d${i}`, namespace: 'default' }, data: { a: 'b' } } as any)));
    console.log('100 parallel create ms', performance.now() - t0);
    t0 = performance.now();
    await Promise.all(Array.from({length: 100}, (_, i) => cms.delete('default', `d${i}`)));
    console.log('100 parallel delete ms', performance.now() - t0);
  }
  await c.stop();
});
