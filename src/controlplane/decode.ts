/**
 * Request body decoding for `fieldValidation`: parses JSON or YAML and reports the fields the reference
 * server would drop (unknown to the kind's schema) or keep only once (duplicate keys, last one wins),
 * each by its field path such as `spec.template.spec.containers[0].image`.
 */
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { KubeObject } from '../api/meta.ts';
import { type Node, schemaFor } from '../api/schema.ts';
import { badRequest, unsupportedMediaType } from './errors.ts';
import { decodeProtobufBody, PROTOBUF_MEDIA_TYPE } from './protobuf/index.ts';
import { schemaShapeErrors } from './validation/raw.ts';

export interface Decoded {
  object: unknown;
  /** Paths of fields the schema does not know. */
  unknown: string[];
  /** Paths of keys that appear more than once in the same object. */
  duplicate: string[];
}

/** A body that is not well-formed JSON or YAML. */
export class DecodeError extends Error {
  override name = 'DecodeError';
}

/** A body of a content type `decodeBody` does not read (answered 415, not 400). */
export class UnsupportedMediaTypeError extends DecodeError {
  override name = 'UnsupportedMediaTypeError';
}

const JSON_TYPES = new Set([
  'application/json',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
]);
const YAML_TYPES = new Set(['application/yaml', 'application/apply-patch+yaml']);

const BLANK = /^\s*$/;

/** Whether a body is only white space (tested, not trimmed: a body can be megabytes). */
export function isBlank(text: string): boolean {
  return BLANK.test(text);
}

/**
 * Decodes a request body by its content type (JSON, YAML, a patch type, or Kubernetes protobuf), reporting unknown
 * fields (against `schema`) and duplicate keys; any other content type throws UnsupportedMediaTypeError.
 */
