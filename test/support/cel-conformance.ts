/**
 * Pass rates of CEL implementations on the official conformance data shipped in `@bufbuild/cel-spec`:
 * the parse suite (cel-go parser tests: does the input parse exactly when cel-go parses it), the check
 * suite (cel-go checker tests: same result type, or an error where cel-go reports one) and the eval
 * suite (cel-spec conformance: same value, or an error where one is expected; `eval-plain` is its part
 * without protobuf messages, which platform policies never use).
 *
 * Run `node --import tsx test/support/cel-conformance.ts` to print the table for every candidate.
 */
import { tests as checking } from '@bufbuild/cel-spec/testdata/checking.js';
import { tests as conformance } from '@bufbuild/cel-spec/testdata/conformance.js';
import { tests as parsing } from '@bufbuild/cel-spec/testdata/parsing.js';
import type { SerializedIncrementalTest, SerializedIncrementalTestSuite } from '@bufbuild/cel-spec/testdata/tests.js';

type Json = Record<string, unknown>;

/** One implementation, as the harness drives it. */
export interface Candidate {
  name: string;
  /** True when the expression parses. */
  parses(expr: string): boolean;
  /** The checked type in cel-go's spelling (`list(int)`), or undefined when the checker rejects it. */
  checkedType?(expr: string): string | undefined;
  /** The value, in the harness's plain form (see `fromValue`); throws on an evaluation error. */
  evaluate(expr: string, bindings: Record<string, unknown>, container: string): unknown;
  /** Turns a conformance value into the candidate's input form. */
  input(value: Plain): unknown;
  /** Turns the candidate's output into the harness's plain form. */
  output(value: unknown): Plain;
}

/** Values compared structurally: ints and uints as tagged bigints, maps as entry lists. */
export type Plain =
  | null
  | boolean
  | string
  | number
  | { int: bigint }
  | { uint: bigint }
  | { bytes: string }
  | { type: string }
  | Plain[]
  | { map: [Plain, Plain][] }
  | { unsupported: string };

function flatten(suite: SerializedIncrementalTestSuite): SerializedIncrementalTest[] {
  return [...(suite.tests ?? []), ...(suite.suites ?? []).flatMap(flatten)];
}

/** A conformance `Value` (its proto3 JSON form) as a plain value. */
export function fromValue(v: Json): Plain {
  if ('nullValue' in v) return null;
  if ('boolValue' in v) return v.boolValue as boolean;
  if ('int64Value' in v) return { int: BigInt(v.int64Value as string) };
  if ('uint64Value' in v) return { uint: BigInt(v.uint64Value as string) };
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('stringValue' in v) return v.stringValue as string;
  if ('bytesValue' in v) return { bytes: Buffer.from(v.bytesValue as string, 'base64').toString('hex') };
  if ('typeValue' in v) return { type: v.typeValue as string };
  if ('listValue' in v) return ((v.listValue as Json).values as Json[] | undefined)?.map(fromValue) ?? [];
  if ('mapValue' in v) {
    const entries = ((v.mapValue as Json).entries as Json[] | undefined) ?? [];
    return { map: entries.map((e) => [fromValue(e.key as Json), fromValue(e.value as Json)]) };
  }
  return { unsupported: Object.keys(v).join(',') };
}

function equal(a: Plain, b: Plain): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || (Number.isNaN(a) && Number.isNaN(b));
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  }
  if ('map' in a && 'map' in b) {
    return (
      a.map.length === b.map.length && a.map.every(([k, v]) => b.map.some(([k2, v2]) => equal(k, k2) && equal(v, v2)))
    );
  }
  if ('unsupported' in a || 'unsupported' in b) return false;
  const [ka] = Object.keys(a);
  const [kb] = Object.keys(b);
  return ka === kb && (a as Record<string, unknown>)[ka] === (b as Record<string, unknown>)[kb];
}

function parsePasses(c: Candidate, t: SerializedIncrementalTest): boolean {
  let ok: boolean;
  try {
    ok = c.parses(t.original.expr);
  } catch {
    ok = false;
  }
  return ok === (t.ast !== undefined);
}

function checkPasses(c: Candidate, t: SerializedIncrementalTest): boolean {
  if (!c.checkedType) return false;
  let type: string | undefined;
  try {
    type = c.checkedType(t.original.expr);
  } catch {
    type = undefined;
  }
  return t.error ? type === undefined : type === t.type;
}

function evalPasses(c: Candidate, t: SerializedIncrementalTest): boolean {
  const o = t.original as Json;
  if (o.checkOnly) return true;
  const bindings = Object.fromEntries(
    Object.entries((o.bindings as Record<string, Json> | undefined) ?? {}).map(([k, b]) => [
      k,
      c.input(fromValue(b.value as Json)),
    ]),
  );
  const expected = (o.value as Json | undefined) ?? (o.typedResult as Json | undefined)?.result;
  const wantsError = o.evalError !== undefined || o.anyEvalErrors !== undefined;
  try {
    const got = c.output(c.evaluate(o.expr as string, bindings, (o.container as string | undefined) ?? ''));
    if (wantsError) return false;
    return equal(got, expected ? fromValue(expected as Json) : true);
  } catch {
    return wantsError;
  }
}

export interface SuiteResult {
  /** `eval-plain` is the eval suite without the tests that need protobuf messages (a `container`). */
  suite: 'parse' | 'check' | 'eval' | 'eval-plain';
  passed: number;
  total: number;
}

/** Pass counts of one candidate on each suite. */
export function measure(c: Candidate): SuiteResult[] {
  const run = (suite: SuiteResult['suite'], list: SerializedIncrementalTest[], passes: typeof parsePasses) => ({
    suite,
    passed: list.filter((t) => passes(c, t)).length,
    total: list.length,
  });
  return [
    run('parse', flatten(parsing), parsePasses),
    run('check', flatten(checking), checkPasses),
    run('eval', flatten(conformance), evalPasses),
    run(
      'eval-plain',
      flatten(conformance).filter((t) => !(t.original as Json).container),
      evalPasses,
    ),
  ];
}

async function main(): Promise<void> {
  const { candidates } = await import('./cel-candidates.ts');
  for (const c of await candidates()) {
    const line = measure(c)
      .map((r) => `${r.suite} ${r.passed}/${r.total} (${((100 * r.passed) / r.total).toFixed(1)}%)`)
      .join('  ');
    console.log(`${c.name.padEnd(24)} ${line}`);
  }
}

if (process.argv[1]?.endsWith('cel-conformance.ts')) await main();
