/**
 * The CEL libraries on npm measured against the conformance data (see cel-conformance.ts): the one
 * src/cel is built on, with the options src/cel uses, and the two others that parse and evaluate CEL.
 */
import { type Environment, evaluate as marcEvaluate } from '@marcbachmann/cel-js';
import { newEnvironment } from '../../src/cel/library.ts';
import type { Candidate, Plain } from './cel-conformance.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Plain values into a library's input: ints as bigint, bytes as Uint8Array, maps as Map. */
function toInput(v: Plain, uint: (n: bigint) => unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => toInput(x, uint));
  if ('int' in v) return v.int;
  if ('uint' in v) return uint(v.uint);
  if ('bytes' in v) return new Uint8Array(Buffer.from(v.bytes, 'hex'));
  if ('map' in v) return new Map(v.map.map(([k, x]) => [toInput(k, uint), toInput(x, uint)]));
  return v;
}

/** A library's output as a plain value; `special` handles the library's own wrapper classes first. */
function toPlain(v: unknown, special: (v: object) => Plain | undefined): Plain {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return { int: v };
  if (typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v !== 'object') return { unsupported: typeof v };
  const own = special(v);
  if (own !== undefined) return own;
  if (v instanceof Uint8Array) return { bytes: hex(v) };
  if (Array.isArray(v)) return v.map((x) => toPlain(x, special));
  if (v instanceof Map) return { map: [...v].map(([k, x]) => [toPlain(k, special), toPlain(x, special)]) };
  if (v.constructor === Object) {
    return { map: Object.entries(v).map(([k, x]) => [k, toPlain(x, special)]) };
  }
  return { unsupported: v.constructor?.name ?? 'object' };
}

function marcbachmann(): Candidate {
  const env: Environment = newEnvironment({ unlistedVariablesAreDyn: true });
  const UnsignedInt = (marcEvaluate('0u') as object).constructor as new (n: bigint) => unknown;
  const special = (v: object): Plain | undefined => {
    if (v instanceof UnsignedInt) return { uint: (v as { value: bigint }).value };
    if (v.constructor?.name === 'Type') return { type: String((v as { name: string }).name) };
    return undefined;
  };
  const checker = newEnvironment();
  return {
    name: '@marcbachmann/cel-js',
    parses: (expr) => {
      env.parse(expr);
      return true;
    },
    checkedType: (expr) => {
      const r = checker.check(expr);
      return r.valid ? r.type?.replaceAll('<', '(').replaceAll('>', ')') : undefined;
    },
    evaluate: (expr, bindings) => env.evaluate(expr, bindings),
    input: (v) => toInput(v, (n) => new UnsignedInt(n)),
    output: (v) => toPlain(v, special),
  };
}

async function celJs(): Promise<Candidate> {
  const lib = await import('cel-js');
  return {
    name: 'cel-js',
    parses: (expr) => lib.parse(expr).isSuccess,
    evaluate: (expr, bindings) => lib.evaluate(expr, bindings),
    input: (v) => toInput(v, (n) => Number(n)),
    output: (v) => toPlain(v, () => undefined),
  };
}

async function bufbuild(): Promise<Candidate> {
  const lib = await import('@bufbuild/cel');
  const { getTestRegistry } = await import('@bufbuild/cel-spec/testdata/registry.js');
  const registry = getTestRegistry();
  const special = (v: object): Plain | undefined => {
    if (lib.isCelUint(v)) return { uint: v.value };
    if (lib.isCelType(v)) return { type: v.name };
    if (lib.isCelList(v)) return [...v].map((x) => toPlain(x, special));
    if (lib.isCelMap(v)) return { map: [...v].map(([k, x]) => [toPlain(k, special), toPlain(x, special)]) };
    return undefined;
  };
  return {
    name: '@bufbuild/cel',
    parses: (expr) => {
      lib.parse(expr);
      return true;
    },
    evaluate: (expr, bindings, namespace) => {
      const r = lib.run(expr, bindings as never, { registry, namespace });
      if (lib.isCelError(r)) throw r;
      return r;
    },
    input: (v) => toInput(v, (n) => lib.celUint(n)),
    output: (v) => toPlain(v, special),
  };
}

export async function candidates(): Promise<Candidate[]> {
  return [marcbachmann(), await celJs(), await bufbuild()];
}

export { marcbachmann };