export function decodeBody(text: string, contentType: string, schema: Node | undefined): Decoded {
  const mediaType = contentType.split(';', 1)[0].trim().toLowerCase();
  let object: unknown;
  let duplicate: string[];
  if (JSON_TYPES.has(mediaType)) {
    try {
      object = JSON.parse(text);
    } catch (e) {
      throw new DecodeError(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
    duplicate = findDuplicateKeys(text);
  } else if (YAML_TYPES.has(mediaType)) {
    ({ object, duplicate } = decodeYaml(text));
  } else if (mediaType === PROTOBUF_MEDIA_TYPE) {
    // `text` holds the bytes one per character (binary/latin1); protobuf has no duplicate keys.
    try {
      object = decodeProtobufBody(text);
    } catch (e) {
      throw new DecodeError(`failed to decode protobuf body: ${(e as Error).message}`);
    }
    duplicate = [];
  } else {
    throw new UnsupportedMediaTypeError(`unsupported media type "${mediaType}"`);
  }
  const unknown: string[] = [];
  if (schema) findUnknownFields(object, schema, [], unknown);
  return { object, unknown, duplicate };
}

// ---------------------------------------------------------------------------------------------
// Duplicate keys in JSON text

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Objects with more keys than this (or any escaped key) compare keys through a Set instead of pairwise. */
const PAIRWISE_LIMIT = 32;

/**
 * Paths of the keys that occur more than once in one object of well-formed JSON text (check it with
 * JSON.parse first); each path is reported once. A single pass with no allocation per character: strings
 * are skipped with indexOf, keys are remembered as start and end offsets in the text (a stack over the open
 * objects) and compared in place. Key strings are only made for large objects, escaped keys and the paths of
 * duplicates.
 */
export function findDuplicateKeys(text: string): string[] {
  const keys = scratchKeys.reset(text);
  let expectKey = false;
  let duplicates: string[] | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      let end = text.indexOf('"', start);
      while (end > 0 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end < 0) break; // unterminated string: not JSON, nothing more to find
      if (expectKey) {
        if (keys.push(start, end)) {
          const path = keys.path();
          duplicates ??= [];
          if (!duplicates.includes(path)) duplicates.push(path);
        }
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      keys.open(c === OPEN_BRACE);
      expectKey = c === OPEN_BRACE;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      keys.close();
      expectKey = false;
    } else if (c === COMMA) {
      if (keys.inArray()) keys.nextItem();
      else expectKey = true;
    }
  }
  return duplicates ?? [];
}

/** The keys of the open objects of a JSON text, as offsets into it. */
class KeyStack {
  private readonly keyStart: number[] = [];
  private readonly keyEnd: number[] = [];
  private keyCount = 0;
  // Per nesting level: where its keys begin on the key stack, the key being read (objects) or the element
  // index (arrays, -1 for objects), and the Set of key strings once pairwise comparison is given up.
  private readonly firstKey: number[] = [];
  private readonly currentKey: number[] = [];
  private readonly index: number[] = [];
  private readonly sets: (Set<string> | undefined)[] = [];
  private depth = -1;
  private text = '';

  /** Starts on a text; the arrays keep their room from the texts before (what is beyond the stack is never read). */
  reset(text: string): this {
    this.text = text;
    this.keyCount = 0;
    this.depth = -1;
    return this;
  }

  open(isObject: boolean): void {
    const depth = ++this.depth;
    this.firstKey[depth] = this.keyCount;
    this.index[depth] = isObject ? -1 : 0;
    this.sets[depth] = undefined;
  }

  close(): void {
    this.keyCount = this.firstKey[this.depth];
    this.depth--;
  }

  inArray(): boolean {
    return this.index[this.depth] >= 0;
  }

  nextItem(): void {
    this.index[this.depth]++;
  }

  /** Adds the key between two offsets to the innermost object; true when that object already has it. */
  push(start: number, end: number): boolean {
    const duplicate = this.has(start, end);
    this.keyStart[this.keyCount] = start;
    this.keyEnd[this.keyCount] = end;
    this.currentKey[this.depth] = this.keyCount++;
    return duplicate;
  }

  /** The path of the key read last, e.g. `spec.containers[0].image`. */
  path(): string {
    let path = '';
    for (let d = 0; d <= this.depth; d++) {
      path = this.index[d] >= 0 ? `${path}[${this.index[d]}]` : join(path, this.keyText(this.currentKey[d]));
    }
    return path;
  }

  private keyText(k: number): string {
    return decodeKey(this.text, this.keyStart[k], this.keyEnd[k]);
  }

  private has(start: number, end: number): boolean {
    const { text, depth, keyStart, keyEnd } = this;
    const first = this.firstKey[depth];
    let set = this.sets[depth];
    if (set === undefined && (this.keyCount - first >= PAIRWISE_LIMIT || hasBackslash(text, start, end))) {
      set = new Set();
      for (let k = first; k < this.keyCount; k++) set.add(this.keyText(k));
      this.sets[depth] = set;
    }
    if (set !== undefined) {
      const key = decodeKey(text, start, end);
      if (set.has(key)) return true;
      set.add(key);
      return false;
    }
    for (let k = first; k < this.keyCount; k++) {
      if (keyEnd[k] - keyStart[k] === end - start && sameText(text, keyStart[k], start, end - start)) return true;
    }
    return false;
  }
}

/** One stack for every scan: a scan runs to its end without yielding, and bodies come one after another. */
const scratchKeys = new KeyStack();

/** Whether the quote at `at` is preceded by an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let j = at - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
  return backslashes % 2 === 1;
}

function hasBackslash(text: string, start: number, end: number): boolean {
  for (let j = start; j < end; j++) if (text.charCodeAt(j) === BACKSLASH) return true;
  return false;
}

function sameText(text: string, a: number, b: number, length: number): boolean {
  for (let j = 0; j < length; j++) if (text.charCodeAt(a + j) !== text.charCodeAt(b + j)) return false;
  return true;
}

/** The key between two offsets, its escapes resolved. */
function decodeKey(text: string, start: number, end: number): string {
  const raw = text.slice(start, end);
  return hasBackslash(raw, 0, raw.length) ? (JSON.parse(`"${raw}"`) as string) : raw;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

// ---------------------------------------------------------------------------------------------
// YAML

function decodeYaml(text: string): { object: unknown; duplicate: string[] } {
  // Tags such as `!!binary` stay strings: the result is plain JSON, as sigs.k8s.io/yaml converts it.
  const doc = parseDocument(text, { uniqueKeys: false, resolveKnownTags: false });
  const error = doc.errors[0];
  if (error) {
    const line = error.linePos?.[0].line;
    const detail = error.message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '');
    throw new DecodeError(`error converting YAML to JSON: yaml: ${line ? `line ${line}: ` : ''}${detail}`);
  }
  const duplicate: string[] = [];
  findYamlDuplicates(doc.contents, '', duplicate);
  return { object: doc.toJS(), duplicate };
}

function findYamlDuplicates(node: unknown, path: string, out: string[]): void {
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const child = join(path, key);
      if (!seen.has(key)) seen.add(key);
      else if (!out.includes(child)) out.push(child);
      findYamlDuplicates(pair.value, child, out);
    }
  } else if (isSeq(node)) {
    for (let i = 0; i < node.items.length; i++) findYamlDuplicates(node.items[i], `${path}[${i}]`, out);
  }
}

