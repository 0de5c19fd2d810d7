/**
 * The nesting limit of request bodies, checked on the text before it is parsed into objects or handed to a
 * regular expression: one linear scan, constant memory, no recursion. Every decoder applies it, whatever the
 * content type, so that no recursive walk after decoding (merge, apply, managed fields, validation, copies,
 * serialization) meets deeper data.
 */

/**
 * Deepest nesting a request body may have. The reference's decoders (Go's JSON scanner, go-yaml's scanner)
 * allow 10,000 levels, which this server cannot build: the YAML library composes recursively and fails near
 * 800 levels on a cold start, `structuredClone` near 1,950 and V8's `JSON.stringify` (every store write and
 * response) near 4,200. 500 leaves every one of them room; no manifest nests a tenth of that.
 */
export const MAX_DEPTH = 500;

const QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;
const HASH = 0x23;
const DASH = 0x2d;
const QUESTION = 0x3f;
const PIPE = 0x7c;
const GREATER = 0x3e;
const AMPERSAND = 0x26;
const BANG = 0x21;
const STAR = 0x2a;

/**
 * Where JSON text nests deeper than `max` (arrays and objects; strings skipped), as Go's scanner words it:
 * `invalid character '{' exceeded max depth`; undefined when it does not. Malformed text is left to the parser.
 */
export function jsonDepthError(text: string, max = MAX_DEPTH): string | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfDoubleQuoted(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return `invalid character '${text[i]}' exceeded max depth`;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return undefined;
}

