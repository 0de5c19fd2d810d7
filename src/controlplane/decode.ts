/**
 * Request body decoding for `fieldValidation`: parses JSON or YAML and reports the fields the reference
 * server would drop (unknown to the kind's schema) or keep only once (duplicate keys, last one wins),
 * each by its field path such as `spec.template.spec.containers[0].image`.
 */
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { KubeObject } from '../api/meta.ts';
import { type Node, schemaFor } from '../api/schema.ts';
import { jsonDepthError, MAX_DEPTH, yamlDepthExceededLine } from './depth.ts';
import { badRequest, unsupportedMediaType } from './errors.ts';
import { goJsonSyntaxError } from './go-json.ts';
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

/** JSON text that is not well-formed, worded as Go's decoder words it. */
export class JsonSyntaxError extends DecodeError {
  override name = 'JsonSyntaxError';
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

/** What a create or update body may be, as the reference's 415 lists them. */
export const BODY_MEDIA_TYPES = ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE];

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
    object = parseJson(text);
    const scanned = scanJsonKeys(text);
    duplicate = scanned.duplicate;
    if (schema) refuseWrittenFractions(scanned.fractional, schema);
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

/** JSON text as a value, refused (before it is parsed) when it nests deeper than the limit. */
export function parseJson(text: string): unknown {
  const tooDeep = jsonDepthError(text);
  if (tooDeep) throw new JsonSyntaxError(`couldn't get version/kind; json parse error: ${tooDeep}`);
  try {
    return JSON.parse(text);
  } catch (e) {
    const why = goJsonSyntaxError(Buffer.from(text)) ?? (e as Error).message;
    throw new JsonSyntaxError(`couldn't get version/kind; json parse error: ${why}`);
  }
}

/**
 * The reference's 400 for a create or update body it cannot read as any object: the kind it wanted, the decoding
 * error, and the body's start (the first 30 bytes, as text when it opens an object, else in hex).
 */
export function unrecognizedObject(kind: string, error: string, body: string): string {
  // 31 characters are more than 30 bytes and keep a surrogate pair at the cut whole; the rest is never copied.
  const start = Buffer.from(body.slice(0, 31));
  const head = start.subarray(0, 30);
  const summary =
    start.length === 0
      ? '<empty>'
      : `${head[0] === 0x7b ? head.toString('utf8') : head.toString('hex')}${start.length > 30 ? ' ...' : ''}`;
  return `the object provided is unrecognized (must be of type ${kind}): ${error} (${summary})`;
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
  return scanJsonKeys(text).duplicate;
}

/** A number written with a fraction or an exponent (`1e2`, `3.0`), where it sits and how it was written. */
export interface WrittenNumber {
  at: (string | number)[];
  text: string;
}

