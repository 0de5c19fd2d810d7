/**
 * Field-level validation errors, rendered the way the reference renders them
 * (`<field>: <Type text>[: <value>][: <detail>]`), plus path helpers.
 *
 * Value rendering follows the reference: integers and booleans print bare, strings print Go-quoted,
 * `null`/absent prints `null`, anything else prints as JSON (object keys sorted, `<`, `>` and `&` escaped).
 */

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany';

export interface FieldError {
  type: FieldErrorType;
  /** The field path, e.g. `spec.usages[1]` or `spec.limits[0].max[cpu]`. */
  field: string;
  /** The full rendered text, e.g. `spec.signerName: Required value`. */
  message: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
};

/** Marks a value that is not printed (the reference's "omit value"). */
const OMIT: unique symbol = Symbol('omit');

function build(type: FieldErrorType, field: string, value: unknown, detail: string): FieldError {
  let body = TYPE_TEXT[type];
  const valueShown = type !== 'FieldValueRequired' && type !== 'FieldValueForbidden' && type !== 'FieldValueTooLong';
  if (valueShown && value !== OMIT) body += `: ${renderValue(value)}`;
  if (detail) body += `: ${detail}`;
  return { type, field, message: `${field}: ${body}` };
}

/** The message without the leading `<field>: ` (what a Status cause carries). */
export function errorBody(e: FieldError): string {
  return e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message;
}

export function required(path: string, detail = ''): FieldError {
  return build('FieldValueRequired', path, OMIT, detail);
}

export function invalid(path: string, value: unknown, detail: string): FieldError {
  return build('FieldValueInvalid', path, value, detail);
}

export function notSupported(path: string, value: unknown, allowed: readonly string[]): FieldError {
  const detail = allowed.length ? `supported values: ${allowed.map(goQuote).join(', ')}` : '';
  return build('FieldValueNotSupported', path, value, detail);
}

export function duplicate(path: string, value: unknown): FieldError {
  return build('FieldValueDuplicate', path, value, '');
}

export function forbidden(path: string, detail: string): FieldError {
  return build('FieldValueForbidden', path, OMIT, detail);
}

/** `Too long: may not be more than <n> bytes` (a negative maximum gives `value is too long`). */
export function tooLong(path: string, maxLength: number): FieldError {
  const detail =
    maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return build('FieldValueTooLong', path, OMIT, detail);
}

/** `Too many: <actual>: must have at most <max> items`. */
export function tooMany(path: string, actual: number, max: number): FieldError {
  const detail = max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items';
  return build('FieldValueTooMany', path, actual >= 0 ? actual : OMIT, detail);
}

export const FIELD_IMMUTABLE = 'field is immutable';

/** `Invalid value: <new>: field is immutable` when `next` differs from `prev`. */
export function validateImmutableField(next: unknown, prev: unknown, path: string): FieldError[] {
  return deepEqual(next, prev) ? [] : [invalid(path, next, FIELD_IMMUTABLE)];
}

// ---------------------------------------------------------------------------------------------
// Paths

export function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}

// ---------------------------------------------------------------------------------------------
// Value rendering

export function renderValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return goQuote(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return goNumber(value);
    case 'bigint':
      return value.toString();
    default:
      return goJSON(value);
  }
}

/** Numbers as Go prints an int64 (integers) or a float64 with `%v`. */
export function goNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 21) {
    const [mant, e] = n.toExponential().split('e');
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '').padStart(2, '0');
    return `${mant}e${sign}${digits}`;
  }
  return String(n);
}

const SHORT_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** A double-quoted string with Go escaping (strconv.Quote). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const short = SHORT_ESCAPES[ch];
    if (short) {
      out += short;
      continue;
    }
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** JSON the way Go's encoding/json writes it: sorted object keys, HTML-sensitive characters escaped. */
export function goJSON(value: unknown): string {
  const text = JSON.stringify(sortKeys(value)) ?? 'null';
  return text
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  if (typeof value === 'bigint') return Number(value);
  return value;
}

/** Structural equality of JSON values (key order ignored; absent, `undefined` and `null` members are alike). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a == null || b == null) return a == null && b == null;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] != null);
  const bk = Object.keys(bo).filter((k) => bo[k] != null);
  return ak.length === bk.length && ak.every((k) => Object.hasOwn(bo, k) && deepEqual(ao[k], bo[k]));
}
