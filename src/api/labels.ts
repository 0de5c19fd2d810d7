/**
 * Label selectors: the query-string form of list and watch calls (`a=b,c in (x,y),!d`) and the object
 * form of PodDisruptionBudget and StatefulSet selectors. Grammar, validation and error texts follow the
 * reference's apimachinery `labels` package.
 */
import { isDNS1123Subdomain, maxLenError, regexError } from './dns-names.ts';
import type { LabelSelector } from './meta.ts';

/** A malformed label, field or shard selector; the message is the one the API server returns. */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

/** The reference's operator spellings: `!` is DoesNotExist, `gt`/`lt` compare integers. */
export type Operator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
}

export interface Selector {
  matches(labels: Record<string, string> | undefined): boolean;
  /** True when the selector matches everything. */
  empty(): boolean;
  /** Canonical query text: requirements sorted by key, set values sorted. */
  toString(): string;
  /** Sorted by key; callers index on the keys pinned by `=`, `==` or a one-value `in`. */
  readonly requirements: readonly Requirement[];
}

/** Parses the query-string form; the empty string selects everything. */
export function parseLabelSelector(text: string): Selector {
  return new RequirementSelector(new Parser(tokenize(text)).parse());
}

/** Converts the object form: `null`/`undefined` selects nothing, `{}` selects everything. */
export function selectorFromLabelSelector(sel: LabelSelector | null | undefined): Selector {
  if (sel == null) return NOTHING;
  const requirements: Requirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) {
    requirements.push(newRequirement(key, '=', [value]));
  }
  for (const expr of sel.matchExpressions ?? []) {
    const operator = OBJECT_OPERATORS.get(expr.operator);
    if (!operator) throw new SelectorError(`${JSON.stringify(expr.operator)} is not a valid label selector operator`);
    requirements.push(newRequirement(expr.key, operator, [...(expr.values ?? [])]));
  }
  return new RequirementSelector(requirements);
}

/** The query text for the object form. A null selector matches nothing, which no query text can say. */
export function labelSelectorAsString(sel: LabelSelector | null | undefined): string {
  if (sel == null) throw new SelectorError('a null label selector matches nothing and has no query-string form');
  return selectorFromLabelSelector(sel).toString();
}

const OBJECT_OPERATORS = new Map<string, Operator>([
  ['In', 'in'],
  ['NotIn', 'notin'],
  ['Exists', 'exists'],
  ['DoesNotExist', '!'],
]);

class RequirementSelector implements Selector {
  readonly requirements: readonly Requirement[];

