import { describe, expect, it } from 'vitest';
import { apiVersionOf, ResourceRegistry } from '../../api/registry.ts';
import { type Node, type ObjectNode, schemaFor } from '../../api/schema.ts';
import { ProtoReader } from '../protobuf/wire.ts';
import { documentsFor } from './documents.ts';
import { openApiAnswer } from './index.ts';
import type { JsonSchema } from './model.ts';
import { SWAGGER_PROTOBUF_MEDIA_TYPE } from './v2-protobuf.ts';

type Doc = { components: { schemas: Record<string, JsonSchema> }; paths: Record<string, unknown> };

const NOW = new Date('2026-11-25T12:00:00Z');

/** The schema behind a property: a `$ref` directly or wrapped in `allOf`. */
function resolve(schemas: Record<string, JsonSchema>, schema: JsonSchema): JsonSchema {
  const ref = (schema.$ref ?? (schema.allOf as JsonSchema[] | undefined)?.[0]?.$ref) as string | undefined;
  if (ref === undefined) return schema;
  const target = schemas[ref.slice(ref.lastIndexOf('/') + 1)];
  expect(target, ref).toBeDefined();
  return target;
}

/** Walks the structural schema and the OpenAPI schema side by side: the same fields at every level. */
function sameFields(schemas: Record<string, JsonSchema>, node: Node, openapi: JsonSchema, path: string): void {
  const schema = resolve(schemas, openapi);
  // An embedded object (ControllerRevision data) is one value, whatever the schema says of its JSON.
  if (node === 'any' || typeof node === 'string' || JSON.stringify(openapi).includes('runtime.RawExtension')) return;
  if ('list' in node) sameFields(schemas, node.list, schema.items as JsonSchema, `${path}[]`);
  else if ('map' in node) sameFields(schemas, node.map, schema.additionalProperties as JsonSchema, `${path}{}`);
  else sameObject(schemas, node, schema, path);
}

function sameObject(schemas: Record<string, JsonSchema>, node: ObjectNode, schema: JsonSchema, path: string): void {
  const properties = schema.properties as Record<string, JsonSchema>;
  expect(Object.keys(properties).sort(), path).toEqual(Object.keys(node.object).sort());
  for (const [field, child] of Object.entries(node.object)) {
    sameFields(schemas, child, properties[field], `${path}.${field}`);
  }
}

describe.each(['orch', 'kubernetes'] as const)('OpenAPI documents (%s)', (flavor) => {
  const registry = new ResourceRegistry(flavor);
  const documents = documentsFor(registry);

  it.each(registry.all.map((rt) => [rt.kind, apiVersionOf(rt), rt] as const))(
    '%s (%s) has a schema in its v3 and v2 documents, field for field',
    (kind, apiVersion, rt) => {
      const path = rt.group ? `apis/${rt.group}/${rt.version}` : `api/${rt.version}`;
      const doc = JSON.parse(documents.v3.get(path)?.json ?? 'null') as Doc;
      const gvk = { group: rt.group, version: rt.version, kind };
      const [name, schema] = Object.entries(doc.components.schemas).find(([, s]) =>
        (s['x-kubernetes-group-version-kind'] as object[] | undefined)?.some((g) =>
          expect.objectContaining(gvk).asymmetricMatch(g),
        ),
      ) ?? [undefined, undefined];
      expect(schema, `${kind} has no schema`).toBeDefined();
      expect(schema?.description).toEqual(expect.any(String));
      sameFields(doc.components.schemas, schemaFor(kind, apiVersion) as Node, schema as JsonSchema, kind);
      const v2 = JSON.parse(documents.v2.json).definitions as Record<string, JsonSchema>;
      expect(v2[name as string]['x-kubernetes-group-version-kind']).toContainEqual(gvk);
    },
  );

  it('resolves every reference within its document', () => {
    for (const [path, { json }] of documents.v3) {
      const doc = JSON.parse(json) as Doc;
      for (const ref of json.match(/#\/components\/schemas\/[^"]+/g) ?? []) {
        expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], `${path} ${ref}`).toBeDefined();
      }
    }
  });

  it('lists the group versions with the hash of their documents', () => {
    const root = JSON.parse(documents.v3Root.json) as { paths: Record<string, { serverRelativeURL: string }> };
    expect(Object.keys(root.paths)).toEqual([...documents.v3.keys()]);
    expect(root.paths['apis/apps/v1'].serverRelativeURL).toBe(
      `/openapi/v3/apis/apps/v1?hash=${documents.v3.get('apis/apps/v1')?.etag}`,
    );
    expect(documents.v3.get('apis/apps/v1')?.etag).toMatch(/^[0-9A-F]{128}$/);
  });
});

