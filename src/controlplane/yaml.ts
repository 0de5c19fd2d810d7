/**
 * YAML for answers (`Accept: application/yaml`): a fast emitter for JSON-shaped data only — plain objects,
 * arrays, strings, numbers, booleans and null — in block style, as `kubectl get -o yaml` shows objects. The general
 * `yaml` library's `stringify` took tens of seconds for a list of 50,000 ConfigMaps; this, under a second
 * (`npm run bench -- biglist`).
 *
 * A string is written plain only when every YAML reader takes it back as that same string: a letter, `_` or `/`
 * first, then letters, digits and `_ . / -`, single spaces and colons each followed by one of those, and not one
 * of the words YAML 1.1 (Go's YAML, kubectl's) reads as a boolean or null, nor an exponent alone (`e0`).
 * Everything else is double-quoted with JSON's escapes (all valid in YAML) plus `\u` escapes for the characters
 * YAML may not carry raw.
 */

const INDENT = '  ';
const PLAIN = /^[A-Za-z_/][\w./-]*(?:[ :][\w./-]+)*$/;
const RESERVED = new Set(['true', 'false', 'yes', 'no', 'on', 'off', 'y', 'n', 'null']);
/** An exponent alone (`e0`): the yaml library's YAML 1.1 reads it as a float (NaN). */
const EXPONENT = /^[eE][-+]?\d+$/;
/** Characters JSON leaves raw that YAML must not see raw (or that YAML 1.1 reads as line breaks). */
const UNPRINTABLE = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g;
/** YAML's limit on an implicit key; longer keys are written explicitly (`? key`). */
const MAX_IMPLICIT_KEY = 1024;

/** The YAML document of a JSON-shaped value, ending in a newline. */
export function toYaml(value: unknown): string {
  return isBlock(value) ? block(value, '') : `${scalar(value)}\n`;
}

/** One item of a top-level sequence (`- ...` at column 0): the pieces of a list's `items:` written one by one. */
export function yamlSequenceItem(value: unknown): string {
  return sequenceItem(value, '');
}

/** Whether a value is written as a block (a non-empty object or array) rather than on its key's line. */
function isBlock(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  for (const key in value) if ((value as Record<string, unknown>)[key] !== undefined) return true;
  return false;
}

function block(value: object, indent: string): string {
  let out = '';
  if (Array.isArray(value)) {
    for (const item of value) out += sequenceItem(item, indent);
    return out;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const v = object[key];
    if (v === undefined) continue;
    const k = string(key);
    out += k.length > MAX_IMPLICIT_KEY ? `${indent}? ${k}\n${indent}:` : `${indent}${k}:`;
    if (!isBlock(v)) out += ` ${scalar(v)}\n`;
    // A sequence sits at its key's indentation (as Go writes it); a mapping one level in.
    else out += `\n${block(v, Array.isArray(v) ? indent : indent + INDENT)}`;
  }
  return out;
}

function sequenceItem(item: unknown, indent: string): string {
  if (!isBlock(item)) return `${indent}- ${scalar(item ?? null)}\n`;
  // The item's block one level in, its first line's indentation taken by the dash.
  return `${indent}- ${block(item, indent + INDENT).slice(indent.length + INDENT.length)}`;
}

function scalar(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return string(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return Array.isArray(value) ? '[]' : '{}';
    default:
      return 'null';
  }
}

function string(s: string): string {
  if (PLAIN.test(s) && !RESERVED.has(s.toLowerCase()) && !EXPONENT.test(s)) return s;
  return JSON.stringify(s).replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
