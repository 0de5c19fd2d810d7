/**
 * The schemas policies are checked against, as CEL types: the built-in kinds' own schemas, and for kinds
 * this program does not know (custom resources, aggregated APIs) the server's OpenAPI v3 documents
 * (`/openapi/v3`, then the group-version's document): the component tagged with the kind's
 * `x-kubernetes-group-version-kind`, `$ref`s resolved to a bounded depth (deeper is `dyn`).
 */
import { apiVersionOf, type ResourceRegistry } from '../../src/api/registry.ts';
import { schemaFor } from '../../src/api/schema.ts';
import { type DeclType, declType, type OpenAPISchema, openAPIFromNode } from '../../src/cel/schema-types.ts';
import type { KubeClient } from '../../src/client/client.ts';
import type { GVK } from './core.ts';

type Json = Record<string, unknown>;

/** Deep enough for any real resource; recursive schemas (JSONSchemaProps) stop here. */
const MAX_DEPTH = 32;
const UNKNOWN: OpenAPISchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

function resolve(s: Json, components: Json, depth: number): OpenAPISchema {
  if (depth > MAX_DEPTH) return UNKNOWN;
  const ref = typeof s.$ref === 'string' ? s.$ref : (s.allOf as Json[] | undefined)?.find((x) => x.$ref)?.$ref;
  if (typeof ref === 'string') {
    const target = components[ref.replace('#/components/schemas/', '')] as Json | undefined;
    return target ? resolve({ ...target, ...withoutRef(s) }, components, depth + 1) : UNKNOWN;
  }
  const out: Json = { ...s };
  if (s.properties) {
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Json).map(([k, v]) => [k, resolve(v as Json, components, depth + 1)]),
    );
  }
  if (s.items) out.items = resolve(s.items as Json, components, depth + 1);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    out.additionalProperties = resolve(s.additionalProperties as Json, components, depth + 1);
  }
  return out as OpenAPISchema;
}

function withoutRef(s: Json): Json {
  const { $ref: _, allOf: __, ...rest } = s;
  return rest;
}

/** The schema of `gvk` in one group-version OpenAPI v3 document, if it has one. */
export function schemaFromDocument(doc: Json, gvk: GVK): OpenAPISchema | undefined {
  const components = ((doc.components as Json | undefined)?.schemas as Json | undefined) ?? {};
  for (const s of Object.values(components) as Json[]) {
    const tags = (s['x-kubernetes-group-version-kind'] as GVK[] | undefined) ?? [];
    if (tags.some((t) => t.group === gvk.group && t.version === gvk.version && t.kind === gvk.kind)) {
      return resolve(s, components, 0);
    }
  }
  return undefined;
}

/** Fetches the OpenAPI v3 document of a group-version (undefined when the server has none). */
async function fetchDocument(
  client: KubeClient,
  group: string,
  version: string,
  signal?: AbortSignal,
): Promise<Json | undefined> {
  const root = (
    await client.request<{ paths?: Record<string, { serverRelativeURL?: string }> }>('GET', '/openapi/v3', { signal })
  ).body;
  const url = root.paths?.[group ? `apis/${group}/${version}` : `api/${version}`]?.serverRelativeURL;
  return url ? (await client.request<Json>('GET', url, { signal })).body : undefined;
}

export interface SchemaSource {
  /** Fetches what `schemaOf` needs for these kinds. */
  prepare(kinds: GVK[], signal?: AbortSignal): Promise<void>;
  schemaOf(k: GVK): DeclType | undefined;
  /** Forgets fetched documents (served resources changed). */
  reset(): void;
}

export function schemaSource(registry: ResourceRegistry, client: KubeClient): SchemaSource {
  const id = (k: GVK) => `${apiVersionOf(k)}/${k.kind}`;
  const builtIn = new Map<string, DeclType | undefined>();
  let fetched = new Map<string, DeclType | undefined>();
  let documents = new Map<string, Promise<Json | undefined>>();
  const builtInType = (k: GVK) => {
    if (!builtIn.has(id(k))) {
      const node = registry.kind(apiVersionOf(k), k.kind) ? schemaFor(k.kind, apiVersionOf(k)) : undefined;
      builtIn.set(id(k), node && declType(openAPIFromNode(node)));
    }
    return builtIn.get(id(k));
  };
  return {
    async prepare(kinds, signal) {
      for (const k of kinds) {
        if (builtInType(k) || fetched.has(id(k))) continue;
        const gv = apiVersionOf(k);
        if (!documents.has(gv))
          documents.set(
            gv,
            fetchDocument(client, k.group, k.version, signal).catch(() => undefined),
          );
        const doc = await documents.get(gv);
        const schema = doc && schemaFromDocument(doc, k);
        fetched.set(id(k), schema && declType(schema));
      }
    },
    schemaOf: (k) => builtInType(k) ?? fetched.get(id(k)),
    reset() {
      fetched = new Map();
      documents = new Map();
    },
  };
}
