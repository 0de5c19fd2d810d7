/**
 * The words of the reference's decoders for malformed input, which clients see in its 400s: Go's encoding/json
 * syntax errors (`invalid character 'x' looking for beginning of value`, `unexpected end of JSON input`) and
 * its base64 errors (`illegal base64 data at input byte N`). Only asked once the input is known to be bad, so
 * the byte-by-byte scan is off the hot path.
 */

/** Where the scanner is, as the states of Go's JSON scanner. */
type State =
  | 'beginValue'
  | 'beginValueOrEmpty'
  | 'beginStringOrEmpty'
  | 'beginString'
  | 'endValue'
  | 'endTop'
  | 'inString'
  | 'inStringEsc'
  | 'inStringEscU'
  | 'neg'
  | 'one'
  | 'zero'
  | 'dot'
  | 'dot0'
  | 'exp'
  | 'expSign'
  | 'exp0'
  | 'literal';

/** What encloses the current value: an object awaiting a key or a value, or an array. */
type Enclosing = 'objectKey' | 'objectValue' | 'array';

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
const ESCAPES = new Set([...'bfnrt\\/"'].map((ch) => ch.charCodeAt(0)));

/**
 * The message Go's encoding/json gives for malformed JSON text (the scanner its Unmarshal runs first), or
 * undefined when the text is valid JSON. Go reads bytes: a byte is quoted as the Latin-1 character it would be.
 */
export function goJsonSyntaxError(data: Uint8Array): string | undefined {
  const stack: Enclosing[] = [];
  let state = 'beginValue' as State;
  let literal = '';
  let literalAt = 0;
  let hexDigits = 0;
  let message: string | undefined;
  const fail = (c: number, context: string) => {
    message = `invalid character ${quoteChar(c)} ${context}`;
  };

  /** One byte: moves to the next state, or sets `message`. */
  const step = (c: number): undefined => {
    switch (state) {
      case 'beginValueOrEmpty':
        if (isSpace(c)) return;
        if (c === 0x5d) return endValue(c);
        return beginValue(c);
      case 'beginValue':
        return beginValue(c);
      case 'beginStringOrEmpty':
        if (isSpace(c)) return;
        if (c === 0x7d) {
          stack[stack.length - 1] = 'objectValue';
          return endValue(c);
        }
        return beginString(c);
      case 'beginString':
        return beginString(c);
      case 'endValue':
        return endValue(c);
      case 'endTop':
        if (!isSpace(c)) fail(c, 'after top-level value');
        return;
      case 'inString':
        if (c === 0x22) state = 'endValue';
        else if (c === 0x5c) state = 'inStringEsc';
        else if (c < 0x20) fail(c, 'in string literal');
        return;
      case 'inStringEsc':
        if (ESCAPES.has(c)) state = 'inString';
        else if (c === 0x75) {
          state = 'inStringEscU';
          hexDigits = 0;
        } else fail(c, 'in string escape code');
        return;
      case 'inStringEscU':
        if (!isHex(c)) fail(c, 'in \\u hexadecimal character escape');
        else if (++hexDigits === 4) state = 'inString';
        return;
      case 'neg':
        if (c === 0x30) state = 'zero';
        else if (isDigit(c)) state = 'one';
        else fail(c, 'in numeric literal');
        return;
      case 'one':
        if (isDigit(c)) return;
        return zero(c);
      case 'zero':
        return zero(c);
      case 'dot':
        if (isDigit(c)) state = 'dot0';
        else fail(c, 'after decimal point in numeric literal');
        return;
      case 'dot0':
        if (isDigit(c)) return;
        if (c === 0x65 || c === 0x45) state = 'exp';
        else endValue(c);
        return;
      case 'exp':
        if (c === 0x2b || c === 0x2d) {
          state = 'expSign';
          return;
        }
        return expSign(c);
      case 'expSign':
        return expSign(c);
      case 'exp0':
        if (!isDigit(c)) endValue(c);
        return;
      case 'literal':
        if (c !== literal.charCodeAt(literalAt)) {
          fail(c, `in literal ${literal} (expecting ${quoteChar(literal.charCodeAt(literalAt))})`);
        } else if (++literalAt === literal.length) state = 'endValue';
        return;
    }
  };
  const beginValue = (c: number): undefined => {
    if (isSpace(c)) {
      state = 'beginValue';
      return;
    }
    if (c === 0x7b) {
      stack.push('objectKey');
      state = 'beginStringOrEmpty';
    } else if (c === 0x5b) {
      stack.push('array');
      state = 'beginValueOrEmpty';
    } else if (c === 0x22) state = 'inString';
    else if (c === 0x2d) state = 'neg';
    else if (c === 0x30) state = 'zero';
    else if (isDigit(c)) state = 'one';
    else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      literalAt = 1;
      state = 'literal';
    } else fail(c, 'looking for beginning of value');
  };
  const beginString = (c: number): undefined => {
    if (isSpace(c)) state = 'beginString';
    else if (c === 0x22) state = 'inString';
    else fail(c, 'looking for beginning of object key string');
  };
  const zero = (c: number): undefined => {
    if (c === 0x2e) state = 'dot';
    else if (c === 0x65 || c === 0x45) state = 'exp';
    else endValue(c);
  };
  const expSign = (c: number): undefined => {
    if (isDigit(c)) state = 'exp0';
    else fail(c, 'in exponent of numeric literal');
  };
  const endValue = (c: number): undefined => {
    const top = stack.at(-1);
    if (top === undefined) {
      state = 'endTop';
      return step(c);
    }
    state = 'endValue';
    if (isSpace(c)) return;
    if (top === 'objectKey') {
      if (c === 0x3a) {
        stack[stack.length - 1] = 'objectValue';
        state = 'beginValue';
      } else fail(c, 'after object key');
    } else if (top === 'objectValue') {
      if (c === 0x2c) {
        stack[stack.length - 1] = 'objectKey';
        state = 'beginString';
      } else if (c === 0x7d) stack.pop();
      else fail(c, 'after object key:value pair');
    } else if (c === 0x2c) state = 'beginValue';
    else if (c === 0x5d) stack.pop();
    else fail(c, 'after array element');
  };

  for (const c of data) {
    step(c);
    if (message) return message;
  }
  // At the end Go's scanner steps once more with a space: a number or a top-level value ends there.
  const ended = (): boolean => state === 'endTop';
  if (ended()) return undefined;
  step(0x20);
  if (message) return message;
  return ended() ? undefined : 'unexpected end of JSON input';
}

