/**
 * OpenAPI schemas of the served kinds, generated from their structural schemas (`src/api/schema.ts`): each
 * object the protobuf numbers table names (`../protobuf/numbers.ts`) becomes a definition named as the
 * reference names it (`io.k8s.api.apps.v1.StatefulSetSpec`), referenced from where it is used; objects
 * without a message are inlined. Lists carry their list type, map keys and patch strategy; kinds their
 * `x-kubernetes-group-version-kind`; fields and kinds their descriptions.
 */
import { apiVersionOf, type ResourceRegistry, type ResourceType } from '../../api/registry.ts';
import { type ListNode, type Node, type ObjectNode, schemaFor } from '../../api/schema.ts';
import { type Entry, entriesOf, isByValueStruct, messageOfKind } from '../protobuf/tables.ts';
import { fieldDescription, typeDescription } from './descriptions.ts';

export type JsonSchema = { [key: string]: unknown };

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** The definitions of every served kind and what they reference, by definition name. */
export interface Model {
  definitions: Record<string, JsonSchema>;
  /** The definition of each served kind, for the documents of its group version. */
  kinds: { gvk: GroupVersionKind; definition: string }[];
}

/** How a document spells a reference: `#/definitions/<name>` (v2) or `#/components/schemas/<name>` (v3). */
export type RefStyle = 'v2' | 'v3';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** Definitions of the special types, as the reference writes them. */
const SPECIAL_DEFINITIONS: Readonly<Record<string, JsonSchema>> = {
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': {
    description: 'An integer or a string (such as a percentage, "25%").',
    type: 'string',
    format: 'int-or-string',
  },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': {
    description: 'A fixed-point number with an optional suffix: "100m", "1.5Gi", "2".',
    type: 'string',
  },
  [`${META}.Time`]: { description: 'A time in RFC 3339 form, to the second.', type: 'string', format: 'date-time' },
  [`${META}.MicroTime`]: {
    description: 'A time in RFC 3339 form, to the microsecond.',
    type: 'string',
    format: 'date-time',
  },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': {
    description: 'An embedded object, any JSON object.',
    type: 'object',
  },
  [`${META}.FieldsV1`]: { description: 'A set of fields, in the FieldsV1 format of managedFields.', type: 'object' },
};

/** OpenAPI v3 says what v2 cannot: these two are one of two types, not a string. */
const V3_ALTERNATIVES: Readonly<Record<string, string[]>> = {
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': ['integer', 'string'],
  'io.k8s.apimachinery.pkg.api.resource.Quantity': ['string', 'number'],
};

const SPECIAL_TYPES: Readonly<Record<string, string>> = {
  'int-or-string': 'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
  quantity: 'io.k8s.apimachinery.pkg.api.resource.Quantity',
  time: `${META}.Time`,
  microTime: `${META}.MicroTime`,
  raw: 'io.k8s.apimachinery.pkg.runtime.RawExtension',
  fields: `${META}.FieldsV1`,
};

/** The reference's definition name of a message of the numbers table. */
export function definitionName(message: string): string {
  if (message.startsWith('meta.')) return `io.k8s.apimachinery.pkg.apis.${message}`;
  if (message.startsWith('apiregistration.')) return `io.k8s.kube-aggregator.pkg.apis.${message}`;
  return `io.k8s.api.${message}`;
}

/** The served kinds of a registry with the subresource kinds (Scale, Eviction, Binding), with their messages. */
export function servedKinds(registry: ResourceRegistry): { gvk: GroupVersionKind; message: string | undefined }[] {
  const gvk = (rt: Pick<ResourceType, 'group' | 'version' | 'kind'>) => ({
    group: rt.group,
    version: rt.version,
    kind: rt.kind,
  });
  const kinds = registry.all.map((rt) => ({ gvk: gvk(rt), message: messageOfKind(rt.kind, apiVersionOf(rt)) }));
  const sub = (name: string, group: string, version: string, kind: string) =>
    registry.all.some((rt) => rt.subresources.includes(name as never))
      ? [{ gvk: { group, version, kind }, message: messageOfKind(kind) }]
      : [];
  return [
    ...kinds,
    ...sub('scale', 'autoscaling', 'v1', 'Scale'),
    ...sub('eviction', 'policy', 'v1', 'Eviction'),
    ...sub('binding', '', 'v1', 'Binding'),
  ];
}

export function buildModel(registry: ResourceRegistry, style: RefStyle): Model {
  const builder = new Builder(style);
  const kinds: Model['kinds'] = [];
  for (const { gvk, message } of servedKinds(registry)) {
    const schema = schemaFor(gvk.kind, gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version);
    if (!schema || !message || typeof schema !== 'object' || !('object' in schema)) {
      throw new Error(`openapi: ${gvk.kind} has no schema or message`);
    }
    const definition = builder.define(message, schema);
    const target = builder.definitions[definition];
    target['x-kubernetes-group-version-kind'] = [
      ...((target['x-kubernetes-group-version-kind'] as GroupVersionKind[] | undefined) ?? []),
      gvk,
    ];
    kinds.push({ gvk, definition });
  }
  return { definitions: builder.definitions, kinds };
}

