/**
 * Field selectors of list and watch calls: `field=value`, `field==value` and `field!=value` terms joined
 * by commas, with `\,`, `\=` and `\\` escaping those characters in values, as the reference parses them.
 */
import { SelectorError } from './labels.ts';

export interface FieldRequirement {
  readonly field: string;
  /** `==` is read as `=`. */
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface FieldSelector {
  /** `get` answers a field's value; a missing field reads as the empty string. */
  matches(get: (field: string) => string | undefined): boolean;
  /** True when the selector matches everything. */
  empty(): boolean;
  /** The field names the selector uses, each once. */
  fields(): string[];
  /** The value the selector requires with `=` for the field, for index lookups; undefined if none. */
  exactValue(field: string): string | undefined;
  /** Canonical text: terms in sorted order, `==` written `=`, values escaped. */
  toString(): string;
  readonly requirements: readonly FieldRequirement[];
}

/** Parses a field selector; the empty string selects everything. */
export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitTerms(text).sort()) {
    if (term === '') continue;
    const split = splitTerm(term);
    if (!split) throw new SelectorError(`invalid selector: '${text}'; can't understand '${term}'`);
    requirements.push({ field: split.field, operator: split.operator, value: unescapeValue(split.rawValue) });
  }
  return new TermSelector(requirements);
}

/**
 * Rejects a selector naming a field outside `metadata.name`, `metadata.namespace` and the kind's own `fields`, with
 * the reference's message: its generic one for kinds without fields of their own, their conversion's otherwise.
 */
export function assertSupportedFields(selector: FieldSelector, fields: string[]): void {
  const allowed = new Set(['metadata.name', 'metadata.namespace', ...fields]);
  for (const field of selector.fields()) {
    if (allowed.has(field)) continue;
    if (fields.length > 0) throw new SelectorError(`field label not supported: ${field}`);
    throw new SelectorError(`"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
  }
}

class TermSelector implements FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}

  matches(get: (field: string) => string | undefined): boolean {
    return this.requirements.every((r) => {
      const equal = (get(r.field) ?? '') === r.value;
      return r.operator === '=' ? equal : !equal;
    });
  }

  empty(): boolean {
    return this.requirements.length === 0;
  }

  fields(): string[] {
    return [...new Set(this.requirements.map((r) => r.field))];
  }

  exactValue(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${r.value.replace(/[\\,=]/g, '\\$&')}`).join(',');
  }
}

/** Splits at commas not escaped by a backslash; escapes stay in the terms. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    if (escaped) escaped = false;
    else if (text[i] === '\\') escaped = true;
    else if (text[i] === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

/** Splits at the first operator; the field name has no escaping. */
function splitTerm(term: string): { field: string; operator: '=' | '!='; rawValue: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) {
        return { field: term.slice(0, i), operator: op === '!=' ? '!=' : '=', rawValue: term.slice(i + op.length) };
      }
    }
  }
  return undefined;
}

function unescapeValue(raw: string): string {
  let value = '';
  let escaped = false;
  for (const c of raw) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      value += c;
      escaped = false;
    } else if (c === '\\') {
      escaped = true;
    } else if (c === ',' || c === '=') {
      // The reference prints the character's code point here.
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      value += c;
    }
  }
  if (escaped) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return value;
}
