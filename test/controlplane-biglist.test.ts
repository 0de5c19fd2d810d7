/**
 * A big LIST does not hold the control plane's event loop, in any format: while 10,000 ConfigMaps are encoded and
 * sent as JSON, Table, protobuf or YAML, the loop keeps turning (no turn spends more than LOOP_HOLD_LIMIT_MS of the
 * process's CPU) and a GET made meanwhile is answered; a list of 2,000 (still several slices and chunks; the yaml
 * library takes seconds to parse 10,000) decodes to the same items in all four formats.
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../src/api/meta.ts';
import { decodeKubernetesProtobuf } from '../src/controlplane/protobuf/index.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { watchLoopTurns } from './support/loop-turns.ts';

const OBJECTS = 10_000;
/**
 * The most CPU this process may spend between two turns of its event loop while the list is served. CPU, not wall
 * time: on a loaded machine the process waits for a core too, and that is no turn held. Before lists were sliced,
 * one turn took 140 ms (JSON, objects not yet serialized), 93 ms (Table), 478 ms (protobuf) and 2 s (YAML); now
 * 14–21 ms alone, and up to 58 ms seen inside the full suite (the process's CPU counts its GC threads too), so the
 * limit sits between the two.
 */
const LOOP_HOLD_LIMIT_MS = 80;
const NS = 'biglist';
/** The namespace of the smaller list whose four bodies are compared. */
const SMALL_NS = 'biglist-small';
const SMALL_OBJECTS = 2_000;

/** Values that YAML and protobuf must both carry exactly. */
const VALUES = ['plain', 'true', 'no', '0x1f', '1e3', 'a: b', '#x', '', 'line 1\nline 2', 'é 😀', ' padded ', '- x'];

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

let cluster: TestCluster;

function get(path: string, accept: string): Promise<Answer> {
  const server = new URL(cluster.kc.getCurrentCluster()!.server);
  const options: RequestOptions = { hostname: server.hostname, port: server.port, path, headers: { Accept: accept } };
  return cluster.kc.credentials().then(
    ({ tls }) =>
      new Promise((resolve, reject) => {
        const req = httpsRequest({ ...options, ...tls }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type']),
              body: Buffer.concat(chunks),
            }),
          );
        });
        req.setTimeout(120_000, () => req.destroy(new Error(`${path}: no answer in 120 s`)));
        req.on('error', reject);
        req.end();
      }),
  );
}

/** Runs `during` while the loop's turns are watched: its result and the longest hold (ms of CPU). */
async function longestTurnCpuMs<T>(during: () => Promise<T>): Promise<{ result: T; heldMs: number }> {
  const turns = watchLoopTurns();
  let heldMs = 0;
  const result = await during().finally(() => {
    heldMs = turns.stop();
  });
  return { result, heldMs };
}

/**
 * `count` ConfigMaps in `namespace`: one made through the API (managed fields and all), the rest copies of it
 * stored in-process.
 */
async function fill(namespace: string, count: number): Promise<void> {
  await cluster.client.kind('Namespace').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const template = await cluster.client.kind('ConfigMap').create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'template', namespace, labels: { app: 'big' }, annotations: { note: 'a: b' } },
    data: { key: 'value' },
  });
  const { uid: _uid, resourceVersion: _rv, ...metadata } = template.metadata;
  for (let i = 0; i < count - 1; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - 1 - i) }, (_, j) => {
        const n = i + j;
        const copy = structuredClone({ ...template, metadata: { ...metadata, name: `cm-${n}` } }) as KubeObject;
        return cluster.cp.seed({ ...copy, data: { key: VALUES[n % VALUES.length], index: String(n) } });
      }),
    );
  }
}

