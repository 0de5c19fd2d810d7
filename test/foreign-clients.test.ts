/**
 * What clients nobody here wrote send and expect (the official Python client, @kubernetes/client-node,
 * kubectl), over HTTPS as the admin, answered as kube-apiserver answers them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient } from './support/raw-https.ts';

let c: TestCluster;
let admin: RawClient;
const get = (path: string) => admin.send({ path, timeoutMs: 10_000 });
const post = (path: string, body: unknown) => admin.send({ method: 'POST', path, body: JSON.stringify(body) });

beforeAll(async () => {
  c = await startTestCluster();
  admin = await RawClient.fromKubeconfig(c.kubeconfig);
});

afterAll(async () => {
  admin?.close();
  await c?.stop();
});

/** The lines of a watch response, parsed (a list is one JSON document, so one "line"). */
const lines = (body: string) =>
  body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('boolean query parameters, read as the reference converts them', () => {
  const cms = '/api/v1/namespaces/default/configmaps';

  beforeAll(async () => {
    const r = await post(cms, { metadata: { name: 'bools' } });
    expect(r.code, r.body).toBe(201);
  });

  // The Python client sends Python's spelling of its booleans: `watch=True`.
  it.each(['True', 'TRUE', 'true', '1', 't', 'yes', ''])('watch=%s streams events', async (v) => {
    const r = await get(`${cms}?watch=${v}&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(200);
    const events = lines(r.body);
    expect(events.length, r.body).toBeGreaterThan(0);
    expect(
      events.every((e) => e.type === 'ADDED' && e.object?.kind === 'ConfigMap'),
      r.body,
    ).toBe(true);
  });

  it.each(['false', 'False', 'FALSE', '0'])('watch=%s lists', async (v) => {
    const r = await get(`${cms}?watch=${v}&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(200);
    expect(r.json?.kind, r.body).toBe('ConfigMapList');
  });

  it('allowWatchBookmarks=True is honoured: a watch-list ends its initial events with a bookmark', async () => {
    const r = await get(
      `${cms}?watch=True&allowWatchBookmarks=True&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`,
    );
    expect(r.code, r.body).toBe(200);
    const bookmark = lines(r.body).find((e) => e.type === 'BOOKMARK');
    const annotations = Object.entries(bookmark?.object?.metadata?.annotations ?? {});
    expect(annotations, r.body).toContainEqual([expect.stringMatching(/\/initial-events-end$/), 'true']);
  });

  it('a value that is no spelling of false is true, never an error (the reference has none)', async () => {
    const r = await get(`${cms}?watch=1&allowWatchBookmarks=maybe&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(200);
    expect(lines(r.body)[0]?.type, r.body).toBe('ADDED');
  });

  it('sendInitialEvents=False is a value given: without resourceVersionMatch it is the reference 422', async () => {
    const r = await get(`${cms}?watch=True&sendInitialEvents=False&timeoutSeconds=1`);
    expect(r.code, r.body).toBe(422);
    expect(r.json?.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
  });
});

describe('/version', () => {
  // The Python client's VersionApi().get_code() requires every field of version.Info.
  it("answers every field of the reference's version.Info, truthfully", async () => {
    const r = await get('/version');
    expect(r.code, r.body).toBe(200);
    const goArch: Record<string, string> = { x64: 'amd64', ia32: '386' };
    expect(r.json).toEqual({
      major: '1',
      minor: expect.stringMatching(/^\d+$/),
      emulationMajor: '1',
      emulationMinor: r.json.minor,
      minCompatibilityMajor: '1',
      minCompatibilityMinor: String(Number(r.json.minor) - 1),
      gitVersion: expect.stringMatching(/^v1\.\d+\.0\+embedded\./),
      gitCommit: expect.stringMatching(/^[0-9a-f]{40}$/),
      gitTreeState: expect.stringMatching(/^(clean|dirty)$/),
      buildDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      goVersion: process.version,
      compiler: 'node',
      platform: `${process.platform}/${goArch[process.arch] ?? process.arch}`,
    });
  });
});
