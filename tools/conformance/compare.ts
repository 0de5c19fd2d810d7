/**
 * How two answers to the same request are compared: what must differ between two servers (uids, timestamps,
 * resourceVersions, generated names (of objects and of pods' token volumes), certificate and token bytes, allocated
 * addresses, and the wording of descriptions, which is each server's own prose) is replaced by a placeholder, then
 * status, Content-Type, Warning headers, body and watch events are compared field by field.
 */
import type { Answer } from './http.ts';

/**
 * `exact`: the whole answer. `subset`: discovery, where the embedded plane serves fewer groups and resources, so
 * entries of the real answer's named lists that the embedded one lacks are left out. `openapi`: the paths and
 * schemas the embedded plane serves exist in the real document with the same operations and property shapes.
 * `status`: status code and Content-Type only (bodies no decoder here reads, such as OpenAPI protobuf).
 */
export type CompareMode = 'exact' | 'subset' | 'openapi' | 'status';

export interface Difference {
  /** Where: `status`, `content-type`, `warnings`, `body.<path>` or `events.<path>`. */
  at: string;
  real: unknown;
  embedded: unknown;
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** A client certificate's credential id: its SHA-256, different for every certificate issued. */
const CREDENTIAL_ID = /^X509SHA256=[0-9a-f]{64}$/;
const AGE = /^(\d+[smhdy])+$/;
/** An address a server allocates itself (a Service's cluster IP), as a Table cell shows it. */
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** The name the ServiceAccount admission gives a pod's token volume: a generated name, random on each server. */
const TOKEN_VOLUME = /^(kube-api-access-)[bcdfghjklmnpqrstvwxz2456789]{5}$/;
/** A stored object's resourceVersion quoted in a Status message (a failed precondition names the record's). */
const RECORD_RV = /(ResourceVersion in record \()\d+(\))/g;
/** Values each server picks itself, by key. */
const PICKED: Record<string, string> = {
  resourceVersion: '<rv>',
  continue: '<continue>',
  certificate: '<cert>',
  token: '<token>',
  clusterIP: '<ip>',
  clusterIPs: '<ip>',
  nodePort: '<port>',
  serverAddress: '<address>',
};

/** An answer's value with what must differ between two servers replaced by placeholders. */
export function normalize(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (key in PICKED && value !== '') return PICKED[key];
    if (TIME.test(value)) return '<time>';
    if (CREDENTIAL_ID.test(value)) return '<credential-id>';
    if (TOKEN_VOLUME.test(value)) return value.replace(TOKEN_VOLUME, '$1<generated>');
    const text = key === 'message' ? value.replace(RECORD_RV, '$1<rv>$2') : value;
    return text.replace(UUID, '<uid>');
  }
  if (Array.isArray(value)) {
    if (key in PICKED && value.length > 0) return PICKED[key];
    // A Table row's ages (`0s`, `5m3s`) count from each server's own creation time; its addresses are each one's pick.
    if (key === 'cells') return value.map(normalizeCell);
    // A Table column's description is prose (the reference's are its Go doc comments): it must be there, in any words.
    if (key === 'columnDefinitions') return value.map((column) => withProse(normalize(column)));
    return value.map((v) => normalize(v));
  }
  if (value === null || typeof value !== 'object') {
    return key in PICKED && typeof value === 'number' ? PICKED[key] : value;
  }
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = normalize(v, k);
  const meta = obj.metadata as { name?: string; generateName?: string } | undefined;
  if (meta?.generateName && meta.name?.startsWith(meta.generateName)) {
    (out.metadata as Record<string, unknown>).name = `${meta.generateName}<generated>`;
  }
  return out;
}

function normalizeCell(cell: unknown): unknown {
  if (typeof cell !== 'string') return normalize(cell);
  if (AGE.test(cell)) return '<age>';
  return IPV4.test(cell) ? '<ip>' : normalize(cell);
}

function withProse(column: unknown): unknown {
  if (!isObject(column) || typeof column.description !== 'string' || column.description === '') return column;
  return { ...column, description: '<description>' };
}

/** The key naming an element of a discovery list, when it has one. */
function elementKey(element: unknown): string | undefined {
  if (element === null || typeof element !== 'object') return undefined;
  const e = element as Record<string, any>;
  const key = e.name ?? e.metadata?.name ?? e.resource ?? e.subresource ?? e.groupVersion ?? e.version;
  return typeof key === 'string' ? key : undefined;
}