describe('OpenAPI extensions and descriptions', () => {
  const doc = JSON.parse(documentsFor(new ResourceRegistry('kubernetes')).v3.get('api/v1')?.json ?? '') as Doc;
  const schemas = doc.components.schemas;
  const property = (definition: string, field: string) =>
    (schemas[`io.k8s.${definition}`].properties as Record<string, JsonSchema>)[field];

  it.each([
    ['api.core.v1.PodSpec', 'containers', 'map', ['name'], 'name'],
    ['api.core.v1.Container', 'ports', 'map', ['containerPort', 'protocol'], 'containerPort'],
    ['api.core.v1.ServiceSpec', 'ports', 'map', ['port', 'protocol'], 'port'],
    ['api.core.v1.PodStatus', 'conditions', 'map', ['type'], 'type'],
    ['apimachinery.pkg.apis.meta.v1.ObjectMeta', 'ownerReferences', 'map', ['uid'], 'uid'],
    ['apimachinery.pkg.apis.meta.v1.ObjectMeta', 'finalizers', 'set', undefined, undefined],
  ])('%s.%s is a %s list keyed by %j', (definition, field, listType, keys, mergeKey) => {
    const list = resolve(schemas, property(definition, field));
    expect(list['x-kubernetes-list-type']).toBe(listType);
    expect(list['x-kubernetes-list-map-keys']).toEqual(keys);
    expect(list['x-kubernetes-patch-merge-key']).toBe(mergeKey);
    expect(list['x-kubernetes-patch-strategy']).toBe('merge');
  });

  it('leaves other lists atomic, types bytes and times, and references the special types', () => {
    expect(property('api.core.v1.PodSpec', 'tolerations')['x-kubernetes-list-type']).toBeUndefined();
    expect(resolve(schemas, property('api.core.v1.Secret', 'data')).additionalProperties).toEqual({
      type: 'string',
      format: 'byte',
    });
    expect(resolve(schemas, property('apimachinery.pkg.apis.meta.v1.ObjectMeta', 'creationTimestamp'))).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
    expect(property('api.core.v1.ContainerPort', 'containerPort')).toEqual({ type: 'integer' });
  });
});

describe('OpenAPI v3 operations, as the reference publishes them', () => {
  type Op = { operationId?: string; 'x-kubernetes-action'?: string; parameters?: { name: string }[] };
  /** A path item: its methods' operations, and the parameters they share under `parameters`. */
  type Item = Record<string, Op>;
  const sharedParameters = (it: Item | undefined) => (it?.parameters ?? []) as unknown as { name: string }[];
  const docs = documentsFor(new ResourceRegistry('kubernetes')).v3;
  const item = (gv: string, path: string) =>
    (JSON.parse(docs.get(gv)?.json ?? '{}') as { paths: Record<string, Item> }).paths[path];
  /** method → [operationId, action, every parameter name, sorted] */
  const operations = (it: Item | undefined) =>
    Object.fromEntries(
      Object.entries(it ?? {})
        .filter(([method]) => method !== 'parameters')
        .map(([method, op]: [string, Op]) => [
          method,
          [
            op.operationId,
            op['x-kubernetes-action'],
            [...sharedParameters(it), ...(op.parameters ?? [])]
              .map((p) => p.name)
              .sort()
              .join(','),
          ],
        ]),
    );
  const shared = 'name,namespace,pretty';

  it.each([
    [
      'api/v1',
      '/api/v1/namespaces/{namespace}/configmaps/{name}',
      {
        get: ['readCoreV1NamespacedConfigMap', 'get', shared],
        put: ['replaceCoreV1NamespacedConfigMap', 'put', `dryRun,fieldManager,fieldValidation,${shared}`],
        patch: ['patchCoreV1NamespacedConfigMap', 'patch', `dryRun,fieldManager,fieldValidation,force,${shared}`],
        delete: [
          'deleteCoreV1NamespacedConfigMap',
          'delete',
          'dryRun,gracePeriodSeconds,ignoreStoreReadErrorWithClusterBreakingPotential,name,namespace,orphanDependents,pretty,propagationPolicy',
        ],
      },
    ],
    [
      'api/v1',
      '/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token',
      { post: ['createCoreV1NamespacedServiceAccountToken', 'post', `dryRun,fieldManager,fieldValidation,${shared}`] },
    ],
    [
      'api/v1',
      '/api/v1/namespaces/{namespace}/pods/{name}/exec',
      {
        get: [
          'connectCoreV1GetNamespacedPodExec',
          'connect',
          'command,container,name,namespace,stderr,stdin,stdout,tty',
        ],
        post: [
          'connectCoreV1PostNamespacedPodExec',
          'connect',
          'command,container,name,namespace,stderr,stdin,stdout,tty',
        ],
      },
    ],
    [
      'apis/apps/v1',
      '/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale',
      {
        get: ['readAppsV1NamespacedDeploymentScale', 'get', shared],
        put: ['replaceAppsV1NamespacedDeploymentScale', 'put', `dryRun,fieldManager,fieldValidation,${shared}`],
        patch: ['patchAppsV1NamespacedDeploymentScale', 'patch', `dryRun,fieldManager,fieldValidation,force,${shared}`],
      },
    ],
    [
      'apis/authorization.k8s.io/v1',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      { post: ['createAuthorizationV1SubjectAccessReview', 'post', 'dryRun,fieldManager,fieldValidation,pretty'] },
    ],
    ['apis/authorization.k8s.io/v1', '/apis/authorization.k8s.io/v1/subjectaccessreviews/{name}', {}],
  ])('%s %s', (gv, path, want) => expect(operations(item(gv, path))).toEqual(want));

  it('types an int-or-string and a quantity as one of two in v3, as strings in v2', () => {
    const schemas = (JSON.parse(docs.get('api/v1')?.json ?? '{}') as Doc).components.schemas;
    expect(schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString']).toMatchObject({
      oneOf: [{ type: 'integer' }, { type: 'string' }],
    });
    expect(schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString'].type).toBeUndefined();
    const v2 = JSON.parse(documentsFor(new ResourceRegistry('kubernetes')).v2.json).definitions;
    expect(v2['io.k8s.apimachinery.pkg.api.resource.Quantity'].type).toBe('string');
  });
});

