/**
 * The strings extension (cel-go `ext.Strings`, version 2, as the reference declares it) where the
 * library lacks a function, and the platform's regex library (`find`, `findAll`).
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { charge } from '../values.ts';

/** Code points, not UTF-16 units: CEL indexes strings by code point. */
const points = (s: string) => Array.from(s);

function replace(s: string, from: string, to: string, limit: bigint): string {
  if (limit < 0n) return s.split(from).join(to);
  let out = s;
  let at = 0;
  for (let n = 0n; n < limit; n++) {
    const i = out.indexOf(from, at);
    if (i < 0) break;
    out = out.slice(0, i) + to + out.slice(i + from.length);
    at = i + to.length + (from === '' ? 1 : 0);
  }
  return out;
}

function regex(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'gu');
  } catch (err) {
    throw new EvaluationError(`invalid regular expression: ${(err as Error).message}`);
  }
}

function findAll(s: string, pattern: string, limit: bigint): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(regex(pattern))) {
    if (limit >= 0n && BigInt(out.length) >= limit) break;
    charge();
    out.push(m[0]);
  }
  return out;
}

/** Go's `%q`: a double-quoted string with Go escapes. */
function quote(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `%s`, `%d`, `%f` (with precision), `%e`, `%b`, `%o`, `%x`, `%X` and `%%` over a list of arguments. */
function format(template: string, args: unknown[]): string {
  let next = 0;
  return template.replace(/%(\.\d+)?([sdfebxXo%])/g, (_, precision: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (next >= args.length) throw new EvaluationError(`index ${next} out of range`);
    const v = args[next++];
    const digits = precision ? Number(precision.slice(1)) : 6;
    switch (verb) {
      case 'd':
        if (typeof v !== 'bigint')
          throw new EvaluationError('error during formatting: decimal clause can only be used on integers');
        return v.toString();
      case 'f':
        return Number(v).toFixed(digits);
      case 'e':
        return Number(v).toExponential(digits);
      case 'b':
        return typeof v === 'boolean' ? String(v) : BigInt(v as bigint).toString(2);
      case 'o':
        return BigInt(v as bigint).toString(8);
      case 'x':
      case 'X': {
        const hex = typeof v === 'string' ? Buffer.from(v).toString('hex') : BigInt(v as bigint).toString(16);
        return verb === 'X' ? hex.toUpperCase() : hex;
      }
      default:
        return stringify(v);
    }
  });
}

function stringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stringify).join(', ')}]`;
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

export class StringsNamespace {}

export function registerStrings(env: Environment): void {
  env
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
      const p = points(s);
      if (i < 0n || i > BigInt(p.length)) throw new EvaluationError(`index out of range: ${i}`);
      return p[Number(i)] ?? '';
    })
    .registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
      replace(s, a, b, -1n),
    )
    .registerFunction('string.replace(string, string, int): string', replace)
    .registerFunction('string.format(list<dyn>): string', format)
    .registerFunction('string.find(string): string', (s: string, p: string) => findAll(s, p, 1n)[0] ?? '')
    .registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1n))
    .registerFunction('string.findAll(string, int): list<string>', findAll)
    .registerType('StringsNamespace', StringsNamespace)
    .registerConstant('strings', 'StringsNamespace', new StringsNamespace())
    .registerFunction('StringsNamespace.quote(string): string', (_: unknown, s: string) => quote(s));
}