  constructor(requirements: Requirement[]) {
    this.requirements = requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  matches(labels: Record<string, string> | undefined): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels ?? {}));
  }

  empty(): boolean {
    return this.requirements.length === 0;
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

const NOTHING: Selector = {
  requirements: [],
  matches: () => false,
  empty: () => false,
  toString: () => '',
};

function requirementMatches(r: Requirement, labels: Record<string, string>): boolean {
  const present = Object.hasOwn(labels, r.key);
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return present && r.values.includes(labels[r.key]);
    case '!=':
    case 'notin':
      return !present || !r.values.includes(labels[r.key]);
    case 'exists':
      return present;
    case '!':
      return !present;
    case 'gt':
    case 'lt': {
      const actual = present ? parseInt64(labels[r.key]) : undefined;
      if (actual === undefined) return false;
      const bound = BigInt(r.values[0]);
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

function requirementString(r: Requirement): string {
  const values = [...r.values].sort();
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${values.join(',')})`;
    case 'gt':
      return `${r.key}>${values[0]}`;
    case 'lt':
      return `${r.key}<${values[0]}`;
    default:
      return `${r.key}${r.operator}${values[0]}`;
  }
}

/** Builds a requirement, validating it like the reference's `NewRequirement`. */
function newRequirement(key: string, operator: Operator, values: string[]): Requirement {
  const errors: string[] = [];
  const keyErrors = qualifiedNameErrors(key);
  if (keyErrors.length > 0) errors.push(invalid('key', JSON.stringify(key), keyErrors.join('; ')));
  const detail = operatorValuesError(operator, values);
  if (detail) errors.push(invalid('values', goStringSlice(values), detail));
  // Only the query text has `gt`/`lt`, and always with exactly one value.
  if ((operator === 'gt' || operator === 'lt') && parseInt64(values[0]) === undefined) {
    errors.push(
      invalid('values[0]', JSON.stringify(values[0]), "for 'Gt', 'Lt' operators, the value must be an integer"),
    );
  }
  values.forEach((value, i) => {
    const valueErrors = labelValueErrors(value);
    if (valueErrors.length > 0) {
      errors.push(invalid(`values[${i}][${key}]`, JSON.stringify(value), valueErrors.join('; ')));
    }
  });
  if (errors.length > 0) throw new SelectorError(aggregate(errors));
  return { key, operator, values };
}

function operatorValuesError(operator: Operator, values: string[]): string | undefined {
  if ((operator === 'in' || operator === 'notin') && values.length === 0) {
    return "for 'in', 'notin' operators, values set can't be empty";
  }
  if ((operator === 'exists' || operator === '!') && values.length > 0) {
    return 'values set must be empty for exists and does not exist';
  }
  return undefined;
}

/** A field error as the reference prints it: `<path>: Invalid value: <value>: <detail>`. */
function invalid(path: string, value: string, detail: string): string {
  return `${path}: Invalid value: ${value}: ${detail}`;
}

/** Go's `%#v` of a string slice, which the reference prints for bad value sets. */
function goStringSlice(values: string[]): string {
  return values.length === 0 ? '[]string(nil)' : `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/** Several errors read `[a, b]`, duplicates dropped, as the reference's aggregate does. */
function aggregate(errors: string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}

/** The value of a base-10 int64 as Go's `strconv.ParseInt` reads it, or undefined. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

// Label keys and values.

const NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const NAME_RE = new RegExp(`^${NAME_FMT}$`);
const NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE_FMT = `(${NAME_FMT})?`;
const VALUE_RE = new RegExp(`^${VALUE_FMT}$`);
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/**
 * A qualified name (a label key), `[prefix/]name`: prefix a DNS subdomain of at most 253 bytes, name at most 63.
 * The one copy of the rule: selectors here, and the plane's validation and CEL formats with the same texts.
 */
export function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return [
      `a valid label key ${regexError(NAME_MSG, NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  const errors: string[] = [];
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix === '') errors.push('prefix part must be non-empty');
    else for (const msg of isDNS1123Subdomain(prefix)) errors.push(`prefix part ${msg}`);
  }
  if (name === '') errors.push('name part must be non-empty');
  else if (Buffer.byteLength(name) > 63) errors.push(`name part ${maxLenError(63)}`);
  if (!NAME_RE.test(name)) errors.push(`name part ${regexError(NAME_MSG, NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errors;
}

/** A label value: empty, or at most 63 bytes of a label key's name part; the plane's validation uses it too. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (Buffer.byteLength(value) > 63) errors.push(maxLenError(63));
  if (!VALUE_RE.test(value)) errors.push(regexError(VALUE_MSG, VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errors;
}

// The query-string parser.

type TokenKind = 'word' | 'end' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';

interface Token {
  kind: TokenKind;
  text: string;
}

const SYMBOLS = '=!(),><';
const WHITESPACE = ' \t\r\n';

/** Words run until whitespace or a symbol; `==` and `!=` are the only two-character symbols. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    if (WHITESPACE.includes(text[i])) {
      i++;
    } else if (SYMBOLS.includes(text[i])) {
      const pair = text.slice(i, i + 2);
      const symbol = pair === '==' || pair === '!=' ? pair : text[i];
      tokens.push({ kind: symbol as TokenKind, text: symbol });
      i += symbol.length;
    } else {
      const start = i;
      while (i < text.length && !SYMBOLS.includes(text[i]) && !WHITESPACE.includes(text[i])) i++;
      tokens.push({ kind: 'word', text: text.slice(start, i) });
    }
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

class Parser {
  private pos = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.pos];
  }

  private next(): Token {
    const token = this.tokens[this.pos];
    if (token.kind !== 'end') this.pos++;
    return token;
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    let token = this.peek();
    if (token.kind === 'end') return requirements;
    if (token.kind !== 'word' && token.kind !== '!') {
      throw new SelectorError(`found '${token.text}', expected: !, identifier, or 'end of string'`);
    }
    for (;;) {
      try {
        requirements.push(this.requirement());
      } catch (err) {
        throw new SelectorError(`unable to parse requirement: ${(err as Error).message}`);
      }
      token = this.next();
      if (token.kind === 'end') return requirements;
      if (token.kind !== ',') throw new SelectorError(`found '${token.text}', expected: ',' or 'end of string'`);
      token = this.peek();
      if (token.kind !== 'word' && token.kind !== '!') {
        throw new SelectorError(`found '${token.text}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): Requirement {
    let token = this.next();
    const negated = token.kind === '!';
    if (negated) token = this.next();
    if (token.kind !== 'word') throw new SelectorError(`found '${token.text}', expected: identifier`);
    const key = token.text;
    const keyErrors = qualifiedNameErrors(key);
    if (keyErrors.length > 0) throw new SelectorError(invalid('<nil>', JSON.stringify(key), keyErrors.join('; ')));
    if (negated) return newRequirement(key, '!', []);
    const after = this.peek().kind;
    if (after === 'end' || after === ',') return newRequirement(key, 'exists', []);
    const operator = this.operator();
    const values = operator === 'in' || operator === 'notin' ? this.valueSet() : [this.exactValue()];
    return newRequirement(key, operator, values);
  }

  private operator(): Operator {
    const token = this.next();
    if (token.kind === 'word' && (token.text === 'in' || token.text === 'notin')) return token.text;
    switch (token.kind) {
      case '=':
      case '==':
      case '!=':
        return token.kind;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new SelectorError(`found '${token.text}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  /** The value after `=`, `==`, `!=`, `>` or `<`; nothing at all is the empty value. */
  private exactValue(): string {
    const token = this.peek();
    if (token.kind === 'end' || token.kind === ',') return '';
    this.next();
    if (token.kind !== 'word') throw new SelectorError(`found '${token.text}', expected: identifier`);
    return token.text;
  }

  /** `(v1,v2,...)`, where any value may be empty: `()` is the set holding the empty value. */
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') throw new SelectorError(`found '${open.text}' expected: '('`);
    const values = new Set<string>();
    let token = this.next();
    if (token.kind !== 'word' && token.kind !== ',' && token.kind !== ')') {
      throw new SelectorError(`found '${token.text}', expected: ',', ')' or identifier`);
    }
    for (;;) {
      if (token.kind === 'word') {
        values.add(token.text);
        token = this.next();
        if (token.kind === ')') break;
        if (token.kind !== ',') throw new SelectorError(`found '${token.text}', expected: ',' or ')'`);
      } else {
        values.add('');
        if (token.kind === ')') break;
      }
      token = this.next();
      if (token.kind !== 'word' && token.kind !== ',' && token.kind !== ')') {
        throw new SelectorError(`found '${token.text}', expected: ',', or identifier`);
      }
    }
    return [...values].sort();
  }
}
