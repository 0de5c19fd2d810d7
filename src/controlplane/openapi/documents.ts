/**
 * The OpenAPI documents the server publishes, built once per registry: `/openapi/v2` (one Swagger 2.0
 * document with every definition, as JSON and as the gnostic protobuf kubectl downloads) and `/openapi/v3`
 * (an index of group versions, each with its own document holding its paths and the schemas they need).
 * Each document has an ETag, the uppercase hex SHA-512 of its JSON, as the reference computes it.
 */
import { createHash } from 'node:crypto';
import { POD_STREAM_SUBRESOURCES, type ResourceRegistry } from '../../api/registry.ts';
import { buildModel, type JsonSchema, type Model } from './model.ts';
import { encodeSwaggerProtobuf } from './v2-protobuf.ts';

export interface Published {
  json: string;
  etag: string;
}

export interface Documents {
  v2: Published & { protobuf: Uint8Array };
  /** By path under /openapi/v3/: `api/v1`, `apis/<group>/<version>`. */
  v3: Map<string, Published>;
  /** The /openapi/v3 index, whose URLs carry each document's hash. */
  v3Root: Published;
}

const cache = new WeakMap<ResourceRegistry, Documents>();

export function documentsFor(registry: ResourceRegistry): Documents {
  let documents = cache.get(registry);
  if (!documents) {
    documents = build(registry);
    cache.set(registry, documents);
  }
  return documents;
}

function publish(document: object): Published {
  const json = JSON.stringify(document);
  return { json, etag: createHash('sha512').update(json).digest('hex').toUpperCase() };
}

function build(registry: ResourceRegistry): Documents {
  const title = registry.naming.apiServer;
  const v2Model = buildModel(registry, 'v2');
  const v2Document = { swagger: '2.0', info: { title, version: 'v1' }, paths: {}, definitions: v2Model.definitions };
  const v2 = { ...publish(v2Document), protobuf: encodeSwaggerProtobuf(v2Document) };

  const v3Model = buildModel(registry, 'v3');
  const v3 = new Map<string, Published>();
  const groupVersions = [{ name: '', versions: ['v1'] }, ...registry.groups()];
  for (const { name: group, versions } of groupVersions) {
    for (const version of versions) {
      const path = group ? `apis/${group}/${version}` : `api/${version}`;
      v3.set(path, publish(groupVersionDocument(registry, v3Model, title, group, version)));
    }
  }
  const paths = Object.fromEntries(
    [...v3].map(([path, doc]) => [path, { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.etag}` }]),
  );
  return { v2, v3, v3Root: publish({ paths }) };
}

const WRITE_PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation', 'force', 'pretty'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string' },
}));

/**
 * One group version: its paths (kubectl checks the PATCH operations for `fieldValidation` and `dryRun`
 * before relying on them) and the schemas of its kinds, of its subresource kinds, and what they reference.
 */
function groupVersionDocument(
  registry: ResourceRegistry,
  model: Model,
  title: string,
  group: string,
  version: string,
): object {
  const rts = registry.groupVersion(group, version);
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const paths: Record<string, object> = {};
  const roots = new Set<string>();
  for (const rt of rts) {
    const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
    const item = `${base}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.plural}/{name}`;
    const op = { 'x-kubernetes-group-version-kind': gvk, parameters: WRITE_PARAMETERS, responses: {} };
    paths[item] = rt.virtual ? {} : { get: op, put: op, patch: op, delete: op };
    for (const sub of rt.subresources) {
      paths[`${item}/${sub}`] =
        sub === 'eviction'
          ? { post: op }
          : sub === 'log'
            ? { get: op }
            : (POD_STREAM_SUBRESOURCES as readonly string[]).includes(sub)
              ? { get: op, post: op }
              : { get: op, put: op, patch: op };
    }
    for (const kind of model.kinds) {
      const subresourceKind =
        (kind.gvk.kind === 'Scale' && rt.subresources.includes('scale')) ||
        (kind.gvk.kind === 'Eviction' && rt.subresources.includes('eviction'));
      if (subresourceKind || (kind.gvk.kind === rt.kind && kind.gvk.group === group && kind.gvk.version === version)) {
        roots.add(kind.definition);
      }
    }
  }
  return { openapi: '3.0.0', info: { title, version }, paths, components: { schemas: closure(model, roots) } };
}

/** The definitions `roots` reference, directly or not, themselves included, sorted by name. */
function closure(model: Model, roots: Set<string>): Record<string, JsonSchema> {
  const names = new Set<string>();
  const visit = (name: string) => {
    if (names.has(name)) return;
    names.add(name);
    for (const ref of references(model.definitions[name])) visit(ref);
  };
  for (const root of roots) visit(root);
  return Object.fromEntries([...names].sort().map((name) => [name, model.definitions[name]]));
}

function references(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) references(item, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') out.push(child.slice(child.lastIndexOf('/') + 1));
      else references(child, out);
    }
  }
  return out;
}
