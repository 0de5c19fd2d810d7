/**
 * The OpenAPI documents the server publishes, built once per registry: `/openapi/v2` (one Swagger 2.0
 * document with every definition, as JSON and as the gnostic protobuf kubectl downloads) and `/openapi/v3`
 * (an index of group versions, each with its own document holding its paths and the schemas they need).
 * Each document has an ETag, the uppercase hex SHA-512 of its JSON, as the reference computes it.
 */
import { createHash } from 'node:crypto';
import { group } from '../../api/naming.ts';
import type { ResourceRegistry, ResourceType } from '../../api/registry.ts';
import { buildModel, type GroupVersionKind, type JsonSchema, type Model } from './model.ts';
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

type Method = 'get' | 'put' | 'patch' | 'delete' | 'post';
type Gvk = { group: string; version: string; kind: string };

const query = (name: string) => ({ name, in: 'query', schema: { type: QUERY_TYPES[name] ?? 'string' } });
const pathParameter = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const QUERY_TYPES: Record<string, string> = {
  force: 'boolean',
  gracePeriodSeconds: 'integer',
  ignoreStoreReadErrorWithClusterBreakingPotential: 'boolean',
  orphanDependents: 'boolean',
  follow: 'boolean',
  insecureSkipTLSVerifyBackend: 'boolean',
  limitBytes: 'integer',
  previous: 'boolean',
  sinceSeconds: 'integer',
  tailLines: 'integer',
  timestamps: 'boolean',
  stderr: 'boolean',
  stdin: 'boolean',
  stdout: 'boolean',
  tty: 'boolean',
  ports: 'integer',
};
/** The reference's query parameters of each operation, beyond those the path's operations share. */
const OPERATION_QUERY: Record<Method, string[]> = {
  get: [],
  put: ['dryRun', 'fieldManager', 'fieldValidation'],
  patch: ['dryRun', 'fieldManager', 'fieldValidation', 'force'],
  delete: [
    'dryRun',
    'gracePeriodSeconds',
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'orphanDependents',
    'propagationPolicy',
  ],
  post: ['dryRun', 'fieldManager', 'fieldValidation'],
};
const VERB_PREFIX: Record<Method, string> = {
  get: 'read',
  put: 'replace',
  patch: 'patch',
  delete: 'delete',
  post: 'create',
};
/** The pod streams' own query parameters and the options kind their operations name. */
const STREAMS: Record<string, { kind: string; query: string[] }> = {
  exec: { kind: 'PodExecOptions', query: ['command', 'container', 'stderr', 'stdin', 'stdout', 'tty'] },
  attach: { kind: 'PodAttachOptions', query: ['container', 'stderr', 'stdin', 'stdout', 'tty'] },
  portforward: { kind: 'PodPortForwardOptions', query: ['ports'] },
};
/** The subresources only created (posted), with the kind each takes. */
const CREATED_SUBRESOURCES: Record<string, (registry: ResourceRegistry) => GroupVersionKind> = {
  binding: () => ({ group: '', version: 'v1', kind: 'Binding' }),
  eviction: () => ({ group: 'policy', version: 'v1', kind: 'Eviction' }),
  token: (registry) => ({ group: group(registry.naming, 'authentication'), version: 'v1', kind: 'TokenRequest' }),
};
const LOG_QUERY = ['container', 'follow', 'insecureSkipTLSVerifyBackend', 'limitBytes', 'pretty', 'previous'];
const LOG_QUERY_TAIL = ['sinceSeconds', 'stream', 'tailLines', 'timestamps'];

const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The reference's operation id: verb, group (its name without the flavor's suffix, camel-cased; `Core` for the
 * core group), version, the method of a connect operation, `Namespaced` for namespaced objects, kind and
 * subresource: `patchAppsV1NamespacedDeploymentScale`, `connectCoreV1GetNamespacedPodExec`.
 */
