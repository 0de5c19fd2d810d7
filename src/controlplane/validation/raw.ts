/**
 * Safe access to untrusted JSON, and a small shape checker.
 *
 * Validators never trust the input: every read goes through an accessor that answers `undefined` for a
 * value of the wrong type, and `checkShape` reports those wrong types once, as
 * `Invalid value: <v>: must be of type <t>` (where the reference would have refused to decode the body).
 */

import { child, type FieldError, index, invalid, key } from '../../api/field-errors.ts';
import { parseQuantityValue } from '../../api/quantity.ts';
import { type Node, schemaFor } from '../../api/schema.ts';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown): Obj | undefined {
  return isObj(v) ? v : undefined;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

export function bool(v: unknown): boolean | undefined {
  return typeof v === 'boolean' ? v : undefined;
}

export function arr(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

/** A map of string values; entries whose value is not a string are skipped. */
export function strMap(v: unknown): Record<string, string> | undefined {
  if (!isObj(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val;
  return out;
}

/** Absent in the reference's sense: missing, `null` (decodes to the zero value). */
export function absent(v: unknown): boolean {
  return v === undefined || v === null;
}

/** Reads a nested member by dotted path, `undefined` as soon as a step is not an object. */
export function at(v: unknown, path: string): unknown {
  let cur: unknown = v;
  for (const part of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** A JSON deep copy (inputs are plain JSON). */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

// ---------------------------------------------------------------------------------------------
// Shapes

export type Scalar =
  | 'string'
  | 'int32'
  | 'int64'
  | 'boolean'
  | 'intOrString'
  | 'quantity'
  /** A byte array: a base64 string in JSON. */
  | 'bytes'
  /** An RFC 3339 timestamp string. */
  | 'time'
  | 'any';

export type Shape = Scalar | { fields: Record<string, Shape> } | { items: Shape } | { values: Shape };

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Reports members whose JSON type does not fit the shape; `null` is accepted everywhere (zero value). */
export function checkShape(value: unknown, shape: Shape, path: string): FieldError[] {
  const errs: FieldError[] = [];
  walk(value, shape, path, errs);
  return errs;
}

function walk(value: unknown, shape: Shape, path: string, errs: FieldError[]): void {
  if (value === null || value === undefined) return;
  if (typeof shape === 'string') {
    const problem = scalarProblem(value, shape);
    if (problem) errs.push(invalid(path, value, problem));
    return;
  }
  if ('fields' in shape) {
    if (!isObj(value)) {
      errs.push(invalid(path, value, 'must be of type object'));
      return;
    }
    // The value's own members, in the order they came (as a decoder meets them): most of a shape is absent.
    const fields = shape.fields;
    for (const name in value) {
      if (Object.hasOwn(fields, name)) member(value[name], fields[name], path, name, child, errs);
    }
    return;
  }
  if ('items' in shape) {
    if (!Array.isArray(value)) {
      errs.push(invalid(path, value, 'must be of type array'));
      return;
    }
    for (let i = 0; i < value.length; i++) member(value[i], shape.items, path, i, index, errs);
    return;
  }
  if (!isObj(value)) {
    errs.push(invalid(path, value, 'must be of type object'));
    return;
  }
  for (const k in value) member(value[k], shape.values, path, k, key, errs);
}

/**
 * Walks a member of the value at `parent`: its path (`join(parent, segment)`) is made only for a member that
 * holds others or is of the wrong type, not for every scalar that is right.
 */
function member<S>(
  value: unknown,
  shape: Shape,
  parent: string,
  segment: S,
  join: (path: string, segment: S) => string,
  errs: FieldError[],
): void {
  if (value === null || value === undefined) return;
  if (typeof shape !== 'string') walk(value, shape, join(parent, segment), errs);
  else {
    const problem = scalarProblem(value, shape);
    if (problem) errs.push(invalid(join(parent, segment), value, problem));
  }
}

function scalarProblem(value: unknown, shape: Scalar): string | undefined {
  switch (shape) {
    case 'any':
      return undefined;
    case 'string':
      return typeof value === 'string' ? undefined : 'must be of type string';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be of type boolean';
    case 'int64':
      return int(value) !== undefined && Number.isSafeInteger(value) ? undefined : 'must be of type integer';
    case 'int32': {
      const n = int(value);
      if (n === undefined) return 'must be of type integer';
      return n < INT32_MIN || n > INT32_MAX ? 'must be a 32-bit integer' : undefined;
    }
    case 'intOrString': {
      if (typeof value === 'string') return undefined;
      // The integer half of an IntOrString is an int32: 1e308 is no count of anything.
      const n = int(value);
      if (n === undefined) return "must be an integer or percentage (e.g '5%')";
      return n < INT32_MIN || n > INT32_MAX ? 'must be a 32-bit integer' : undefined;
    }
    case 'quantity': {
      const q = parseQuantityValue(value);
      return q.ok ? undefined : q.error;
    }
    case 'bytes':
      if (typeof value !== 'string') return 'must be of type string';
      return base64Problem(value);
    case 'time':
      if (typeof value !== 'string') return 'must be of type string';
      return isTimestamp(value) ? undefined : 'must be an RFC 3339 timestamp';
  }
}

/** The last string `isTimestamp` accepted: the server's own timestamps repeat within a second. */
let lastTimestamp = '';

function isTimestamp(value: string): boolean {
  if (value === lastTimestamp) return true;
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value))) return false;
  lastTimestamp = value;
  return true;
}

/** The reference's decoding error for a malformed base64 string, or `undefined` when it decodes. */
export function base64Problem(s: string): string | undefined {
  if (BASE64.test(s) && s.length % 4 === 0) return undefined;
  const bad = s.search(/[^A-Za-z0-9+/=]/);
  const at = bad >= 0 ? bad : s.length - (s.length % 4 || 4);
  return `illegal base64 data at input byte ${Math.max(at, 0)}`;
}

/** Decodes a `bytes` member; `undefined` when absent, not a string or not base64. */
export function bytes(v: unknown): Buffer | undefined {
  if (typeof v !== 'string' || base64Problem(v)) return undefined;
  return Buffer.from(v, 'base64');
}

const SCHEMA_SCALARS: Record<string, Shape> = {
  string: 'string',
  integer: 'int64',
  boolean: 'boolean',
  'int-or-string': 'intOrString',
  quantity: 'quantity',
  time: 'time',
};

const SCHEMA_SHAPES = new WeakMap<object, Shape>();

/**
 * Members whose JSON type does not fit the field schema of a kind (`src/api/schema.ts`), as decoding into the
 * typed object would refuse them; none for kinds without a schema.
 */
export function schemaShapeErrors(value: unknown, kind: string, apiVersion?: string): FieldError[] {
  const schema = schemaFor(kind, apiVersion);
  if (!schema || typeof schema === 'string') return [];
  let shape = SCHEMA_SHAPES.get(schema);
  if (!shape) {
    shape = shapeOfSchema(schema);
    SCHEMA_SHAPES.set(schema, shape);
  }
  return checkShape(value, shape, '');
}

/** The shape of a field schema; numbers and free-form members accept any JSON value. */
function shapeOfSchema(node: Node): Shape {
  if (typeof node === 'string') return SCHEMA_SCALARS[node] ?? 'any';
  if ('object' in node) {
    return { fields: Object.fromEntries(Object.entries(node.object).map(([k, v]) => [k, shapeOfSchema(v)])) };
  }
  return 'list' in node ? { items: shapeOfSchema(node.list) } : { values: shapeOfSchema(node.map) };
}

// Shapes shared by several resources.

export const OWNER_REFERENCE: Shape = {
  fields: {
    apiVersion: 'string',
    kind: 'string',
    name: 'string',
    uid: 'string',
    controller: 'boolean',
    blockOwnerDeletion: 'boolean',
  },
};

export const OBJECT_META: Shape = {
  fields: {
    name: 'string',
    generateName: 'string',
    namespace: 'string',
    uid: 'string',
    resourceVersion: 'string',
    generation: 'int64',
    creationTimestamp: 'time',
    deletionTimestamp: 'time',
    deletionGracePeriodSeconds: 'int64',
    labels: { values: 'string' },
    annotations: { values: 'string' },
    ownerReferences: { items: OWNER_REFERENCE },
    finalizers: { items: 'string' },
    managedFields: {
      items: {
        fields: {
          manager: 'string',
          operation: 'string',
          apiVersion: 'string',
          time: 'time',
          fieldsType: 'string',
          fieldsV1: 'any',
          subresource: 'string',
        },
      },
    },
  },
};

export const LABEL_SELECTOR: Shape = {
  fields: {
    matchLabels: { values: 'string' },
    matchExpressions: { items: { fields: { key: 'string', operator: 'string', values: { items: 'string' } } } },
  },
};

/** A metav1.Condition. */
export const CONDITION: Shape = {
  fields: {
    type: 'string',
    status: 'string',
    observedGeneration: 'int64',
    lastTransitionTime: 'time',
    reason: 'string',
    message: 'string',
  },
};

/** The top-level object: metadata plus the given members. */
export function topLevel(fields: Record<string, Shape>): Shape {
  return { fields: { apiVersion: 'string', kind: 'string', metadata: OBJECT_META, ...fields } };
}

/** The root of an object: an error when it is not a JSON object at all. */
export function rootProblem(v: unknown): FieldError[] {
  return isObj(v) ? [] : [invalid('', v, 'must be of type object')];
}
