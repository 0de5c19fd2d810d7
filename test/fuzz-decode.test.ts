/**
 * Nesting, sizes and encodings, property-based, thrown at every decoder of the embedded control plane through
 * its HTTPS server: JSON, YAML (flow and block), server-side apply, merge, strategic merge and JSON patches, and
 * protobuf envelopes carrying JSON. Every answer is a 2xx or a 4xx Status, never a 5xx, and the server is still
 * up after. Depths cluster around the limit and far beyond it,
 * in ConfigMaps (whose data holds strings) and ControllerRevisions (whose data holds anything). Runs with a fixed seed (`FUZZ_SEED`
 * replays another); `FUZZ_DECODE_RUNS` sets the number of runs (a few seconds by default).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DEPTH } from '../src/controlplane/depth.ts';
import { concat, pb } from '../src/controlplane/protobuf/test-encoder.ts';
import { startTestCluster, type TestCluster } from './support/cluster.ts';
import { RawClient } from './support/raw-https.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
const RUNS = Number(process.env.FUZZ_DECODE_RUNS ?? 40);
const NS = 'fuzz-decode';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const REVISIONS = `/apis/apps/v1/namespaces/${NS}/controllerrevisions`;

type Encoding = 'json' | 'yaml-flow' | 'yaml-block' | 'protobuf';
type Target = 'create' | 'merge' | 'strategic' | 'json-patch' | 'apply';

/** A value `depth` levels deep, objects or arrays, with `width` siblings beside each nested level. */
function nested(depth: number, arrays: boolean, width: number): { open: string; close: string } {
  const sibling = arrays ? '"s",'.repeat(width) : Array.from({ length: width }, (_, i) => `"s${i}":1,`).join('');
  const open = (arrays ? `[${sibling}` : `{${sibling}"a":`).repeat(depth);
  return { open, close: (arrays ? ']' : '}').repeat(depth) };
}

/** The deep value as JSON text (also what YAML's flow style reads). */
function jsonValue(depth: number, arrays: boolean, width: number): string {
  const { open, close } = nested(depth, arrays, width);
  return `${open}"x"${close}`;
}