// ---------------------------------------------------------------------------------------------
// Unknown fields

/**
 * Walks a decoded value against its schema, collecting the paths of fields the schema does not know.
 * `at` is the path so far (keys and list indexes), made into a string only for an unknown field; values of
 * the wrong shape are left to validation.
 */
function findUnknownFields(value: unknown, node: Node, at: (string | number)[], out: string[]): void {
  if (typeof node === 'string' || typeof value !== 'object' || value === null) return;
  if ('list' in node) {
    if (!Array.isArray(value)) return;
    for (let i = 0; i < value.length; i++) {
      at.push(i);
      findUnknownFields(value[i], node.list, at, out);
      at.pop();
    }
    return;
  }
  if (Array.isArray(value)) return;
  for (const key in value) {
    const child = 'map' in node ? node.map : Object.hasOwn(node.object, key) ? node.object[key] : undefined;
    if (typeof child === 'string') continue;
    at.push(key);
    if (child === undefined) out.push(pathString(at));
    else findUnknownFields((value as Record<string, unknown>)[key], child, at, out);
    at.pop();
  }
}

function pathString(at: readonly (string | number)[]): string {
  let path = '';
  for (const segment of at) path = typeof segment === 'number' ? `${path}[${segment}]` : join(path, segment);
  return path;
}

// ---------------------------------------------------------------------------------------------
// Messages

/** One warning per dropped field, as the reference server sends them in `Warning` headers (Warn). */
export function fieldValidationWarnings(unknown: readonly string[], duplicate: readonly string[]): string[] {
  return [...unknown.map((p) => `unknown field "${p}"`), ...duplicate.map((p) => `duplicate field "${p}"`)];
}

/** The message of the bad-request error under Strict (call it when something was dropped). */
export function strictDecodingError(unknown: readonly string[], duplicate: readonly string[]): string {
  return `strict decoding error: ${fieldValidationWarnings(unknown, duplicate).join(', ')}`;
}

/**
 * The body of a subresource request (eviction, token request) as one object of `kind`: JSON, YAML or protobuf,
 * a JSON object, of that kind and of one of `apiVersions` when it names them. A 400 or 415 says what is wrong.
 */
export function decodeKindBody(
  body: { text: string; contentType: string } | undefined,
  kind: string,
  apiVersions: readonly string[],
): KubeObject {
  if (!body || isBlank(body.text)) throw badRequest('the request body is empty');
  let object: unknown;
  try {
    object = decodeBody(body.text, body.contentType, schemaFor(kind, apiVersions[0])).object;
  } catch (err) {
    if (err instanceof UnsupportedMediaTypeError) {
      throw unsupportedMediaType(body.contentType, ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE]);
    }
    throw badRequest(err instanceof Error ? err.message : String(err));
  }
  if (!object || typeof object !== 'object' || Array.isArray(object)) {
    throw badRequest('the body of the request must be a JSON object');
  }
  const decoded = object as KubeObject;
  if (decoded.metadata === null || typeof decoded.metadata !== 'object' || Array.isArray(decoded.metadata)) {
    if (decoded.metadata !== undefined) throw badRequest('metadata must be an object');
    decoded.metadata = {};
  }
  const mistyped = schemaShapeErrors(decoded, kind, apiVersions[0]);
  if (mistyped.length) throw badRequest(`${kind}: ${mistyped.map((e) => e.message).join(', ')}`);
  if (decoded.kind !== undefined && decoded.kind !== kind) {
    throw badRequest(`the kind in the data (${decoded.kind}) does not match the expected kind (${kind})`);
  }
  if (decoded.apiVersion !== undefined && !apiVersions.includes(decoded.apiVersion)) {
    throw badRequest(
      `the API version in the data (${decoded.apiVersion}) does not match the expected API version (${apiVersions[0]})`,
    );
  }
  return decoded;
}