describe('openApiAnswer', () => {
  const registry = new ResourceRegistry('orch');
  const documents = documentsFor(registry);
  const apps = documents.v3.get('apis/apps/v1');
  const get = (path: string, headers: Record<string, string> = {}, query = '') =>
    openApiAnswer(registry, path, new URLSearchParams(query), headers, NOW);

  it('serves a group version under its hash as immutable for a year, and revalidates it without', () => {
    expect(get('/openapi/v3/apis/apps/v1', {}, `hash=${apps?.etag}`)).toMatchObject({
      status: 200,
      headers: {
        ETag: `"${apps?.etag}"`,
        'Cache-Control': 'public, immutable',
        Expires: 'Thu, 25 Nov 2027 12:00:00 GMT',
        'Content-Type': 'application/json',
      },
      body: apps?.json,
    });
    expect(get('/openapi/v3/apis/apps/v1')?.headers['Cache-Control']).toBe('no-cache, private');
  });

  it('redirects a stale hash, answers 304 to a matching If-None-Match and undefined to unknown versions', () => {
    expect(get('/openapi/v3/apis/apps/v1', {}, 'hash=0A0B')).toMatchObject({
      status: 301,
      headers: { Location: `/openapi/v3/apis/apps/v1?hash=${apps?.etag}` },
    });
    expect(get('/openapi/v3/apis/apps/v1', { 'if-none-match': `"${apps?.etag}"` })).toMatchObject({
      status: 304,
      body: '',
    });
    expect(get('/openapi/v3/apis/apps/v9')).toBeUndefined();
  });

  it('serves v2 as JSON or as the gnostic protobuf kubectl asks for, and 406 otherwise', () => {
    expect(get('/openapi/v2', { accept: 'application/json' })).toMatchObject({
      headers: { 'Content-Type': 'application/json', ETag: `"${documents.v2.etag}"` },
      body: documents.v2.json,
    });
    const protobuf = get('/openapi/v2', { accept: SWAGGER_PROTOBUF_MEDIA_TYPE });
    expect(protobuf?.headers['Content-Type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    expect(definitionNames(protobuf?.body as Uint8Array)).toEqual(
      Object.keys(JSON.parse(documents.v2.json).definitions),
    );
    expect(() => get('/openapi/v2', { accept: 'text/html' })).toThrow(
      /^406: Not Acceptable\n\nAvailable representations: application\/json, /,
    );
  });
});

/** The names of `Document.definitions` (field 9: repeated NamedSchema {name = 1} as field 1). */
function definitionNames(bytes: Uint8Array): string[] {
  const names: string[] = [];
  const doc = new ProtoReader(bytes);
  while (!doc.done()) {
    const t = doc.tag();
    if (t.field !== 9) {
      doc.skip(t.wireType, t.field);
      continue;
    }
    const definitions = doc.sub();
    while (!definitions.done()) {
      definitions.tag();
      const named = definitions.sub();
      named.tag();
      names.push(named.string());
    }
  }
  return names;
}