/** The deep value in YAML: flow style without quotes, or block style indented right of `indent`. */
function yamlValue(p: DeepBody, indent: number): string {
  if (p.encoding === 'yaml-flow') {
    const sibling = p.arrays ? 's, '.repeat(p.width) : Array.from({ length: p.width }, (_, i) => `s${i}: 1, `).join('');
    return `${(p.arrays ? `[${sibling}` : `{${sibling}a: `).repeat(p.depth)}x${(p.arrays ? ']' : '}').repeat(p.depth)}`;
  }
  if (p.arrays) return `\n${' '.repeat(indent)}${'- '.repeat(p.depth)}x`;
  // Mappings by indentation grow with the square of their depth: 2,000 levels already take 2 MB.
  const levels = Math.min(p.depth, 2_000);
  return `\n${Array.from({ length: levels }, (_, i) => `${' '.repeat(indent + i)}a:`).join('\n')} x`;
}

/** The kinds bodies are aimed at: ConfigMap `data` holds strings, ControllerRevision `data` anything. */
const KINDS = {
  ConfigMap: { apiVersion: 'v1', path: CM, extra: '' },
  ControllerRevision: { apiVersion: 'apps/v1', path: REVISIONS, extra: '"revision":1,' },
} as const;

const deepBody = fc.record({
  depth: fc.oneof(
    fc.integer({ min: 0, max: 60 }),
    fc.integer({ min: MAX_DEPTH - 5, max: MAX_DEPTH + 5 }),
    fc.integer({ min: MAX_DEPTH + 6, max: 120_000 }),
  ),
  arrays: fc.boolean(),
  width: fc.nat(3),
  encoding: fc.constantFrom<Encoding>('json', 'yaml-flow', 'yaml-block', 'protobuf'),
  target: fc.constantFrom<Target>('create', 'merge', 'strategic', 'json-patch', 'apply'),
  kind: fc.constantFrom<keyof typeof KINDS>('ConfigMap', 'ControllerRevision'),
  field: fc.constantFrom('data', 'labels', 'annotations'),
});

type DeepBody = typeof deepBody extends fc.Arbitrary<infer T> ? T : never;

interface Built {
  method: string;
  path: string;
  contentType: string;
  body: string | Buffer;
}

function build(p: DeepBody, n: number): Built {
  const { apiVersion, path, extra } = KINDS[p.kind];
  const value = jsonValue(p.depth, p.arrays, p.width);
  const name = `f${n}`;
  const apply = (body: string): Built => ({
    method: 'PATCH',
    path: `${path}/${name}?fieldManager=fuzz`,
    contentType: 'application/apply-patch+yaml',
    body,
  });
  if (p.encoding === 'yaml-flow' || p.encoding === 'yaml-block') {
    // YAML goes to the YAML decoders: create (application/yaml) and apply; patches are JSON only.
    const lines = [`apiVersion: ${apiVersion}`, `kind: ${p.kind}`, 'metadata:', `  name: ${name}`];
    if (p.kind === 'ControllerRevision') lines.push('revision: 1');
    const indent = p.field === 'data' ? 2 : 4;
    lines.push(
      ...(p.field === 'data' ? ['data:'] : [`  ${p.field}:`]),
      `${' '.repeat(indent)}k: ${yamlValue(p, indent + 1)}`,
    );
    const body = `${lines.join('\n')}\n`;
    return p.target === 'apply' ? apply(body) : { method: 'POST', path, contentType: 'application/yaml', body };
  }
  const fieldJson = `{"k":${value}}`;
  const members =
    p.field === 'data'
      ? `"metadata":{"name":"${name}"},"data":${fieldJson}`
      : `"metadata":{"name":"${name}","${p.field}":${fieldJson}}`;
  const object = `{"apiVersion":"${apiVersion}","kind":"${p.kind}",${extra}${members}}`;
  if (p.encoding === 'protobuf') {
    const raw = concat(
      Uint8Array.of(0x6b, 0x38, 0x73, 0x00),
      pb.message(1, pb.string(1, apiVersion), pb.string(2, p.kind)),
      pb.bytes(2, new TextEncoder().encode(object)),
      pb.string(4, 'application/json'),
    );
    return { method: 'POST', path, contentType: 'application/vnd.kubernetes.protobuf', body: Buffer.from(raw) };
  }
  const patchPath = `${path}/target?fieldManager=fuzz`;
  switch (p.target) {
    case 'create':
      return { method: 'POST', path, contentType: 'application/json', body: object };
    case 'merge':
    case 'strategic': {
      const patch = p.field === 'data' ? `{"data":${fieldJson}}` : `{"metadata":{"${p.field}":${fieldJson}}}`;
      const type = p.target === 'merge' ? 'merge-patch' : 'strategic-merge-patch';
      return { method: 'PATCH', path: patchPath, contentType: `application/${type}+json`, body: patch };
    }
    case 'json-patch': {
      const at = p.field === 'data' ? '/data/k' : `/metadata/${p.field}/k`;
      return {
        method: 'PATCH',
        path: patchPath,
        contentType: 'application/json-patch+json',
        body: `[{"op":"add","path":"${at}","value":${value}}]`,
      };
    }
    case 'apply':
      return apply(object);
  }
}

describe('deep and wide bodies in every encoding, property-based', () => {
  let c: TestCluster;
  let admin: RawClient;

  beforeAll(async () => {
    c = await startTestCluster();
    admin = await RawClient.fromKubeconfig(c.kubeconfig);
    for (const [path, body] of [
      ['/api/v1/namespaces', { metadata: { name: NS } }],
      [CM, { metadata: { name: 'target' }, data: { k: 'v' } }],
      [REVISIONS, { metadata: { name: 'target' }, revision: 1, data: { k: 'v' } }],
    ] as const) {
      const r = await admin.postJson(path, body);
      expect(r.code, r.body).toBe(201);
    }
  }, 60_000);

  afterAll(async () => {
    admin?.close();
    await c?.stop();
  });

  it(`answers 2xx or 4xx, never 5xx, refusing beyond ${MAX_DEPTH} (seed ${SEED})`, { timeout: 120_000 }, async () => {
    let n = 0;
    const seen = { stored: 0, tooDeep: 0 };
    await fc.assert(
      fc.asyncProperty(deepBody, async (p) => {
        const q = build(p, n++);
        const r = await admin.send({
          method: q.method,
          path: q.path,
          headers: { 'Content-Type': q.contentType },
          body: q.body,
          timeoutMs: 30_000,
        });
        const shown = `${q.method} ${q.contentType} depth ${p.depth} ${JSON.stringify(p)} → ${r.code} ${r.body.slice(0, 200)}`;
        expect(r.code < 300 || (r.code >= 400 && r.code < 500), shown).toBe(true);
        if (r.code >= 400) expect(r.json?.kind, shown).toBe('Status');
        // Far beyond the limit (the YAML estimate may count a level or two more): always refused as too deep.
        if (p.depth > MAX_DEPTH + 3) expect(r.json?.message, shown).toMatch(/exceeded max depth/);
        if (r.code < 300 && p.depth > 60) seen.stored++;
        if (/exceeded max depth/.test(r.json?.message ?? '')) seen.tooDeep++;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // Both sides of the limit were reached: deep values stored, deeper ones refused.
    expect(seen.stored).toBeGreaterThan(0);
    expect(seen.tooDeep).toBeGreaterThan(0);
    expect((await admin.send({ path: '/readyz' })).code).toBe(200);
  });
});
