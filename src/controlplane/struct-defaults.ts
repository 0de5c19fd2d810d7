/**
 * The empty structs the reference always writes. A Go field holding a struct by value (not a pointer) is
 * marshalled even when empty, `omitempty` or not: a CertificateSigningRequest read back has `"status": {}`, a
 * Service `"status": {"loadBalancer": {}}`, every container `"resources": {}`; the reference's OpenAPI marks such
 * fields `default: {}`. So is a scalar tagged without `omitempty`, zero included (a new StatefulSet's
 * `status.replicas: 0`). Which fields they are comes from the protobuf tables of the kinds (the schema's shape and
 * the numbers table's pointer and `!` marks), not from a list per kind.
 */
import type { KubeObject } from '../api/meta.ts';
import type { FieldSpec, MessageTable, ScalarKind } from './protobuf/schema.ts';
import { tableForKind } from './protobuf/tables.ts';

type Json = Record<string, unknown>;

/** A message field that holds an object (or objects) to visit, `always` for a by-value struct; or a scalar's zero. */
type Step =
  | { name: string; table: MessageTable; shape: 'one' | 'list' | 'map'; always: boolean }
  | { name: string; zero: unknown };

/** The zero values of the scalars a `!` mark may carry; a by-value `Time` marshals its zero as null. */
const ZEROS: Partial<Record<ScalarKind, unknown>> = {
  int32: 0,
  int64: 0,
  double: 0,
  string: '',
  bool: false,
  time: null,
  microTime: null,
};

const plans = new WeakMap<MessageTable, Step[]>();

/** The fields of a message whose values are messages with a JSON object form; inline ones flattened in. */
function planOf(table: MessageTable): Step[] {
  let plan = plans.get(table);
  if (plan) return plan;
  plan = [];
  plans.set(table, plan); // before the fields: a message may reach itself
  for (const spec of Object.values(table.fields) as FieldSpec[]) {
    const kind = spec.kind;
    if (spec.always && typeof kind === 'string' && Object.hasOwn(ZEROS, kind)) {
      plan.push({ name: spec.name, zero: ZEROS[kind] });
      continue;
    }
    // Scalars and special types (Time marshals its zero as null) are no structs here; `unwrap` ones are lists.
    if (typeof kind !== 'object' || kind.unwrap !== undefined) continue;
    if (spec.inline) {
      plan.push(...planOf(kind));
      continue;
    }
    const shape = spec.repeated ? 'list' : spec.map ? 'map' : 'one';
    plan.push({ name: spec.name, table: kind, shape, always: shape === 'one' && !spec.keep });
  }
  return plan;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value` with every by-value struct below it present; the same object when nothing was missing (copy on write). */
function fill(value: Json, table: MessageTable, zeros: boolean): Json {
  let out = value;
  const set = (name: string, v: unknown) => {
    if (out === value) out = { ...value };
    out[name] = v;
  };
  for (const step of planOf(table)) {
    const current = value[step.name];
    if ('zero' in step) {
      if (current === undefined && zeros) set(step.name, step.zero);
    } else if (step.shape === 'one') {
      if (current === undefined && step.always) set(step.name, fill({}, step.table, zeros));
      else if (isObject(current)) {
        const filled = fill(current, step.table, zeros);
        if (filled !== current) set(step.name, filled);
      }
    } else if (step.shape === 'list' && Array.isArray(current)) {
      const items = current.map((item) => (isObject(item) ? fill(item, step.table, zeros) : item));
      if (items.some((item, i) => item !== current[i])) set(step.name, items);
    } else if (step.shape === 'map' && isObject(current)) {
      const entries = Object.entries(current).map(
        ([k, v]) => [k, isObject(v) ? fill(v, step.table, zeros) : v] as const,
      );
      if (entries.some(([k, v]) => v !== current[k])) set(step.name, Object.fromEntries(entries));
    }
  }
  return out;
}

/**
 * `obj` as the reference would serialize it: every by-value struct present, `{}` when empty. The same object when
 * nothing was missing, else a copy sharing what did not change (stored objects are never changed in place).
 * `zeros: false` leaves the unset scalars out: the reference's managed fields of a create do not list them.
 */
export function withEmptyStructs<T extends KubeObject>(obj: T, zeros = true): T {
  const table = obj.kind ? tableForKind(obj.kind, obj.apiVersion) : undefined;
  return table ? (fill(obj as Json, table, zeros) as T) : obj;
}