/** The offset of the quote that closes the double-quoted string opening at `at` (the text's end if none). */
function endOfDoubleQuoted(text: string, at: number): number {
  let end = text.indexOf('"', at + 1);
  while (end > 0) {
    let backslashes = 0;
    for (let j = end - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return text.length;
}

/** The offset of the quote that closes the single-quoted YAML scalar opening at `at` (`''` is an escaped quote). */
function endOfSingleQuoted(text: string, at: number): number {
  let end = text.indexOf("'", at + 1);
  while (end > 0 && text.charCodeAt(end + 1) === SINGLE_QUOTE) end = text.indexOf("'", end + 2);
  return end < 0 ? text.length : end;
}

const isBlank = (c: number) => c === SPACE || c === TAB || c === CR;
const isBreakOrEnd = (c: number) => c === LF || Number.isNaN(c);

/**
 * The block collections open at a point of a YAML text, innermost last: each by the column of its nodes and
 * whether it is a sequence (its nodes start with `- `). A sequence may sit at its parent key's column.
 */
class BlockLevels {
  /** `column * 2 + (sequence ? 1 : 0)` per open collection. */
  private readonly open: number[] = [];

  get depth(): number {
    return this.open.length;
  }

  reset(): void {
    this.open.length = 0;
  }

  /** Closes the collections a node at `column` ends (those right of it). */
  closeRightOf(column: number): void {
    while (this.open.length && this.open[this.open.length - 1] >> 1 > column) this.open.pop();
  }

  /** A block node starts at `column`: a sibling in an open collection, or the first of a new one. */
  enter(column: number, sequence: boolean): void {
    this.closeRightOf(column);
    const top = this.open.length ? this.open[this.open.length - 1] : -1;
    // A key at a sequence's column ends that sequence (it belonged to the key before).
    if (!sequence && top === column * 2 + 1) this.open.pop();
    const last = this.open.length ? this.open[this.open.length - 1] : -1;
    if (last !== column * 2 + (sequence ? 1 : 0)) this.open.push(column * 2 + (sequence ? 1 : 0));
  }
}

/**
 * The 1-based line on which YAML text nests deeper than `max`, or 0 when it does not.
 *
 * Flow collections (`[`, `{`) are counted as they open and close; block collections by the columns of their
 * nodes, as the YAML scanner follows indentation. Quoted scalars, block scalars (`|`, `>`) and comments are
 * skipped, and brackets inside plain scalars are not collections. A plain scalar counts as a level of its own,
 * so the count may run a level over, never under: nothing deeper than the limit reaches the YAML library,
 * whose composer recurses once per level.
 */
export function yamlDepthExceededLine(text: string, max = MAX_DEPTH): number {
  const levels = new BlockLevels();
  let line = 1;
  let flow = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const lineBegins = i;
    let lineIndent = 0;
    if (flow === 0) {
      while (text.charCodeAt(i) === SPACE) i++;
      lineIndent = i - lineBegins;
      if (lineIndent === 0 && isDocumentMarker(text, i)) {
        levels.reset();
        i += 3;
      }
    }
    let atNode = true;
    let blockScalar = false;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === LF) break;
      if (isBlank(c)) continue;
      const previous = text.charCodeAt(i - 1);
      if (c === HASH && (i === 0 || isBlank(previous) || previous === LF)) {
        while (i < n && text.charCodeAt(i) !== LF) i++;
        break;
      }
      const next = text.charCodeAt(i + 1);
      const separated = isBlank(next) || isBreakOrEnd(next);
      if (flow === 0 && atNode) {
        // A block node starts here, unless a flow collection does.
        if (c === OPEN_BRACE || c === OPEN_BRACKET) levels.closeRightOf(i - lineBegins);
        else if (c !== PIPE && c !== GREATER && c !== AMPERSAND && c !== BANG) {
          levels.enter(i - lineBegins, separated && c === DASH);
        }
        if (levels.depth > max) return line;
      }
      if (atNode && (c === QUOTE || c === SINGLE_QUOTE)) {
        const end = c === QUOTE ? endOfDoubleQuoted(text, i) : endOfSingleQuoted(text, i);
        line += countBreaks(text, i, end);
        i = end;
        atNode = false;
        continue;
      }
      if ((flow > 0 || atNode) && (c === OPEN_BRACE || c === OPEN_BRACKET)) {
        if (levels.depth + ++flow > max) return line;
        atNode = true;
        continue;
      }
      if (flow > 0) {
        if (c === CLOSE_BRACE || c === CLOSE_BRACKET) flow--;
        atNode = c === COMMA || c === COLON || c === QUESTION || c === OPEN_BRACE || c === OPEN_BRACKET;
        continue;
      }
      // Block context: `- `, `? ` and `: ` open a node; anchors, tags and aliases stand before one.
      if (separated && (c === DASH || c === QUESTION || c === COLON)) {
        atNode = true;
      } else if (atNode && (c === PIPE || c === GREATER)) {
        blockScalar = true;
        while (i < n && text.charCodeAt(i) !== LF) i++;
        break;
      } else if (atNode && (c === AMPERSAND || c === BANG || c === STAR)) {
        while (i + 1 < n && !isBlank(text.charCodeAt(i + 1)) && text.charCodeAt(i + 1) !== LF) i++;
      } else {
        atNode = false;
      }
    }
    if (i < n) {
      i++;
      line++;
    }
    if (blockScalar) ({ i, line } = skipBlockScalar(text, i, line, lineIndent));
  }
  return 0;
}

/** `---` or `...` at the start of a line, followed by a space or the line's end. */
function isDocumentMarker(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if ((c !== DASH && c !== 0x2e) || text.charCodeAt(at + 1) !== c || text.charCodeAt(at + 2) !== c) return false;
  const after = text.charCodeAt(at + 3);
  return isBlank(after) || isBreakOrEnd(after);
}

function countBreaks(text: string, from: number, to: number): number {
  let breaks = 0;
  for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) breaks++;
  return breaks;
}

/**
 * Skips the content lines of a block scalar whose header was on a line indented `parent` columns: blank lines
 * and lines at least as indented as its first non-blank line (which must be right of `parent`).
 */
function skipBlockScalar(text: string, from: number, line: number, parent: number): { i: number; line: number } {
  let i = from;
  let content = -1;
  while (i < text.length) {
    let col = 0;
    while (text.charCodeAt(i + col) === SPACE) col++;
    const c = text.charCodeAt(i + col);
    const blank = c === LF || c === CR || Number.isNaN(c);
    if (!blank) {
      if (content < 0) content = col;
      if (content <= parent || col < content) break;
    }
    const end = text.indexOf('\n', i);
    if (end < 0) return { i: text.length, line };
    i = end + 1;
    line++;
  }
  return { i, line };
}