export function operationId(
  registry: ResourceRegistry,
  rt: ResourceType,
  verb: string,
  subresource = '',
  connectMethod = '',
): string {
  const groupName = rt.group
    ? rt.group.replace(`.${registry.naming.groupSuffix}`, '').split('.').map(upperFirst).join('')
    : 'Core';
  return `${verb}${groupName}${upperFirst(rt.version)}${upperFirst(connectMethod)}${rt.namespaced ? 'Namespaced' : ''}${rt.kind}${upperFirst(subresource)}`;
}

/**
 * A path's operations as the reference publishes them: the parameters every operation shares on the path, and
 * per operation its id, action, kind and own query parameters.
 */
function pathItem(
  shared: string[],
  ops: { method: Method; id: string; action: string; gvk: Gvk; query?: string[] }[],
): object {
  const item: Record<string, object> = {
    parameters: shared.map((name) => (name === 'name' || name === 'namespace' ? pathParameter(name) : query(name))),
  };
  for (const op of ops) {
    item[op.method] = {
      operationId: op.id,
      'x-kubernetes-action': op.action,
      'x-kubernetes-group-version-kind': op.gvk,
      ...(op.query?.length ? { parameters: op.query.map(query) } : {}),
      responses: {},
    };
  }
  return item;
}

/** The object path's operations and its subresources' (review resources: the collection's create), by path. */
export function resourcePaths(registry: ResourceRegistry, rt: ResourceType): Record<string, object> {
  const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
  const base = `${rt.group ? `/apis/${rt.group}` : '/api'}/${rt.version}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.plural}`;
  const scope = rt.namespaced ? ['namespace'] : [];
  const write = (methods: Method[], kind: Gvk, subresource = '') =>
    methods.map((method) => ({
      method,
      id: operationId(registry, rt, VERB_PREFIX[method], subresource),
      action: method,
      gvk: kind,
      query: OPERATION_QUERY[method],
    }));
  if (rt.virtual) {
    return {
      [base]: pathItem(
        [...OPERATION_QUERY.post, ...scope, 'pretty'],
        write(['post'], gvk).map((op) => ({ ...op, query: [] })),
      ),
    };
  }
  const paths: Record<string, object> = {
    [`${base}/{name}`]: pathItem(['name', ...scope, 'pretty'], write(['get', 'put', 'delete', 'patch'], gvk)),
  };
  for (const sub of rt.subresources) {
    const at = `${base}/{name}/${sub}`;
    const stream = STREAMS[sub];
    if (stream) {
      const kind = { ...gvk, kind: stream.kind };
      paths[at] = pathItem(
        [...stream.query, 'name', 'namespace'].sort(),
        (['get', 'post'] as const).map((method) => ({
          method,
          id: operationId(registry, rt, 'connect', sub, method),
          action: 'connect',
          gvk: kind,
        })),
      );
    } else if (sub === 'log') {
      paths[at] = pathItem([...LOG_QUERY, 'name', 'namespace', ...LOG_QUERY_TAIL], write(['get'], gvk, sub));
    } else if (CREATED_SUBRESOURCES[sub]) {
      const kind = CREATED_SUBRESOURCES[sub](registry);
      const ops = write(['post'], kind, sub).map((op) => ({ ...op, query: [] }));
      paths[at] = pathItem([...OPERATION_QUERY.post, 'name', ...scope, 'pretty'], ops);
    } else {
      const kind = sub === 'scale' ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : gvk;
      paths[at] = pathItem(['name', ...scope, 'pretty'], write(['get', 'put', 'patch'], kind, sub));
    }
  }
  return paths;
}

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
  const paths: Record<string, object> = {};
  const roots = new Set<string>();
  for (const rt of rts) {
    Object.assign(paths, resourcePaths(registry, rt));
    for (const kind of model.kinds) {
      const subresourceKind =
        (kind.gvk.kind === 'Scale' && rt.subresources.includes('scale')) ||
        (kind.gvk.kind === 'Eviction' && rt.subresources.includes('eviction')) ||
        (kind.gvk.kind === 'Binding' && rt.subresources.includes('binding'));
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
