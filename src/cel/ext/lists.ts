/**
 * The platform's list library (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`) and the sets
 * extension (`sets.contains`, `sets.equivalent`, `sets.intersects`). Walking a request's list is charged
 * by the list itself (see values.ts); comparing values is charged here.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { charge } from '../values.ts';

type Comparable = bigint | number | string;

function equals(a: unknown, b: unknown): boolean {
  charge();
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equals(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => equals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  // CEL compares numbers across int and double.
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return Number(a) === Number(b);
  }
  return a === b;
}

const indexOf = (list: unknown[], v: unknown) => BigInt(list.findIndex((x) => equals(x, v)));
const lastIndexOf = (list: unknown[], v: unknown) => BigInt(list.findLastIndex((x) => equals(x, v)));

function extreme(list: Comparable[], pick: (a: Comparable, b: Comparable) => boolean, name: string): Comparable {
  if (list.length === 0) throw new EvaluationError(`${name}(list) called on an empty list`);
  return list.reduce((best, x) => (pick(x, best) ? x : best));
}

export class SetsNamespace {}

export function registerLists(env: Environment): void {
  for (const t of ['int', 'double', 'string', 'uint', 'bool']) {
    env.registerFunction(`list<${t}>.isSorted(): bool`, (l: Comparable[]) =>
      l.every((x, i) => i === 0 || l[i - 1] <= x),
    );
  }
  for (const t of ['int', 'double', 'string']) {
    env
      .registerFunction(`list<${t}>.min(): ${t}`, (l: Comparable[]) => extreme(l, (a, b) => a < b, 'min'))
      .registerFunction(`list<${t}>.max(): ${t}`, (l: Comparable[]) => extreme(l, (a, b) => a > b, 'max'));
  }
  env
    .registerFunction('list<int>.sum(): int', (l: bigint[]) => l.reduce((a, b) => a + b, 0n))
    .registerFunction('list<double>.sum(): double', (l: number[]) => l.reduce((a, b) => a + b, 0))
    .registerFunction('list<A>.indexOf(A): int', indexOf)
    .registerFunction('list<A>.lastIndexOf(A): int', lastIndexOf)
    .registerType('SetsNamespace', SetsNamespace)
    .registerConstant('sets', 'SetsNamespace', new SetsNamespace())
    .registerFunction('SetsNamespace.contains(list<A>, list<A>): bool', (_: unknown, a: unknown[], b: unknown[]) =>
      b.every((y) => a.some((x) => equals(x, y))),
    )
    .registerFunction(
      'SetsNamespace.equivalent(list<A>, list<A>): bool',
      (_: unknown, a: unknown[], b: unknown[]) =>
        b.every((y) => a.some((x) => equals(x, y))) && a.every((x) => b.some((y) => equals(x, y))),
    )
    .registerFunction('SetsNamespace.intersects(list<A>, list<A>): bool', (_: unknown, a: unknown[], b: unknown[]) =>
      a.some((x) => b.some((y) => equals(x, y))),
    );
}
