/**
 * The alpha `shardSelector` list/watch parameter (ShardedListAndWatch):
 *
 *   shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(...)
 *
 * An object matches when the 64-bit FNV-1a hash of the named field falls in one of the ranges,
 * start inclusive, end exclusive. Bounds are written with exactly 16 lowercase hex digits, except
 * the end of the hash space, `0x10000000000000000`. As in the reference, every range names the same
 * field and each start is below its end. Shared: the embedded plane filters lists and watches with it,
 * the client's sharded informers write and check it.
 */
import { SelectorError } from './labels.ts';
import type { KubeObject } from './meta.ts';

export type ShardPath = 'object.metadata.uid' | 'object.metadata.namespace';

export interface ShardRange {
  readonly path: ShardPath;
  readonly start: bigint;
  readonly end: bigint;
}

export interface ShardSelector {
  readonly ranges: readonly ShardRange[];
  matches(obj: KubeObject): boolean;
  /** Canonical text, ranges joined by ` || `; parses back to the same selector. */
  toString(): string;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;
const utf8 = new TextEncoder();

/** 64-bit FNV-1a of the string's UTF-8 bytes. */
export function fnv1a64(s: string): bigint {
  let hash = FNV_OFFSET;
  for (const byte of utf8.encode(s)) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  return hash;
}

export function parseShardSelector(text: string): ShardSelector {
  const scanner = new Scanner(text);
  if (scanner.atEnd()) {
    throw new SelectorError('empty shard selector is not allowed; omit the parameter for unfiltered lists');
  }
  const ranges = [shardRange(scanner)];
  while (!scanner.atEnd()) {
    if (!scanner.eat('||')) {
      throw new SelectorError(`expected '||' or end of selector at position ${scanner.pos}, found ${scanner.found()}`);
    }
    ranges.push(shardRange(scanner));
  }
  const other = ranges.find((r) => r.path !== ranges[0].path);
  if (other) {
    throw new SelectorError(`all shard ranges must use the same field, got "${ranges[0].path}" and "${other.path}"`);
  }
  return new RangeSelector(ranges);
}

class RangeSelector implements ShardSelector {
  constructor(readonly ranges: readonly ShardRange[]) {}

  matches(obj: KubeObject): boolean {
    const meta = obj.metadata;
    const hash = fnv1a64((this.ranges[0].path === 'object.metadata.uid' ? meta.uid : meta.namespace) ?? '');
    return this.ranges.some((r) => r.start <= hash && hash < r.end);
  }

  toString(): string {
    return shardRangesText(this.ranges);
  }
}

/** The selector text of ranges, joined by ` || `. */
export function shardRangesText(ranges: readonly ShardRange[]): string {
  return ranges.map((r) => `shardRange(${r.path}, '${hexBound(r.start)}', '${hexBound(r.end)}')`).join(' || ');
}

/** `0x` and 16 hex digits; the end of the space is `0x10000000000000000`. */
export function hexBound(n: bigint): string {
  return `0x${n.toString(16).padStart(16, '0')}`;
}

/** One argument: a bare word (a field path, or a bound someone forgot to quote) or a quoted string. */
interface Argument {
  quoted: boolean;
  text: string;
}

const PATHS: readonly ShardPath[] = ['object.metadata.uid', 'object.metadata.namespace'];

function shardRange(scanner: Scanner): ShardRange {
  const at = scanner.skipSpace();
  const name = scanner.word();
  if (!name || !scanner.eat('(')) throw new SelectorError(`expected a shardRange() call at position ${at}`);
  if (name !== 'shardRange') {
    throw new SelectorError(`unsupported function "${name}"; only shardRange() and || are allowed`);
  }
  const args: Argument[] = [];
  if (!scanner.eat(')')) {
    do {
      args.push(argument(scanner));
    } while (scanner.eat(','));
    if (!scanner.eat(')')) {
      throw new SelectorError(`expected ',' or ')' at position ${scanner.pos}, found ${scanner.found()}`);
    }
  }
  if (args.length !== 3) throw new SelectorError(`shardRange() requires exactly 3 arguments, got ${args.length}`);

  const [field, startArg, endArg] = args;
  if (field.quoted) {
    throw new SelectorError(
      `shardRange() first argument: expected field path (e.g. object.metadata.uid), got '${field.text}'`,
    );
  }
  const path = PATHS.find((p) => p === field.text);
  if (!path) throw new SelectorError(`unsupported field path "${field.text}"; supported: ${PATHS.join(', ')}`);
  const start = bound(startArg, 'hexStart');
  const end = bound(endArg, 'hexEnd');
  if (start >= end) {
    throw new SelectorError(`shard range start ${startArg.text} must be less than end ${endArg.text}`);
  }
  return { path, start, end };
}

function argument(scanner: Scanner): Argument {
  const at = scanner.skipSpace();
  if (scanner.eat("'")) {
    const close = scanner.text.indexOf("'", scanner.pos);
    if (close < 0) throw new SelectorError(`unterminated string literal at position ${at}`);
    const text = scanner.text.slice(scanner.pos, close);
    scanner.pos = close + 1;
    return { quoted: true, text };
  }
  const text = scanner.word();
  if (!text) {
    throw new SelectorError(
      `expected a field path or a single-quoted hex string at position ${at}, found ${scanner.found()}`,
    );
  }
  return { quoted: false, text };
}

/** A bound: `'0x'` and 16 lowercase hex digits, or `'0x10000000000000000'` (2^64). */
function bound(arg: Argument, name: string): bigint {
  const s = arg.text;
  if (!arg.quoted)
    throw new SelectorError(`${name} must be a single-quoted string literal (e.g. '0x8000000000000000'), got ${s}`);
  if (!s.startsWith('0x')) throw new SelectorError(`${name} must have '0x' prefix, got "${s}"`);
  const digits = s.slice(2);
  if (digits === '') throw new SelectorError(`${name}: hex value is required after '0x'`);
  if (digits.length > 17) {
    throw new SelectorError(`${name}: hex value too long (${digits.length} chars, max 17): "${digits}"`);
  }
  const bad = /[^0-9a-f]/.exec(digits);
  if (bad) throw new SelectorError(`${name}: invalid hex character "${bad[0]}" in "${s}"`);
  if (digits.length === 17 && s !== '0x10000000000000000') {
    throw new SelectorError(`${name}: 17-digit hex value must be '0x10000000000000000' (2^64), got "${s}"`);
  }
  if (digits.length < 16) {
    throw new SelectorError(
      `${name} must be a 0x-prefixed 16-digit hex value, got "${s}" (did you mean "0x${digits.padStart(16, '0')}"?)`,
    );
  }
  return BigInt(s);
}

class Scanner {
  pos = 0;

  constructor(readonly text: string) {}

  /** Skips whitespace and answers the position reached. */
  skipSpace(): number {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
    return this.pos;
  }

  atEnd(): boolean {
    return this.skipSpace() >= this.text.length;
  }

  eat(token: string): boolean {
    this.skipSpace();
    if (!this.text.startsWith(token, this.pos)) return false;
    this.pos += token.length;
    return true;
  }

  /** A run of letters, digits, `_` and `.`, possibly empty. */
  word(): string {
    this.skipSpace();
    const start = this.pos;
    while (this.pos < this.text.length && /[A-Za-z0-9_.]/.test(this.text[this.pos])) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /** What stands at the current position, for error messages. */
  found(): string {
    return this.pos < this.text.length ? `'${this.text[this.pos]}'` : 'end of selector';
  }
}