class Builder {
  readonly definitions: Record<string, JsonSchema> = {};

  constructor(private readonly style: RefStyle) {}

  /** Defines a message (once) from its schema and returns the definition name. */
  define(message: string, node: ObjectNode): string {
    const name = definitionName(message);
    if (Object.hasOwn(this.definitions, name)) return name;
    const definition: JsonSchema = { type: 'object' };
    this.definitions[name] = definition; // before the fields: a message may be reached again through them
    const description = typeDescription(message);
    if (description) definition.description = description;
    Object.assign(definition, this.objectSchema(node, message));
    return name;
  }

  private objectSchema(node: ObjectNode, message: string | undefined): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    for (const [field, child] of Object.entries(node.object)) {
      const entry = message === undefined ? undefined : findEntry(message, field);
      const property = this.describe(this.nodeSchema(child, entry?.type), fieldDescription(message, field));
      properties[field] = entry && isByValueStruct(entry, child) ? { ...property, default: {} } : property;
    }
    return { type: 'object', properties };
  }

  /** The schema of a node whose wire type (a message or a special type word) the numbers table gives. */
  private nodeSchema(node: Node, type: string | undefined): JsonSchema {
    // An embedded object or a field set is one value whatever the schema says of its JSON (ControllerRevision data).
    if (type === 'raw' || type === 'fields') return this.special(type);
    if (node === 'any') return {};
    if (typeof node === 'string') return this.scalarSchema(node, type);
    if ('list' in node) return this.listSchema(node, type === 'strings' ? undefined : type);
    if ('map' in node) return { type: 'object', additionalProperties: this.nodeSchema(node.map, type) };
    if (type !== undefined && !Object.hasOwn(SPECIAL_TYPES, type)) return this.ref(this.define(type, node));
    return this.objectSchema(node, undefined);
  }

  private scalarSchema(node: Exclude<Node, object | 'any'>, type: string | undefined): JsonSchema {
    switch (node) {
      case 'string':
        return type === 'bytes' ? { type: 'string', format: 'byte' } : { type: 'string' };
      case 'integer':
        return { type: 'integer' };
      case 'number':
        return { type: 'number', format: 'double' };
      case 'boolean':
        return { type: 'boolean' };
      case 'time':
        return this.special(type === 'microTime' ? 'microTime' : 'time');
      default:
        return this.special(node);
    }
  }

  private listSchema(node: ListNode, type: string | undefined): JsonSchema {
    const schema: JsonSchema = { type: 'array', items: this.nodeSchema(node.list, type) };
    if (node.listType) schema['x-kubernetes-list-type'] = node.listType;
    if (node.mapKeys) schema['x-kubernetes-list-map-keys'] = [...node.mapKeys];
    if (node.patchMergeKey) schema['x-kubernetes-patch-merge-key'] = node.patchMergeKey;
    if (node.patchStrategy) schema['x-kubernetes-patch-strategy'] = node.patchStrategy;
    return schema;
  }

  private special(type: string): JsonSchema {
    const name = SPECIAL_TYPES[type];
    const alternatives = this.style === 'v3' ? V3_ALTERNATIVES[name] : undefined;
    const { type: _type, ...untyped } = SPECIAL_DEFINITIONS[name];
    this.definitions[name] ??= alternatives
      ? { ...untyped, oneOf: alternatives.map((t) => ({ type: t })) }
      : { ...SPECIAL_DEFINITIONS[name] };
    return this.ref(name);
  }

  private ref(name: string): JsonSchema {
    return { $ref: this.style === 'v2' ? `#/definitions/${name}` : `#/components/schemas/${name}` };
  }

  /** A property with its description: v2 puts it beside a `$ref`, v3 wraps the reference in `allOf`. */
  private describe(schema: JsonSchema, description: string | undefined): JsonSchema {
    if (description === undefined) return schema;
    if (schema.$ref !== undefined && this.style === 'v3') return { description, allOf: [schema] };
    return { description, ...schema };
  }
}

/** A field's entry in a message or in the messages it embeds inline. */
function findEntry(message: string, field: string): Entry | undefined {
  const entries = entriesOf(message);
  const direct = entries.get(field);
  if (direct && !direct.inline) return direct;
  for (const entry of entries.values()) {
    if (!entry.inline) continue;
    const inner = findEntry(entry.type as string, field);
    if (inner) return inner;
  }
  return undefined;
}
