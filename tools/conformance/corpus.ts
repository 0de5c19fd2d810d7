/**
 * The corpus: YAML files under corpus/, replayed in file order. A file holds one category's `requests`, or
 * `kinds`: one object per served kind, expanded into the same CRUD and patch sequence for each (KIND_STEPS).
 * Strings may name an earlier answer's field, `{{saved.path.to.field}}`, filled in per server from that server's
 * answer (so resourceVersions, uids and generated names of each server are used with that server).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { CompareMode } from './compare.ts';
import type { Identity } from './substrates.ts';

export const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'corpus');

export interface CorpusRequest {
  id: string;
  category: string;
  as: Identity;
  method: string;
  path: string;
  query?: Record<string, string | number | boolean>;
  headers?: Record<string, string>;
  /** Sent in the format of the Content-Type header (JSON by default); a string is sent as it is. */
  body?: unknown;
  /** Replaces the body's `data` with one value of this many bytes (the too-large cases). */
  padBytes?: number;
  /** Keeps the answer's body under this name for later `{{name.…}}` references. */
  save?: string;
  compare?: CompareMode;
}

interface KindEntry {
  resource: string;
  collection: string;
  object: { metadata: { name: string; labels?: Record<string, string> } } & Record<string, unknown>;
  /** Steps of KIND_STEPS this kind leaves out. */
  skip?: string[];
}

/** Every object the corpus creates carries this label; lists select on it, the real server's own objects aside. */
export const CORPUS_LABEL = 'conformance';
const SELECT = `${CORPUS_LABEL}=corpus`;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** The steps every kind goes through, in order: each a request made from the kind's entry. */
const KIND_STEPS: [string, (k: KindEntry, item: string, saved: string) => Omit<CorpusRequest, 'id' | 'category'>][] = [
  ['create', (k, _, saved) => ({ as: 'admin', method: 'POST', path: k.collection, body: k.object, save: saved })],
  ['create-again', (k) => ({ as: 'admin', method: 'POST', path: k.collection, body: k.object })],
  ['get', (_, item) => ({ as: 'admin', method: 'GET', path: item })],
  ['list', (k) => ({ as: 'admin', method: 'GET', path: k.collection, query: { labelSelector: SELECT } })],
  ['table', (_, item) => ({ as: 'admin', method: 'GET', path: item, headers: { accept: TABLE } })],
  [
    'update',
    (k, item, saved) => ({
      as: 'admin',
      method: 'PUT',
      path: item,
      body: withLabels(k.object, { put: 'done' }, `{{${saved}.metadata.resourceVersion}}`),
      save: `${saved}-put`,
    }),
  ],
  [
    'update-stale',
    (k, item, saved) => ({
      as: 'admin',
      method: 'PUT',
      path: item,
      body: withLabels(k.object, { stale: 'done' }, `{{${saved}.metadata.resourceVersion}}`),
    }),
  ],
  [
    'patch-merge',
    (_, item) => ({
      as: 'admin',
      method: 'PATCH',
      path: item,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { metadata: { labels: { merge: 'done' } } },
    }),
  ],
  [
    'patch-strategic',
    (_, item) => ({
      as: 'admin',
      method: 'PATCH',
      path: item,
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
      body: { metadata: { annotations: { strategic: 'done' } } },
    }),
  ],
  [
    'patch-json',
    (_, item) => ({
      as: 'admin',
      method: 'PATCH',
      path: item,
      headers: { 'content-type': 'application/json-patch+json' },
      body: [{ op: 'add', path: '/metadata/labels/json', value: 'done' }],
    }),
  ],
  [
    'apply',
    (k, item) => ({
      as: 'admin',
      method: 'PATCH',
      path: item,
      query: { fieldManager: 'conform-apply' },
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: withLabels(k.object, { applied: 'done' }),
    }),
  ],
  ['delete', (_, item) => ({ as: 'admin', method: 'DELETE', path: item })],
  ['get-deleted', (_, item) => ({ as: 'admin', method: 'GET', path: item })],
];

function withLabels(object: KindEntry['object'], labels: Record<string, string>, resourceVersion?: string) {
  const metadata = { ...object.metadata, labels: { ...object.metadata.labels, ...labels } };
  return { ...object, metadata: resourceVersion ? { ...metadata, resourceVersion } : metadata };
}

function expandKind(category: string, entry: KindEntry): CorpusRequest[] {
  const object = withLabels(entry.object, { [CORPUS_LABEL]: 'corpus' });
  const k = { ...entry, object };
  const item = `${entry.collection}/${entry.object.metadata.name}`;
  // A name without dots: `{{name.path}}` references split on them.
  const saved = `${entry.resource.replaceAll('.', '_')}-created`;
  return KIND_STEPS.filter(([step]) => !entry.skip?.includes(step)).map(([step, make]) => ({
    id: `${category}/${entry.resource}/${step}`,
    category,
    ...make(k, item, saved),
  }));
}

/** Every request of the corpus, in replay order. */
export function loadCorpus(dir = CORPUS_DIR): CorpusRequest[] {
  const out: CorpusRequest[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const doc = parseYaml(readFileSync(join(dir, file), 'utf8'));
    const category = String(doc.category);
    for (const entry of doc.kinds ?? []) out.push(...expandKind(category, entry));
    for (const request of doc.requests ?? []) {
      out.push({ as: 'admin', method: 'GET', ...request, id: `${category}/${request.id}`, category });
    }
  }
  const ids = new Set<string>();
  for (const r of out) {
    if (ids.has(r.id)) throw new Error(`corpus: request id ${r.id} is used twice`);
    ids.add(r.id);
  }
  return out;
}

const REFERENCE = /\{\{([^}]+)\}\}/g;

/** A value with its `{{saved.path}}` references filled in from one server's saved answers. */
export function fillIn(value: unknown, saved: Map<string, unknown>): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (_, ref: string) => {
      const [name, ...path] = ref.trim().split('.');
      let v: any = saved.get(name);
      for (const p of path) v = v?.[p];
      return v === undefined ? `<unset ${ref}>` : String(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => fillIn(v, saved));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillIn(v, saved)]));
  }
  return value;
}