/** The real answer without the list elements (by name) and map keys that the embedded answer lacks. */
export function onlyWhatEmbeddedHas(real: unknown, embedded: unknown, pruneMaps: boolean): unknown {
  if (Array.isArray(real) && Array.isArray(embedded)) {
    const keys = new Map(embedded.map((e) => [elementKey(e), e]));
    const named = real.every((e) => elementKey(e) !== undefined);
    if (!named) return real.map((e, i) => onlyWhatEmbeddedHas(e, embedded[i], pruneMaps));
    return real
      .filter((e) => keys.has(elementKey(e)))
      .map((e) => onlyWhatEmbeddedHas(e, keys.get(elementKey(e)), pruneMaps));
  }
  if (!isObject(real) || !isObject(embedded)) return real;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(real)) {
    if (pruneMaps && !(k in embedded)) continue;
    out[k] = onlyWhatEmbeddedHas(v, embedded[k], pruneMaps);
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The shape of a schema that matters to clients: types, formats, references, and the properties' shapes. */
function schemaShape(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const s = schema as Record<string, any>;
  // OpenAPI v3 wraps a reference with siblings (a description, a default) in `allOf`.
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return schemaShape({ ...s.allOf[0], ...s, allOf: undefined });
  const shape: Record<string, unknown> = {};
  for (const k of ['type', 'format', '$ref', 'x-kubernetes-group-version-kind', 'x-kubernetes-list-type']) {
    if (s[k] !== undefined) shape[k] = s[k];
  }
  if (s.required) shape.required = [...s.required].sort();
  if (s.items) shape.items = schemaShape(s.items);
  if (isObject(s.additionalProperties)) shape.additionalProperties = schemaShape(s.additionalProperties);
  if (isObject(s.properties)) {
    shape.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, schemaShape(v)]));
  }
  return shape;
}

/** Each path's operations (id, action, kind, parameter names) and each schema's shape. */
export function openapiShape(doc: unknown): unknown {
  if (!isObject(doc)) return doc;
  const d = doc as Record<string, any>;
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries<any>(d.paths ?? {})) {
    const common: string[] = (item.parameters ?? []).map((p: any) => p.name ?? p.$ref);
    const ops: Record<string, unknown> = {};
    for (const [method, op] of Object.entries<any>(item)) {
      if (method === 'parameters' || !isObject(op)) continue;
      ops[method] = {
        operationId: op.operationId,
        action: op['x-kubernetes-action'],
        kind: op['x-kubernetes-group-version-kind'],
        parameters: [...common, ...((op.parameters ?? []) as any[]).map((p) => p.name ?? p.$ref)].sort(),
      };
    }
    paths[path] = ops;
  }
  const schemas = d.definitions ?? d.components?.schemas ?? {};
  return {
    paths,
    schemas: Object.fromEntries(Object.entries(schemas).map(([name, s]) => [name, schemaShape(s)])),
  };
}

/** Field-by-field differences of two normalized values; `at` names the place. */
export function diffValues(real: unknown, embedded: unknown, at: string, out: Difference[] = []): Difference[] {
  if (Array.isArray(real) && Array.isArray(embedded)) {
    for (let i = 0; i < Math.max(real.length, embedded.length); i++)
      diffValues(real[i], embedded[i], `${at}[${i}]`, out);
    return out;
  }
  if (isObject(real) && isObject(embedded)) {
    for (const k of new Set([...Object.keys(real), ...Object.keys(embedded)])) {
      diffValues(real[k], embedded[k], `${at}.${k}`, out);
    }
    return out;
  }
  if (JSON.stringify(real) !== JSON.stringify(embedded)) out.push({ at, real, embedded });
  return out;
}

/** Media type and parameters, without spaces and with the charset both servers may or may not name. */
function contentTypeOf(answer: Answer): string {
  return answer.contentType.replace(/\s+/g, '').toLowerCase();
}

export function compareAnswers(real: Answer, embedded: Answer, mode: CompareMode): Difference[] {
  const out: Difference[] = [];
  if (real.status !== embedded.status) out.push({ at: 'status', real: real.status, embedded: embedded.status });
  if (contentTypeOf(real) !== contentTypeOf(embedded)) {
    out.push({ at: 'content-type', real: real.contentType, embedded: embedded.contentType });
  }
  if (mode === 'status') return out;
  diffValues(normalize(real.warnings), normalize(embedded.warnings), 'warnings', out);
  if (real.events || embedded.events) {
    diffValues(normalize(real.events ?? []), normalize(embedded.events ?? []), 'events', out);
    return out;
  }
  let [r, e] = [normalize(real.body), normalize(embedded.body)];
  if (mode === 'openapi') [r, e] = [openapiShape(r), openapiShape(e)];
  if (mode === 'openapi' || mode === 'subset') r = onlyWhatEmbeddedHas(r, e, mode === 'openapi');
  diffValues(r, e, 'body', out);
  return out;
}

/** A difference written down in differences.yaml as deliberate, with its reason. */
export interface WrittenDown {
  name: string;
  /** deliberate, artifact (of the real cluster running no controllers) or defect (not fixed yet). */
  kind: 'deliberate' | 'artifact' | 'defect';
  /** Request ids it covers; `*` matches any run of characters. */
  request: string | string[];
  /** The differences' places it covers (same globs); every place of the request when absent. */
  at?: string[];
  reason: string;
}

const glob = (pattern: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);

/** The entries that explain each difference of a request, or undefined when one difference is unexplained. */
export function explain(id: string, differences: Difference[], known: WrittenDown[]): WrittenDown[] | undefined {
  const forRequest = known.filter((k) => [k.request].flat().some((p) => glob(p).test(id)));
  const used = new Set<WrittenDown>();
  for (const d of differences) {
    const entry = forRequest.find((k) => !k.at || k.at.some((p) => glob(p).test(d.at)));
    if (!entry) return undefined;
    used.add(entry);
  }
  return [...used];
}
