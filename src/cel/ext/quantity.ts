/** The platform's quantity library: `quantity("1.5Gi")`, `isQuantity`, arithmetic and comparison. */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { parseQuantity, Quantity, QuantityError } from '../../api/quantity.ts';

const T = 'kubernetes.Quantity';
const NANO = 1_000_000_000n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function quantity(s: string): Quantity {
  try {
    return parseQuantity(s);
  } catch (err) {
    if (err instanceof QuantityError) throw new EvaluationError(err.message);
    throw err;
  }
}

const isInteger = (q: Quantity) => q.nanos % NANO === 0n && q.nanos / NANO >= INT64_MIN && q.nanos / NANO <= INT64_MAX;
const plus = (q: Quantity, nanos: bigint) => new Quantity(q.nanos + nanos, q.format);

export function registerQuantity(env: Environment): void {
  env
    .registerType(T, Quantity)
    .registerFunction(`quantity(string): ${T}`, quantity)
    .registerFunction('isQuantity(string): bool', (s: string) => {
      try {
        parseQuantity(s);
        return true;
      } catch {
        return false;
      }
    })
    .registerFunction(`${T}.sign(): int`, (q: Quantity) => BigInt(q.cmp(new Quantity(0n, q.format))))
    .registerFunction(`${T}.isInteger(): bool`, isInteger)
    .registerFunction(`${T}.asInteger(): int`, (q: Quantity) => {
      if (!isInteger(q)) throw new EvaluationError('cannot convert value to integer');
      return q.nanos / NANO;
    })
    .registerFunction(`${T}.asApproximateFloat(): double`, (q: Quantity) => Number(q.nanos) / 1e9)
    .registerFunction(`${T}.add(${T}): ${T}`, (q: Quantity, o: Quantity) => plus(q, o.nanos))
    .registerFunction(`${T}.add(int): ${T}`, (q: Quantity, n: bigint) => plus(q, n * NANO))
    .registerFunction(`${T}.sub(${T}): ${T}`, (q: Quantity, o: Quantity) => plus(q, -o.nanos))
    .registerFunction(`${T}.sub(int): ${T}`, (q: Quantity, n: bigint) => plus(q, -n * NANO))
    .registerFunction(`${T}.isLessThan(${T}): bool`, (q: Quantity, o: Quantity) => q.cmp(o) < 0)
    .registerFunction(`${T}.isGreaterThan(${T}): bool`, (q: Quantity, o: Quantity) => q.cmp(o) > 0)
    .registerFunction(`${T}.compareTo(${T}): int`, (q: Quantity, o: Quantity) => BigInt(q.cmp(o)))
    .registerOperator(`${T} == ${T}`, (q: Quantity, o: Quantity) => q.cmp(o) === 0)
    .registerFunction(`string(${T}): string`, (q: Quantity) => q.toString());
}