/** `findDuplicateKeys`, and the numbers written with a fraction or an exponent (which JSON.parse forgets). */
export function scanJsonKeys(text: string): { duplicate: string[]; fractional: WrittenNumber[] } {
  const keys = scratchKeys.reset(text);
  let expectKey = false;
  let duplicates: string[] | undefined;
  let fractional: WrittenNumber[] | undefined;
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
    } else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      // Outside strings, digits are only numbers; most are plain integers, skipped without a copy.
      let end = i + 1;
      let plain = true;
      for (let d = text.charCodeAt(end); isNumberChar(d); d = text.charCodeAt(++end)) {
        if (d === DOT || d === LOWER_E || d === UPPER_E) plain = false;
      }
      if (!plain) {
        fractional ??= [];
        fractional.push({ at: keys.segments(), text: text.slice(i, end) });
      }
      i = end - 1;
    }
  }
  return { duplicate: duplicates ?? [], fractional: fractional ?? [] };
}

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const isNumberChar = (c: number) =>
  (c >= DIGIT_0 && c <= DIGIT_9) || c === DOT || c === LOWER_E || c === UPPER_E || c === MINUS || c === PLUS;

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

  /** The path of the value being read, as keys and list indexes. */
  segments(): (string | number)[] {
    const at: (string | number)[] = [];
    for (let d = 0; d <= this.depth; d++)
      at.push(this.index[d] >= 0 ? this.index[d] : this.keyText(this.currentKey[d]));
    return at;
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

/**
 * Go's decoder reads an integer field's number as written: `1e2` or `100.0` is no int32, although JSON.parse
 * makes both 100. Refuses such a number in an integer or int-or-string field of the schema, as Go does.
 */
function refuseWrittenFractions(numbers: readonly WrittenNumber[], schema: Node): void {
  for (const { at, text } of numbers) {
    let node: Node | undefined = schema;
    for (const segment of at) {
      if (node === undefined || typeof node === 'string') break;
      node =
        'object' in node
          ? Object.hasOwn(node.object, segment)
            ? node.object[segment]
            : undefined
          : 'map' in node
            ? node.map
            : node.list;
    }
    if (node === 'integer' || node === 'int-or-string') {
      const type = node === 'integer' ? 'int64' : 'int32';
      throw new DecodeError(
        `json: cannot unmarshal number ${text} into Go struct field ${pathString(at)} of type ${type}`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// YAML

/** The tags sigs.k8s.io/yaml (go-yaml) decodes into plain values; any other tag is refused. */
const KNOWN_TAGS = new Set(
  ['null', 'bool', 'str', 'int', 'float', 'timestamp', 'seq', 'map', 'binary', 'merge'].map(
    (t) => `tag:yaml.org,2002:${t}`,
  ),
);

const yamlError = (detail: string, line?: number) =>
  new DecodeError(`error converting YAML to JSON: yaml: ${line ? `line ${line}: ` : ''}${detail}`);

/**
 * The words go-yaml v2 (the reference's YAML reader) takes as booleans besides `true` and `false`, unquoted:
 * a string field given `yes` is then refused as the reference refuses it.
 */
const YAML_11_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON']);
const YAML_11_BOOLEAN = {
  tag: 'tag:yaml.org,2002:bool',
  default: true,
  identify: (value: unknown) => typeof value === 'boolean',
  test: /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/,
  resolve: (word: string) => YAML_11_TRUE.has(word),
};

function decodeYaml(text: string): { object: unknown; duplicate: string[] } {
  // The YAML library composes nodes recursively: nothing deeper than the limit may reach it (nor a regex).
  const tooDeep = yamlDepthExceededLine(text);
  if (tooDeep) throw yamlError(`exceeded max depth of ${MAX_DEPTH}`, tooDeep);
  // Tags such as `!!binary` stay strings: the result is plain JSON, as sigs.k8s.io/yaml converts it.
  const doc = parseDocument(text, { uniqueKeys: false, resolveKnownTags: false, customTags: [YAML_11_BOOLEAN] });
  const error = doc.errors[0];
  if (error) {
    const detail = error.message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '');
    throw yamlError(detail, error.linePos?.[0].line);
  }
  const duplicate: string[] = [];
  findYamlDuplicates(doc.contents, '', duplicate);
  // An alias repeats a nested node inside another: the text's nesting is not the value's.
  if (text.includes('*')) {
    const expanded = expandedHeight(doc);
    if (expanded === 'cycle') throw yamlError('anchor value contains itself');
    if (expanded > MAX_DEPTH) throw yamlError(`exceeded max depth of ${MAX_DEPTH}`);
  }
  let object: unknown;
  try {
    object = doc.toJS();
  } catch (e) {
    // The library's own bound on alias expansion (maxAliasCount), worded as go-yaml words its own.
    if (/excessive alias count/i.test((e as Error).message)) throw yamlError('document contains excessive aliasing');
    throw yamlError((e as Error).message);
  }
  return { object, duplicate };
}

/**
 * The nesting of a composed document with its aliases expanded, or `cycle` when an anchored node holds an alias
 * to itself, computed before anything expands them: each node's height once (aliases share their anchor's),
 * with an explicit stack, so neither repetition nor depth costs more than the nodes there are.
 */
function expandedHeight(doc: Document): number | 'cycle' {
  const IN_PROGRESS = -1;
  const heights = new Map<unknown, number>();
  const children = (node: unknown): unknown[] | undefined => {
    if (isAlias(node)) return [node.resolve(doc)];
    if (isMap(node)) return node.items.flatMap((pair) => [pair.key, pair.value]);
    if (isSeq(node)) return node.items;
    // A pair inside a sequence (`[a: b]`) is a mapping of one entry.
    if (isPair(node)) return [node.key, node.value];
    return undefined;
  };
  const stack: Array<[unknown, boolean]> = [[doc.contents, false]];
  while (stack.length) {
    const [node, childrenDone] = stack.pop() as [unknown, boolean];
    const below = children(node);
    if (!below) continue;
    if (childrenDone) {
      let height = 0;
      for (const child of below) height = Math.max(height, heights.get(child) ?? 0);
      heights.set(node, isAlias(node) ? height : height + 1);
      continue;
    }
    const known = heights.get(node);
    if (known === IN_PROGRESS) return 'cycle';
    if (known !== undefined) continue;
    heights.set(node, IN_PROGRESS);
    stack.push([node, true]);
    for (const child of below) stack.push([child, false]);
  }
  return heights.get(doc.contents) ?? 0;
}

/**
 * Collects the paths of duplicate keys and refuses a tag go-yaml would not decode (`!!js/function`, `!local`).
 * Recursion is bounded: the text was checked against the depth limit, and the library composed it.
 */
function findYamlDuplicates(node: unknown, path: string, out: string[]): void {
  const tag = (node as { tag?: string } | null)?.tag;
  if (tag && tag !== '!' && !KNOWN_TAGS.has(tag)) {
    const shown = tag.replace(/^tag:yaml\.org,2002:/, '!!');
    const value = isScalar(node) ? ` \`${String(node.value).slice(0, 100)}\`` : '';
    throw yamlError(`cannot decode${value} tagged ${shown}: unknown tag`);
  }
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
  if (typeof value !== 'object' || value === null) return;
  if (typeof node === 'string') {
    // A collection where the schema has a scalar: Go's typed decoder stops here, before anything walks it.
    if (node === 'any') return;
    const what = Array.isArray(value) ? 'array' : 'object';
    throw new DecodeError(
      `json: cannot unmarshal ${what} into Go struct field ${pathString(at)} of type ${GO_TYPES[node]}`,
    );
  }
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
    at.push(key);
    if (child === undefined) out.push(pathString(at));
    else findUnknownFields((value as Record<string, unknown>)[key], child, at, out);
    at.pop();
  }
}

/** The Go type of each scalar of the schema, for decoding errors. */
const GO_TYPES: Readonly<Record<Exclude<Node, object | 'any'>, string>> = {
  string: 'string',
  integer: 'int64',
  number: 'float64',
  boolean: 'bool',
  'int-or-string': 'intstr.IntOrString',
  quantity: 'resource.Quantity',
  time: 'v1.Time',
};

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
      throw unsupportedMediaType(BODY_MEDIA_TYPES);
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