/** A byte as Go's JSON errors quote it: in single quotes, escaped as strconv.Quote escapes that rune. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  return `'${quotedRune(c)}'`;
}

const NAMED_ESCAPES: Record<number, string> = {
  7: '\\a',
  8: '\\b',
  12: '\\f',
  10: '\\n',
  13: '\\r',
  9: '\\t',
  11: '\\v',
};

/** strconv.Quote's text for one rune below 0x100, without the quotes. */
function quotedRune(r: number): string {
  if (r === 0x5c) return '\\\\';
  // Go's IsPrint over Latin-1: printable ASCII, and 0xA1-0xFF but the soft hyphen.
  if ((r >= 0x20 && r <= 0x7e) || (r >= 0xa1 && r !== 0xad)) return String.fromCharCode(r);
  if (NAMED_ESCAPES[r]) return NAMED_ESCAPES[r];
  if (r < 0x20 || r === 0x7f) return `\\x${r.toString(16).padStart(2, '0')}`;
  return `\\u${r.toString(16).padStart(4, '0')}`;
}

const BASE64_URL = /^[A-Za-z0-9_-]$/;

/**
 * Go's `base64.RawURLEncoding.DecodeString` (the alphabet with `-` and `_`, no padding; CR and LF skipped):
 * the bytes, or the error it gives for the first thing it cannot decode.
 */
export function decodeRawUrlBase64(s: string): Buffer | string {
  let inQuantum = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '\r' || ch === '\n') continue;
    if (!BASE64_URL.test(ch)) return `illegal base64 data at input byte ${i}`;
    inQuantum = (inQuantum + 1) % 4;
  }
  // A last group of one character carries no whole byte.
  if (inQuantum === 1) return `illegal base64 data at input byte ${s.length - 1}`;
  return Buffer.from(s.replace(/[\r\n]/g, ''), 'base64url');
}
