/**
 * Edges of read requests, over HTTPS as the admin, with the reference's answers: a resourceVersion that is
 * not a uint64 is a 400 for list, get and watch (only a valid one beyond the current revision is the 504
 * "Too large resource version"), and a path with an empty segment is a 404, never a listing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient } from './support/raw-https.ts';

const UINT64_MAX = '18446744073709551615';

describe('read request edges', () => {
  let c: TestCluster;
  let admin: RawClient;
  const get = (path: string) => admin.send({ path, timeoutMs: 10_000 });

  beforeAll(async () => {
    c = await startTestCluster();
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    const r = await admin.send({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: JSON.stringify({ metadata: { name: 'cm' } }),
    });
    expect(r.code, r.body).toBe(201);
  });

  afterAll(async () => {
    admin?.close();
    await c?.stop();
  });

  const reads = {
    list: '/api/v1/namespaces/default/configmaps',
    get: '/api/v1/namespaces/default/configmaps/cm',
    watch: '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&',
  };
  const withRv = (path: string, rv: string) =>
    `${path}${path.includes('?') ? '' : '?'}resourceVersion=${encodeURIComponent(rv)}`;

  it.each(Object.entries(reads))('%s: a resourceVersion that is no uint64 is a 400', async (_verb, path) => {
    const cases: [string, string][] = [
      ['1'.padEnd(25, '0'), 'value out of range'],
      ['18446744073709551616', 'value out of range'],
      ['abc', 'invalid syntax'],
      ['-1', 'invalid syntax'],
      ['1e3', 'invalid syntax'],
    ];
    for (const [rv, why] of cases) {
      const r = await get(withRv(path, rv));
      expect(r.code, `${rv}: ${r.body}`).toBe(400);
      expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
      expect(r.json.message).toBe(
        `invalid resource version: resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": ${why}`,
      );
    }
  });

  it.each([
    ['list', reads.list],
    ['get', reads.get],
  ])('%s: a valid resourceVersion beyond the current one is the 504, with its digits', async (_verb, path) => {
    const r = await get(withRv(path, UINT64_MAX));
    expect(r.code, r.body).toBe(504);
    expect(r.json.message).toMatch(new RegExp(`^Too large resource version: ${UINT64_MAX}, current: \\d+$`));
    const current = await get(withRv(path, '1'));
    expect(current.code, current.body).toBe(200);
  });

  it('answers a path with an empty segment with 404', async () => {
    for (const path of [
      '/api/v1/namespaces//secrets',
      '/api/v1/namespaces//configmaps/cm',
      '/api/v1/namespaces/default//configmaps',
      '/api/v1//namespaces',
      '/api/v1/namespaces/default/configmaps//',
    ]) {
      const r = await get(path);
      expect(r.code, `${path}: ${r.body}`).toBe(404);
      expect(r.body).not.toContain('"items"');
    }
    const fine = await get('/api/v1/namespaces/default/secrets');
    expect(fine.code).toBe(200);
  });
});
