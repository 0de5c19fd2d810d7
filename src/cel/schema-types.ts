/**
 * OpenAPI v3 schemas (the structural subset kinds and CRDs publish) as CEL types, with the reference's
 * rules: `x-kubernetes-int-or-string` and `x-kubernetes-preserve-unknown-fields` without properties are
 * `dyn`; `additionalProperties` is a `map(string, V)`; an embedded resource is an object with
 * `apiVersion`, `kind` and only `metadata.name` / `metadata.generateName`; strings of format `byte`,
 * `date-time` and `duration` are bytes, timestamps and durations; property names are escaped (`__dot__`,
 * `__dash__`, ...) and names that cannot be escaped are not accessible. `x-kubernetes-list-type` set or
 * map keeps the list a list for the checker; its equality and concatenation rules are `listEquals` and
 * `listConcat`.
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { Node } from '../api/schema.ts';

export interface OpenAPISchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  properties?: Record<string, OpenAPISchema>;
  additionalProperties?: OpenAPISchema | boolean;
  items?: OpenAPISchema;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
}

export type ScalarName = 'int' | 'double' | 'string' | 'bool' | 'bytes' | 'timestamp' | 'duration';
export type ListType = 'atomic' | 'set' | 'map';

export type DeclType =
  | { kind: 'scalar'; name: ScalarName }
  | { kind: 'dyn' }
  | { kind: 'list'; items: DeclType; listType: ListType; mapKeys: string[] }
  | { kind: 'map'; values: DeclType }
  /** `fields` by their escaped (CEL-accessible) names. */
  | { kind: 'object'; fields: Record<string, DeclType> };

const DYN: DeclType = { kind: 'dyn' };
const STRING: DeclType = { kind: 'scalar', name: 'string' };

const RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);
const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/** The CEL name of a property, or undefined when CEL cannot name it (the property is then not accessible). */
export function escapeName(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  return name.replace(/__|[.\-/]/g, (m) =>
    m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__',
  );
}

/** The inverse of `escapeName`. */
export function unescapeName(name: string): string {
  const kw = /^__(\w+)__$/.exec(name);
  if (kw && RESERVED.has(kw[1])) return kw[1];
  return name.replace(/__(underscores|dot|dash|slash)__/g, (_, w: string) =>
    w === 'underscores' ? '__' : w === 'dot' ? '.' : w === 'dash' ? '-' : '/',
  );
}

function objectFields(properties: Record<string, OpenAPISchema>): Record<string, DeclType> {
  const fields: Record<string, DeclType> = {};
  for (const [name, s] of Object.entries(properties)) {
    const escaped = escapeName(name);
    if (escaped !== undefined) fields[escaped] = declType(s);
  }
  return fields;
}

const EMBEDDED_BASE: Record<string, DeclType> = {
  apiVersion: STRING,
  kind: STRING,
  metadata: { kind: 'object', fields: { name: STRING, generateName: STRING } },
};

/** The CEL type of a schema. */
export function declType(s: OpenAPISchema): DeclType {
  if (s['x-kubernetes-int-or-string']) return DYN;
  if (s['x-kubernetes-embedded-resource']) {
    return { kind: 'object', fields: { ...objectFields(s.properties ?? {}), ...EMBEDDED_BASE } };
  }
  switch (s.type) {
    case 'array':
      return {
        kind: 'list',
        items: s.items ? declType(s.items) : DYN,
        listType: s['x-kubernetes-list-type'] ?? 'atomic',
        mapKeys: s['x-kubernetes-list-map-keys'] ?? [],
      };
    case 'object':
      if (typeof s.additionalProperties === 'object') return { kind: 'map', values: declType(s.additionalProperties) };
      if (s.additionalProperties === true) return { kind: 'map', values: DYN };
      if (s.properties && Object.keys(s.properties).length)
        return { kind: 'object', fields: objectFields(s.properties) };
      return s['x-kubernetes-preserve-unknown-fields'] ? DYN : { kind: 'object', fields: {} };
    case 'string':
      if (s.format === 'byte') return { kind: 'scalar', name: 'bytes' };
      if (s.format === 'date-time') return { kind: 'scalar', name: 'timestamp' };
      if (s.format === 'duration') return { kind: 'scalar', name: 'duration' };
      return STRING;
    case 'integer':
      return { kind: 'scalar', name: 'int' };
    case 'number':
      return { kind: 'scalar', name: 'double' };
    case 'boolean':
      return { kind: 'scalar', name: 'bool' };
    default:
      return DYN;
  }
}

/** The OpenAPI form of a schema of src/api/schema.ts (the built-in kinds' published schemas). */
export function openAPIFromNode(node: Node): OpenAPISchema {
  if (typeof node === 'string') {
    switch (node) {
      case 'any':
        return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      case 'int-or-string':
      case 'quantity':
        return { 'x-kubernetes-int-or-string': true };
      case 'time':
        return { type: 'string', format: 'date-time' };
      default:
        return { type: node };
    }
  }
  if ('object' in node) {
    return {
      type: 'object',
      properties: Object.fromEntries(Object.entries(node.object).map(([k, v]) => [k, openAPIFromNode(v)])),
    };
  }
  if ('map' in node) return { type: 'object', additionalProperties: openAPIFromNode(node.map) };
  return { type: 'array', items: openAPIFromNode(node.list) };
}

/**
 * Declares `t` in `env` and returns its CEL type name; objects become types named after their path from
 * `name` as the reference names them (`Deployment.spec.template`, list items `.@idx`, map values `.@elem`; the
 * reference's kind name carries a number as well), which is what the checker's messages show.
 */
export function registerDeclType(env: Environment, name: string, t: DeclType): string {
  switch (t.kind) {
    case 'scalar':
      return t.name === 'timestamp'
        ? 'google.protobuf.Timestamp'
        : t.name === 'duration'
          ? 'google.protobuf.Duration'
          : t.name;
    case 'dyn':
      return 'dyn';
    case 'list':
      return `list<${registerDeclType(env, `${name}.@idx`, t.items)}>`;
    case 'map':
      return `map<string, ${registerDeclType(env, `${name}.@elem`, t.values)}>`;
    case 'object': {
      const fields: Record<string, string> = {};
      for (const [k, f] of Object.entries(t.fields)) fields[k] = registerDeclType(env, `${name}.${k}`, f);
      env.registerType(name, { fields });
      return name;
    }
  }
}

const sameKeys = (t: DeclType & { kind: 'list' }, a: unknown, b: unknown) =>
  t.mapKeys.every((k) => celEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));

function celEquals(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => celEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return a === b;
}

/** List equality with the list type's semantics: order matters only for `atomic` lists. */
export function listEquals(t: DeclType & { kind: 'list' }, a: unknown[], b: unknown[]): boolean {
  if (t.listType === 'atomic') return celEquals(a, b);
  return a.length === b.length && a.every((x) => b.some((y) => celEquals(x, y)));
}

/**
 * List concatenation with the list type's semantics: a set keeps the first of equal elements; a map
 * lets an element of `b` replace the element of `a` with the same keys, in place, and appends the rest.
 */
export function listConcat(t: DeclType & { kind: 'list' }, a: unknown[], b: unknown[]): unknown[] {
  if (t.listType === 'atomic') return [...a, ...b];
  const out = [...a];
  for (const y of b) {
    const at = out.findIndex((x) => (t.listType === 'set' ? celEquals(x, y) : sameKeys(t, x, y)));
    if (at < 0) out.push(y);
    else if (t.listType === 'map') out[at] = y;
  }
  return out;
}