beforeAll(async () => {
  // The memory store whatever ORCH_TEST_STORAGE says: the encoding is the same for every store, and the embedded
  // store's LevelDB threads, still writing the seeded objects, would count in the process's CPU time.
  cluster = await startTestCluster({ storage: 'memory' });
  await fill(NS, OBJECTS);
  await fill(SMALL_NS, SMALL_OBJECTS);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

/** JSON with every object's keys sorted: equal values, whatever order their keys came in (a fast deep equality). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
  );
}

const FORMATS = {
  json: 'application/json',
  table: 'application/json;as=Table;v=v1;g=meta.k8s.io',
  protobuf: 'application/vnd.kubernetes.protobuf',
  yaml: 'application/yaml',
};

describe(`a LIST of ${OBJECTS.toLocaleString('en-US')} ConfigMaps`, () => {
  const path = `/api/v1/namespaces/${NS}/configmaps`;

  it.each(Object.keys(FORMATS) as (keyof typeof FORMATS)[])(
    'as %s: the event loop keeps turning and a GET meanwhile is answered',
    async (format) => {
      const { result, heldMs } = await longestTurnCpuMs(async () => {
        let listDone = false;
        const list = get(path, FORMATS[format]).finally(() => {
          listDone = true;
        });
        // A GET made while the list is under way (its request reaches the server first).
        await new Promise((r) => setTimeout(r, 5));
        const startedDuringList = !listDone;
        const single = await get(`${path}/cm-1`, 'application/json');
        return { list: await list, single, startedDuringList };
      });
      expect(result.list.status).toBe(200);
      expect(result.single.status).toBe(200);
      expect(JSON.parse(result.single.body.toString()).metadata.name).toBe('cm-1');
      expect(result.startedDuringList).toBe(true);
      expect(heldMs).toBeLessThan(LOOP_HOLD_LIMIT_MS);
    },
    120_000,
  );
});

describe(`a LIST of ${SMALL_OBJECTS.toLocaleString('en-US')} ConfigMaps`, () => {
  const path = `/api/v1/namespaces/${SMALL_NS}/configmaps`;
  const bodies = {} as Record<keyof typeof FORMATS, Answer>;

  beforeAll(async () => {
    for (const [format, accept] of Object.entries(FORMATS))
      bodies[format as keyof typeof FORMATS] = await get(path, accept);
  }, 120_000);

  it('decodes to the same items in all four formats', () => {
    const json = JSON.parse(bodies.json.body.toString());
    expect(bodies.json.contentType).toBe('application/json');
    expect(json.items).toHaveLength(SMALL_OBJECTS);
    expect(json.metadata.resourceVersion).toMatch(/^\d+$/);
    const names = json.items.map((o: KubeObject) => o.metadata.name);

    expect(bodies.yaml.contentType).toBe('application/yaml');
    expect(canonical(parse(bodies.yaml.body.toString()))).toBe(canonical(json));

    expect(bodies.protobuf.contentType).toBe('application/vnd.kubernetes.protobuf');
    const decoded = decodeKubernetesProtobuf(bodies.protobuf.body) as { metadata: unknown; items: KubeObject[] };
    expect(decoded.metadata).toEqual(json.metadata);
    // Items in a protobuf list carry no apiVersion and kind (their messages have no such fields).
    const withoutType = json.items.map(({ apiVersion: _a, kind: _k, ...rest }: KubeObject) => rest);
    expect(canonical(decoded.items)).toBe(canonical(withoutType));

    const table = JSON.parse(bodies.table.body.toString());
    expect(table.kind).toBe('Table');
    expect(table.metadata).toEqual(json.metadata);
    expect(table.rows.map((r: { cells: unknown[] }) => r.cells[0])).toEqual(names);
    expect(canonical(table.rows.map((r: { object: KubeObject }) => r.object.metadata))).toBe(
      canonical(json.items.map((o: KubeObject) => o.metadata)),
    );
  });

  it('pretty JSON is JSON.stringify with two spaces, sent in slices all the same', async () => {
    const pretty = await get(`${path}?pretty=true`, 'application/json');
    const body = pretty.body.toString();
    expect(body).toBe(JSON.stringify(JSON.parse(body), null, 2));
    expect(JSON.parse(body)).toEqual(JSON.parse(bodies.json.body.toString()));
    const empty = await get(
      '/api/v1/namespaces/default/secrets?pretty=true&labelSelector=none%3Dnone',
      'application/json',
    );
    expect(empty.body.toString()).toBe(JSON.stringify(JSON.parse(empty.body.toString()), null, 2));
  });
});
